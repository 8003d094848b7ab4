"""Stylize (mirror of cvfilters/filters/stylize.py): kuwahara against direct loops, the host looks against cv2.

The host-only looks (OpenCV's 8-bit BGR algorithms) on float32, gray and every 16-bit rounding
case, against the documented conversion written here (``rint(v / 257)``, ``rint(v * 255)``,
``cv2.cvtColor`` for gray) around the cv2 call; the docstring note added at import; the counted
host round trip's label on device backends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from tests.conftest import photo, to_dtype
from tests.filters.test_cartoon import distinct_colours, flat_share, sk_photo

# kuwahara (`cvfilters info kuwahara`): a later window wins only if its variance is lower by
# more than 1e-6 of full scale squared, outside the exact 8-bit path
KUWAHARA_TIE_FRACTION = 1e-6
EIGHT_BIT_NOTE = ("Runs on the host (OpenCV has no device version of it): one download and one\n"
                  "upload on device backends. The algorithm needs 8-bit BGR: uint16 and float32\n"
                  "input is converted to 8-bit and back, so the result has 8-bit precision in the\n"
                  "input's dtype; gray input is expanded to BGR and converted back to gray.")

HOST_LOOKS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "oil_paint": lambda bgr: cv2.xphoto.oilPainting(bgr, 4, 8),
    "detail_enhance": lambda bgr: cv2.detailEnhance(bgr, sigma_s=10, sigma_r=0.15),
}


def test_with_note_appends_the_shared_paragraph() -> None:
    # with_note runs at import, under @register: called here on two functions of our own
    from cvfilters.filters.stylize import with_note

    def documented() -> None:
        """First line.

            indented further
        last line
        """

    def bare() -> None:
        pass

    assert with_note("A note.")(documented) is documented
    assert documented.__doc__ == "First line.\n\n    indented further\nlast line\n\nA note."
    assert with_note("A note.")(bare).__doc__ == "\n\nA note."
    for name in ("oil_paint", "stylization", "detail_enhance", "edge_preserving", "mean_shift"):
        description = cvf.get_filter(name).description
        assert description.endswith("\n\n" + EIGHT_BIT_NOTE), name  # what `cvfilters info` shows
        assert description.startswith("``cv2."), name


@pytest.mark.parametrize("name", list(HOST_LOOKS))
def test_host_looks_convert_float32_uint16_and_gray_as_documented(name: str) -> None:
    call = HOST_LOOKS[name]
    colour = photo(24, 30, 3, np.uint8)
    # float32: rint(v * 255) after clipping, the 8-bit result / 255
    values = colour.astype(np.float32) / 255 + np.float32(0.4 / 255)  # 0.4 of a level above: rounds down
    values[0, :6] = [[0.0] * 3, [1.0] * 3, [0.5 / 255 + 1e-4] * 3, [254.6 / 255] * 3, [0.2] * 3, [0.7] * 3]
    out = cvf.apply(values, name, backend="cpu")
    eight = np.rint(np.clip(values.astype(np.float64), 0, 1) * 255).astype(np.uint8)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, call(eight).astype(np.float32) / 255, atol=1e-7)
    # uint16: rint(v / 257) (never a half: 257 is odd), the 8-bit result x 257
    rng = np.random.default_rng(5)
    sixteen = (colour.astype(np.int64) * 257 + rng.integers(-128, 129, colour.shape)).clip(0, 65535)
    sixteen[0, :6] = [[128] * 3, [129] * 3, [385] * 3, [386] * 3, [65535] * 3, [65406] * 3]
    sixteen = sixteen.astype(np.uint16)
    out16 = cvf.apply(sixteen, name, backend="cpu")
    assert out16.dtype == np.uint16
    np.testing.assert_array_equal(out16, call(np.rint(sixteen / 257).astype(np.uint8)).astype(np.uint16) * 257)
    # gray: expanded to BGR, the result back to gray (BT.601)
    gray = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
    out_gray = cvf.apply(gray, name, backend="cpu")
    assert out_gray.dtype == np.uint8 and out_gray.shape == gray.shape
    np.testing.assert_array_equal(out_gray, cv2.cvtColor(call(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)),
                                                         cv2.COLOR_BGR2GRAY))


@pytest.mark.parametrize("name", ["oil_paint", "stylization", "detail_enhance", "edge_preserving", "mean_shift"])
def test_host_looks_count_their_round_trip_under_their_name(device_backend: str, name: str) -> None:
    """On a device backend the download is counted in ``fallbacks`` under the filter's name."""
    _, report = Pipeline([(name, {})]).run(photo(24, 32, 3, np.uint8), backend=device_backend)
    assert dict(report.counters.fallbacks) == {name: 1}


@pytest.mark.parametrize(("name", "params", "call"), [
    ("stylization", {"sigma_s": 20.0, "sigma_r": 0.2},
     lambda bgr: cv2.stylization(bgr, sigma_s=20.0, sigma_r=0.2)),
    ("detail_enhance", {"sigma_s": 30.0, "sigma_r": 0.4},
     lambda bgr: cv2.detailEnhance(bgr, sigma_s=30.0, sigma_r=0.4)),
    ("edge_preserving", {"sigma_s": 20.0, "sigma_r": 0.2, "flags": "normconv"},
     lambda bgr: cv2.edgePreservingFilter(bgr, flags=cv2.NORMCONV_FILTER, sigma_s=20.0, sigma_r=0.2)),
    ("edge_preserving", {"sigma_s": 30.0, "sigma_r": 0.6, "flags": "recursive"},
     lambda bgr: cv2.edgePreservingFilter(bgr, flags=cv2.RECURS_FILTER, sigma_s=30.0, sigma_r=0.6)),
])
def test_host_looks_pass_their_parameters(name: str, params: dict[str, Any],
                                          call: Callable[[np.ndarray], np.ndarray]) -> None:
    """Non-default parameters reach the cv2 call (8-bit BGR: the result is cv2's, exactly)."""
    image = photo(24, 30, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu", **params), call(image))


# ------------------------------------------------------------------------------ kuwahara
# (the photo tests against direct loops are above; here the tie rules and float32)
def kuwahara_step(radius: int, low: float, high: float, dtype: type) -> np.ndarray:
    """Three rows: ``high`` in columns 0..radius + 1, ``low`` from column radius + 2 on."""
    image: np.ndarray = np.full((3, 2 * radius + 6), low, dtype)
    image[:, :radius + 2] = high
    return image


@pytest.mark.parametrize("radius", [14, 15, 16])
def test_kuwahara_uint8_exact_path_ends_at_radius_15(radius: int) -> None:
    """A one-level step: at the first low column the top-left window (r columns of 1, one of 0,
    variance r / (r + 1)^2 level^2) loses to the flat top-right one on the exact 8-bit path
    (radius <= 15), but not on the float path (radius 16: 16 / 289 is within 1e-6 of 255^2)."""
    image = kuwahara_step(radius, 0, 1, np.uint8)
    expected = image.copy()
    if radius == 16:
        expected[:, radius + 2] = 1  # the top-left window's mean, 16 / 17, rounded
    np.testing.assert_array_equal(cvf.apply(image, "kuwahara", radius=radius, backend="cpu"), expected)


@pytest.mark.parametrize(("dtype", "scale", "below", "above"), [
    (np.uint16, 1.0, 130, 132),  # margin 1e-6 * 65535^2 = 4294.8 level^2; step h gives h^2 / 4 at radius 1
    (np.float32, 1 / 255, 0.5, 0.52),  # margin 1e-6 * 255^2 = 0.065 (in 8-bit levels): h < 0.51 keeps it
])
def test_kuwahara_tie_margin_outside_the_exact_path(dtype: type, scale: float, below: float, above: float) -> None:
    """Radius 1: at the first low column the top-left window (h and 0, variance h^2 / 4) stays
    unless the flat top-right window is lower by more than 1e-6 of full scale squared."""
    for step, expected_value in ((below, below / 2), (above, 0.0)):
        image = kuwahara_step(1, 0, step * scale, dtype)
        out = cvf.apply(image, "kuwahara", radius=1, backend="cpu")
        expected = image.astype(np.float64)
        expected[:, 3] = expected_value * scale
        assert out.dtype == dtype
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-7 if dtype == np.float32 else 0)


@pytest.mark.parametrize("channels", [1, 3])
def test_kuwahara_float32_matches_direct_loops(channels: int) -> None:
    """float32 works in 8-bit levels (x 255) and returns the mean / 255; tolerance 1e-6."""

    image = photo(14, 17, channels, np.float32)
    out = cvf.apply(image, "kuwahara", radius=2, backend="cpu")
    expected = kuwahara_loops(image.astype(np.float64) * 255, 2, "edge", tie=1e-6 * 255.0**2) / 255
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize(("height", "width", "max_level", "levels"), [(24, 30, 2, 2), (6, 8, 4, 1), (3, 3, 2, 0)])
def test_mean_shift_passes_radii_and_the_reduced_pyramid_depth(height: int, width: int, max_level: int,
                                                                levels: int) -> None:
    """Non-default radii reach cv2; max_level is cut to log2(smaller side) - 1 (at least 0)."""
    image = photo(height, width, 3, np.uint8)
    out = cvf.apply(image, "mean_shift", spatial_radius=5.0, color_radius=40.0, max_level=max_level, backend="cpu")
    np.testing.assert_array_equal(out, cv2.pyrMeanShiftFiltering(image, 5.0, 40.0, maxLevel=levels))


def test_kuwahara_exact_path_takes_a_window_lower_by_one_sixteenth() -> None:
    """Radius 1, pixel (1, 1): top-left {2, 1, 2, 1} has 16 x variance 4, top-right {1, 1, 1, 2} has 3:
    on the exact 8-bit path a difference of one unit wins (mean 1.25 -> 1, not 1.5 -> 2)."""

    image = np.array([[2, 1, 1], [2, 1, 2]], np.uint8)
    out = cvf.apply(image, "kuwahara", radius=1, backend="cpu")
    assert out[1, 1] == 1
    np.testing.assert_array_equal(out, np.rint(kuwahara_loops(image, 1, "edge")))  # half to even, as cv2


# ------------------------------------------------------------------------------ kuwahara
def kuwahara_loops(image: np.ndarray, radius: int, mode: str, tie: float = 1e-9) -> np.ndarray:
    """Direct Kuwahara: four (r+1)^2 windows per pixel, least sum of channel variances wins.

    A later window must be lower by more than ``tie`` (in squared levels of the dtype).
    """
    values = image.astype(np.float64)
    values = values[..., None] if values.ndim == 2 else values
    height, width, channels = values.shape
    padded = np.pad(values, ((radius, radius), (radius, radius), (0, 0)), mode=mode)
    out = np.zeros_like(values)
    for y in range(height):
        for x in range(width):
            best = None
            for dx, dy in ((-radius, -radius), (0, -radius), (0, 0), (-radius, 0)):  # TL, TR, BR, BL
                window = padded[y + radius + dy:y + 2 * radius + dy + 1,
                                x + radius + dx:x + 2 * radius + dx + 1].reshape(-1, channels)
                variance = window.var(axis=0).sum()
                if best is None or variance < best[0] - tie:
                    best = (variance, window.mean(axis=0))
            out[y, x] = best[1]
    return out.reshape(image.shape)


@pytest.mark.parametrize("radius", [1, 2, 4])
@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize(("border", "mode"), [("replicate", "edge"), ("reflect101", "reflect")])
def test_kuwahara_matches_direct_loops(radius: int, channels: int, border: str, mode: str) -> None:
    image = photo(18, 23, channels, np.uint8)
    out = cvf.apply(image, "kuwahara", radius=radius, border=border, backend="cpu")
    expected = kuwahara_loops(image, radius, mode)
    assert np.abs(out.astype(np.float64) - expected).max() <= 0.5 + 1e-6


def test_kuwahara_uint16_and_flat_image() -> None:
    image = photo(16, 20, 3, np.uint16)
    out = cvf.apply(image, "kuwahara", radius=3, backend="cpu")
    expected = kuwahara_loops(image, 3, "edge", tie=KUWAHARA_TIE_FRACTION * 65535.0**2)
    assert np.abs(out.astype(np.float64) - expected).max() <= 0.5 + 1e-6
    big = photo(20, 24, 3, np.uint8)  # radius 15 is the last exact 8-bit size, 16 goes through float64
    for radius in (15, 16):
        out = cvf.apply(big, "kuwahara", radius=radius, backend="cpu")
        tie = 1e-9 if radius == 15 else KUWAHARA_TIE_FRACTION * 255.0**2
        assert np.abs(out.astype(np.float64) - kuwahara_loops(big, radius, "edge", tie)).max() <= 0.5 + 1e-6
    flat = np.full((9, 9, 3), 77, np.uint8)
    np.testing.assert_array_equal(cvf.apply(flat, "kuwahara", radius=5, backend="cpu"), flat)


def test_kuwahara_keeps_a_step_edge_sharp() -> None:
    step = np.zeros((20, 20), np.uint8)
    step[:, 10:] = 200
    np.testing.assert_array_equal(cvf.apply(step, "kuwahara", radius=4, backend="cpu"), step)


# ------------------------------------------------------------------------------ host looks
HOST_CALLS = {
    "oil_paint": lambda bgr: cv2.xphoto.oilPainting(bgr, 4, 8),
    "stylization": lambda bgr: cv2.stylization(bgr, sigma_s=60, sigma_r=0.45),
    "detail_enhance": lambda bgr: cv2.detailEnhance(bgr, sigma_s=10, sigma_r=0.15),
    "edge_preserving": lambda bgr: cv2.edgePreservingFilter(bgr, flags=cv2.RECURS_FILTER, sigma_s=60, sigma_r=0.4),
    "mean_shift": lambda bgr: cv2.pyrMeanShiftFiltering(bgr, 10, 24, maxLevel=1),
}


@pytest.mark.parametrize("name", list(HOST_CALLS))
def test_host_looks_are_the_opencv_call_in_every_depth(name: str) -> None:
    """cv2-parity (these filters wrap the call): the same 8-bit result, scaled for 16 bits.

    What each look does is checked independently in ``test_host_looks_do_what_they_say``."""
    image = photo(40, 52, 3, np.uint8)
    expected = HOST_CALLS[name](image)
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu"), expected)
    np.testing.assert_array_equal(cvf.apply(to_dtype(image, np.uint16), name, backend="cpu"),
                                  expected.astype(np.uint16) * 257)
    assert "8-bit" in cvf.get_filter(name).description  # `cvfilters info` says so


def total_variation(image: np.ndarray) -> float:
    values = image.astype(np.float64)
    return float(np.abs(np.diff(values, axis=0)).mean() + np.abs(np.diff(values, axis=1)).mean())


def test_host_looks_do_what_they_say() -> None:
    """Independent of the wrapped calls: smoothing looks lower the total variation of a noisy
    photo and keep a strong edge; detail_enhance raises it; mean_shift leaves fewer colours."""
    rng = np.random.default_rng(3)
    image = np.clip(sk_photo("chelsea")[::3, ::3].astype(np.int16) + rng.integers(-12, 13, (100, 151, 3)), 0, 255)
    image = image.astype(np.uint8)
    image[:, 70:] = np.maximum(image[:, 70:], 200)  # a bright block: a strong vertical edge at x = 70
    tv = total_variation(image)
    for name in ("stylization", "edge_preserving", "mean_shift", "oil_paint"):
        out = cvf.apply(image, name, backend="cpu")
        assert total_variation(out) < 0.9 * tv, name  # stylization also inks edges: 0.83 measured
        step = out[:, 74:80].astype(float).mean() - out[:, 60:66].astype(float).mean()
        assert step > 0.5 * (image[:, 74:80].astype(float).mean() - image[:, 60:66].astype(float).mean()), name
    assert total_variation(cvf.apply(image, "detail_enhance", backend="cpu")) > 1.1 * tv
    assert distinct_colours(cvf.apply(image, "mean_shift", backend="cpu")) < 0.5 * distinct_colours(image)


def test_oil_paint_flattens_texture() -> None:
    image = sk_photo("chelsea")
    out = cvf.apply(image, "oil_paint", backend="cpu")
    assert flat_share(out, np.ones(out.shape[:2], bool)) > 3 * flat_share(image, np.ones(out.shape[:2], bool))
