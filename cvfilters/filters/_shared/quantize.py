"""k-means colour quantization on the host: the palette an image reduces to.

Seeded Lloyd's algorithm with k-means++ starts, fitted on a sample of the pixels,
in BGR or CIE L*a*b*; public as ``cvfilters.quantize_palette`` and used by the
``quantize`` and ``cartoon`` filters.
"""

from __future__ import annotations

import cv2
import numpy as np

from cvfilters.core.arrays import swap_rb
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order
from cvfilters.core.errors import InvalidImageError
from cvfilters.core.pixels import full_scale

# Pixels k-means fits its centres on (a seeded random sample); every pixel is then
# assigned to its nearest centre.
KMEANS_SAMPLES = 32768
KMEANS_MAX_ITER = 30
KMEANS_TOL = 1e-3  # of the samples' range: a quarter of an 8-bit level


def _nearest(points: np.ndarray, centers: np.ndarray, chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """Index of and squared distance to the nearest centre for each row of ``points`` (float32 maths)."""
    labels = np.empty(len(points), dtype=np.int32)
    dist = np.empty(len(points), dtype=np.float32)
    c = centers.astype(np.float32)
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk].astype(np.float32)
        d = np.zeros((len(p), len(c)), dtype=np.float32)
        for dim in range(c.shape[1]):
            diff = p[:, dim, None] - c[None, :, dim]
            d += diff * diff
        best = np.argmin(d, axis=1)
        labels[start:start + chunk] = best
        dist[start:start + chunk] = d[np.arange(len(p)), best]
    return labels, dist


def _kmeans_pp(samples: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding; stops early when every sample coincides with a centre."""
    centers = [samples[rng.integers(len(samples))]]
    d2 = ((samples - centers[0]) ** 2).sum(1)
    while len(centers) < k:
        total = d2.sum()
        if total <= 0.0:
            break  # fewer distinct colours than k
        index = int(np.searchsorted(np.cumsum(d2), rng.random() * total, side="right"))
        index = min(index, len(samples) - 1)
        centers.append(samples[index])
        d2 = np.minimum(d2, ((samples - samples[index]) ** 2).sum(1))
    return np.array(centers)


def kmeans(samples: np.ndarray, k: int, *, attempts: int = 3, seed: int = 0,
           max_iter: int = KMEANS_MAX_ITER, tol: float = KMEANS_TOL) -> np.ndarray:
    """Lloyd's k-means with k-means++ seeding, in float64, deterministic for a seed.

    Parameters
    ----------
    samples : (N, D) array
    k : int
        Number of clusters; fewer centres come back when the samples have fewer
        distinct values.
    attempts : int
        Independent seedings; the one with the lowest sum of squared distances wins.
    seed : int
        Seed of the numpy generator that picks the seeds (OpenCV's global RNG is not
        touched).
    max_iter, tol : int, float
        Lloyd iterations stop after ``max_iter``, when no label changes, or when no
        centre moves by ``tol`` times the samples' value range or more.

    Returns
    -------
    (k', D) float64 array of centres, k' <= k.
    """
    samples = np.asarray(samples, dtype=np.float64)
    rng = np.random.default_rng(seed)
    limit = tol * max(float(np.ptp(samples)), 1e-12)
    best, best_cost = None, np.inf
    for _ in range(attempts):
        centers = _kmeans_pp(samples, k, rng)
        labels = None
        for _ in range(max_iter):
            new_labels, _ = _nearest(samples, centers)
            if labels is not None and np.array_equal(new_labels, labels):
                break
            labels = new_labels
            counts = np.bincount(labels, minlength=len(centers)).astype(np.float64)
            used = counts > 0
            previous = centers.copy()
            for dim in range(samples.shape[1]):
                sums = np.bincount(labels, weights=samples[:, dim], minlength=len(centers))
                centers[used, dim] = sums[used] / counts[used]
            if np.abs(centers - previous).max() < limit:
                break
        _, dist = _nearest(samples, centers)
        cost = float(dist.sum())
        if cost < best_cost:
            best, best_cost = centers, cost
    assert best is not None
    return best


def _sample(points: np.ndarray, limit: int, seed: int) -> np.ndarray:
    if len(points) <= limit:
        return points
    rng = np.random.default_rng([seed, 1])
    return points[np.sort(rng.choice(len(points), limit, replace=False))]


def quantize_unit(colour: np.ndarray, k: int, *, attempts: int, seed: int, space: str,
                   max_samples: int = KMEANS_SAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """k-means on a float32 (H, W, D) image in 0..1: per-pixel labels and the palette (0..1).

    The palette is ordered by how many pixels use each colour (most first); colours
    no pixel uses are dropped. Raises :class:`InvalidImageError` for NaN or infinite values.
    """
    height, width, depth = colour.shape
    if not np.all(np.isfinite(colour)):
        raise InvalidImageError("the image holds NaN or infinite values, which k-means colour quantization cannot "
                                "cluster (replace them first, e.g. with numpy.nan_to_num)")
    features = colour
    if space == "lab" and depth == 3:
        features = cv2.cvtColor(np.ascontiguousarray(colour, dtype=np.float32), cv2.COLOR_BGR2Lab)
    points = features.reshape(-1, depth)
    centers = kmeans(_sample(points, max_samples, seed), k, attempts=attempts, seed=seed)
    labels, _ = _nearest(points, centers)
    counts = np.bincount(labels, minlength=len(centers))
    order = np.argsort(-counts, kind="stable")
    order = order[counts[order] > 0]
    rank = np.empty(len(centers), dtype=np.int32)
    rank[order] = np.arange(len(centers), dtype=np.int32)[: len(order)]
    centers = centers[order].astype(np.float32)
    if space == "lab" and depth == 3:
        centers = cv2.cvtColor(centers.reshape(1, -1, 3), cv2.COLOR_Lab2BGR).reshape(-1, 3)
    palette = np.clip(centers, 0.0, 1.0).astype(np.float32)
    return rank[labels].reshape(height, width), palette


def _to_dtype(unit: np.ndarray, dtype: np.dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return unit.astype(np.float32)
    return np.rint(unit * full_scale(dtype)).astype(dtype)


def quantize_palette(img: np.ndarray, k: int, *, attempts: int = 3, seed: int = 0, space: str = "bgr",
                     max_samples: int = KMEANS_SAMPLES,
                     channel_order: ChannelOrder | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Quantize an image to at most ``k`` colours by k-means; return it with its palette.

    Parameters
    ----------
    img : numpy.ndarray
        uint8, uint16 or float32 (0..1); gray (H x W or H x W x 1), BGR or BGRA.
    k : int
        Largest number of colours (1..256). Fewer come back when the image has fewer
        distinct colours, so 1 x 1 images and flat images work.
    attempts : int, keyword-only
        k-means++ seedings tried; the lowest within-cluster sum of squares wins.
    seed : int, keyword-only
        Seed of the sampling and the seeding: the same seed gives the same result.
    space : {"bgr", "lab"}, keyword-only
        Colour space distances are measured in (``lab`` is CIE L*a*b*, perceptual;
        ignored for gray images).
    max_samples : int, keyword-only
        k-means fits its centres on at most this many randomly chosen pixels; every
        pixel is then mapped to its nearest centre.
    channel_order : {"bgr", "rgb"}, keyword-only, optional
        The order of ``img``'s colour channels and of the palette's (default BGR, or
        ``cvfilters.set_defaults``). An RGB image gives the RGB palette of the
        result its BGR twin gives, exactly.

    Returns
    -------
    quantized : numpy.ndarray
        Same shape and dtype as ``img``; alpha is kept.
    palette : numpy.ndarray
        (n, 3) colours in ``channel_order`` (or (n, 1) gray levels), n <= k, in
        ``img``'s dtype, ordered from the most to the least used.

    Examples
    --------
    >>> out, palette = quantize_palette(img, 8, seed=1)   # doctest: +SKIP
    >>> palette.shape                                       # doctest: +SKIP
    (8, 3)
    """
    rgb = resolve_channel_order(channel_order) == "rgb"
    array = np.asarray(img)
    if rgb:
        array = swap_rb(array)
    if array.dtype not in (np.uint8, np.uint16, np.float32):
        raise ValueError(f"Incorrect dtype of `img`: {array.dtype} (use uint8, uint16 or float32)")
    if not 1 <= k <= 256:
        raise ValueError(f"Incorrect value of `k`: {k} (use 1..256)")
    if space not in ("bgr", "lab"):
        raise ValueError(f"Incorrect value of `space`: {space!r} (use 'bgr' or 'lab')")
    height, width = array.shape[:2]
    channels = 1 if array.ndim == 2 else array.shape[2]
    if channels not in (1, 3, 4):
        raise ValueError(f"Incorrect shape of `img`: {array.shape} (use H x W, or H x W x 1, 3 or 4)")
    planes = array.reshape(height, width, channels)
    colour = planes[..., :3] if channels == 4 else planes
    unit = colour.astype(np.float32) / np.float32(full_scale(array.dtype))
    labels, palette_unit = quantize_unit(unit, k, attempts=attempts, seed=seed, space=space,
                                          max_samples=max_samples)
    palette = _to_dtype(palette_unit, array.dtype)
    quantized = palette[labels]
    if channels == 4:
        quantized = np.dstack([quantized, planes[..., 3:]])
    quantized = quantized.reshape(array.shape)
    if rgb:
        return swap_rb(quantized), swap_rb(palette[None])[0]
    return quantized, palette
