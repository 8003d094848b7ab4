"""resize, crop and pad against scikit-image, numpy slicing and np.pad; declared output sizes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage
from skimage.transform import resize as sk_resize

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters.geometry import resize_plan
from tests.conftest import CHANNELS, DTYPES, full_scale, photo


def _plan(width: int = 0, height: int = 0, scale: float = 0.5, fit: str = "stretch", size=(40, 30)):
    return resize_plan({"width": width, "height": height, "scale": scale, "fit": fit}, *size)


@pytest.mark.parametrize(("args", "expected"), [
    ({}, ((20, 15), (0, 0, 20, 15))),
    ({"scale": 2.0}, ((80, 60), (0, 0, 80, 60))),
    ({"width": 20}, ((20, 15), (0, 0, 20, 15))),
    ({"height": 60}, ((80, 60), (0, 0, 80, 60))),
    ({"width": 10, "height": 50}, ((10, 50), (0, 0, 10, 50))),
    ({"width": 20, "height": 20, "fit": "contain"}, ((20, 15), (0, 0, 20, 15))),  # 0.5 fits both
    ({"width": 20, "height": 20, "fit": "cover"}, ((27, 20), (3, 0, 20, 20))),  # 2/3 fills, 7 px cut, 3 left
    ({"scale": 0.001}, ((1, 1), (0, 0, 1, 1))),
])
def test_resize_plan_by_hand(args: dict, expected: tuple) -> None:
    assert _plan(**args) == expected


@pytest.mark.parametrize(("size", "out"), [((40, 30), (57, 23)), ((40, 30), (13, 71))])
def test_resize_linear_matches_scikit_image(backend: str, size, out) -> None:
    image = photo(size[1], size[0], 3, np.float32)
    result = cvf.apply(image, "resize", width=out[0], height=out[1], interpolation="linear", backend=backend)
    expected = sk_resize(image, (out[1], out[0], 3), order=1, mode="edge", anti_aliasing=False)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, atol=2e-4)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_resize_area_halving_is_the_block_mean(dtype: type) -> None:
    image = photo(24, 32, 3, dtype)
    out = cvf.apply(image, "resize", backend="cpu")  # default: scale 0.5, area
    blocks = image.astype(np.float64).reshape(12, 2, 16, 2, 3).mean(axis=(1, 3))
    tolerance = 0.51 if np.dtype(dtype).kind == "u" else 1e-6
    np.testing.assert_allclose(out.astype(np.float64), blocks, atol=tolerance)


def test_resize_nearest_takes_the_pixel_with_the_nearest_centre() -> None:
    image = np.arange(7 * 9, dtype=np.uint8).reshape(7, 9)
    out = cvf.apply(image, "resize", width=20, height=5, interpolation="nearest", backend="cpu")
    sx = np.floor((np.arange(20) + 0.5) * 9 / 20).astype(int)
    sy = np.floor((np.arange(5) + 0.5) * 7 / 5).astype(int)
    np.testing.assert_array_equal(out, image[np.ix_(sy, sx)])


def test_resize_cover_crops_the_centre_and_keeps_alpha_coverage() -> None:
    image = photo(30, 40, 4, np.uint8)
    out = cvf.apply(image, "resize", width=20, height=20, fit="cover", interpolation="linear", backend="cpu")
    assert out.shape == (20, 20, 4)
    scaled = cvf.apply(image, "resize", width=27, height=20, interpolation="linear", backend="cpu")
    np.testing.assert_array_equal(out, scaled[:, 3:23])


def test_resize_refuses_a_giant_result() -> None:
    with pytest.raises(cvf.ParameterError, match="resize: the result would be"):
        with cvf.allow_large():
            cvf.apply(np.zeros((2000, 10), np.uint8), "resize", scale=20.0, backend="cpu")


@pytest.mark.parametrize("channels", CHANNELS)
def test_crop_is_numpy_slicing(backend: str, channels: int) -> None:
    image = photo(30, 40, channels, np.uint16)
    out = cvf.apply(image, "crop", x=5, y=7, width=12, height=9, backend=backend)
    np.testing.assert_array_equal(out, image[7:16, 5:17])
    clipped = cvf.apply(image, "crop", x=30, y=20, width=100, backend=backend)  # cut at the edges
    np.testing.assert_array_equal(clipped, image[20:, 30:])
    np.testing.assert_array_equal(cvf.apply(image, "crop", backend=backend), image)


def test_crop_outside_the_image_names_the_parameter() -> None:
    with pytest.raises(cvf.ParameterError, match=r"^crop: x=40 is outside the image \(40 x 30 px\)"):
        cvf.apply(photo(30, 40), "crop", x=40)


NP_MODES = {"replicate": "edge", "reflect": "symmetric", "reflect101": "reflect", "wrap": "wrap"}


@pytest.mark.parametrize("border", list(NP_MODES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_pad_borders_are_np_pad(backend: str, border: str, dtype: type) -> None:
    image = photo(9, 11, 3, dtype)
    out = cvf.apply(image, "pad", top=2, bottom=3, left=4, right=1, border=border, backend=backend)
    np.testing.assert_array_equal(out, np.pad(image, ((2, 3), (4, 1), (0, 0)), mode=NP_MODES[border]))


@pytest.mark.parametrize("channels", CHANNELS)
def test_pad_constant_fill_per_channel(backend: str, channels: int) -> None:
    image = photo(6, 8, channels, np.uint8)
    out = cvf.apply(image, "pad", top=1, left=2, fill=[0.2, 0.4, 1.0], backend=backend)
    widths = ((1, 0), (2, 0)) + (((0, 0),) if channels > 1 else ())
    inside = np.pad(np.ones(image.shape[:2], bool), ((1, 0), (2, 0)))
    # fill is R, G, B: the image's B, G, R are 255, 102, 51
    expected_fill = {1: [round(255 * (0.114 * 1.0 + 0.587 * 0.4 + 0.299 * 0.2))], 3: [255, 102, 51],
                     4: [255, 102, 51, 255]}[channels]
    np.testing.assert_array_equal(out[inside].reshape(image.shape), image)
    assert (out[~inside].reshape(-1, channels) == expected_fill).all()
    assert out.shape == np.pad(image, widths).shape


def test_pad_of_bgra_with_a_translucent_fill_keeps_the_fill_straight(backend: str) -> None:
    """pad keeps every channel as is (alpha "all"): a fill of alpha 0.6 is not premultiplied into its colour."""
    image = photo(5, 7, 4, np.uint8)
    out = cvf.apply(image, "pad", top=2, right=3, fill=[1.0, 0.4, 0.0, 0.6], backend=backend)
    inside = np.pad(np.ones(image.shape[:2], bool), ((2, 0), (0, 3)))
    np.testing.assert_array_equal(out[inside].reshape(image.shape), image)
    # RGBA (1.0, 0.4, 0.0, 0.6) of 255, stored B, G, R, A; premultiplied G would be 61 and R 153
    assert (out[~inside] == [0, 102, 255, 153]).all()


def test_geometry_steps_chain_their_sizes(backend: str) -> None:
    image = photo(30, 40, 3, np.float32)
    pipe = Pipeline.parse("crop:x=4,y=2,width=20,height=20 | pad:top=2,bottom=2,left=2,right=2,border=replicate"
                          " | resize:scale=2,interpolation=nearest")
    out = pipe(image, backend=backend)
    assert out.shape == (48, 48, 3)
    expected = np.pad(image[2:22, 4:24], ((2, 2), (2, 2), (0, 0)), mode="edge").repeat(2, 0).repeat(2, 1)
    np.testing.assert_allclose(out, expected, atol=1e-6)
    assert full_scale(out.dtype) == 1.0


def test_steps_after_a_crop_see_its_own_edges(backend: str) -> None:
    image = photo(30, 40, 3, np.float32)
    out = Pipeline.parse("crop:x=10,y=8,width=16,height=12 | gaussian_blur:sigma=2,border=replicate")(
        image, backend=backend)
    expected = ndimage.gaussian_filter(image[8:20, 10:26].astype(np.float64), (2, 2, 0), mode="nearest",
                                       truncate=4.0)
    np.testing.assert_allclose(out, expected, atol=1e-4)


# --- from the survivors of the geometry mutation run (docs/mutation.md) ------------------------


@pytest.mark.parametrize(("args", "size", "expected"), [
    ({"width": 100, "height": 100, "fit": "contain"}, (1000, 4), ((100, 1), (0, 0, 100, 1))),  # 0.4 px: 1 px
    ({"width": 100, "height": 100, "fit": "contain"}, (4, 1000), ((1, 100), (0, 0, 1, 100))),
    ({"width": 10}, (1000, 4), ((10, 1), (0, 0, 10, 1))),  # the side that follows rounds to 0: 1 px
    ({"height": 10}, (4, 1000), ((1, 10), (0, 0, 1, 10))),
    # cover into a box that is not square: 0.6 fills both (24 x 18), 6 rows cut, 3 at the top
    ({"width": 24, "height": 12, "fit": "cover"}, (40, 30), ((24, 18), (0, 3, 24, 12))),
    ({"width": 12, "height": 30, "fit": "cover"}, (40, 30), ((40, 30), (14, 0, 12, 30))),
])
def test_resize_plan_edge_cases_by_hand(args: dict, size: tuple[int, int], expected: tuple) -> None:
    assert _plan(**args, size=size) == expected


def test_resize_declares_the_size_it_outputs() -> None:
    from cvfilters.core.context import ImageInfo
    from cvfilters.registry import catalog

    spec = ImageInfo(height=30, width=40, channels=3, dtype=np.dtype(np.uint8))
    params = {"width": 24, "height": 12, "scale": 0.5, "fit": "cover", "interpolation": "area"}
    out = catalog.get("resize").output_info(params, spec)
    assert (out.width, out.height, out.channels, out.dtype) == (24, 12, 3, np.dtype(np.uint8))


def test_resize_allows_exactly_the_largest_side_and_names_the_size_it_refuses() -> None:
    with cvf.allow_large():
        assert cvf.apply(np.zeros((1, 2), np.uint8), "resize", width=32768, height=1,
                         backend="cpu").shape == (1, 32768)
        with pytest.raises(cvf.ParameterError) as caught:
            cvf.apply(np.zeros((1, 2000), np.uint8), "resize", scale=17.0, backend="cpu")
    assert str(caught.value) == "resize: the result would be 34000 x 17 px; at most 32768 px a side"


def test_crop_box_clips_to_the_image_and_names_the_parameter_outside() -> None:
    from cvfilters.core.context import ImageInfo
    from cvfilters.filters.geometry import crop_box

    spec = ImageInfo(height=10, width=20, channels=3, dtype=np.dtype(np.uint8))
    assert crop_box({"x": 5, "y": 3, "width": 0, "height": 0}, spec) == (5, 3, 15, 7)  # to the edges
    assert crop_box({"x": 5, "y": 3, "width": 100, "height": 100}, spec) == (5, 3, 15, 7)
    for name, params in (("x", {"x": 20, "y": 0}), ("y", {"x": 0, "y": 10})):
        with pytest.raises(cvf.ParameterError) as caught:
            crop_box({**params, "width": 0, "height": 0}, spec)
        assert str(caught.value) == f"crop: {name}={params[name]} is outside the image (20 x 10 px)"


@pytest.mark.parametrize("side", ["top", "bottom", "left", "right"])
def test_pad_sides_are_declared_as_the_help_says(side: str) -> None:
    # _pad_param runs once at import; called here, its declaration is checked against `cvfilters info pad`
    from cvfilters.filters.geometry import _pad_param

    param = _pad_param(side)
    assert (param.name, param.kind, param.default, param.min, param.max, param.large, param.unit, param.example,
            param.help) == (side, "int", 0, 0, 4096, 1024, "px", 16, f"pixels added at the {side}")
