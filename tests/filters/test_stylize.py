"""Stylize (mirror of cvfilters/filters/stylize.py): the shared pieces test_cartoon.py leaves out.

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
from tests.conftest import photo

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
# (the photo tests against direct loops are in test_cartoon.py; here the tie rules and float32)
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
    from tests.filters.test_cartoon import kuwahara_loops

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
    from tests.filters.test_cartoon import kuwahara_loops

    image = np.array([[2, 1, 1], [2, 1, 2]], np.uint8)
    out = cvf.apply(image, "kuwahara", radius=1, backend="cpu")
    assert out[1, 1] == 1
    np.testing.assert_array_equal(out, np.rint(kuwahara_loops(image, 1, "edge")))  # half to even, as cv2
