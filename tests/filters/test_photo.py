"""Photo adjustments against formulas and properties (cv2 parity where the filter wraps OpenCV, labelled)."""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.filters.photo import temperature_matrix, white_xy
from tests.conftest import DTYPES, full_scale, photo, to_dtype

LUMA = np.array([0.114, 0.587, 0.299])


def cast(dtype: type = np.uint8) -> np.ndarray:
    """The astronaut with a blue-green colour cast (R x 0.7, B x 1.1)."""
    image = photo(64, 64, 3, np.uint8).astype(np.float64) * [1.1, 1.0, 0.7]
    return to_dtype(np.clip(np.rint(image), 0, 255).astype(np.uint8), dtype)


# ---------------------------------------------------------------- white balance
def test_white_balance_uint8_is_xphoto(backend: str) -> None:  # cv2 parity
    image = cast()
    expected = {"grayworld": cv2.xphoto.createGrayworldWB(), "simple": cv2.xphoto.createSimpleWB(),
                "learning": cv2.xphoto.createLearningBasedWB()}
    for method, wb in expected.items():
        np.testing.assert_array_equal(cvf.apply(image, "white_balance", method=method, backend=backend),
                                      wb.balanceWhite(image))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_grayworld_evens_the_channel_means(dtype: type) -> None:
    image = cast(dtype)
    values = cvf.apply(image, "white_balance", method="grayworld", backend="cpu").astype(np.float64)
    values /= full_scale(dtype)
    means = values.reshape(-1, 3).mean(axis=0)
    before = (image.astype(np.float64) / full_scale(dtype)).reshape(-1, 3).mean(axis=0)
    assert np.ptp(means) < 0.3 * np.ptp(before)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_simple_white_balance_stretches_each_channel_between_its_percentiles(dtype: type) -> None:
    image = cast(dtype)
    out = cvf.apply(image, "white_balance", method="simple", percent=2.0, backend="cpu").astype(np.float64)
    full = full_scale(dtype)
    for c in range(3):
        low, high = np.percentile(out[..., c], [2, 98]) / full
        assert low < 0.03 and high > 0.97


def test_white_balance_leaves_gray_and_keeps_alpha() -> None:
    gray = photo(16, 16, 1, np.uint16)
    np.testing.assert_array_equal(cvf.apply(gray, "white_balance", backend="cpu"), gray)
    rgba = photo(16, 16, 4, np.float32)
    np.testing.assert_array_equal(cvf.apply(rgba, "white_balance", method="learning", backend="cpu")[..., 3],
                                  rgba[..., 3])


# ---------------------------------------------------------------- temperature and tint
def mccamy(x: float, y: float) -> float:
    """McCamy's cubic approximation of the correlated colour temperature of (x, y)."""
    n = (x - 0.3320) / (0.1858 - y)
    return 449 * n**3 + 3525 * n**2 + 6823.3 * n + 5520.33


@pytest.mark.parametrize("kelvin", [3000.0, 4000.0, 5000.0, 6500.0, 8000.0])
def test_white_point_lies_on_the_planckian_locus(kelvin: float) -> None:
    x, y = white_xy(kelvin, 0.0)
    assert abs(mccamy(x, y) - kelvin) < 0.01 * kelvin
    gx, gy = white_xy(kelvin, -50.0)  # negative tint: the white moves to the magenta side (lower y)
    assert gy < y


def srgb_encode(v: np.ndarray) -> np.ndarray:
    v = np.clip(v, 0, 1)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055)


def test_temperature_tint_maps_the_neutral_to_the_target_white() -> None:
    to_rgb = np.linalg.inv([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                            [0.0193339, 0.1191920, 0.9503041]])

    def white_rgb(kelvin: float, tint: float) -> np.ndarray:
        x, y = white_xy(kelvin, tint)
        rgb = to_rgb @ np.array([x / y, 1.0, (1 - x - y) / y])
        return rgb / rgb.max() * 0.6

    source, target = white_rgb(9000.0, 20.0), white_rgb(6500.0, 0.0)
    pixel = srgb_encode(source)[::-1].astype(np.float32).reshape(1, 1, 3)  # BGR, encoded
    out = cvf.apply(pixel, "temperature_tint", temperature=9000.0, tint=20.0, backend="cpu")[0, 0]
    expected = srgb_encode(target * (source @ [0.2126729, 0.7151522, 0.0721750]) /
                           (target @ [0.2126729, 0.7151522, 0.0721750]))[::-1]  # Bradford keeps Y
    np.testing.assert_allclose(out, expected, atol=2e-3)


def test_the_cached_temperature_matrix_cannot_be_changed_by_a_caller() -> None:
    # temperature_matrix is an lru_cache result shared by every later call with the same whites:
    # it is read-only, so a caller writing into it cannot change what the next temperature_tint uses
    first = temperature_matrix(5200.0, 7.0, 6500.0, 0.0)
    before = first.copy()
    with pytest.raises(ValueError, match="read-only"):
        first[0, 0] = 0.0
    np.testing.assert_array_equal(temperature_matrix(5200.0, 7.0, 6500.0, 0.0), before)


def test_temperature_tint_directions_and_identity(backend: str) -> None:
    image = photo(20, 20, 3, np.uint8)
    warm = cvf.apply(image, "temperature_tint", backend=backend).astype(np.float64)
    assert warm[..., 2].mean() > image[..., 2].mean() and warm[..., 0].mean() < image[..., 0].mean()
    magenta = cvf.apply(image, "temperature_tint", temperature=6500.0, tint=40.0, backend=backend).astype(float)
    assert magenta[..., 1].mean() < image[..., 1].mean()
    same = cvf.apply(image, "temperature_tint", temperature=6500.0, backend=backend)
    assert np.abs(same.astype(int) - image).max() <= 1
    np.testing.assert_allclose(temperature_matrix(5000.0, 10.0, 5000.0, 10.0), np.eye(3), atol=1e-12)


# ---------------------------------------------------------------- vibrance, highlights/shadows
def test_vibrance_boosts_muted_colours_more_and_leaves_grays(backend: str) -> None:
    # a muted and a vivid colour of similar luma, and a gray
    pixels = np.array([[[110, 128, 150], [30, 100, 230], [128, 128, 128]]], np.uint8)
    out = cvf.apply(pixels, "vibrance", amount=0.8, backend=backend).astype(np.float64) / 255
    values = pixels.astype(np.float64) / 255
    luma = values @ LUMA
    for i in range(3):
        chroma = values[0, i].max() - values[0, i].min()
        expected = np.clip(luma[0, i] + (values[0, i] - luma[0, i]) * (1 + 0.8 * (1 - chroma)), 0, 1)
        np.testing.assert_allclose(out[0, i], expected, atol=0.5 / 255)
    gain = [(out[0, i] - luma[0, i]).std() / (values[0, i] - luma[0, i]).std() for i in range(2)]
    assert gain[0] > gain[1] > 1
    np.testing.assert_array_equal(out[0, 2], values[0, 2])


def test_highlights_shadows_lifts_shadows_cuts_highlights_keeps_hue() -> None:
    ramp = np.linspace(0, 1, 101, dtype=np.float32)
    gray = np.repeat(ramp[None, :], 2, axis=0)
    np.testing.assert_allclose(cvf.apply(gray, "highlights_shadows", shadows=0.0, highlights=1.0), gray, atol=1e-6)
    lifted = cvf.apply(gray, "highlights_shadows", shadows=0.8, highlights=1.0)[0]
    assert np.all(lifted[1:25] > ramp[1:25]) and np.all(lifted >= ramp - 1e-6)  # the curve lifts below ~0.3
    cut = cvf.apply(gray, "highlights_shadows", shadows=0.0, highlights=0.2)[0]
    assert np.all(cut[75:100] < ramp[75:100]) and np.all(cut <= ramp + 1e-6)  # and cuts above ~0.7
    colour = np.array([[[0.1, 0.2, 0.3]]], np.float32)
    out = cvf.apply(colour, "highlights_shadows", backend="cpu")[0, 0]
    np.testing.assert_allclose(out / out.sum(), colour[0, 0] / colour[0, 0].sum(), atol=1e-6)  # one gain


@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("channels", [1, 3])
def test_highlights_shadows_keeps_black_black_without_a_warning(dtype: type, channels: int) -> None:
    # luma 0 has no gain (0 / 0): black pixels take the new luma, tone_luma(0) = 0 + 0 + clip(0.8, -1, 0) = 0,
    # computed without a warning on the way (numpy's RuntimeWarning for 0 / 0, its UserWarning for a divide
    # with where= and no out=)
    image: np.ndarray = np.zeros((2, 3, channels) if channels == 3 else (2, 3), dtype)
    image[0, 0] = 128 if dtype == np.uint8 else 0.5  # one lit pixel, the rest black
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = cvf.apply(image, "highlights_shadows", backend="cpu")
    assert out.dtype == image.dtype
    np.testing.assert_array_equal(out.reshape(6, -1)[1:], 0)


# ---------------------------------------------------------------- denoise
def test_denoise_uint8_is_opencv_non_local_means(backend: str) -> None:  # cv2 parity
    image = photo(40, 48, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, "denoise", backend=backend),
                                  cv2.fastNlMeansDenoisingColored(image, None, 10, 10, 7, 21))
    gray = image[..., 1].copy()
    np.testing.assert_array_equal(cvf.apply(gray, "denoise", strength=6, backend=backend),
                                  cv2.fastNlMeansDenoising(gray, None, 6, 7, 21))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_denoise_removes_noise_at_every_depth(dtype: type) -> None:
    rng = np.random.default_rng(3)
    flat = np.clip(128 + rng.normal(0, 8, (48, 48, 3)), 0, 255).astype(np.uint8)
    image = to_dtype(flat, dtype)
    out = cvf.apply(image, "denoise", strength=15, backend="cpu").astype(np.float64) / full_scale(dtype)
    before = image.astype(np.float64) / full_scale(dtype)
    assert out.std() < before.std() / 3
    assert abs(out.mean() - before.mean()) < 2 / 255


# ---------------------------------------------------------------- where they run
HOST_ONLY = {
    "white_balance": "white_balance (xphoto on host)", "temperature_tint": "temperature_tint (linear light on host)",
    "vibrance": "vibrance (on host)", "highlights_shadows": "highlights_shadows (on host)",
    "denoise": "denoise (non-local means on host)", "chroma_key": "chroma_key (on host)",
    "hex_pixellate": "hex_pixellate (on host)",
}


@pytest.mark.parametrize("name", [*HOST_ONLY, "bloom", "grain", "crystallize", "pointillize", "resize", "crop", "pad"])
def test_host_work_is_counted_and_device_filters_stay_on_the_device(device_backend: str, name: str) -> None:
    from cvfilters.engine.pipeline import Pipeline

    _, report = Pipeline.parse(name).run(photo(32, 40, 3, np.uint8), backend=device_backend)
    expected = {HOST_ONLY[name]: 1} if name in HOST_ONLY else {}
    assert dict(report.counters.fallbacks) == expected


def test_default_white_balance_keeps_a_white_cup_on_a_warm_table_white() -> None:
    """skimage's coffee photo: the white rim of the cup must not turn blue, as gray world turns it."""
    from skimage import data

    coffee = np.ascontiguousarray(data.coffee()[..., ::-1])  # BGR
    rim = (slice(32, 52), slice(240, 360))  # the cup's white rim, above the coffee
    before = coffee[rim].reshape(-1, 3).mean(axis=0)
    assert before[2] - before[0] > 40  # warm light on a white cup: red above blue

    def blue_minus_red(method: str | None) -> float:
        params = {} if method is None else {"method": method}
        b, _, r = cvf.apply(coffee, "white_balance", backend="cpu", **params)[rim].reshape(-1, 3).mean(axis=0)
        return float(b - r)

    assert blue_minus_red("grayworld") > 20  # the classic gray-world failure: a blue cup
    default = blue_minus_red(None)
    assert default < 0 and default == blue_minus_red("simple")  # still white under warm light, never blue


def test_white_balance_takes_a_cropped_view() -> None:
    image = cast(np.uint8)
    view = image[3:-3, 5:-5]  # not contiguous: xphoto asserted on it
    for method in ("grayworld", "simple", "learning"):
        np.testing.assert_array_equal(cvf.apply(view, "white_balance", method=method, backend="cpu"),
                                      cvf.apply(view.copy(), "white_balance", method=method, backend="cpu"))


# --- from the survivors of the photo mutation run (docs/mutation.md) ---------------------------


def test_denoise_passes_its_window_sizes_on() -> None:  # cv2 parity at sizes other than OpenCV's defaults
    image = photo(32, 40, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, "denoise", template=5, search=11, backend="cpu"),
                                  cv2.fastNlMeansDenoisingColored(image, None, 10, 10, 5, 11))
    gray = image[..., 1].copy()
    np.testing.assert_array_equal(cvf.apply(gray, "denoise", template=3, search=9, backend="cpu"),
                                  cv2.fastNlMeansDenoising(gray, None, 10, 3, 9))
    deep = image.astype(np.uint16) * 257
    np.testing.assert_array_equal(cvf.apply(deep, "denoise", strength=6, template=5, search=9, backend="cpu"),
                                  cv2.fastNlMeansDenoising(deep, [6 * 257.0], None, 5, 9, cv2.NORM_L1))
    out = cvf.apply(deep.astype(np.float32) / 65535, "denoise", strength=6, template=5, search=9, backend="cpu")
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, cv2.fastNlMeansDenoising(deep, [6 * 257.0], None, 5, 9, cv2.NORM_L1) / 65535,
                               atol=1e-7)


@pytest.mark.parametrize(("name", "params"), [
    ("temperature_tint", {"temperature": 4000.0}), ("vibrance", {}), ("highlights_shadows", {}),
])
def test_gray_images_become_the_bt601_luma_of_the_colour_result(name: str, params: dict) -> None:
    gray = photo(24, 32, 1, np.float32)
    out = cvf.apply(gray, name, **params, backend="cpu")
    colour = cvf.apply(np.dstack([gray] * 3), name, **params, backend="cpu")
    assert out.shape == gray.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, np.clip(colour.astype(np.float64) @ LUMA, 0, 1), atol=2e-6)


def test_the_srgb_transfer_functions_are_iec_61966_2_1() -> None:
    from cvfilters.filters.photo import srgb_decode, srgb_encode

    encoded = np.array([0.0, 0.02, 0.04045, 0.5, 1.0])
    reference = np.where(encoded <= 0.04045, encoded / 12.92, ((encoded + 0.055) / 1.055) ** 2.4)  # the standard
    assert np.array_equal(srgb_decode(encoded), reference)
    linear = np.array([-0.5, 0.0, 0.001, 0.0031308, 0.5, 1.0, 1.5])
    clipped = np.clip(linear, 0.0, 1.0)
    expected = np.where(clipped <= 0.0031308, clipped * 12.92, 1.055 * clipped ** (1 / 2.4) - 0.055)
    assert np.array_equal(srgb_encode(linear), expected)
    assert srgb_encode(np.array([-0.5]))[0] == 0.0 and srgb_encode(np.array([1.5]))[0] == pytest.approx(1.0)


def test_from_unit_clips_before_storing() -> None:
    from cvfilters.filters.photo import from_unit

    values = np.array([-0.2, 0.0, 0.5, 1.0, 1.3])
    np.testing.assert_array_equal(from_unit(values, np.dtype(np.uint8)), [0, 0, 128, 255, 255])  # half to even
    np.testing.assert_array_equal(from_unit(values, np.dtype(np.uint16)), [0, 0, 32768, 65535, 65535])
    np.testing.assert_array_equal(from_unit(values, np.dtype(np.float32)), [0, 0, 0.5, 1, 1])


# Robertson's isotemperature table (Wyszecki & Stiles, Color Science, 2nd ed., table 1(3.11)), the rows
# these tests use, written out: reciprocal megakelvin -> CIE 1960 u, v of the Planckian locus, isotherm slope t.
ROBERTSON_ROWS = {
    0: (0.18006, 0.26352, -0.24341), 10: (0.18066, 0.26589, -0.25479), 150: (0.19962, 0.30921, -0.70471),
    175: (0.20525, 0.31647, -0.84901), 300: (0.24010, 0.34308, -2.0637), 325: (0.24792, 0.34655, -2.4681),
    575: (0.32931, 0.36038, -40.770), 600: (0.33724, 0.36051, -116.45),
}


def uv_1960(x: float, y: float) -> np.ndarray:
    """CIE 1960 UCS (u, v) of CIE 1931 (x, y): u = 4x / (-2x + 12y + 3), v = 6y / (-2x + 12y + 3)."""
    d = -2.0 * x + 12.0 * y + 3.0
    return np.array([4.0 * x / d, 6.0 * y / d])


def isotherm(t: float) -> np.ndarray:
    """Unit vector along an isotherm of slope t in (u, v)."""
    return np.array([1.0, t]) / np.hypot(1.0, t)


@pytest.mark.parametrize(("low", "high"), [(0, 10), (150, 175), (300, 325), (575, 600)])
@pytest.mark.parametrize("tint", [0.0, 150.0, -90.0])
def test_white_xy_interpolates_robertsons_table_between_rows(low: int, high: int, tint: float) -> None:
    # halfway (in reciprocal temperature) between two rows: the point is the rows' midpoint, and the tint
    # moves it tint / 3000 along the bisector of the two isotherms (positive: towards green, -u +v)
    (u0, v0, t0), (u1, v1, t1) = ROBERTSON_ROWS[low], ROBERTSON_ROWS[high]
    direction = isotherm(t0) + isotherm(t1)
    expected = np.array([(u0 + u1) / 2, (v0 + v1) / 2]) - tint / 3000.0 * direction / np.hypot(*direction)
    np.testing.assert_allclose(uv_1960(*white_xy(2.0e6 / (low + high), tint)), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("row", [10, 150, 325, 575])
def test_white_xy_at_a_row_is_that_row_moved_along_its_isotherm(row: int) -> None:
    u, v, t = ROBERTSON_ROWS[row]
    np.testing.assert_allclose(uv_1960(*white_xy(1.0e6 / row, 0.0)), [u, v], rtol=0, atol=1e-12)
    np.testing.assert_allclose(uv_1960(*white_xy(1.0e6 / row, 60.0)), np.array([u, v]) - 0.02 * isotherm(t),
                               rtol=0, atol=1e-12)


def test_white_xy_extends_the_last_segment_below_1667_k() -> None:
    # 1600 K is 625 mrd, one segment past the table's last row (600): linear extrapolation, no IndexError
    (u0, v0, _), (u1, v1, _) = ROBERTSON_ROWS[575], ROBERTSON_ROWS[600]
    np.testing.assert_allclose(uv_1960(*white_xy(1600.0, 0.0)), [2 * u1 - u0, 2 * v1 - v0], rtol=0, atol=1e-12)


def test_tone_luma_is_gpuimages_curves_checked_by_hand() -> None:
    from cvfilters.filters.photo import tone_luma

    # shadows 1/3: exponents 3/4 and 3/2; y = 1/16: lift = 1/8 - 0.76/64 - 1/16 = 0.050625 (no cut there).
    # highlights 1/2: exponents 2/3 and 4/3 of 1 - y; y = 7/8: cut = 1 - (1/4 - 0.8/16) - 7/8 = -0.075 (no lift)
    np.testing.assert_allclose(tone_luma(np.array([1 / 16, 0.875]), 1 / 3, 0.5), [0.113125, 0.8], rtol=0, atol=1e-12)
    # shadows 1: y = 1/4 lifts by 1/2 - 0.76/4 - 1/4 = 0.06; highlights 0: y = 3/4 cuts by 1 - (1/2 - 0.8/4) - 3/4
    np.testing.assert_allclose(tone_luma(np.array([0.25, 0.75]), 1.0, 0.0), [0.31, 0.70], rtol=0, atol=1e-12)
    # a gray image becomes its new luma
    gray = np.array([[1 / 16, 0.875]], np.float32)
    np.testing.assert_allclose(cvf.apply(gray, "highlights_shadows", shadows=1 / 3, highlights=0.5, backend="cpu"),
                               [[0.113125, 0.8]], rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.uint16, np.float32], ids=lambda d: np.dtype(d).name)
def test_simple_white_balance_of_deep_images_stretches_over_0_to_1(dtype: type) -> None:
    image = cast(dtype)
    out = cvf.apply(image, "white_balance", method="simple", percent=2.0, backend="cpu").astype(np.float64)
    out /= full_scale(dtype)
    unit = (image.astype(np.float64) / full_scale(dtype)).astype(np.float32)
    # each channel stretched linearly from its 2nd to its 98th percentile (numpy's percentiles; SimpleWB finds
    # them on a histogram: within 0.005)
    low, high = np.percentile(unit.reshape(-1, 3), [2, 98], axis=0)
    np.testing.assert_allclose(out, np.clip((unit - low) / (high - low), 0, 1), rtol=0, atol=0.005)
    wb = cv2.xphoto.createSimpleWB()  # cv2 parity: SimpleWB on float32 values over the range 0..1
    wb.setP(2.0)
    wb.setInputMax(1.0)
    wb.setOutputMax(1.0)
    np.testing.assert_allclose(out, np.clip(wb.balanceWhite(unit), 0, 1), rtol=0, atol=0.5 / full_scale(dtype) + 1e-7)


def test_learning_white_balance_of_uint16_uses_the_16_bit_range() -> None:
    image = cast(np.uint8)
    deep = image.astype(np.uint16) * 257
    out = cvf.apply(deep, "white_balance", method="learning", backend="cpu").astype(np.float64)
    # the same picture at 8 bits, balanced by OpenCV: within 2 levels of 8 bits
    np.testing.assert_allclose(out / 257, cv2.xphoto.createLearningBasedWB().balanceWhite(image), rtol=0, atol=2)
    # OpenCV counts a pixel as saturated from max(B, G, R) >= int(0.98 x RangeMaxVal) (xphoto's
    # learning_based_color_balance.cpp): int(0.98 x 65535) = 64224, so a block at 64224 weighs as white does
    block, white = deep[:32].copy(), deep[:32].copy()
    block[:, 40:] = (20000, 40000, 64224)
    white[:, 40:] = 65535
    kept = cvf.apply(block, "white_balance", method="learning", backend="cpu")
    np.testing.assert_array_equal(kept[:, :40], cvf.apply(white, "white_balance", method="learning",
                                                          backend="cpu")[:, :40])
    wb = cv2.xphoto.createLearningBasedWB()  # cv2 parity
    wb.setRangeMaxVal(65535)
    np.testing.assert_array_equal(kept, wb.balanceWhite(block))


def test_grayworld_saturation_threshold_selects_the_pixels_averaged() -> None:
    image = cast(np.uint8)
    values = image.astype(np.float64)
    high, low = values.max(axis=2), values.min(axis=2)
    used = (high - low) <= 0.5 * high  # saturation (max - min) / max at most the threshold
    sums = values[used].sum(axis=0)
    expected = values * (sums.min() / sums)  # OpenCV's gains are at most 1 (xphoto grayworld_white_balance.cpp)
    out = cvf.apply(image, "white_balance", method="grayworld", saturation=0.5, backend="cpu")
    np.testing.assert_allclose(out, expected, rtol=0, atol=1.5)  # 8-bit fixed-point gains, truncated
    default = cvf.apply(image, "white_balance", method="grayworld", backend="cpu")
    assert np.abs(default.astype(int) - out).max() > 5  # the threshold matters on this picture
