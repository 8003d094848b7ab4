"""One image through a pipeline in bounded memory: file to file, Zarr to Zarr, or an array in memory.

:func:`stream_file` is the Python entry point, and ``cvfilters apply`` takes the same path
for TIFF and Zarr inputs and for large images (:func:`wanted`). The engine
(:mod:`cvfilters.engine.tiles`) plans tiles against the memory budget
(:mod:`cvfilters.run.budget`) and runs the chain tile by tile from a region source to a sink
(:mod:`cvfilters.io.regions`):

* TIFF, BigTIFF and Zarr inputs are read in pieces, never whole; a TIFF or Zarr output of
  such an input is written in pieces too, keeping its storage (compression, tiling, chunks).
* Other formats (PNG, JPEG, WebP ...) are decoded whole when the decoded image fits the
  budget, then processed by tiles, so intermediates stay tile-sized; their outputs are
  encoded whole, with metadata as :func:`cvfilters.io.writing.write` keeps it.
* ``scheduler=`` runs the tiles of one image on a Dask cluster (:mod:`cvfilters.run.cluster`).

The pixel limit stays a guard against bombs: a streamed input over it is taken only when
its claimed size is plausible for the bytes it has on disk (:func:`check_claimed`); what
bounds a streamed image is the memory budget.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cvfilters.core import machine
from cvfilters.core.errors import ImageTooLargeError, OutputExistsError, OverwriteInputError, ResourceLimitError
from cvfilters.core.types import StrPath
from cvfilters.engine import tiles
from cvfilters.engine.pipeline import Pipeline, as_pipeline
from cvfilters.io import reading, regions, tiff_regions, writing, zarr_regions
from cvfilters.io.metadata import Metadata
from cvfilters.run import budget as budgets
from cvfilters.run.limits import estimate_bytes

if TYPE_CHECKING:
    from cvfilters.registry.catalog import Filter
# A streamed image over the pixel limit is refused when its decoded size exceeds the bytes it
# has on disk this many times: Deflate tops out near 1032:1, so only a crafted file goes past.
MAX_EXPANSION = 1100
# An image decoded whole goes through tiles when a whole-image run would need more than this
# (limits.estimate_bytes: input, output and three float32 copies); a 24 MP RGB photo does.
# Tiles run on the CPU: with --backend auto or cpu; an explicit GPU backend keeps the
# whole-image device path.
TILE_ABOVE = 256 * 2**20
TILED_BACKENDS = frozenset({"auto", "cpu"})
# Tiles' working memory (all workers) that a default plan stays under, halving the tile side down
# to MIN_DEFAULT_TILE: beyond a few hundred pixels a larger tile buys little speed (the halo is
# already a small fraction) and costs peak memory (bench/streaming.py, the 24 MP chains).
TILE_WORKING = 32 * 2**20
MIN_DEFAULT_TILE = 256


@dataclass
class Streamed:
    """What a streamed run did: the engine's plan, and lines for ``--explain``."""

    plan: tiles.TilePlan
    lines: list[str] = field(default_factory=list)


def check_claimed(path: StrPath, shape: tuple[int, ...], dtype: np.dtype[Any], limit: int) -> None:
    """Refuse a streamed image over ``limit`` pixels whose claimed size the file cannot plausibly hold.

    Raises
    ------
    ImageTooLargeError
        Width * height exceeds ``limit`` and the decoded image would be more than
        :data:`MAX_EXPANSION` times the bytes ``path`` takes on disk.
    """
    height, width = shape[:2]
    if height * width <= limit:
        return
    decoded = int(np.prod(shape)) * dtype.itemsize
    stored = max(1, regions.stored_bytes(path))
    if decoded > MAX_EXPANSION * stored:
        raise ImageTooLargeError(path, f"{width}x{height} = {height * width} pixels exceeds the limit of {limit}, "
                                       f"and {decoded} decoded bytes from {stored} on disk ({decoded / stored:.0f}:1) "
                                       "look like a decompression bomb (set --max-pixels to accept it)")


def plan_for(pipeline: Pipeline, shape: tuple[int, ...], dtype: np.dtype[Any], *, budget: int,
             tile_size: int | None, workers: int) -> tiles.TilePlan:
    """The engine's plan, with the tile side halved while its working memory passes :data:`TILE_WORKING`
    (unless ``tile_size`` forces one or whole-image steps dominate)."""
    plan = tiles.plan(pipeline, shape, dtype, tile_size=tile_size, workers=workers, budget=budget)
    while tile_size is None and not plan.whole_image_steps and plan.peak_bytes > TILE_WORKING \
            and plan.tile_size // 2 >= MIN_DEFAULT_TILE:
        plan = tiles.plan(pipeline, shape, dtype, tile_size=plan.tile_size // 2, workers=workers, budget=budget)
    return plan


def wanted(source: StrPath) -> bool:
    """Whether ``source`` is read in pieces: a Zarr array, or a TIFF the streaming reader takes."""
    if zarr_regions.is_zarr(source):
        return True
    if not tiff_regions.is_tiff(source) or not os.path.isfile(source):
        return False
    try:  # one read of the header: the source refuses what it cannot stream
        # int16 maps onto float32 and back over the whole image (cvfilters.core.depths): decoded whole
        return bool(regions.open_source(source).dtype != np.int16)
    except Exception:  # noqa: BLE001  (a TIFF that cannot stream, or a damaged one, goes to the whole-image reader)
        return False


def too_large_for_whole(image: NDArray[Any], budget: int) -> bool:
    """Whether a decoded image runs through tiles rather than whole (see :data:`TILE_ABOVE`)."""
    channels = 1 if image.ndim == 2 else image.shape[2]
    needed = estimate_bytes(image.shape[0], image.shape[1], channels, image.itemsize)
    return needed > min(budget, TILE_ABOVE)


def large_by_header(path: StrPath) -> bool:
    """Whether an image file's header promises an image :func:`too_large_for_whole` would send through
    tiles (a guess for the command line's start-up; unreadable headers say no)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            width, height = image.size
            channels = len(image.getbands())
            itemsize = 2 if image.mode.startswith("I;16") else 4 if image.mode in ("I", "F") else 1
    except Exception:  # noqa: BLE001  (the read itself reports a bad file)
        return False
    return estimate_bytes(height, width, channels, itemsize) > TILE_ABOVE


def _check_target(source: StrPath, target: StrPath, overwrite: bool) -> None:
    if os.path.lexists(target):
        if os.path.exists(source) and os.path.samefile(source, target):
            raise OverwriteInputError(target)
        if not overwrite:
            raise OutputExistsError(target)


def stream_file(source: StrPath, target: StrPath, filter: str | Filter | Pipeline, /, *,
                memory: str | int | None = None, tile_size: int | None = None, workers: int | None = None,
                scheduler: str | None = None, overwrite: bool = True, max_pixels: int | None = None,
                quality: int | None = None, **params: Any) -> tiles.TilePlan:
    """Run a filter or pipeline on an image file, writing the result, in bounded memory.

    TIFF and BigTIFF (stripped or tiled) and Zarr arrays are read and written in pieces;
    other formats are decoded whole within the budget and then processed by tiles.

    Parameters
    ----------
    source, target : str or os.PathLike
        Image files; a ``.zarr`` directory for a Zarr array (colour in RGB(A) order, as in
        image files). A TIFF or Zarr output of a TIFF or Zarr input keeps its storage
        (compression, predictor, tiles or strips, chunks, photometric, resolution, ICC).
    filter : str, Filter or Pipeline
        As for :func:`cvfilters.apply`; ``**params`` are the filter's parameters.
    memory : str or int, optional
        The memory budget (``"512M"``, ``"2G"`` or bytes); by default half of what the
        machine and its cgroup leave (:func:`cvfilters.run.budget.resolve`).
    tile_size : int, optional
        Force the side of the output tiles (else the engine chooses within the budget).
    workers : int, optional
        Threads running tiles at once (default: one per core).
    scheduler : str, optional
        A Dask scheduler address (or a ``distributed.Client``): the tiles run on the
        cluster (``map_overlap`` over the input's chunks); the target must be Zarr.
    overwrite : bool
        Replace an existing target (never the source).
    max_pixels : int, optional
        The pixel limit (:func:`cvfilters.io.reading.max_pixels_limit`), a guard against
        decompression bombs for streamed inputs (:func:`check_claimed`).
    quality : int, optional
        JPEG/WebP quality of an output encoded whole.

    Returns
    -------
    tiles.TilePlan
        What ran: tile size, halo, passes and the peak estimate (``plan.explain()``).

    Examples
    --------
    >>> import cvfilters as cvf
    >>> plan = cvf.stream_file("scan.tif", "soft.tif", "gaussian_blur:sigma=3", memory="1G")  # doctest: +SKIP
    >>> cvf.stream_file("slide.zarr", "out.zarr", "clahe")                                     # doctest: +SKIP
    """
    pipeline = as_pipeline(filter, params)
    return run(source, target, pipeline, budget=budgets.resolve(memory), tile_size=tile_size,
               workers=workers, scheduler=scheduler, overwrite=overwrite, max_pixels=max_pixels,
               quality=quality).plan


def run(source: StrPath, target: StrPath, pipeline: Pipeline, *, budget: int, tile_size: int | None = None,
        workers: int | None = None, scheduler: Any = None, overwrite: bool = True, max_pixels: int | None = None,
        quality: int | None = None, stdout_format: str | None = None) -> Streamed:
    """:func:`stream_file` with a resolved budget and pipeline; ``stdout_format`` writes standard output instead."""
    if stdout_format is None:
        _check_target(source, target, overwrite)
    workers = workers or machine.cores()
    limit = reading.max_pixels_limit(max_pixels)
    metadata: Metadata | None = None
    stream: tiff_regions.TiffSource | zarr_regions.ZarrSource | tiles.ArraySource
    if wanted(source):
        stream = regions.open_source(source)
        check_claimed(source, stream.shape, stream.dtype, limit)
        what = f"{'Zarr' if isinstance(stream, zarr_regions.ZarrSource) else 'TIFF'}, read in pieces"
    else:
        image, metadata = reading.read_with_metadata(source, max_pixels=limit)
        if 2 * image.nbytes > budget:  # decoded whole, and its result collected whole for the encoder
            needed = budgets.describe(2 * image.nbytes)
            raise ResourceLimitError(source, f"the decoded image and its result take {needed}, over the memory "
                                             f"budget of {budgets.describe(budget)} (--memory)")
        stream = tiles.ArraySource(image)
        what = "decoded whole, processed by tiles"
    try:
        try:
            plan = plan_for(pipeline, stream.shape, stream.dtype, tile_size=tile_size, workers=workers, budget=budget)
        except ResourceLimitError as exc:  # the engine does not know the file's name
            raise ResourceLimitError(source, exc.detail) from None
        if isinstance(stream, tiff_regions.TiffSource):
            height = plan.tile_size + plan.halo[0] + plan.halo[1]
            stream.set_cache_bytes(2 * height * int(np.prod(stream.shape[1:])) * stream.dtype.itemsize)
        lines = [f"source: {source} {'x'.join(map(str, stream.shape))} {stream.dtype} ({what})",
                 f"memory budget: {budgets.describe(budget)}", *plan.explain()]
        if scheduler is not None:
            from cvfilters.run import cluster

            cluster.run(pipeline, source, target, stream, plan, scheduler=scheduler, overwrite=overwrite)
            return Streamed(plan, [*lines, f"cluster: {cluster.describe(scheduler)}; written chunk by chunk"])
        streams_out = (stdout_format is None
                       and isinstance(stream, (tiff_regions.TiffSource, zarr_regions.ZarrSource))
                       and (tiff_regions.is_tiff(target) or zarr_regions.is_zarr(target)))
        if streams_out:
            with regions.open_sink(target, plan.out_shape, plan.out_dtype, source=stream,
                                   chunk=plan.tile_size) as sink:
                tiles.run_tiled(pipeline, stream, sink, tile_size=plan.tile_size, workers=workers, budget=budget)
            return Streamed(plan, [*lines, f"target: {target} (written in pieces)"])
        whole = tiles.ArraySink(plan.out_shape, plan.out_dtype)
        tiles.run_tiled(pipeline, stream, whole, tile_size=plan.tile_size, workers=workers, budget=budget)
    finally:
        if isinstance(stream, tiff_regions.TiffSource):
            stream.close()
    del stream
    if stdout_format is not None:
        import sys

        sys.stdout.buffer.write(writing.encode(whole.array, stdout_format, metadata=metadata, quality=quality))
        sys.stdout.buffer.flush()
    elif zarr_regions.is_zarr(target):
        zarr_regions.write_zarr(target, whole.array)
    else:
        writing.write(target, whole.array, metadata=metadata, quality=quality, overwrite=True)
    return Streamed(plan, [*lines, f"target: {target if stdout_format is None else 'standard output'} "
                                   "(encoded whole)"])


def process_array(image: NDArray[Any], pipeline: Pipeline, *, budget: int, tile_size: int | None = None,
                  workers: int | None = None) -> tuple[NDArray[Any], tiles.TilePlan]:
    """A decoded image through tiles in memory (the result, and the plan that ran)."""
    source = tiles.ArraySource(image)
    plan = plan_for(pipeline, source.shape, source.dtype, tile_size=tile_size, workers=workers or machine.cores(),
                    budget=budget)
    sink = tiles.ArraySink(plan.out_shape, plan.out_dtype)
    tiles.run_tiled(pipeline, source, sink, tile_size=plan.tile_size, workers=workers or machine.cores(), budget=budget)
    return sink.array, plan

