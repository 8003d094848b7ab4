"""Histogram files and references of ``match_histogram``: ``.npy``/``.json`` level counts, cached per file version."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np

from cvfilters.core.arrays import ImageValue
from cvfilters.core.errors import CvfError
from cvfilters.core.files import FileRefused, json_unique, npy_array, read_regular, shown
from cvfilters.filters._shared.histograms import host_array, level_counts
from cvfilters.filters._shared.levels import SPACE_CHOICES, host_context, level_view
from cvfilters.io.reading import read

HISTOGRAM_SUFFIXES = (".npy", ".json")
HISTOGRAM_FORMAT = "cvfilters.histogram"


def save_histogram(path: str | os.PathLike[str], image: Any, *, space: str = "per_channel") -> np.ndarray:
    """Write the level histogram ``match_histogram`` (same ``space``) needs, to a .npy or .json file.

    The counts are per level at the image's resolution: 256 levels for uint8 (and the
    8-bit luma of uint8 colour images), 65536 for uint16 and float32. ``space`` as in
    ``match_histogram``: ``per_channel`` writes B, G, R (3 rows; 1 for gray images),
    a colour space writes its luma channel (1 row).

    File formats: ``.npy``: an int64 array (C, K), C = 1 or 3 (B, G, R). ``.json``:
    ``{"format": "cvfilters.histogram", "version": 1, "levels": K, "space": ...,
    "channels": [...], "counts": [[...], ...]}``. Row ``k`` of ``K`` stands for the value
    ``k / (K - 1)`` of full scale, so a histogram of a uint8 image applies to uint16
    and float32 images too.

    Returns
    -------
    numpy.ndarray
        The counts written, (C, K).
    """
    if space not in SPACE_CHOICES:
        raise ValueError(f"save_histogram: space={space!r} is not one of {', '.join(SPACE_CHOICES)}")
    path = Path(path)
    if path.suffix.lower() not in HISTOGRAM_SUFFIXES:
        raise ValueError(f"save_histogram: {path} must end in .npy or .json")
    array = host_array(image)
    colour = array.ndim == 3 and array.shape[2] >= 3
    array = np.ascontiguousarray(array[..., :3]) if colour else (array if array.ndim == 2 else array[..., 0])
    ctx = host_context(array)
    view = level_view(ctx, array, space)
    counts = level_counts(cast(np.ndarray, view.image), view.levels)  # a host context: a numpy view
    if path.suffix.lower() == ".npy":
        np.save(path, counts)
    else:
        names = ["b", "g", "r"] if len(counts) == 3 else ["gray" if not colour else space]
        data = {"format": HISTOGRAM_FORMAT, "version": 1, "levels": view.levels, "space": space,
                "channels": names, "counts": counts.tolist()}
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    return counts


def load_histogram(path: str | os.PathLike[str]) -> np.ndarray:
    """Read a histogram file written by :func:`save_histogram` (or by hand): int64/float64 counts (C, K).

    Raises
    ------
    ValueError
        Naming the file and what is wrong with it.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix not in (".npy", ".json"):
            raise ValueError("a histogram file ends in .npy or .json")
        raw = read_regular(path, MAX_HISTOGRAM_FILE)
        if suffix == ".npy":
            counts = npy_array(raw, path, 3 * 65536)
        else:
            data = json_unique(raw.decode("utf-8-sig"))
            if not isinstance(data, dict) or "counts" not in data:
                raise ValueError('a JSON histogram is an object with a "counts" list (see save_histogram)')
            if data.get("format", HISTOGRAM_FORMAT) != HISTOGRAM_FORMAT:
                raise ValueError(f'"format" must be {HISTOGRAM_FORMAT!r}')
            counts = np.asarray(data["counts"])  # strings and booleans are refused below, not converted
    except FileRefused as exc:
        raise ValueError(f"{shown(path)}: {exc.reason}") from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise ValueError(f"{shown(path)}: not a histogram file ({shown(str(exc))})") from None
    counts = np.asarray(counts)
    if counts.ndim == 1:
        counts = counts[None, :]
    problem = None
    if counts.ndim != 2 or counts.shape[0] not in (1, 3) or not 2 <= counts.shape[1] <= 65536:
        problem = f"shape {counts.shape} is not (K,), (1, K) or (3, K) with 2 <= K <= 65536"
    elif counts.dtype.kind not in "uif" or not np.all(np.isfinite(counts)) or (counts < 0).any():
        problem = "counts must be finite numbers >= 0"
    elif (counts.sum(axis=1) <= 0).any():
        problem = "every channel needs a positive count"
    if problem:
        raise ValueError(f"{path}: not a histogram file ({problem})")
    return counts.astype(np.float64)


def _file_key(path: str | ImageValue) -> tuple[Any, ...]:
    if isinstance(path, ImageValue):
        return (path, path.order)
    resolved = Path(path).expanduser().resolve()
    stat = resolved.stat()
    return str(resolved), stat.st_mtime_ns, stat.st_size


MAX_HISTOGRAM_FILE = 16 << 20  # bytes: 3 x 65536 counts as JSON text take about 4 MiB


@lru_cache(maxsize=8)
def _load_reference(key: tuple[Any, ...]) -> np.ndarray:
    """A reference image (any dtype and channels) or histogram file (float64 (C, K)), cached per file version.

    An image given from Python (:class:`~cvfilters.core.arrays.ImageValue`) is its BGR(A) array.
    """
    path = key[0]
    if isinstance(path, ImageValue):
        return path.bgr()
    if Path(path).suffix.lower() in HISTOGRAM_SUFFIXES:
        return load_histogram(path)
    return read(path)


def _reference(path: str | ImageValue) -> np.ndarray:
    """Load a reference, raising ``ValueError`` with a one-line reason."""
    try:
        key = _file_key(path)
    except OSError as exc:
        raise ValueError(f"{path}: {'no such file' if isinstance(exc, FileNotFoundError) else exc.strerror}") from None
    try:
        return _load_reference(key)
    except CvfError as exc:
        raise ValueError(str(exc)) from None


@lru_cache(maxsize=16)
def _reference_counts_cached(key: tuple[Any, ...], channels: int, space: str) -> np.ndarray:
    data = _load_reference(key)
    if not isinstance(key[0], ImageValue) and Path(key[0]).suffix.lower() in HISTOGRAM_SUFFIXES:
        return data
    if data.ndim == 3 and data.shape[2] <= 2:  # H x W x 1, or grey + alpha (a PIL "LA" image): the grey plane
        data = np.ascontiguousarray(data[..., 0])
    count = 1 if data.ndim == 2 else data.shape[2]
    if channels == 1:
        ref = data if count == 1 else cv2.cvtColor(np.ascontiguousarray(data[..., :3]), cv2.COLOR_BGR2GRAY)
    else:
        ref = cv2.cvtColor(data, cv2.COLOR_GRAY2BGR) if count == 1 else np.ascontiguousarray(data[..., :3])
    view = level_view(host_context(ref), ref, space)
    counts = level_counts(cast(np.ndarray, view.image), view.levels).astype(np.float64)  # host context
    counts.setflags(write=False)
    return counts


