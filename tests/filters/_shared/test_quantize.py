"""k-means colour quantization (cvfilters/filters/_shared/quantize.py) against references written out here.

``_nearest`` against brute-force float32 distances; ``_kmeans_pp`` against draws worked out by hand
with a scripted generator; ``kmeans`` against Lloyd's algorithm in numpy started from the same
seeding; the palette functions against cv2's Lab conversions called directly, hand-checked small
images and their documented errors, compared whole. Small arrays only: seconds in all.
"""

from __future__ import annotations

from typing import cast

import cv2
import numpy as np
import pytest

from cvfilters.core.errors import InvalidImageError
from cvfilters.filters._shared.quantize import (
    _kmeans_pp,
    _nearest,
    _sample,
    kmeans,
    quantize_palette,
    quantize_unit,
)
from tests.conftest import photo

# 1-D data whose Lloyd iterations (one attempt, seed 0) leave a cluster empty: the first centre
# in the second update of EMPTY_FIRST (k=3), the last one in EMPTY_LAST (k=6).
EMPTY_FIRST = [20, 2, 20, 19, 4, 10, 9, 18, 20]
EMPTY_LAST = [20, 2, 18, 18, 14, 2, 6, 2, 8, 13, 7, 19, 7, 16, 20, 3, 7, 16, 2, 3, 10, 14, 16, 13]
# a singleton cluster whose centre is not yet on its pixel (k=3, seed 0, fourth update)
SINGLETON = [0, 16, 13, 14, 7, 12]
# the first Lloyd update (k=3, seed 0) moves a centre by exactly 2.625 = 0.1640625 x the range 16
TOL_EDGE = [0, 16, 5, 0, 1, 0, 2, 13, 11, 15, 8, 10, 16, 12]
# k-means++ draws on these three points, worked out by hand below
TRIANGLE = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
NAN_MESSAGE = ("the image holds NaN or infinite values, which k-means colour quantization cannot "
               "cluster (replace them first, e.g. with numpy.nan_to_num)")


def _brute_nearest(points: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest centre and squared distance by broadcasting every pair, in float32."""
    d = ((points.astype(np.float32)[:, None, :] - centers.astype(np.float32)[None]) ** 2).sum(-1)
    best = d.argmin(1)
    return best, d[np.arange(len(points)), best]


def _lloyd(samples: np.ndarray, centers: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """Lloyd's algorithm as the docstring states it: stop after max_iter, when no label changes,
    or when no centre moved by tol times the samples' range or more; empty clusters keep their centre."""
    samples = np.asarray(samples, dtype=np.float64)
    centers = np.array(centers, dtype=np.float64)
    limit = tol * max(float(samples.max() - samples.min()), 1e-12)
    labels = None
    for _ in range(max_iter):
        new, _ = _brute_nearest(samples, centers)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        previous = centers.copy()
        for j in range(len(centers)):
            members = samples[labels == j]
            if len(members):
                centers[j] = members.mean(axis=0)
        if np.abs(centers - previous).max() < limit:
            break
    return centers


def _cost(samples: np.ndarray, centers: np.ndarray) -> float:
    return float(_brute_nearest(samples, centers)[1].astype(np.float64).sum())


class _Script:
    """A stand-in for numpy's Generator that draws the values a test chose."""

    def __init__(self, first: int, draws: list[float]) -> None:
        self.first, self.draws = first, list(draws)

    def integers(self, high: int) -> int:
        assert 0 <= self.first < high
        return self.first

    def random(self) -> float:
        return self.draws.pop(0)


def _pp(first: int, draws: list[float], k: int) -> np.ndarray:
    return _kmeans_pp(TRIANGLE, k, cast(np.random.Generator, _Script(first, draws)))


# --- _nearest ---------------------------------------------------------------------------------

@pytest.mark.parametrize("chunk", [None, 4, 7, 64])
def test_nearest_matches_brute_force_float32_distances(chunk: int | None) -> None:
    """Chunks that skip, overlap or misplace rows, or distances not summed over every channel."""
    rng = np.random.default_rng(2)
    points = rng.random((50, 3))
    centers = rng.random((7, 3))
    points[0] = centers[5] + 0.01  # the first row's nearest centre is not centre 0
    labels, dist = _nearest(points, centers) if chunk is None else _nearest(points, centers, chunk)
    want_labels, want_dist = _brute_nearest(points, centers)
    assert labels.dtype == np.int32 and dist.dtype == np.float32
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(dist, want_dist)  # float32 sums, channel by channel: bit for bit
    assert labels[0] == 5


def test_nearest_measures_in_float32() -> None:
    """Float64 centres and pixels are rounded to float32 first: equal after rounding is distance 0."""
    centers = np.array([[0.1, 0.7, 0.3], [0.9, 0.2, 0.6]])
    for points in (centers[::-1].astype(np.float32), centers[::-1] + 1e-9):
        labels, dist = _nearest(points, centers)
        assert labels.tolist() == [1, 0]
        assert dist.tolist() == [0.0, 0.0]


# --- _kmeans_pp -------------------------------------------------------------------------------

@pytest.mark.parametrize(("first", "draws", "k", "want"), [
    # from (1, 0) the squared distances are 1, 0, 10 (cumulative 1, 1, 11): draw * 11 picks
    (1, [0.05], 2, [[1, 0], [0, 0]]),
    (1, [0.2], 2, [[1, 0], [0, 3]]),
    (1, [0.0], 2, [[1, 0], [0, 0]]),
    # from (0, 0): 0, 1, 9 (cumulative 0, 1, 10); a draw of 0 never picks the centre already taken
    (0, [0.0], 2, [[0, 0], [1, 0]]),
    # a draw at the very top (as rounding of the cumulative sum can give) picks the last point
    (0, [1.0], 2, [[0, 0], [0, 3]]),
    (0, [0.9], 2, [[0, 0], [0, 3]]),
    # then from (0, 0) and (0, 3): 0, 1, 0, so any draw picks (1, 0)
    (0, [0.5, 0.5], 3, [[0, 0], [0, 3], [1, 0]]),
    # three distinct points: a fourth centre is not invented
    (0, [0.5, 0.5], 4, [[0, 0], [0, 3], [1, 0]]),
])
def test_kmeans_pp_draws_in_proportion_to_the_squared_distance(first: int, draws: list[float], k: int,
                                                                want: list[list[float]]) -> None:
    """Weights not squared distances, the wrong search side, the clamp or the stopping rule."""
    centers = _pp(first, draws, k)
    np.testing.assert_array_equal(centers, np.array(want, dtype=np.float64))


@pytest.mark.parametrize("seed", range(6))
def test_kmeans_pp_picks_distinct_samples(seed: int) -> None:
    """k distinct sample rows when there are enough distinct ones; all of them when there are fewer."""
    rng = np.random.default_rng(seed)
    samples = rng.integers(0, 50, (30, 3)).astype(np.float64)
    centers = _kmeans_pp(samples, 5, np.random.default_rng(seed))
    assert centers.shape == (5, 3)
    assert len(np.unique(centers, axis=0)) == 5
    assert all((samples == c).all(1).any() for c in centers)
    few = np.repeat(samples[:3], 4, axis=0)
    got = _kmeans_pp(few, 8, np.random.default_rng(seed))
    assert sorted(map(tuple, got)) == sorted(map(tuple, np.unique(few, axis=0)))


# --- kmeans -----------------------------------------------------------------------------------

def _datasets() -> list[tuple[str, np.ndarray, int]]:
    rng = np.random.default_rng(7)
    blobs = np.concatenate([c + 0.08 * rng.standard_normal((15, 2)) for c in ([0, 0], [1, 0], [0.5, 1])])
    return [
        ("empty-first", np.array(EMPTY_FIRST, dtype=np.float64)[:, None], 3),
        ("empty-last", np.array(EMPTY_LAST, dtype=np.float64)[:, None], 6),
        ("uniform", rng.random((40, 3)), 5),
        ("8-bit", rng.integers(0, 256, (40, 3)).astype(np.float64), 4),
        ("small-range", rng.random((40, 2)) * 0.01, 4),
        ("blobs", blobs, 4),
        ("singleton", np.array(SINGLETON, dtype=np.float64)[:, None], 3),
    ]


@pytest.mark.parametrize(("max_iter", "tol"), [(30, 1e-3), (1, 1e-3), (2, 0.0), (30, 0.0), (30, 0.02), (30, 0.3)])
@pytest.mark.parametrize(("name", "samples", "k"), _datasets(), ids=[d[0] for d in _datasets()])
def test_kmeans_one_attempt_is_lloyd_from_the_kmeans_pp_seeding(name: str, samples: np.ndarray, k: int,
                                                                   max_iter: int, tol: float) -> None:
    """Wrong means, stopping rules, empty clusters (kept, not NaN) or the tolerance's scale."""
    for seed in (0, 3):
        start = _kmeans_pp(samples, k, np.random.default_rng(seed))
        want = _lloyd(samples, start, max_iter, tol)
        got = kmeans(samples, k, attempts=1, seed=seed, max_iter=max_iter, tol=tol)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * max(1.0, float(np.ptp(samples))))


@pytest.mark.parametrize(("name", "samples", "k"), [
    *_datasets()[2:],
    # two equally good partitions in either order: the first attempt that reached the lowest cost wins
    ("square", np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]]), 2),
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kmeans_keeps_the_first_attempt_with_the_lowest_cost(name: str, samples: np.ndarray, k: int,
                                                             seed: int) -> None:
    """Attempts not independent seedings of one generator, the cost not compared, or a later tie winning."""
    rng = np.random.default_rng(seed)
    runs = [_lloyd(samples, _kmeans_pp(samples, k, rng), 30, 1e-3) for _ in range(3)]
    costs = [_cost(samples, run) for run in runs]
    want = runs[int(np.argmin(costs))]
    np.testing.assert_allclose(kmeans(samples, k, seed=seed, attempts=3), want, rtol=0, atol=1e-9)


def test_kmeans_keeps_iterating_after_a_move_of_exactly_tol_times_the_range() -> None:
    """Iterations stop only when no centre moved by tol x range *or more*: a move equal to it goes on."""
    samples = np.array(TOL_EDGE, dtype=np.float64)[:, None]
    tol = 2.625 / 16
    start = _kmeans_pp(samples, 3, np.random.default_rng(0))
    want = _lloyd(samples, start, 30, tol)
    assert not np.allclose(want, _lloyd(samples, start, 1, 0.0))  # stopping after that move differs
    np.testing.assert_allclose(kmeans(samples, 3, attempts=1, seed=0, tol=tol), want, rtol=0, atol=1e-9)


def test_kmeans_defaults_are_three_attempts_and_seed_0() -> None:
    """The documented defaults (attempts=3, seed=0), on data where 4 attempts or seed 1 differ."""
    samples = np.random.default_rng(3).random((40, 2))
    got = kmeans(samples, 5)
    np.testing.assert_array_equal(got, kmeans(samples, 5, attempts=3, seed=0))
    assert not np.allclose(got, kmeans(samples, 5, attempts=4, seed=0))
    assert not np.allclose(got, kmeans(samples, 5, attempts=3, seed=1))


def test_kmeans_same_seed_same_centres() -> None:
    """The seed, not a fresh generator, drives the seedings."""
    samples = np.random.default_rng(5).random((60, 3))
    results = [kmeans(samples, 8, attempts=1, seed=seed) for seed in (0, 1, 2, 0, 1, 2)]
    for first, again in zip(results[:3], results[3:], strict=True):
        np.testing.assert_array_equal(first, again)
    assert not np.array_equal(results[0], results[1]) or not np.array_equal(results[0], results[2])


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_kmeans_computes_in_float64(dtype: type) -> None:
    """Integer samples not wrapped around, centres not truncated to the samples' dtype."""
    samples: np.ndarray = np.array([[250], [5], [10], [255], [6], [251]], dtype=dtype)
    centers = kmeans(samples, 2)
    assert centers.dtype == np.float64
    np.testing.assert_allclose(np.sort(centers[:, 0]), [7.0, 252.0], atol=1e-6)


# --- _sample ----------------------------------------------------------------------------------

def test_sample_draws_distinct_pixels_in_order() -> None:
    """At most ``limit`` distinct pixels, in image order, the same for a seed; all when fewer."""
    points = np.arange(200).reshape(100, 2)
    np.testing.assert_array_equal(_sample(points, 100, 0), points)
    for seed in (0, 1):
        got = _sample(points, 90, seed)
        assert got.shape == (90, 2)
        assert (np.diff(got[:, 0]) > 0).all()  # distinct rows, kept in order
        assert np.isin(got[:, 0], points[:, 0]).all() and (got[:, 1] == got[:, 0] + 1).all()
        np.testing.assert_array_equal(got, _sample(points, 90, seed))
    assert not np.array_equal(_sample(points, 90, 0), _sample(points, 90, 1))


# --- quantize_unit ----------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_quantize_unit_rejects_non_finite_values_with_its_message(bad: float) -> None:
    colour = np.full((2, 2, 3), 0.5, dtype=np.float32)
    colour[1, 0, 2] = bad
    with pytest.raises(InvalidImageError) as caught:
        quantize_unit(colour, 2, attempts=1, seed=0, space="bgr")
    assert str(caught.value) == NAN_MESSAGE


def test_quantize_unit_lab_palette_is_the_lab_mean_back_in_bgr() -> None:
    """One colour in Lab is the Lab mean converted back to BGR by cv2, not the Lab values themselves."""
    colour = np.array([[[0.0, 0.0, 1.0], [0.0, 0.5, 1.0], [1.0, 0.2, 0.1]]], dtype=np.float32)
    lab_mean = cv2.cvtColor(colour, cv2.COLOR_BGR2Lab).reshape(-1, 3).mean(axis=0)
    want = cv2.cvtColor(lab_mean.astype(np.float32).reshape(1, 1, 3), cv2.COLOR_Lab2BGR).reshape(1, 3)
    labels, palette = quantize_unit(colour, 1, attempts=1, seed=0, space="lab")
    assert palette.dtype == np.float32 and labels.shape == (1, 3)
    np.testing.assert_allclose(palette, np.clip(want, 0, 1), atol=1e-5)
    # two colours in Lab come back as themselves
    labels, palette = quantize_unit(colour[:, :2], 2, attempts=1, seed=0, space="lab")
    np.testing.assert_allclose(palette[labels[0]], colour[0, :2], atol=1e-3)  # the Lab round trip


def test_quantize_unit_ignores_lab_for_gray() -> None:
    gray = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4, 1)
    lab = quantize_unit(gray, 3, attempts=2, seed=1, space="lab")
    bgr = quantize_unit(gray, 3, attempts=2, seed=1, space="bgr")
    np.testing.assert_array_equal(lab[0], bgr[0])
    np.testing.assert_array_equal(lab[1], bgr[1])


def test_quantize_unit_clips_the_palette_to_0_1() -> None:
    """Float images past 0..1 give a palette in 0..1 (the documented range), each the clipped mean."""
    colour = np.array([[[-0.5, 0.2, 1.5], [-0.5, 0.2, 1.5], [0.4, 2.5, -1.0]]], dtype=np.float32)
    labels, palette = quantize_unit(colour, 2, attempts=1, seed=0, space="bgr")
    assert labels.tolist() == [[0, 0, 1]]
    np.testing.assert_array_equal(palette, np.clip(colour[0, 1:], 0, 1))


def test_quantize_unit_orders_by_use_and_drops_unused_centres() -> None:
    """Palette most used first, labels renumbered to it, a centre no pixel uses dropped."""
    values = np.array(EMPTY_FIRST, dtype=np.float32) / 20
    start = _kmeans_pp(values[:, None].astype(np.float64), 3, np.random.default_rng(0))
    centers = _lloyd(values[:, None], start, 30, 1e-3)
    nearest, _ = _brute_nearest(values[:, None], centers)
    counts = np.bincount(nearest, minlength=3)
    assert (counts == 0).any()  # the case this test is about
    order = [j for j in np.argsort(-counts, kind="stable") if counts[j]]
    labels, palette = quantize_unit(values.reshape(1, -1, 1), 3, attempts=1, seed=0, space="bgr")
    np.testing.assert_allclose(palette[:, 0], centers[order, 0], atol=1e-6)
    rank = {centre: place for place, centre in enumerate(order)}
    assert labels[0].tolist() == [rank[j] for j in nearest]


# --- quantize_palette -------------------------------------------------------------------------

@pytest.mark.parametrize(("img", "k", "kwargs", "message"), [
    (np.zeros((2, 2, 3)), 2, {}, "Incorrect dtype of `img`: float64 (use uint8, uint16 or float32)"),
    (np.zeros((2, 2, 3), np.uint8), 0, {}, "Incorrect value of `k`: 0 (use 1..256)"),
    (np.zeros((2, 2, 3), np.uint8), 257, {}, "Incorrect value of `k`: 257 (use 1..256)"),
    (np.zeros((2, 2, 3), np.uint8), 2, {"space": "hsv"}, "Incorrect value of `space`: 'hsv' (use 'bgr' or 'lab')"),
    (np.zeros((2, 2, 2), np.uint8), 2, {}, "Incorrect shape of `img`: (2, 2, 2) (use H x W, or H x W x 1, 3 or 4)"),
    (np.zeros((2, 2, 5), np.uint8), 2, {}, "Incorrect shape of `img`: (2, 2, 5) (use H x W, or H x W x 1, 3 or 4)"),
])
def test_quantize_palette_rejects_bad_arguments_with_its_messages(img: np.ndarray, k: int, kwargs: dict[str, str],
                                                                  message: str) -> None:
    with pytest.raises(ValueError) as caught:
        quantize_palette(img, k, **kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


@pytest.mark.parametrize("k", [1, 256])
def test_quantize_palette_accepts_k_from_1_to_256(k: int) -> None:
    image = np.arange(300, dtype=np.uint16).reshape(10, 30) * 200
    out, palette = quantize_palette(image, k)
    assert len(palette) == k and len(np.unique(out)) == k
    if k == 1:
        assert palette.tolist() == [[round(float(image.mean()))]]


def test_quantize_palette_keeps_alpha_and_quantizes_the_colour() -> None:
    image = photo(12, 16, 4, np.uint8)
    out, palette = quantize_palette(image, 4, seed=2)
    colour, colour_palette = quantize_palette(np.ascontiguousarray(image[..., :3]), 4, seed=2)
    assert out.shape == image.shape
    np.testing.assert_array_equal(out[..., 3], image[..., 3])
    np.testing.assert_array_equal(out[..., :3], colour)
    np.testing.assert_array_equal(palette, colour_palette)


def test_quantize_palette_lab_matches_cv2_lab_mean() -> None:
    """k=1 in Lab: the mean of cv2's Lab of the pixels, back to BGR by cv2, rounded to 8 bits."""
    image = np.array([[[0, 0, 255], [0, 128, 255], [255, 50, 20], [30, 200, 90]]], dtype=np.uint8)
    lab = cv2.cvtColor(image.astype(np.float32) / 255, cv2.COLOR_BGR2Lab).reshape(-1, 3).mean(axis=0)
    bgr = cv2.cvtColor(lab.astype(np.float32).reshape(1, 1, 3), cv2.COLOR_Lab2BGR).reshape(3)
    out, palette = quantize_palette(image, 1, space="lab")
    np.testing.assert_allclose(palette[0], np.clip(bgr, 0, 1) * 255, atol=0.51)
    np.testing.assert_array_equal(out, np.broadcast_to(palette[0], image.shape))


@pytest.mark.parametrize("space", ["bgr", "lab"])
def test_quantize_palette_rgb_gives_the_twin_of_bgr(space: str) -> None:
    """channel_order='rgb': the RGB palette of the result the BGR twin gives, exactly."""
    bgr = photo(10, 12, 3, np.uint8)
    rgb = np.ascontiguousarray(bgr[..., ::-1])
    out_bgr, palette_bgr = quantize_palette(bgr, 5, space=space, seed=4)
    out_rgb, palette_rgb = quantize_palette(rgb, 5, space=space, seed=4, channel_order="rgb")
    np.testing.assert_array_equal(out_rgb, out_bgr[..., ::-1])
    np.testing.assert_array_equal(palette_rgb, palette_bgr[:, ::-1])


def test_quantize_palette_fits_on_at_most_max_samples_pixels() -> None:
    """One sampled pixel gives one colour: k-means cannot find more centres than pixels it fits on."""
    image = photo(8, 8, 3, np.uint8)
    out, palette = quantize_palette(image, 6, max_samples=1)
    assert len(palette) == 1
    assert len(quantize_palette(image, 6, max_samples=64)[1]) == 6


def test_quantize_palette_defaults_are_three_attempts_and_seed_0() -> None:
    """The documented defaults, on an image where 4 attempts or seed 1 give another palette."""
    image = photo(6, 6, 3, np.uint8)
    got = quantize_palette(image, 4)[1]
    np.testing.assert_array_equal(got, quantize_palette(image, 4, attempts=3, seed=0)[1])
    for other in (quantize_palette(image, 4, attempts=4)[1], quantize_palette(image, 4, seed=1)[1]):
        assert other.shape != got.shape or (other != got).any()
