"""The cartoon filters' own bodies: what each hands on (k-means space and attempts, smooth_toon's kernel and
source, cartoon's posterize and k-means) and the exact values and host-step labels that come out.

References are built here: colour distances in numpy (``cv2.cvtColor`` for CIE L*a*b*), k-means' sum of
squared distances, Gaussian taps and the 3 x 3 Sobel in numpy (tests/filters/test_cartoon_decisions.py),
``round(c (levels - 1)) / (levels - 1)`` in numpy, GPUImage's halftone (tests/filters/test_cartoon.py).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from tests.conftest import photo
from tests.filters.test_cartoon import crosshatch_reference, halftone_reference
from tests.filters.test_cartoon_decisions import smoothed_sobel_magnitude, step_image

# Three colours (BGR): A and B are the closest pair in BGR, B and C in CIE L*a*b* (each pair at most
# about half the other distances): k-means to two colours merges a different pair in each space.
CLUSTERS = np.array([[99, 16, 68], [34, 99, 39], [146, 225, 174]], np.uint8)


def three_blocks() -> np.ndarray:
    """A 4 x 12 uint8 BGR image: 4 x 4 blocks of A, B and C."""
    return np.repeat(np.repeat(CLUSTERS[None], 4, axis=0), 4, axis=1)


def sum_of_squares(out: np.ndarray, image: np.ndarray) -> float:
    """k-means' objective in BGR: the sum of squared distances of the pixels to their output colours."""
    return float(((out.astype(np.float64) - image.astype(np.float64)) ** 2).sum())


def pair_distances(colours: np.ndarray) -> tuple[float, float, float]:
    """Distances A-B, B-C, A-C of three colours (float64)."""
    a, b, c = colours.astype(np.float64)
    return float(np.linalg.norm(a - b)), float(np.linalg.norm(b - c)), float(np.linalg.norm(a - c))


# ------------------------------------------------------------------------------ quantize
def test_quantize_measures_distances_in_the_space_asked() -> None:
    """k = 2 on three clusters merges the closest pair: A and B in BGR, B and C in L*a*b*."""
    ab, bc, ac = pair_distances(CLUSTERS)
    assert ab < 0.55 * min(bc, ac)
    lab = cv2.cvtColor((CLUSTERS.astype(np.float32) / 255)[None], cv2.COLOR_BGR2Lab)[0]
    ab, bc, ac = pair_distances(lab)
    assert bc < 0.5 * min(ab, ac)
    image = three_blocks()
    for space, (first, second), alone in (("bgr", (0, 1), 2), ("lab", (1, 2), 0)):
        out = cvf.apply(image, "quantize", k=2, attempts=10, space=space, backend="cpu")
        colours = out[0, ::4]  # one pixel of each block
        assert np.array_equal(colours[first], colours[second]), space
        assert not np.array_equal(colours[first], colours[alone]), space
        assert len(np.unique(out.reshape(-1, 3), axis=0)) == 2


def test_quantize_more_attempts_never_less_compact_and_sometimes_more() -> None:
    """The most compact of ``attempts`` seedings wins: ten never lose to one, and one seeding gets stuck for some seed.

    One seeding can settle on {A}, {B, C}, a local minimum; {A, B}, {C} is the best.
    """
    image = three_blocks()
    stuck = 0
    for seed in range(4):
        one = sum_of_squares(cvf.apply(image, "quantize", k=2, attempts=1, seed=seed, backend="cpu"), image)
        ten = sum_of_squares(cvf.apply(image, "quantize", k=2, attempts=10, seed=seed, backend="cpu"), image)
        assert ten <= one
        stuck += ten < one
    assert stuck >= 1


@pytest.mark.parametrize(("name", "label"), [("quantize", "quantize (k-means on host)"),
                                             ("cartoon", "cartoon (k-means on host)")])
def test_k_means_is_counted_under_its_label(device_backend: str, name: str, label: str) -> None:
    """The one host step of a device run is reported under the filter's own label."""
    _, report = Pipeline([(name, {})]).run(photo(24, 32, 3, np.uint8), backend=device_backend)
    assert dict(report.counters.fallbacks) == {label: 1}


# ------------------------------------------------------------------------------ smooth_toon
@pytest.mark.parametrize(("blur", "threshold"), [(0.5, 2e-4), (1.1, 3e-5)])
def test_smooth_toon_blur_kernel_reaches_round_4_sigma(blur: float, threshold: float) -> None:
    """The blur's kernel has ``2 round(4 blur) + 1`` taps: a step's outline at a low threshold is that wide, plus 2.

    At 1.1, cv2's automatic size would be 11 taps, ``round(5 blur)`` 13; the magnitudes decide every
    pixel by more than 1.5e-5 (tests/filters/test_cartoon_decisions.py).
    """
    image = step_image(5, 40, 0.25, 0.75)
    out = cvf.apply(image, "smooth_toon", blur=blur, threshold=threshold, levels=10, backend="cpu")
    magnitude = smoothed_sobel_magnitude(image, blur)
    assert np.abs(magnitude - threshold).min() > 1.5e-5
    outline = out == 0  # the posterized colour is at least 0.2: only outlines are black
    np.testing.assert_array_equal(outline, magnitude >= threshold)
    reach = round(4 * blur) + 1
    np.testing.assert_array_equal(np.flatnonzero(outline[2]), np.arange(20 - reach, 20 + reach))


def test_smooth_toon_finds_outlines_on_the_red_channel_when_asked() -> None:
    """A red step with (almost) no luminance step: outlined with source=red, not with luminance."""
    image = np.empty((5, 30, 3), np.float32)
    image[:, :15] = (0.5, 0.6, 0.3)
    image[:, 15:] = (0.5, 0.6 - 0.4 * 0.2125 / 0.7154, 0.7)  # Rec. 709: green makes up red's luminance
    blur, threshold = 1.0, 0.05
    red = cvf.apply(image, "smooth_toon", blur=blur, threshold=threshold, source="red", backend="cpu")
    magnitude = smoothed_sobel_magnitude(image[..., 2], blur)
    decided = np.abs(magnitude - threshold) > 1e-3
    outline = red.max(axis=-1) == 0  # posterized colours are at least 0.3
    np.testing.assert_array_equal(outline[decided], (magnitude >= threshold)[decided])
    assert outline.sum() >= 10
    luminance = cvf.apply(image, "smooth_toon", blur=blur, threshold=threshold, backend="cpu")
    assert luminance.max(axis=-1).min() > 0


# ------------------------------------------------------------------------------ cartoon
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("levels", [2, 4, 8])
def test_cartoon_posterize_is_round_c_times_levels_minus_one(dtype: type, levels: int) -> None:
    """``round(c (levels - 1)) / (levels - 1)`` per channel (no smoothing, no outline); no pixel is a tie.

    uint8: the 8-bit pixel ``v`` gives ``round(255 round(v (levels - 1) / 255) / (levels - 1))`` exactly
    (levels - 1 = 1, 3, 7: no output level is half-way between two 8-bit values); float32 (``v / 255``)
    within 1e-6.
    """
    pixels = photo(12, 16, 3, np.uint8).astype(np.float64)
    steps = np.rint(pixels * (levels - 1) / 255)
    assert np.abs(pixels * (levels - 1) / 255 - np.floor(pixels * (levels - 1) / 255) - 0.5).min() > 1e-3
    image = pixels.astype(np.uint8) if dtype == np.uint8 else (pixels / 255).astype(np.float32)
    out = cvf.apply(image, "cartoon", edges="none", passes=0, quantize="posterize", levels=levels, backend="cpu")
    assert out.dtype == dtype
    if dtype == np.uint8:
        np.testing.assert_array_equal(out, np.rint(255 * steps / (levels - 1)))
    else:
        np.testing.assert_allclose(out, steps / (levels - 1), rtol=0, atol=1e-6)


def test_cartoon_k_means_is_one_seeding_in_bgr() -> None:
    """cartoon's k-means (``colors``, ``seed``) is the quantize filter's with ``attempts=1``, ``space=bgr``.

    On float32 (no rounding of the palette either way), no smoothing, no outline; seed 0 is the one
    that leaves a single seeding stuck in {A}, {B, C} (as the quantize test above shows).
    """
    image = three_blocks().astype(np.float32) / 255
    for seed in range(3):
        out = cvf.apply(image, "cartoon", edges="none", passes=0, colors=2, seed=seed, backend="cpu")
        one = cvf.apply(image, "quantize", k=2, attempts=1, seed=seed, space="bgr", backend="cpu")
        np.testing.assert_array_equal(out, one)
        if seed == 0:
            best = cvf.apply(image, "quantize", k=2, attempts=10, backend="cpu")
            assert sum_of_squares(out, image) > sum_of_squares(best, image)


@pytest.mark.parametrize("edges", ["adaptive", "laplacian"])
def test_cartoon_float32_outlines_are_black_over_the_posterized_colour(edges: str) -> None:
    """float32: each pixel is ``round(c (levels - 1)) / (levels - 1)`` (within 1e-6) or black (an outline).

    ``colour * (1 - outline)``: an outline is 0, never the colour negated (a mask of 0 / 2), for either detector.
    """
    pixels = photo(24, 32, 3, np.uint8).astype(np.float64)
    posterized = np.rint(pixels * 3 / 255) / 3
    image = (pixels / 255).astype(np.float32)
    out = cvf.apply(image, "cartoon", edges=edges, passes=0, quantize="posterize", levels=4, backend="cpu")
    outline = np.all(out == 0, axis=-1)
    assert 0.02 < outline.mean() < 0.5 and (posterized[outline] > 0).any()
    np.testing.assert_allclose(out[~outline], posterized[~outline], rtol=0, atol=1e-6)
    assert out.min() == 0.0


# ------------------------------------------------------------------------------ sketch
def test_sketch_blur_kernel_reaches_round_4_sigma() -> None:
    """The negative's blur has ``2 round(4 blur) + 1`` taps: a white-to-black step is drawn that far into the black.

    Gray, strength 1, shading 0: ``out = min(1, (Y + e) / (1 - B + e))``, ``e = 1/64``. On black the
    outermost tap (4 px at blur 1.1, weight 5e-4) darkens to about 0.97; one tap more (cv2's automatic
    11 taps, weight 1.2e-5) would darken by 8e-4; flat black stays within float32 rounding (6e-6)
    of 1. Reference: numpy's Gaussian taps in float64; strokes are ``out < 1 - 1e-4``.
    """
    blur, reach = 1.1, round(4 * 1.1)
    image = step_image(3, 30, 1.0, 0.0)  # white left of column 15, black from it
    out = cvf.apply(image, "sketch", blur=blur, strength=1.0, shading=0.0, backend="cpu")
    x = np.arange(-reach, reach + 1)
    taps = np.exp(-(x**2) / (2 * blur**2))
    taps /= taps.sum()
    negative = np.pad(1.0 - image[1].astype(np.float64), reach, mode="edge")
    blurred = np.convolve(negative, taps, mode="valid")
    expected = np.minimum(1.0, (image[1] + 1 / 64) / (1 - blurred + 1 / 64))
    np.testing.assert_allclose(out[1], expected, rtol=0, atol=1e-4)
    np.testing.assert_array_equal(np.flatnonzero(out[1] < 1 - 1e-4), np.arange(15, 15 + reach))


# ------------------------------------------------------------------------------ halftone, crosshatch
def test_halftone_of_float32_is_zero_and_one() -> None:
    """A float32 image's halftone is 0.0 (dot) and 1.0 (paper), GPUImage's rule on the decided pixels."""
    image = photo(45, 62, 3, np.uint8)
    out = cvf.apply(image.astype(np.float32) / 255, "halftone", size=5, backend="cpu")
    assert out.dtype == np.float32 and set(np.unique(out).tolist()) == {0.0, 1.0}
    white, margin = halftone_reference(image, 5)
    decided = margin > 1e-4
    np.testing.assert_array_equal((out[..., 0] == 1.0)[decided], white[decided])


def test_crosshatch_of_float32_is_zero_and_one() -> None:
    """A float32 image's crosshatch is 0.0 (line) and 1.0 (paper), GPUImage's rule on every pixel."""
    image = photo(30, 40, 3, np.uint8)
    out = cvf.apply(image.astype(np.float32) / 255, "crosshatch", spacing=6, line_width=1.5, backend="cpu")
    assert out.dtype == np.float32 and set(np.unique(out).tolist()) == {0.0, 1.0}
    np.testing.assert_array_equal(out[..., 0] == 1.0, crosshatch_reference(image, 6, 1.5))
