"""Colour filters against independent references: numpy formulas, OpenCV, scipy.

Tolerances: integer results within 1 level of the numpy formula (exact where the
formula is integer arithmetic or OpenCV's own), float32 within 1e-5 of full scale.
Tests taking ``backend`` run on cpu and on every device backend available here.
"""

from __future__ import annotations

import itertools
import math

import cv2
import numpy as np
import pytest
from scipy.interpolate import PchipInterpolator

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters.color import color_kernel, color_matrix_of, point_op_of
from cvfilters.registry import catalog as registry
from cvfilters.registry.params import Param
from tests.conftest import FIXTURES, full_scale, photo, photo16

DTYPES = (np.uint8, np.uint16, np.float32)
ATOL = {np.dtype(np.uint8): 1, np.dtype(np.uint16): 1, np.dtype(np.float32): 1e-5}
LUMA = np.array([0.114, 0.587, 0.299])  # BT.601 in BGR order
# The classic sepia matrix (Microsoft's recommendation, RGB rows), written here by hand.
# NTSC YIQ from RGB (FCC): Y is BT.601 luma, I and Q the chroma plane.
YIQ = np.array([[0.299, 0.587, 0.114], [0.595716, -0.274453, -0.321263], [0.211456, -0.522591, 0.311135]])


def sample(dtype: type, channels: int = 3, seed: int = 0) -> np.ndarray:
    """Every uint8 value (and black, white) in every channel, plus random values, at ``dtype``."""
    rng = np.random.default_rng(seed)
    full = full_scale(dtype)
    if np.dtype(dtype) == np.uint8:
        ramp = np.arange(256, dtype=np.float64)
    else:
        ramp = np.concatenate([[0, full], rng.uniform(0, full, 510)])
    planes = [np.roll(ramp, 37 * c) for c in range(channels)]
    image = np.stack(planes, axis=-1).reshape(16, -1, channels)
    image = image.astype(dtype) if np.dtype(dtype).kind == "f" else np.rint(image).astype(dtype)
    return image[..., 0] if channels == 1 else image


def expect(image: np.ndarray, formula, *, channel: int | None = None) -> np.ndarray:
    """``formula`` on normalised float64 values, clipped and stored back like the filters do."""
    full = full_scale(image.dtype)
    values = image.astype(np.float64) / full
    out = values.copy()
    if channel is None:
        out = formula(values)
    else:
        out[..., channel] = formula(values[..., channel])
    out = np.clip(out, 0.0, 1.0) * full
    return out if image.dtype == np.float32 else np.clip(np.rint(out), 0, full)


def assert_close(actual: np.ndarray, expected: np.ndarray, *, exact: bool = False) -> None:
    assert actual.shape == expected.shape
    tolerance = 0 if exact and actual.dtype != np.float32 else ATOL[actual.dtype]
    diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64)).max()
    assert diff <= tolerance, f"max difference {diff} > {tolerance}"


# ---------------------------------------------------------------- curves vs numpy
CURVE_CASES = {
    "levels": ({"in_black": 0.1, "in_white": 0.8, "gamma": 1.7, "out_black": 0.05, "out_white": 0.9},
               lambda v: 0.05 + 0.85 * np.clip((v - 0.1) / 0.7, 0, 1) ** (1 / 1.7)),
    "gamma": ({"gamma": 2.2}, lambda v: v ** (1 / 2.2)),
    "gamma-dark": ({"gamma": 0.5}, lambda v: v ** 2.0),
    "exposure": ({"ev": 0.7}, lambda v: v * 2 ** 0.7),
    "exposure-down": ({"ev": -1.5}, lambda v: v * 2 ** -1.5),
    "brightness_contrast": ({"brightness": -30, "contrast": 1.3}, lambda v: v * 1.3 - 30 / 255),
    "solarize": ({"threshold": 0.4}, lambda v: np.where(v >= 0.4, 1 - v, v)),
    "threshold": ({"value": 0.3}, lambda v: (v > 0.3).astype(float)),
    "threshold-inv": ({"value": 0.6, "invert": True}, lambda v: (v <= 0.6).astype(float)),
    "invert": ({}, lambda v: 1 - v),
}


@pytest.mark.parametrize("case", list(CURVE_CASES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_curve_matches_numpy(backend: str, case: str, dtype: type) -> None:
    params, formula = CURVE_CASES[case]
    image = sample(dtype)
    out = cvf.apply(image, case.split("-")[0], backend=backend, **params)
    exact = case.startswith(("solarize", "threshold", "invert"))
    assert_close(out, expect(image, formula), exact=exact)


@pytest.mark.parametrize("case", list(CURVE_CASES))
def test_curve_on_a_genuine_16_bit_photo(case: str) -> None:
    """Tens of thousands of distinct levels: a 16-bit table indexed everywhere, not at 256 points."""
    params, formula = CURVE_CASES[case]
    image = photo16()
    out = cvf.apply(image, case.split("-")[0], backend="cpu", **params)
    assert_close(out, expect(image, formula), exact=case.startswith(("solarize", "threshold", "invert")))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("levels", [2, 3, 16, 256])
def test_posterize_integer_formula(backend: str, dtype: type, levels: int) -> None:
    image = sample(dtype)
    out = cvf.apply(image, "posterize", levels=levels, backend=backend)
    full = full_scale(dtype)
    if np.dtype(dtype).kind == "u":
        bins = np.minimum(image.astype(np.int64) * levels // int(full), levels - 1)  # exact integer floor
        expected = np.rint(bins * full / (levels - 1))
    else:
        expected = np.minimum(np.floor(image.astype(np.float64) * levels), levels - 1) / (levels - 1)
    assert_close(out, expected, exact=True)
    if levels == 256 and dtype == np.uint8:
        np.testing.assert_array_equal(out, image)


@pytest.mark.parametrize("channel", ["b", "g", "r"])
def test_levels_one_channel(backend: str, channel: str) -> None:
    image = sample(np.uint16)
    params = {"in_black": 0.2, "in_white": 0.9, "gamma": 0.6, "out_black": 0.0, "out_white": 1.0}
    out = cvf.apply(image, "levels", channel=channel, backend=backend, **params)
    index = "bgr".index(channel)
    assert_close(out, expect(image, lambda v: np.clip((v - 0.2) / 0.7, 0, 1) ** (1 / 0.6), channel=index))
    untouched = [c for c in range(3) if c != index]
    np.testing.assert_array_equal(out[..., untouched], image[..., untouched])


def test_brightness_contrast_equals_convert_scale_abs() -> None:
    image = photo(64, 80, 3, np.uint8)
    ramp = np.arange(256, dtype=np.uint8).reshape(16, 16)
    for brightness, contrast in [(10, 1.2), (0, 1.0), (25, 0.7), (0, 2.35), (3, 1.1), (100, 0.5), (0, 0.01)]:
        for img in (image, ramp):
            out = cvf.apply(img, "brightness_contrast", brightness=brightness, contrast=contrast, backend="cpu")
            np.testing.assert_array_equal(out, cv2.convertScaleAbs(img, alpha=contrast, beta=brightness))


def test_threshold_equals_opencv() -> None:
    image = photo(40, 50, 3, np.uint8)
    out = cvf.apply(image, "threshold", value=0.5, backend="cpu")
    np.testing.assert_array_equal(out, cv2.threshold(image, 127.5, 255, cv2.THRESH_BINARY)[1])


def test_reference_chain_matches_raw_opencv() -> None:
    image = photo(60, 80, 3, np.uint8)
    chain = "gamma:gamma=1.4 | brightness_contrast:brightness=10,contrast=1.2 | posterize:levels=16 | invert"
    out = Pipeline.parse(chain)(image, backend="cpu")
    i = np.arange(256)
    gamma_table = np.rint((i / 255) ** (1 / 1.4) * 255).astype(np.uint8)
    poster_table = np.rint(np.minimum(i * 16 // 255, 15) * 255 / 15).astype(np.uint8)
    expected = cv2.LUT(image, gamma_table)
    expected = cv2.convertScaleAbs(expected, alpha=1.2, beta=10)
    expected = cv2.bitwise_not(cv2.LUT(expected, poster_table))
    np.testing.assert_array_equal(out, expected)


# ---------------------------------------------------------------- tone curve
POINTS = [[0, 0], [0.25, 0.2], [0.75, 0.85], [1, 1]]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("points", [POINTS, [[0, 0.1], [0.3, 0.9], [0.5, 0.2], [0.6, 0.25], [1, 0.3]],
                                    [[0.2, 0.3], [0.8, 0.6]]], ids=["s-curve", "wiggly", "two-inside"])
def test_tone_curve_matches_scipy_pchip(backend: str, dtype: type, points: list[list[float]]) -> None:
    xy = np.asarray(points, dtype=np.float64)
    spline = PchipInterpolator(xy[:, 0], xy[:, 1])
    image = sample(dtype)
    out = cvf.apply(image, "tone_curve", points=points, backend=backend)
    assert_close(out, expect(image, lambda v: spline(np.clip(v, xy[0, 0], xy[-1, 0]))))


def test_tone_curve_passes_through_points_and_is_monotone(backend: str) -> None:
    xs = np.array([p[0] for p in POINTS], dtype=np.float32)
    ramp = np.linspace(0, 1, 4001, dtype=np.float32)
    image = np.concatenate([xs, ramp]).reshape(1, -1)
    out = cvf.apply(image, "tone_curve", points=POINTS, backend=backend).ravel()
    np.testing.assert_allclose(out[: len(xs)], [p[1] for p in POINTS], atol=1e-6)
    curve = out[len(xs):]
    assert np.all(np.diff(curve) >= -1e-7)
    for (x0, y0), (x1, y1) in itertools.pairwise(POINTS):
        between = curve[(ramp >= x0) & (ramp <= x1)]
        assert between.min() >= min(y0, y1) - 1e-6 and between.max() <= max(y0, y1) + 1e-6  # no overshoot
    table = cvf.get_filter("tone_curve").table({"points": POINTS, "channel": "all"}, ImageInfo(1, 1, 3, np.uint8))
    assert np.all(np.diff(table.astype(int)) >= 0)
    assert table[0] == 0 and table[255] == 255


@pytest.mark.parametrize("points", [[[0, 0]], [[0, 0], [0, 1]], [[0.5, 0], [0.2, 1]], [[0, 0], [1, 1.5]],
                                    [[0, 0, 1], [1, 1, 1]]], ids=str)
def test_tone_curve_rejects_bad_points(points: list[list[float]]) -> None:
    with pytest.raises(ParameterError, match="^tone_curve: points"):
        cvf.get_filter("tone_curve").resolve({"points": points})


def test_tone_curve_from_file_and_cli_string(tmp_path) -> None:
    (tmp_path / "curve.csv").write_text("0,0\n0.25,0.2\n0.75,0.85\n1,1\n")
    from_file = Pipeline.parse("tone_curve:points=@curve.csv", base_dir=tmp_path)
    inline = Pipeline.parse("tone_curve:points=[[0,0],[0.25,0.2],[0.75,0.85],[1,1]]")
    assert from_file == inline
    image = photo(20, 30, 3, np.uint8)
    np.testing.assert_array_equal(from_file(image, backend="cpu"), inline(image, backend="cpu"))


# ---------------------------------------------------------------- color_kernel
@pytest.fixture
def square_kernel():
    flt = color_kernel(lambda v: v ** 2, "test_square_kernel", summary="Square each channel value.")
    yield flt
    registry.unregister(flt.name)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_color_kernel_matches_numpy(backend: str, square_kernel, dtype: type, channels: int) -> None:
    image = photo(30, 40, channels, dtype)
    out = cvf.apply(image, square_kernel, backend=backend)
    colour = image[..., :3] if channels == 4 else image
    assert_close(out[..., :3] if channels == 4 else out, expect(colour, lambda v: v ** 2))
    if channels == 4:
        np.testing.assert_array_equal(out[..., 3], image[..., 3])


def test_color_kernel_runs_everywhere_a_filter_does(square_kernel) -> None:
    image = photo(20, 24, 3, np.uint8)
    expected = np.rint((image / 255.0) ** 2 * 255).astype(np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, square_kernel, backend="cpu"), expected)
    np.testing.assert_array_equal(cvf.apply(image, "test_square_kernel", backend="cpu"), expected)
    np.testing.assert_array_equal(Pipeline([(square_kernel, {})])(image, backend="cpu"), expected)
    np.testing.assert_array_equal(Pipeline.parse("test_square_kernel")(image, backend="cpu"), expected)
    np.testing.assert_array_equal(square_kernel(image, backend="cpu"), expected)
    table = square_kernel.table({}, ImageInfo(20, 24, 3, np.dtype(np.uint8)))
    np.testing.assert_array_equal(table, np.rint((np.arange(256) / 255) ** 2 * 255))
    assert table.dtype == np.uint8 and not table.flags.writeable
    assert square_kernel.table({}, ImageInfo(1, 1, 1, np.dtype(np.uint16))).shape == (65536,)
    assert square_kernel.table({}, ImageInfo(1, 1, 3, np.dtype(np.float32))) is None
    assert point_op_of("test_square_kernel") is not None
    assert cvf.get_filter("test_square_kernel").description == "Square each channel value."


def test_color_kernel_with_params_and_docstring() -> None:
    def lift(v, *, amount):
        """``out = in + amount * (1 - in)``."""
        return v + amount * (1 - v)

    flt = color_kernel(lift, summary="Lift towards white.",
                       params=[Param("amount", "float", 0.5, min=0.0, max=1.0, help="how far")])
    try:
        assert flt.name == "lift" and "amount * (1 - in)" in flt.description
        image = photo(16, 16, 3, np.uint16)
        out = Pipeline.parse("lift:amount=0.25")(image, backend="cpu")
        assert_close(out, expect(image, lambda v: v + 0.25 * (1 - v)))
        assert flt.table({"amount": 0.25}, ImageInfo(1, 1, 3, np.dtype(np.uint16))) is flt.table(
            {"amount": 0.25}, ImageInfo(1, 1, 3, np.dtype(np.uint16)))  # built once, cached
    finally:
        registry.unregister("lift")


def test_color_kernel_errors() -> None:
    with pytest.raises(ValueError, match="name="):
        color_kernel(lambda v: v, summary="x")
    flt = color_kernel(lambda v: v / 0.0 * 0.0, "test_nan_kernel", summary="NaN everywhere.")
    try:
        with pytest.raises(ValueError, match="NaN"), np.errstate(all="ignore"):
            cvf.apply(photo(4, 4, 3, np.uint8), flt, backend="cpu")
    finally:
        registry.unregister("test_nan_kernel")


def test_float32_curve_host_fallback_is_counted(device_backend: str) -> None:
    image = photo(20, 20, 3, np.float32)
    _, report = Pipeline.parse("gamma:gamma=2").run(image, backend=device_backend)
    assert report.counters.fallbacks["gamma (float32 on host)"] == 1
    _, report = Pipeline.parse("exposure:ev=1 | brightness_contrast:contrast=2 | threshold | invert").run(
        image, backend=device_backend)
    assert not report.counters.fallbacks  # exact float32 device forms


# ---------------------------------------------------------------- tables as hooks
def test_tables_compose_like_running_the_steps() -> None:
    spec = ImageInfo(1, 1, 3, np.dtype(np.uint8))
    steps = [("gamma", {"gamma": 1.4}), ("levels", {"in_black": 0.1, "channel": "r"}), ("posterize", {"levels": 8})]
    composed = np.arange(256, dtype=np.uint8)[:, None].repeat(3, axis=1)
    for name, params in steps:
        flt = cvf.get_filter(name)
        table = flt.table(flt.resolve(params), spec)
        table = table[:, None].repeat(3, axis=1) if table.ndim == 1 else table
        composed = np.take_along_axis(table, composed.astype(np.intp), axis=0)
    image = photo(30, 30, 3, np.uint8)
    expected = composed[image, np.arange(3)]
    np.testing.assert_array_equal(Pipeline(steps)(image, backend="cpu"), expected)


def test_table_shapes() -> None:
    levels = cvf.get_filter("levels")
    one = levels.resolve({"channel": "g", "gamma": 2.0})
    assert levels.table(one, ImageInfo(1, 1, 3, np.dtype(np.uint8))).shape == (256, 3)
    assert levels.table(one, ImageInfo(1, 1, 4, np.dtype(np.uint16))).shape == (65536, 3)
    assert levels.table(one, ImageInfo(1, 1, 1, np.dtype(np.uint8))).shape == (256,)
    table = levels.table(one, ImageInfo(1, 1, 3, np.dtype(np.uint8)))
    np.testing.assert_array_equal(table[:, [0, 2]], np.arange(256)[:, None].repeat(2, axis=1))
    invert = cvf.get_filter("invert")
    np.testing.assert_array_equal(invert.table({}, ImageInfo(1, 1, 3, np.dtype(np.uint16))),
                                  65535 - np.arange(65536))


def test_gray_images_act_as_equal_channels() -> None:
    gray = photo(20, 20, 1, np.uint8)
    colour = cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)
    for spec in ["levels:gamma=1.8,channel=r", "color_matrix:matrix=[[0,0,1],[0,1,0],[1,0,0.5]]"]:
        as_colour = Pipeline.parse(spec)(colour, backend="cpu").astype(np.float64) @ LUMA
        assert np.abs(Pipeline.parse(spec)(gray, backend="cpu") - as_colour).max() <= 1.0, spec
    # sepia tones gray into colour (3 channels), the result for the equal channels, mixed or not, every depth
    for dtype, spec in itertools.product(DTYPES, ["sepia", "sepia:intensity=0.5"]):
        deep = photo(20, 20, 1, dtype)
        np.testing.assert_array_equal(Pipeline.parse(spec)(deep, backend="cpu"),
                                      Pipeline.parse(spec)(cv2.cvtColor(deep, cv2.COLOR_GRAY2BGR), backend="cpu"))
    for spec in ["saturation:amount=0", "saturation:amount=3", "hue_shift:degrees=77"]:  # (they warn once)
        np.testing.assert_array_equal(Pipeline.parse(spec)(gray, backend="cpu"), gray)


# ---------------------------------------------------------------- colour matrices
def rgb_matrix_oracle(image: np.ndarray, matrix_rgb: np.ndarray, offset_rgb=(0.0, 0.0, 0.0)) -> np.ndarray:
    full = full_scale(image.dtype)
    rgb = image[..., ::-1].astype(np.float64) / full
    out = np.clip(rgb @ np.asarray(matrix_rgb).T + np.asarray(offset_rgb), 0, 1)[..., ::-1] * full
    return out if image.dtype == np.float32 else np.rint(out)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_sepia_intensity_mixes_with_the_original(backend: str, dtype: type) -> None:
    image = photo(30, 40, 3, dtype)
    full = cvf.apply(image, "sepia", backend=backend).astype(np.float64)
    half = cvf.apply(image, "sepia", intensity=0.5, backend=backend).astype(np.float64)
    step = 1.0 if dtype != np.float32 else 1e-6
    assert np.abs(half - (image.astype(np.float64) + full) / 2).max() <= step
    np.testing.assert_array_equal(cvf.apply(image, "sepia", intensity=0.0, backend=backend), image)


def test_sepia_on_a_device_is_counted_as_host_work_by_its_name(device_backend: str) -> None:
    """sepia runs on the host: a device run's report names it once, as the run summary prints it."""
    _, report = Pipeline.parse("sepia").run(photo(24, 32, 3, np.uint8), backend=device_backend)
    assert dict(report.counters.fallbacks) == {"sepia (on host)": 1}


@pytest.mark.parametrize("strength", [0.8, 0.5])
def test_sepia_matches_imagemagick_sepia_tone(tmp_path, strength: float) -> None:
    """ImageMagick 6's ``convert -sepia-tone N%`` on the cat photo is the reference (within a level)."""
    import shutil
    import subprocess

    if shutil.which("convert") is None:
        pytest.skip("ImageMagick's convert is not installed")
    source, target = tmp_path / "cat.png", tmp_path / "sepia.png"
    image = cv2.imread(str(FIXTURES / "chelsea.jpg"))
    cv2.imwrite(str(source), image)
    subprocess.run(["convert", str(source), "-sepia-tone", f"{strength * 100:g}%", str(target)], check=True)
    reference = cv2.imread(str(target)).astype(np.float64)
    out = cvf.apply(image, "sepia", strength=strength, backend="cpu").astype(np.float64)
    difference = np.abs(out - reference)
    assert np.abs(out.mean(axis=(0, 1)) - reference.mean(axis=(0, 1))).max() <= 1.5
    assert np.percentile(difference, 99) <= 2 and difference.mean() <= 1


@pytest.mark.parametrize(("dtype", "levels"), [(np.uint8, 1), (np.uint16, 2)], ids=["uint8", "uint16"])
def test_sepia_of_black_and_a_grey_ramp_to_white_matches_imagemagick(tmp_path, dtype: type, levels: int) -> None:
    """Black, then every grey to full white (a white pixel is the top of the tone table, not past its end) against
    ``convert -sepia-tone 80%``, within a level of uint8 and two of uint16 (ImageMagick's quantum is 16-bit)."""
    import shutil
    import subprocess

    if shutil.which("convert") is None:
        pytest.skip("ImageMagick's convert is not installed")
    # a black band of a third of the image: the normalize quantiles count black pixels too
    ramp = np.tile(np.r_[np.zeros(128, np.uint16), np.arange(256, dtype=np.uint16)], (8, 1))
    ramp *= 1 if dtype == np.uint8 else 257
    image = cv2.merge([ramp.astype(dtype)] * 3)
    source, target = tmp_path / "ramp.png", tmp_path / "sepia.png"
    cv2.imwrite(str(source), image)
    subprocess.run(["convert", str(source), "-sepia-tone", "80%", str(target)], check=True)
    reference = cv2.imread(str(target), cv2.IMREAD_UNCHANGED).astype(np.float64)
    out = cvf.apply(image, "sepia", backend="cpu").astype(np.float64)
    assert np.abs(out - reference).max() <= levels


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_saturation_zero_is_gray(backend: str, dtype: type) -> None:
    image = photo(30, 40, 3, dtype)
    out = cvf.apply(image, "saturation", amount=0.0, backend=backend)
    assert np.abs(out.astype(np.float64) - out[..., :1]).max() <= (0 if dtype != np.float32 else 1e-6)
    gray = image.astype(np.float64) @ LUMA  # BT.601 luma on every channel
    assert_close(out, np.repeat(gray[..., None], 3, axis=2) if dtype == np.float32 else np.rint(gray)[..., None]
                 .repeat(3, axis=2))
    np.testing.assert_array_equal(cvf.apply(image, "saturation", amount=1.0, backend=backend), image)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_hue_shift_full_turn_is_identity(backend: str, dtype: type) -> None:
    image = photo(30, 40, 4, dtype)
    for degrees in (360.0, -360.0, 0.0):
        out = cvf.apply(image, "hue_shift", degrees=degrees, backend=backend)
        if dtype == np.float32:
            np.testing.assert_allclose(out, image, atol=1e-6)
        else:
            np.testing.assert_array_equal(out, image)


@pytest.mark.parametrize("degrees", [40.0, -115.0])
def test_hue_shift_rotates_the_yiq_chroma_plane(degrees: float) -> None:
    """out = YIQ^-1 R(-degrees) YIQ in: luma kept, (I, Q) turned, from the NTSC matrix written here."""
    image = photo(20, 24, 3, np.float32) * 0.6 + 0.2  # mid-range: no clipping
    out = cvf.apply(image, "hue_shift", degrees=degrees, backend="cpu").astype(np.float64)
    yiq = image[..., ::-1].astype(np.float64) @ YIQ.T
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    turned = np.stack([yiq[..., 0], c * yiq[..., 1] + s * yiq[..., 2], -s * yiq[..., 1] + c * yiq[..., 2]], axis=-1)
    expected = np.clip(turned @ np.linalg.inv(YIQ).T, 0, 1)[..., ::-1]
    np.testing.assert_allclose(out, expected, atol=2e-6)


def test_hue_shift_direction_and_composition() -> None:
    red = np.zeros((1, 1, 3), np.float32)
    red[..., 2] = 1.0
    assert np.argmax(cvf.apply(red, "hue_shift", degrees=120, backend="cpu")) == 1  # red -> green
    assert np.argmax(cvf.apply(red, "hue_shift", degrees=-120, backend="cpu")) == 0  # red -> blue
    a, b = color_matrix_of("hue_shift", {"degrees": 100}), color_matrix_of("hue_shift", {"degrees": 50})
    np.testing.assert_allclose(a[:, :3] @ b[:, :3], color_matrix_of("hue_shift", {"degrees": 150})[:, :3], atol=1e-12)
    luma = LUMA @ a[:, :3]
    np.testing.assert_allclose(luma, LUMA, atol=1e-12)  # luma is kept


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_color_matrix(backend: str, dtype: type) -> None:
    image = photo(30, 40, 3, dtype)
    identity = cvf.apply(image, "color_matrix", backend=backend)
    np.testing.assert_array_equal(identity, image)
    matrix = [[0.5, 0.3, 0.1, 0.05], [0.0, 1.2, -0.1, 0.0], [0.2, 0.2, 0.6, -0.1]]  # RGB rows, offsets
    out = cvf.apply(image, "color_matrix", matrix=matrix, backend=backend)
    m = np.asarray(matrix)
    assert_close(out, rgb_matrix_oracle(image, m[:, :3], m[:, 3]))
    bgr = cvf.apply(image, "color_matrix", matrix=[[0, 0, 1], [0, 1, 0], [1, 0, 0]], order="bgr", backend=backend)
    np.testing.assert_array_equal(bgr, image[..., ::-1])


def test_color_matrix_rejects_bad_shapes() -> None:
    with pytest.raises(ParameterError, match="^color_matrix: matrix must be 3x3 or 3x4"):
        cvf.get_filter("color_matrix").resolve({"matrix": [[1, 0], [0, 1]]})


def test_color_matrix_of_describes_what_runs() -> None:
    """Consistency of the matrices fusion composes with what each filter runs (not an oracle of either:
    the formulas are checked above against matrices written in this file)."""
    image = photo(20, 20, 3, np.float32)
    for name, params in [("saturation", {"amount": 1.7}), ("hue_shift", {"degrees": 33}),
                         ("color_matrix", {"matrix": [[1, 0, 0, 0.1], [0, 0.5, 0, 0], [0, 0, 1, 0]]}),
                         ("grayscale", {})]:
        m = color_matrix_of(name, params)
        assert m.shape == (3, 4)
        expected = np.clip(image.astype(np.float64) @ m[:, :3].T + m[:, 3], 0, 1)
        np.testing.assert_allclose(cvf.apply(image, name, backend="cpu", **params), expected, atol=1e-5)
    with pytest.raises(KeyError):
        color_matrix_of("gamma", {})


# ---------------------------------------------------------------- pipeline fusion
TABLE_CHAIN = "gamma:gamma=1.4 | brightness_contrast:brightness=10,contrast=1.2 | posterize:levels=16 | invert"


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_fused_tables_equal_steps(backend: str, dtype: type, channels: int) -> None:
    image = photo(30, 40, channels, dtype)
    chain = TABLE_CHAIN + " | levels:in_black=0.1,channel=g | tone_curve | solarize | threshold:value=0.3"
    fused = Pipeline.parse(chain)
    assert len(fused.compile()) == 1
    np.testing.assert_array_equal(fused(image, backend=backend),
                                  Pipeline.parse(chain, fuse=False)(image, backend=backend))


def test_fused_matrices_equal_steps_within_a_level(backend: str) -> None:
    image = (photo(30, 40, 3, np.uint8) * 0.5 + 60).astype(np.uint8)  # no step leaves 0..255
    chain = "saturation:amount=1.3 | hue_shift:degrees=40 | color_matrix | grayscale"
    fused = Pipeline.parse(chain)
    assert len(fused.compile()) == 1
    difference = fused(image, backend=backend).astype(int) - Pipeline.parse(chain, fuse=False)(image, backend=backend)
    assert np.abs(difference).max() <= 2  # each unfused step rounds to a level


def test_lut_and_color_kernels_in_fused_pipelines(square_kernel) -> None:
    image = photo(30, 40, 3, np.uint8)
    chain = f"gamma:gamma=1.2 | test_square_kernel | lut:file={FIXTURES / 'warm.cube'} | invert | posterize"
    fused, plain = Pipeline.parse(chain), Pipeline.parse(chain, fuse=False)
    assert len(fused.compile()) == 3
    np.testing.assert_array_equal(fused(image, backend="cpu"), plain(image, backend="cpu"))


def test_sepia_normalize_range_is_the_quantiles_of_the_toned_luma() -> None:
    """Against numpy's quantile of ImageMagick's toned luma, written out here (t = 0.8; luma Rec. 709)."""
    from cvfilters.filters._shared import sepia_tone

    steps = np.random.default_rng(7).integers(0, 65536, 5001)
    level, t = steps / 65535.0, 0.8
    red, green = np.clip(level + 1 - t, 0, 1), np.maximum(np.clip(level + 1 - 7 * t / 6, 0, 1), t / 7)
    blue = np.maximum(np.clip(level - t / 6, 0, 1), t / 7)
    luma = 0.212656 * red + 0.715158 * green + 0.072186 * blue
    expected = np.quantile(luma, [0.0015, 0.9995])
    got = sepia_tone.normalize_range(np.bincount(steps, minlength=65536), t)
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_sepia_of_a_flat_image_skips_normalize_and_raises_the_contrast_by_hand() -> None:
    """One intensity: no range to normalize (ImageMagick leaves the toned colour), then -contrast."""
    grey = np.full((5, 7), 128, np.uint8)
    level, t = 128 / 255, 0.8
    toned = np.array([max(level - t / 6, t / 7), max(level + 1 - 7 * t / 6, t / 7), level + 1 - t])  # B, G, R
    value = toned.max()
    raised = value + 0.5 * (0.5 * (np.sin(np.pi * (value - 0.5)) + 1) - value)
    expected = np.rint(toned * raised / value * 255)
    out = cvf.apply(grey, "sepia", backend="cpu")
    assert out.shape == (5, 7, 3) and (out == expected.astype(np.uint8)).all()
