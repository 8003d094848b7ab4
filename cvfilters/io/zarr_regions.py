"""Zarr arrays read and written in pieces: the region source and sink of
:mod:`cvfilters.io.regions` for Zarr, and whole images written as Zarr.

Zarr arrays (v2 or v3 directories) of shape (H, W) or (H, W, C) are read and written chunk by
chunk; an output keeps the input array's chunks, compressors, format and attributes where the
input was Zarr too. Colour arrays in Zarr are RGB(A), as in image files. An output array is
built beside its target and moved onto it (:func:`replace_directory`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cvfilters.core import atomic
from cvfilters.core.arrays import swap_rb
from cvfilters.core.errors import ImageReadError, ImageWriteError
from cvfilters.core.types import StrPath
from cvfilters.io.formats import SAMPLE_RANGES
from cvfilters.io.region_sinks import Bands, Committable

ZARR_EXTENSIONS = frozenset({".zarr"})


def is_zarr(path: StrPath) -> bool:
    """Whether ``path`` names a Zarr array (by its ``.zarr`` extension)."""
    return Path(path).suffix.lower() in ZARR_EXTENSIONS


class ZarrSource:
    """A Zarr array of shape (H, W) or (H, W, C), C in 1, 3, 4 (RGB(A)), as a region source in BGR(A) order."""

    def __init__(self, path: StrPath | Any) -> None:
        import zarr

        if isinstance(path, (str, os.PathLike)):
            self.path = Path(path)
            try:
                self.array = zarr.open_array(store=os.fspath(path), mode="r")
            except (FileNotFoundError, ValueError, KeyError, TypeError) as exc:
                raise ImageReadError(path, f"not a readable Zarr array ({type(exc).__name__}: {exc})") from None
        else:
            self.array = path
            self.path = Path(str(getattr(path, "store_path", "zarr array")))
        shape = tuple(self.array.shape)
        if len(shape) not in (2, 3) or (len(shape) == 3 and shape[2] not in (1, 3, 4)) or 0 in shape:
            raise ImageReadError(self.path, f"a Zarr array of shape {shape} is not an image ((H, W) or (H, W, C), "
                                            "C in 1, 3, 4)")
        if np.dtype(self.array.dtype) not in SAMPLE_RANGES:
            raise ImageReadError(self.path, f"Zarr dtype {self.array.dtype} is not supported (uint8, uint16, int16, "
                                            "float32)")
        self.shape: tuple[int, ...] = shape
        self.dtype: np.dtype[Any] = np.dtype(self.array.dtype)

    def read(self, y0: int, y1: int, x0: int, x1: int) -> NDArray[Any]:
        return swap_rb(np.asarray(self.array[y0:y1, x0:x1]))


class ZarrSink(Committable):
    """Writes a Zarr array (a directory) a band of chunk rows at a time, RGB(A) order.

    Parameters
    ----------
    target : str or os.PathLike
        The ``.zarr`` directory; it replaces an existing one on :meth:`commit`.
    shape, dtype
        Of the output image, BGR(A) order in the tiles written.
    like : zarr.Array, optional
        An input array whose chunks (rows and columns), compressors, format and attributes
        the output takes; otherwise chunks of ``chunk`` x ``chunk`` pixels and zarr's
        default compressor, Zarr format 3.
    """

    def __init__(self, target: StrPath, shape: tuple[int, ...], dtype: np.dtype[Any], *, like: Any = None,
                 chunk: int = 512) -> None:
        import zarr

        self.target = Path(target)
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self._temporary = atomic.temporary_name(self.target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        options: dict[str, Any] = {}
        if like is not None:
            rows, cols = like.chunks[:2]
            options = {"compressors": like.compressors, "zarr_format": like.metadata.zarr_format,
                       "attributes": dict(like.attrs)}
        else:
            rows = cols = chunk
        chunks = (min(rows, shape[0]), min(cols, shape[1]), *shape[2:])
        try:
            self.array = zarr.create_array(store=os.fspath(self._temporary), shape=self.shape, dtype=self.dtype,
                                           chunks=chunks, **options)
        except (OSError, ValueError, TypeError) as exc:
            raise ImageWriteError(target, f"cannot be created as a Zarr array: {exc}") from None
        self._bands = Bands(self.shape, self.dtype, chunks[0], self._flush)

    def write(self, y0: int, x0: int, block: NDArray[Any]) -> None:
        self._bands.write(y0, x0, block)

    def _flush(self, y0: int, band: NDArray[Any]) -> None:
        self.array[y0 : y0 + band.shape[0]] = swap_rb(band)

    def commit(self) -> None:
        """Write the last rows and move the array onto the target (an existing one is replaced)."""
        try:
            self._bands.finish()
            replace_directory(self._temporary, self.target)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Remove what was written; the target is left as it was."""
        shutil.rmtree(self._temporary, ignore_errors=True)


def write_zarr(target: StrPath, image: NDArray[Any], *, chunk: int = 512) -> None:
    """Write a whole BGR(A) image as a Zarr array (RGB(A)), atomically, in chunks of ``chunk`` pixels."""
    import zarr

    target = Path(target)
    temporary = atomic.temporary_name(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        chunks = (min(chunk, image.shape[0]), min(chunk, image.shape[1]), *image.shape[2:])
        array = zarr.create_array(store=os.fspath(temporary), shape=image.shape, dtype=image.dtype, chunks=chunks)
        array[:] = swap_rb(image)
        replace_directory(temporary, target)
    except (OSError, ValueError, TypeError) as exc:
        raise ImageWriteError(target, f"cannot be written as a Zarr array: {exc}") from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def replace_directory(source: Path, target: Path) -> None:
    """Move the directory ``source`` onto ``target``; an existing ``target`` (file or directory) is replaced.

    The old target is first renamed aside, so readers see the old array or the new one.
    """
    old = atomic.temporary_name(target) if os.path.lexists(target) else None
    if old is not None:
        os.replace(target, old)
    try:
        os.replace(source, target)
    except OSError:
        if old is not None:
            os.replace(old, target)
        raise
    atomic.fsync_directory(target.parent)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(old)
