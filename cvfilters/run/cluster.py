"""One image across a Dask cluster: chunks read where they live, ``map_overlap``, chunks written where they live.

The input (a TIFF or a Zarr array, on storage the workers see) becomes a ``dask.array`` of
full-width bands, each read by a worker from the file itself (TIFF strips, Zarr chunks),
so no pixel bytes pass through the client. ``map_overlap`` with ``boundary="none"`` gives
each band the rows above and below that its tiles need: the chain's halo, plus the few
rows and columns :func:`cvfilters.engine.tiles.need` widens a crop by so OpenCV's vector
loops see every pixel as in the whole image (that is what keeps the result bit for bit
the local one; bands span the width, so columns need no overlap). ``boundary="none"``
matters: dask's ``"reflect"`` is ``BORDER_REFLECT``, not OpenCV's default
``BORDER_REFLECT_101``, and the image edges are the filters' own business.

A global step (equalize, normalize, Otsu ...) is a reduction then a map: every band's
statistics, merged on the cluster (a tree of ``merge`` calls), then the output pass with
the merged statistics. The output bands are written to the target Zarr array by the
workers (``dask.array.to_zarr``), chunk by chunk, into a temporary array renamed onto
the target when all are written.

Chains that change the image's size (crop, resize, rotations with a new canvas) or hold
a whole-image step run locally (:mod:`cvfilters.run.streaming`); with a cluster they are
refused with a clear error.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cvfilters.core import atomic
from cvfilters.core.arrays import swap_rb
from cvfilters.core.errors import UsageError
from cvfilters.core.types import StrPath
from cvfilters.engine import tiles
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import regions, tiff_regions, zarr_regions
from cvfilters.registry.footprints import Global


def describe(scheduler: Any) -> str:
    """The cluster for ``--explain``: its address and workers."""
    address = scheduler if isinstance(scheduler, str) else getattr(scheduler, "scheduler", None)
    address = getattr(address, "address", address)
    return f"Dask scheduler {address}"


def _client(scheduler: Any) -> tuple[Any, bool]:
    """A ``distributed.Client`` for ``scheduler`` (an address or a client), and whether this made it."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError('--scheduler needs Dask: pip install "cvfilters[dask]"') from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout=10), True
    except OSError as exc:
        raise UsageError(f"--scheduler {scheduler}: cannot connect ({exc})") from None


@lru_cache(maxsize=8)
def _stages(frozen: str, shape: tuple[int, ...], dtype: str) -> tuple[Any, ...]:
    """The tiled stages of a pipeline (its dict as JSON) on an image of ``shape``: rebuilt on each worker."""
    data = json.loads(frozen)
    pipeline = Pipeline.from_dict(data) if data["steps"] else Pipeline([])  # a file needs a step; a copy does not
    plan = tiles.plan(pipeline, shape, np.dtype(dtype))
    return plan.segments[0].stages if plan.segments else ()


def _check(plan: Any, shape: tuple[int, ...], target: StrPath) -> None:
    if not zarr_regions.is_zarr(target):
        raise UsageError(f"-o {target}: with --scheduler the output is a Zarr array (name it .zarr): the workers "
                         "write its chunks where they are")
    if tuple(plan.out_shape[:2]) != tuple(shape[:2]):
        raise UsageError("--scheduler runs chains that keep the image size; this one changes it (crop, resize, "
                         "rotate ...): run it without --scheduler")
    if plan.whole_image_steps or len(plan.segments) > 1:
        raise UsageError(f"--scheduler: {', '.join(plan.whole_image_steps)} run(s) on the whole image; run this "
                         "chain without --scheduler")


def _depth(stages: Sequence[Any], height: int, width: int, bands: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Rows above and below each band its output needs (the widest over all bands)."""
    up = down = 0
    for y0, y1 in bands:
        rect = (y0, y1, 0, width)
        for stage in reversed(stages):
            rect = tiles.need(stage, rect)
        up, down = max(up, y0 - rect[0]), max(down, rect[1] - y1)
    return up, down


def _bands(height: int, rows: int) -> list[tuple[int, int]]:
    bands = [(y, min(height, y + rows)) for y in range(0, height, rows)]
    if len(bands) > 1 and bands[-1][1] - bands[-1][0] < rows // 2:  # no sliver below a band's overlap
        bands[-2:] = [(bands[-2][0], height)]
    return bands


def _read_band(path: str, y0: int, y1: int) -> NDArray[Any]:
    """Rows ``y0:y1`` of the image at ``path`` (on a worker), BGR(A), always (rows, width, channels)."""
    source = regions.open_source(path)
    try:
        block = source.read(y0, y1, 0, source.shape[1])
    finally:
        if isinstance(source, tiff_regions.TiffSource):
            source.close()
    return block.reshape(block.shape[0], block.shape[1], -1)


def _run_band(block: NDArray[Any], *, frozen: str, shape: tuple[int, ...], source_dtype: str,
              bands: Sequence[tuple[int, int]], up: int, side: int, statistics: Sequence[Any] | None,
              upto: int | None = None, block_info: dict[Any, Any] | None = None) -> Any:
    """One band's output; with ``upto``, the statistics of global stage ``upto`` over the band instead.

    ``block`` holds the band and the rows ``map_overlap`` added: ``up`` above (fewer at the
    top edge) and what was there below.
    """
    stages = _stages(frozen, shape, source_dtype)
    index = block_info[None]["chunk-location"][0] if block_info else 0
    y0, y1 = bands[index]
    first = max(0, y0 - up)  # the image row of block[0]
    width = shape[1]

    def read(rect: tuple[int, int, int, int]) -> NDArray[Any]:
        a, b, c, d = rect
        return block[a - first : b - first, c:d]

    rects = [(r[0] + y0, r[1] + y0, r[2], r[3]) for r in tiles.tile_rects(y1 - y0, width, side)]
    if upto is not None:
        stage, before = stages[upto], stages[:upto]
        total: Any = None
        for rect in rects:
            image = tiles.run_block(before, read, rect, statistics) if before else read(rect)
            partial = tiles.statistics_of(stage, tiles._as_image(np.asarray(image)), rect)
            total = partial if total is None else stage.footprint.merge([total, partial])
        return total
    out: NDArray[Any] | None = None
    for rect in rects:
        tile = np.asarray(tiles.run_block(stages, read, rect, statistics))
        tile = tile.reshape(tile.shape[0], tile.shape[1], -1)
        if out is None:
            out = np.empty((y1 - y0, width, tile.shape[2]), tile.dtype)
        out[rect[0] - y0 : rect[1] - y0, rect[2] : rect[3]] = tile
    assert out is not None
    return out


def _rgb(block: NDArray[Any]) -> NDArray[Any]:
    return swap_rb(block[..., 0] if block.shape[2] == 1 else block).reshape(block.shape)


def _merge(stage_frozen: tuple[str, tuple[int, ...], str, int], partials: Sequence[Any]) -> Any:
    frozen, shape, dtype, upto = stage_frozen
    return _stages(frozen, shape, dtype)[upto].footprint.merge(list(partials))


def run(pipeline: Pipeline, source: StrPath, target: StrPath, stream: Any, plan: Any, *, scheduler: Any,
        overwrite: bool = True) -> None:
    """Run ``pipeline`` on the image at ``source`` across the cluster, writing the Zarr array ``target``.

    Parameters
    ----------
    pipeline : Pipeline
    source : str or os.PathLike
        A TIFF or Zarr path the workers can open (shared storage).
    target : str or os.PathLike
        The output ``.zarr`` directory (replaced when ``overwrite``).
    stream : region source
        The source as opened here (its shape and dtype).
    plan : TilePlan
        The local plan of the run (tile size, footprints).
    scheduler : str or distributed.Client
        Where to run.

    Raises
    ------
    UsageError
        The target is not Zarr, or the chain changes the image size or holds a whole-image step.
    """
    import dask
    import dask.array as da

    shape = tuple(stream.shape)
    _check(plan, shape, target)
    if os.path.lexists(target) and not overwrite:
        from cvfilters.core.errors import OutputExistsError

        raise OutputExistsError(target)
    height, width = shape[:2]
    channels = 1 if len(shape) == 2 else shape[2]
    frozen = json.dumps(pipeline.to_dict(), sort_keys=True)
    stages = _stages(frozen, shape, stream.dtype.str)
    side = plan.tile_size
    rows = max(side, 256)
    while True:
        bands = _bands(height, rows)
        up, down = _depth(stages, height, width, bands)
        if max(up, down) <= rows // 2 or len(bands) == 1:  # dask's overlap needs no band shorter than it
            break
        rows = 2 * max(up, down)  # every band then (the last at least half a band) holds the overlap
    path = os.fspath(source)
    pieces = [da.from_delayed(dask.delayed(_read_band)(path, y0, y1), shape=(y1 - y0, width, channels),
                              dtype=stream.dtype) for y0, y1 in bands]
    image = da.concatenate(pieces, axis=0)
    depth = {0: (up, down), 1: 0, 2: 0}
    options = {"frozen": frozen, "shape": shape, "source_dtype": stream.dtype.str, "bands": bands, "up": up,
               "side": side}
    client, owned = _client(scheduler)
    try:
        statistics: list[Any] = [None] * len(stages)
        globals_ = [i for i, stage in enumerate(stages) if isinstance(stage.footprint, Global)]
        if globals_:
            blocks = da.overlap.overlap(image, depth=depth, boundary="none").to_delayed().ravel()
            for upto in globals_:
                partials = [dask.delayed(_run_band)(block, **options, statistics=list(statistics), upto=upto,
                                                    block_info={None: {"chunk-location": (i, 0, 0)}})
                            for i, block in enumerate(blocks)]
                merged = dask.delayed(_merge)((frozen, shape, stream.dtype.str, upto), partials)
                statistics[upto] = client.compute(merged).result()
        out_channels = plan.out_shape[2] if len(plan.out_shape) == 3 else 1
        result = da.map_overlap(_run_band, image, depth=depth, boundary="none", trim=False,
                                dtype=plan.out_dtype, chunks=(tuple(b - a for a, b in bands), (width,),
                                                              (out_channels,)),
                                meta=np.empty((0, 0, 0), plan.out_dtype), **options, statistics=statistics)
        rows = bands[0][1] - bands[0][0]  # Zarr needs one chunk shape: the last band may have taken a sliver
        result = result.map_blocks(_rgb, dtype=plan.out_dtype).rechunk({0: rows, 1: min(width, rows)})
        if len(plan.out_shape) == 2:
            result = result[..., 0]
        temporary = atomic.temporary_name(Path(target))
        try:
            client.compute(da.to_zarr(result, os.fspath(temporary), compute=False)).result()
            zarr_regions.replace_directory(temporary, Path(target))
        finally:
            shutil.rmtree(temporary, ignore_errors=True)
    finally:
        if owned:
            client.close()
