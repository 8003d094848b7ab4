"""channel_order="rgb": per call, per pipeline and as the process default, exact for every filter.

RGB arrays are swapped to BGR at the pipeline boundary and back, so an RGB run must
equal the BGR run on the swapped array bit for bit (the registry-wide test). Oracles
that would catch a missing or double swap: the classic sepia matrix written out in
RGB, BT.601 luma computed with numpy, and palettes of known colours.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import ParameterError, UsageError
from tests.conftest import FIXTURES, photo
from tests.properties.test_registry_contract import NAMES, example_params, non_default_value

# The classic sepia matrix, rows R', G', B' of (R, G, B): written out here, not imported.
SEPIA = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]])


@pytest.fixture(autouse=True)
def _default_order() -> Iterator[None]:
    yield
    cvf.set_defaults(channel_order="bgr")


def rgb_photo(channels: int = 3, dtype: type = np.uint8, height: int = 24, width: int = 32) -> np.ndarray:
    bgr = photo(height, width, channels, dtype)
    return np.ascontiguousarray(bgr[..., [2, 1, 0, 3][:channels]]) if channels >= 3 else bgr


def swapped(image: np.ndarray) -> np.ndarray:
    """R and B exchanged by numpy indexing (independent of the cv2.cvtColor the library uses)."""
    if image.ndim == 3 and image.shape[2] in (3, 4):
        return np.ascontiguousarray(image[..., [2, 1, 0, 3][: image.shape[2]]])
    return image


def test_a_colour_matrix_on_an_rgb_array_follows_its_rgb_rows() -> None:
    rgb = rgb_photo(3, np.uint8, 48, 64)
    out = cvf.apply(rgb, "color_matrix", matrix=SEPIA.tolist(), channel_order="rgb", backend="cpu")
    expected = np.clip(np.rint(rgb.astype(np.float64) @ SEPIA.T), 0, 255)
    assert np.abs(out.astype(np.float64) - expected).max() <= 1.0
    # a red suit stays warm: R' >= G' >= B' wherever sepia applies
    assert (out[..., 0].astype(int) >= out[..., 2]).all()


def test_an_rgb_array_run_as_bgr_is_not_the_rgb_result() -> None:
    rgb = rgb_photo()
    assert not np.array_equal(cvf.apply(rgb, "sepia"), cvf.apply(rgb, "sepia", channel_order="rgb"))


def test_process_default_and_per_call_override() -> None:
    rgb = rgb_photo()
    expected = cvf.apply(rgb, "sepia", channel_order="rgb")
    cvf.set_defaults(channel_order="rgb")
    assert cvf.get_defaults()["channel_order"] == "rgb"
    assert np.array_equal(cvf.apply(rgb, "sepia"), expected)
    assert np.array_equal(cvf.Pipeline.parse("sepia")(rgb), expected)
    assert np.array_equal(cvf.apply(swapped(rgb), "sepia", channel_order="bgr"), swapped(expected))


def test_bad_channel_order_is_one_line() -> None:
    with pytest.raises(ValueError, match="channel_order='xyz' is not one of bgr, rgb"):
        cvf.set_defaults(channel_order="xyz")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="channel_order"):
        cvf.apply(rgb_photo(), "invert", channel_order="RGBA")  # type: ignore[arg-type]


def _param_sets(name: str) -> list[dict[str, Any]]:
    """The example parameters, then each parameter moved off its default on its own."""
    flt = cvf.get_filter(name)
    base = example_params(flt)
    sets = [base]
    for param in flt.params:
        if param.required or param.kind_record.files or param.kind in ("str", "pipeline"):
            continue
        value = SMALL_VALUES.get(name, {}).get(param.name, non_default_value(param))
        if value == param.default:
            continue
        try:
            flt.resolve({**base, param.name: value})
        except UsageError:
            continue
        sets.append({**base, param.name: value})
    return sets + [{**base, **extra} for extra in NOT_IDENTITY.get(name, [])]


# Values kept small where the derived one makes a huge image of the 24 x 32 test image (resize to 8192 px).
SMALL_VALUES: dict[str, dict[str, Any]] = {"resize": {"width": 48, "height": 40, "scale": 1.5}}

# Filters whose defaults and one-parameter changes are identities on a colour image get a mixing set.
NOT_IDENTITY: dict[str, list[dict[str, Any]]] = {
    "color_matrix": [{"matrix": [[0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]}],
    "saturation": [{"amount": 2.5}],
    "tone_curve": [{"points": [[0, 0], [0.5, 0.8], [1, 1]], "channel": "r"}],
    "crop": [{"x": 3, "y": 2, "width": 20, "height": 12}],
}


@pytest.mark.parametrize("name", NAMES)
def test_rgb_run_equals_the_bgr_run_on_the_swapped_array_for_every_filter(name: str) -> None:
    """Exact for integer images. float32 to 2 ulp: ``cv2.magnitude`` (gradient filters) rounds the
    last bit differently with the memory alignment of its input, which numpy's allocator varies."""
    changed = False
    for channels, dtype in ((3, np.uint8), (4, np.uint8), (3, np.uint16), (3, np.float32)):
        rgb = rgb_photo(channels, dtype)
        bgr = swapped(rgb)
        for params in _param_sets(name):
            try:
                want = cvf.apply(bgr, name, backend="cpu", **params)
            except ParameterError:  # a value that does not fit this small image (crop beyond it): refused alike
                with pytest.raises(ParameterError):
                    cvf.apply(rgb, name, backend="cpu", channel_order="rgb", **params)
                continue
            got = cvf.apply(rgb, name, backend="cpu", channel_order="rgb", **params)
            assert got.dtype == want.dtype and got.shape == want.shape
            if dtype == np.float32:
                np.testing.assert_allclose(swapped(got), want, rtol=2.4e-7, atol=1e-7, err_msg=f"{name} {params}")
            else:
                assert np.array_equal(swapped(got), want), (name, channels, dtype, params)
            changed = changed or want.shape != bgr.shape or not np.array_equal(want, bgr)
    assert changed, f"{name} is an identity at every parameter set tried: the test proves nothing for it"


def test_a_channel_named_in_a_parameter_is_that_colour_in_either_order() -> None:
    rgb = rgb_photo()
    out = cvf.apply(rgb, "tone_curve", points=[[0, 0], [0.5, 0.9], [1, 1]], channel="r", channel_order="rgb")
    assert np.array_equal(out[..., 1:], rgb[..., 1:]) and (out[..., 0] >= rgb[..., 0]).all()
    assert (out[..., 0] > rgb[..., 0]).any()


def test_apply_masked_takes_the_order() -> None:
    rgb = rgb_photo()
    got = cvf.apply_masked(rgb, "sepia", "ellipse:0.5,0.5,0.3,0.3", feather=3, channel_order="rgb")
    assert np.array_equal(swapped(got), cvf.apply_masked(swapped(rgb), "sepia", "ellipse:0.5,0.5,0.3,0.3", feather=3))


def test_gray_images_are_untouched_by_the_order() -> None:
    gray = photo(24, 32, 1)
    assert np.array_equal(cvf.apply(gray, "gaussian_blur", channel_order="rgb"), cvf.apply(gray, "gaussian_blur"))
    # a filter that makes colour from gray (sepia) returns it in the asked order
    assert np.array_equal(cvf.apply(gray, "sepia", channel_order="rgb"), swapped(cvf.apply(gray, "sepia")))


def test_read_and_write_in_rgb(tmp_path: Any) -> None:
    bgr = cv2.imread(str(FIXTURES / "astronaut.png"))
    rgb = cvf.read(FIXTURES / "astronaut.png", channel_order="rgb")
    assert np.array_equal(rgb, bgr[..., ::-1])
    cvf.write(tmp_path / "out.png", rgb, channel_order="rgb")
    assert np.array_equal(cv2.imread(str(tmp_path / "out.png")), bgr)
    cvf.set_defaults(channel_order="rgb")
    assert np.array_equal(cvf.read(tmp_path / "out.png"), rgb)


def test_luminance_histogram_of_rgb_is_bt601_of_r_g_b() -> None:
    rgb = rgb_photo(3, np.uint8, 48, 64)
    got = cvf.histogram(rgb, channels="luminance", channel_order="rgb")
    r, g, b = (rgb[..., i].astype(np.float64) for i in range(3))
    luma = np.clip(np.rint(0.299 * r + 0.587 * g + 0.114 * b), 0, 255).astype(int)
    want = np.bincount(luma.ravel(), minlength=256)
    # cv2's fixed-point luma may round a level differently: the cumulative counts agree to one level
    got_cdf, want_cdf = np.cumsum(got), np.cumsum(want)
    assert (got_cdf[1:] >= want_cdf[:-1]).all() and (got_cdf[:-1] <= want_cdf[1:]).all()
    assert np.array_equal(got, cvf.histogram(swapped(rgb), channels="luminance"))
    assert not np.array_equal(got, cvf.histogram(rgb, channels="luminance"))  # read as BGR it is another luma


def test_named_channels_follow_the_order() -> None:
    rgb = rgb_photo(4)
    assert np.array_equal(cvf.histogram(rgb, channels="r", channel_order="rgb"),
                          np.bincount(rgb[..., 0].ravel(), minlength=256))
    assert np.array_equal(cvf.histogram(rgb, channels="b", channel_order="rgb"),
                          np.bincount(rgb[..., 2].ravel(), minlength=256))
    assert np.array_equal(cvf.histogram(rgb, channels="a", channel_order="rgb"),
                          np.bincount(rgb[..., 3].ravel(), minlength=256))


@pytest.mark.parametrize("space", ["bgr", "lab"])
def test_quantize_palette_in_rgb_order(space: str) -> None:
    rgb = np.zeros((8, 8, 3), np.uint8)
    rgb[:, :5] = (250, 10, 0)   # red, most used
    rgb[:, 5:] = (0, 20, 240)   # blue
    out, palette = cvf.quantize_palette(rgb, 2, space=space, channel_order="rgb")
    assert np.abs(palette.astype(int) - [[250, 10, 0], [0, 20, 240]]).max() <= 1
    assert np.abs(out.astype(int) - rgb).max() <= 1
    photo_rgb = rgb_photo()
    out_rgb, pal_rgb = cvf.quantize_palette(photo_rgb, 6, space=space, channel_order="rgb")
    out_bgr, pal_bgr = cvf.quantize_palette(swapped(photo_rgb), 6, space=space)
    assert np.array_equal(pal_rgb, pal_bgr[:, ::-1]) and np.array_equal(out_rgb, swapped(out_bgr))


def test_reference_arrays_are_in_the_runs_order() -> None:
    rgb, reference = rgb_photo(3), swapped(cv2.imread(str(FIXTURES / "chelsea.jpg")))
    got = cvf.apply(rgb, "match_histogram", reference=reference, channel_order="rgb")
    want = cvf.apply(swapped(rgb), "match_histogram", reference=swapped(reference))
    assert np.array_equal(swapped(got), want)
    pipe = cvf.Pipeline([("blend", {"source": reference, "opacity": 0.7})])
    got = pipe(rgb, channel_order="rgb")
    assert np.array_equal(swapped(got), cvf.apply(swapped(rgb), "blend", source=swapped(reference), opacity=0.7))
    assert not np.array_equal(swapped(got), pipe(swapped(rgb)))  # the same array read as BGR is another overlay


def test_in_memory_references_are_not_saved_to_pipeline_files() -> None:
    pipe = cvf.Pipeline([("match_histogram", {"reference": rgb_photo()})])
    assert "<array 24x32x3 uint8>" in repr(pipe)
    with pytest.raises(UsageError, match="is an image in memory"):
        pipe.to_dict()


def test_unusable_reference_is_one_line() -> None:
    with pytest.raises(ParameterError) as info:
        cvf.apply(rgb_photo(), "match_histogram", reference=np.zeros((30, 30, 3), np.int32))
    assert "\n" not in str(info.value) and "match_histogram: reference" in str(info.value)
    assert "dtype int32" in str(info.value)


def test_the_swap_runs_on_each_backend(backend: str) -> None:
    rgb = rgb_photo(4, np.uint8, 48, 64)
    pipe = cvf.Pipeline.parse("sepia | gaussian_blur:sigma=1.5 | hue_shift:degrees=40")
    want = pipe(swapped(rgb), backend=backend)
    got = pipe(rgb, backend=backend, channel_order="rgb")
    assert np.array_equal(swapped(got), want)
    if backend == "opencl":
        device = pipe(cv2.UMat(rgb), backend=backend, channel_order="rgb")
        assert isinstance(device, cv2.UMat) and np.array_equal(device.get(), got)
