"""Histograms as data: counting levels, and the tables and thresholds built from counts.

Pure functions on host arrays (the backend-independent half of the histogram
filters in :mod:`cvfilters.filters.histogram`), public as ``cvfilters.histogram`` and
friends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from cvfilters.core.arrays import as_array, is_pil
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order

_U8, _U16, _F32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32)
_CHANNEL_NAMES = {"bgr": {"b": 0, "g": 1, "r": 2, "a": 3}, "rgb": {"r": 0, "g": 1, "b": 2, "a": 3}}


def calc_hist_counts(image: np.ndarray, channel: int, bins: int, low: float, high: float,
               mask: np.ndarray | None = None) -> np.ndarray:
    """``cv2.calcHist`` of one channel as int64 counts of shape (bins,).

    OpenCV 5 returns a 1-D array where 4.x returned (bins, 1); both are flattened.
    Counts are exact up to 2**24 pixels per bin (calcHist accumulates into float32).
    """
    hist = cv2.calcHist([image], [channel], mask, [bins], [low, high])
    return np.rint(np.asarray(hist, dtype=np.float64).reshape(-1)).astype(np.int64)


def level_counts(host: np.ndarray, levels: int) -> np.ndarray:
    """Counts of every level (0 .. levels - 1) of each channel of an integer image: (C, levels)."""
    channels = 1 if host.ndim == 2 else host.shape[2]
    return np.stack([calc_hist_counts(host, c, levels, 0, levels) for c in range(channels)])


def host_array(image: Any) -> np.ndarray:
    """A numpy array of an image: device images downloaded, PIL images and array-likes viewed."""
    if isinstance(image, np.ndarray):
        return image
    if isinstance(image, cv2.UMat):
        return image.get()
    if isinstance(image, cv2.cuda.GpuMat):
        return image.download()
    if is_pil(image):
        return np.asarray(image)
    return as_array(image)


def equalize_table(counts: np.ndarray) -> np.ndarray:
    """The table of global histogram equalisation for the level counts of one channel.

    ``T(v) = round((cdf(v) - cdf_min) / (N - cdf_min) * (L - 1))`` with ``cdf_min`` the
    count of the lowest level present, ``N`` the pixel count and ``L`` the levels; for
    256 levels in float32 arithmetic, which is ``cv2.equalizeHist`` bit for bit. A
    constant image gives the identity.
    """
    counts = np.asarray(counts, dtype=np.int64)
    levels = len(counts)
    present = np.flatnonzero(counts)
    total = int(counts.sum())
    if present.size < 2:
        return np.arange(levels)
    first = int(counts[present[0]])
    above = np.cumsum(counts) - first
    if levels == 256:
        scale = np.float32(levels - 1) / np.float32(total - first)
        values = above.astype(np.float32) * scale
    else:
        values = above * (levels - 1.0) / (total - first)  # exact product, one correctly rounded division
    return np.clip(np.rint(values), 0, levels - 1).astype(np.int64)


def match_table(source: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The table mapping source levels to reference levels with the same cumulative share.

    ``T(v) = round(interp(Fs(v), Fr(r_k), r_k))``: ``Fs`` is the source's cumulative
    distribution at each of its ``L`` levels, ``r_k`` the levels present in the
    reference (bin ``k`` of ``K`` stands for ``k * (L - 1) / (K - 1)``) and ``Fr`` its
    cumulative distribution there; ``interp`` is linear (scikit-image's
    ``match_histograms`` in table form).
    """
    source = np.asarray(source, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    levels = len(source)
    present = np.flatnonzero(reference)
    if present.size == 0 or source.sum() == 0:
        return np.arange(levels)
    values = present * ((levels - 1) / (len(reference) - 1))
    ref_cdf = np.cumsum(reference[present]) / reference.sum()
    src_cdf = np.cumsum(source) / source.sum()
    return np.clip(np.rint(np.interp(src_cdf, ref_cdf, values)), 0, levels - 1).astype(np.int64)


def otsu_level(counts: np.ndarray) -> int:
    """Otsu's threshold level: the ``t`` maximising ``w0 w1 (mu0 - mu1)^2``, class 0 being levels ``<= t``.

    The first maximum wins (as in OpenCV and scikit-image); an image with one level
    gives that level.
    """
    counts = np.asarray(counts, dtype=np.float64)
    levels = np.arange(len(counts), dtype=np.float64)
    w0 = np.cumsum(counts)
    w1 = w0[-1] - w0
    m0 = np.cumsum(counts * levels)
    valid = (w0 > 0) & (w1 > 0)
    if not valid.any():
        return int(np.flatnonzero(counts)[-1]) if counts.any() else 0
    with np.errstate(divide="ignore", invalid="ignore"):
        between = np.where(valid, w0 * w1 * (m0 / w0 - (m0[-1] - m0) / w1) ** 2, -1.0)
    return int(np.argmax(between))


def percentile_level(counts: np.ndarray, fraction: float) -> float:
    """``np.percentile(values, 100 * fraction)`` (linear interpolation) from level counts."""
    counts = np.asarray(counts, dtype=np.int64)
    cdf = np.cumsum(counts)
    n = int(cdf[-1])
    position = fraction * (n - 1)
    below = int(np.floor(position))
    low = np.searchsorted(cdf, below, side="right")
    high = np.searchsorted(cdf, min(below + 1, n - 1), side="right")
    return float(low + (position - below) * (high - low))


def histogram(image: Any, bins: int = 256, *, channels: int | str | Sequence[int | str] | None = None,
              mask: np.ndarray | None = None, channel_order: ChannelOrder | None = None) -> np.ndarray:
    """Pixel counts of an image's values in ``bins`` equal-width bins, per channel or of its luminance.

    Parameters
    ----------
    image : numpy.ndarray, PIL.Image.Image, array-like, cv2.UMat or cv2.cuda.GpuMat
        uint8, uint16 or float32; gray, BGR(A) or RGB(A) (``channel_order``). Device
        images are copied to the host.
    bins : int
        2 to 65536. The range ``[0, full + 1)`` (256 or 65536 for integer images) or
        ``[0, 1]`` (float32) is split into ``bins`` equal bins; bin ``k`` holds values
        from ``k * w`` up to (not including) ``(k + 1) * w``. With 256 bins for uint8
        (65536 for uint16) every value has its own bin. float32 values below 0 count in
        the first bin, values from 1 up in the last; NaN is not counted.
    channels : int, str, sequence of them, or None
        None: every colour channel in the image's order (alpha left out; the gray
        channel of a gray image). A channel index or ``"b"``, ``"g"``, ``"r"``, ``"a"``
        (found by ``channel_order``); ``"luminance"``: BT.601 luma
        ``0.299 R + 0.587 G + 0.114 B`` (``cv2.cvtColor`` to gray; the image itself if
        gray). A single int or str gives a 1-D result.
    mask : numpy.ndarray, optional
        H x W; only pixels where it is non-zero are counted.
    channel_order : {"bgr", "rgb"}, optional
        The image's channel order (default BGR, or ``cvfilters.set_defaults``); PIL
        images are RGB.

    Returns
    -------
    numpy.ndarray
        int64 counts, shape (bins,) for a single channel, else (len(channels), bins).
        Counts are exact up to 2**24 pixels per bin (``cv2.calcHist`` accumulates in float32).

    Examples
    --------
    >>> gray = np.full((4, 4), 7, np.uint8)
    >>> int(histogram(gray, channels=0)[7]), histogram(gray).shape
    (16, (1, 256))
    """
    order = "rgb" if is_pil(image) else resolve_channel_order(channel_order)
    array = host_array(image)
    if array.ndim not in (2, 3) or array.dtype not in (_U8, _U16, _F32):
        raise ValueError(f"histogram: expected a uint8, uint16 or float32 image (H x W [x C]), "
                         f"not {array.dtype} {array.shape}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 2 <= bins <= 65536:
        raise ValueError(f"histogram: bins={bins!r} must be an integer in [2, 65536]")
    count = 1 if array.ndim == 2 else array.shape[2]
    single = channels is not None and isinstance(channels, (int, str, np.integer))
    if channels is None:
        wanted: list[int | str] = list(range(min(count, 3)))
    else:
        wanted = [channels] if single else list(channels)  # type: ignore[list-item, arg-type]
    if mask is not None:
        mask = np.asarray(mask)
        if mask.shape != array.shape[:2]:
            raise ValueError(f"histogram: mask shape {mask.shape} is not the image's {array.shape[:2]}")
        mask = (mask != 0).astype(np.uint8)
    rows = [_channel_counts(_channel_plane(array, count, which, order), int(bins), mask) for which in wanted]
    return rows[0] if single else np.stack(rows)


def _channel_plane(array: np.ndarray, count: int, which: int | str, order: str) -> np.ndarray:
    if isinstance(which, str):
        key = which.lower()
        if key in ("luminance", "luma", "gray", "y"):
            if count == 1:
                return array if array.ndim == 2 else array[..., 0]
            code = cv2.COLOR_RGB2GRAY if order == "rgb" else cv2.COLOR_BGR2GRAY
            return cv2.cvtColor(np.ascontiguousarray(array[..., :3]), code)
        if key not in _CHANNEL_NAMES[order]:
            raise ValueError(f"histogram: channel {which!r} is not b, g, r, a, luminance or an index")
        which = _CHANNEL_NAMES[order][key]
    if isinstance(which, bool) or not isinstance(which, (int, np.integer)) or not 0 <= which < count:
        raise ValueError(f"histogram: channel {which!r} does not exist in a {count}-channel image")
    return array if array.ndim == 2 else array[..., int(which)]


def _channel_counts(plane: np.ndarray, bins: int, mask: np.ndarray | None) -> np.ndarray:
    plane = np.ascontiguousarray(plane)
    if plane.dtype != _F32:
        return calc_hist_counts(plane, 0, bins, 0, 65536 if plane.dtype == _U16 else 256, mask)
    values = plane if mask is None else plane[mask.astype(bool)]
    values = values[~np.isnan(values)]
    index = np.clip(np.floor(values.astype(np.float64) * bins), 0, bins - 1).astype(np.int64)
    return np.bincount(index.reshape(-1), minlength=bins).astype(np.int64)


def histogram_panel(counts: np.ndarray, width: int, height: int, *, log: bool = False) -> np.ndarray:
    """A (height, width, C) float32 panel, 0..1: each channel's histogram filled from the bottom.

    Column ``i`` shows bin ``i * bins // width``; heights are relative to the largest
    count (``log``: ``log1p`` of counts). With B, G and R in their own channels the
    overlaps add up to cyan, magenta, yellow and white, like a camera's RGB histogram.
    """
    counts = np.asarray(counts, dtype=np.float64)
    values = np.log1p(counts) if log else counts
    top = values.max()
    columns = values[:, (np.arange(width) * counts.shape[1]) // width]
    bars = np.rint(columns / top * height) if top > 0 else np.zeros_like(columns)
    rows = np.arange(height, 0, -1)[:, None]  # height of each row above the bottom edge
    return np.stack([(rows <= b[None, :]).astype(np.float32) for b in bars], axis=-1)


__all__ = ["calc_hist_counts", "equalize_table", "histogram", "histogram_panel", "host_array", "level_counts",
           "match_table", "otsu_level", "percentile_level"]
