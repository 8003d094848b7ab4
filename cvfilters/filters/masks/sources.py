"""Mask sources: arrays, image files and shapes made into a float32 0..1 weight, and their cache keys."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Hashable
from typing import Union

import cv2
import numpy as np

from cvfilters.core.pixels import full_scale
from cvfilters.filters.masks.shapes import Shape, is_shape_text, parse_shape
from cvfilters.io import reading

MaskSource = Union[np.ndarray, str, "os.PathLike[str]", "Shape"]


def load_mask(path: str | os.PathLike[str], size: tuple[int, int] | None = None) -> np.ndarray:
    """Read a mask file as a float32 0..1 (height, width) array.

    Grayscale files are used as they are; RGBA files give their alpha (their luma when
    the alpha is opaque everywhere); RGB files their BT.601 luma. ``size`` is
    ``(width, height)``: a file of another size is stretched to it.
    """
    return mask_from_array(reading.read(path), size)


def mask_from_array(array: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
    """A float32 0..1 (height, width) mask from an array (see the module docstring)."""
    array = np.asarray(array)
    if array.dtype == bool:
        array = array.astype(np.float32)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (3, 4)) or array.size == 0:
        raise ValueError(f"a mask must be H x W, H x W x 3 or H x W x 4, not shape {array.shape}")
    full = full_scale(array.dtype) if array.dtype.kind in "uif" else 1.0
    values = array.astype(np.float32) / np.float32(full)
    if values.ndim == 3:
        if values.shape[2] == 4 and not np.all(values[:, :, 3] >= 1.0):
            values = values[:, :, 3]
        else:
            values = cv2.cvtColor(np.ascontiguousarray(values[:, :, :3]), cv2.COLOR_BGR2GRAY)
    values = np.clip(values, 0.0, 1.0).astype(np.float32)
    if size is not None and (values.shape[1], values.shape[0]) != tuple(size):
        shrink = size[0] <= values.shape[1] and size[1] <= values.shape[0]
        values = cv2.resize(values, tuple(size), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        values = np.clip(values, 0.0, 1.0)
    return np.ascontiguousarray(values, dtype=np.float32)


def make_mask(source: MaskSource, width: int, height: int, *, invert: bool = False) -> np.ndarray:
    """The (height, width) float32 0..1 mask of an array, file path, shape text or :class:`Shape`."""
    if isinstance(source, Shape):
        mask = source.render(width, height)
    elif isinstance(source, np.ndarray):
        mask = mask_from_array(source, (width, height))
    elif is_shape_text(source):
        mask = parse_shape(str(source)).render(width, height)
    elif isinstance(source, (str, os.PathLike)):
        mask = load_mask(source, (width, height))
    else:
        raise TypeError(f"a mask is an array, a file path or a shape text, not {type(source).__name__}")
    return (1.0 - mask).astype(np.float32) if invert else mask


def source_key(source: MaskSource) -> Hashable:
    """A cache key that changes when the mask source changes (file: path, mtime and size)."""
    if isinstance(source, Shape):
        return ("shape", source.to_text())
    if isinstance(source, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(source).tobytes(), digest_size=16).hexdigest()
        return ("array", source.shape, source.dtype.str, digest)
    if is_shape_text(source):
        return ("shape", parse_shape(str(source)).to_text())
    return ("file", *file_stamp(source))


def file_stamp(path: str | os.PathLike[str]) -> tuple[str, int, int]:
    """``(absolute path, mtime_ns, size)``, or zeros for a file that cannot be read."""
    full = os.path.abspath(os.fspath(path))
    try:
        stat = os.stat(full)
    except OSError:
        return (full, 0, 0)
    return (full, stat.st_mtime_ns, stat.st_size)


