"""Images read and written in pieces: region sources and sinks for TIFF, BigTIFF, Zarr and numpy.

A *source* has ``shape``, ``dtype`` and ``read(y0, y1, x0, x1)``, which returns rows
``y0:y1`` and columns ``x0:x1`` in cvfilters' channel order (BGR(A)); a *sink* takes the
output tiles in row-major order through ``write(y0, x0, block)``. They are the
``RegionSource`` and ``RegionSink`` of :mod:`cvfilters.engine.tiles`, which runs a pipeline
from one to the other tile by tile, so memory does not grow with the image.

* **TIFF and BigTIFF**, stripped or tiled: :mod:`cvfilters.io.tiff_regions`.
* **Zarr** arrays (v2 or v3 directories): :mod:`cvfilters.io.zarr_regions`.
* numpy arrays are the engine's :class:`~cvfilters.engine.tiles.ArraySource` and
  :class:`~cvfilters.engine.tiles.ArraySink`, in the caller's channel order.

:func:`open_source` and :func:`open_sink` choose between them by extension; :func:`streamable`
says why a file is decoded whole instead. Sinks write beside the target and rename on commit
(:mod:`cvfilters.io.region_sinks`), so no partial output is ever visible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cvfilters.core.types import StrPath
from cvfilters.io import tiff_regions, zarr_regions


def streamable(path: StrPath) -> str | None:
    """Why the file at ``path`` cannot be read in pieces, or None when it can (TIFF or Zarr).

    Not streamable: other formats, and the TIFFs :func:`cvfilters.io.tiff_regions.streamable`
    names. Raises the read errors of the file (missing, not a TIFF).
    """
    if zarr_regions.is_zarr(path):
        return None
    if not tiff_regions.is_tiff(path):
        return f"{Path(path).suffix or 'a file without extension'} is decoded whole"
    return tiff_regions.streamable(path)


def open_source(path: StrPath) -> tiff_regions.TiffSource | zarr_regions.ZarrSource:
    """The region source of a TIFF file or a Zarr array; :class:`ImageReadError` when it cannot stream."""
    if zarr_regions.is_zarr(path):
        return zarr_regions.ZarrSource(path)
    return tiff_regions.TiffSource(path)


def stored_bytes(path: StrPath) -> int:
    """Bytes ``path`` takes on disk: the file, or every file of a Zarr directory."""
    target = Path(path)
    if not target.is_dir():
        return target.stat().st_size
    return sum(entry.stat().st_size for entry in target.rglob("*") if entry.is_file())


def open_sink(target: StrPath, shape: tuple[int, ...], dtype: np.dtype[Any], *,
              source: Any = None, chunk: int = 512) -> tiff_regions.TiffSink | zarr_regions.ZarrSink:
    """The sink writing ``target`` (TIFF or Zarr, by extension), keeping ``source``'s storage where it has one."""
    if zarr_regions.is_zarr(target):
        like = source.array if isinstance(source, zarr_regions.ZarrSource) else None
        return zarr_regions.ZarrSink(target, shape, dtype, like=like, chunk=chunk)
    layout = source.layout if isinstance(source, tiff_regions.TiffSource) else None
    return tiff_regions.TiffSink(target, shape, dtype, layout)
