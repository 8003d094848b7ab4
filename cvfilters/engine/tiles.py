"""Tiles: one image run through a pipeline tile by tile, with tile-sized intermediates.

:func:`plan` reads every compiled step's footprint (:mod:`cvfilters.registry.footprints`)
and cuts the chain into *segments*: runs of steps that tile (point, local, positional,
geometric, global) and runs of whole-image steps between them. :func:`run_tiled` then
computes the output tile by tile, in row-major order:

- for an output tile, each step, from the last to the first, says which rectangle of
  its input it needs (the tile grown by its halo, or mapped through a geometric
  transform), so the first step's need is the rectangle read from the source;
- the steps then run forward on those crops, each cropped back to what the next step
  needs. Intermediates are the size of a tile plus the chain's halo (the sum of the
  steps' halos), never the size of the image.
- a global step (equalize, normalize, Otsu ...) first gets a statistics pass: the steps
  before it run tile by tile over the whole image, its ``statistics`` measure each tile
  and ``merge`` combines them (``merge([acc, partial])``, so only one accumulator is
  kept); then its per-tile ``apply`` runs in the output pass. ``passes`` counts them.
- a whole-image segment reads its whole input (the source, or the previous tiled
  segment's output collected in memory), runs, and feeds the next segment.

The output equals ``pipeline(image, backend="cpu")`` bit for bit for point, local,
positional and global steps, and within the stated tolerance for geometric ones
(``tests/properties/test_tiling.py`` holds every filter to it).

Tiles run on ``workers`` threads (OpenCV releases the GIL); with more than one, OpenCV's
own thread pool is set to one thread while they run, as :meth:`Pipeline.map` does.

Dask (``map_overlap``) needs: :attr:`TilePlan.halo` (the depth, for chains without
geometric steps), :func:`stages_of` (the compiled steps with their footprints), and for
global steps :func:`statistics_of` (a step's ``statistics`` of a block, ``inner`` the part
to count), the footprint's ``merge`` (associative: a tree reduction works) and
:func:`run_block` (the stages over an output rectangle, reading what :func:`need` asks,
with the merged statistics given).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from cvfilters.backends import get_backend
from cvfilters.backends.execution import info_of
from cvfilters.core import boundary
from cvfilters.core.arrays import ArrayLike
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.errors import ResourceLimitError, UsageError
from cvfilters.engine.parallel import opencv_single_threaded
from cvfilters.engine.pipeline import Pipeline, as_pipeline
from cvfilters.engine.steps import Step, run_steps
from cvfilters.registry.footprints import (
    Footprint,
    Geometric,
    Global,
    Positional,
    Rect,
    Whole,
    Window,
    aligned,
    chain_halo,
)
from cvfilters.registry.policies import apply_alpha_policy

__all__ = ["ArraySink", "ArraySource", "RegionSink", "RegionSource", "TilePlan", "plan", "process", "run_tiled"]

DEFAULT_TILE = 512
"""Output tile side when neither ``tile_size`` nor a budget says otherwise."""
MIN_TILE = 64
WORKING_COPIES = 6
"""float32 tile-sized buffers one step holds at its peak (input, output, a few temporaries): sizes the plan."""


class RegionSource(Protocol):
    """Where a run reads its input: rows ``y0:y1`` and columns ``x0:x1`` at a time."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    def read(self, y0: int, y1: int, x0: int, x1: int) -> NDArray[Any]: ...


class RegionSink(Protocol):
    """Where a run writes its output: blocks at ``(y0, x0)``, in row-major order."""

    def write(self, y0: int, x0: int, block: NDArray[Any]) -> None: ...


class ArraySource:
    """A numpy array (or anything numpy can slice, such as a memory map) as a :class:`RegionSource`."""

    def __init__(self, array: NDArray[Any]) -> None:
        self.array = array
        self.shape: tuple[int, ...] = tuple(array.shape)
        self.dtype: np.dtype[Any] = array.dtype

    def read(self, y0: int, y1: int, x0: int, x1: int) -> NDArray[Any]:
        return np.ascontiguousarray(self.array[y0:y1, x0:x1])


class ArraySink:
    """A :class:`RegionSink` filling a numpy array of ``shape`` and ``dtype`` (``array``)."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
        self.array: NDArray[Any] = np.empty(shape, dtype)

    def write(self, y0: int, x0: int, block: NDArray[Any]) -> None:
        target = self.array[y0 : y0 + block.shape[0], x0 : x0 + block.shape[1]]
        target[...] = block.reshape(target.shape)


@dataclass(frozen=True)
class Stage:
    """One compiled step with its footprint and the specs of its input and output."""

    step: Step
    footprint: Footprint
    spec_in: ImageInfo
    spec_out: ImageInfo

    @property
    def name(self) -> str:
        return self.step.to_spec()


@dataclass(frozen=True)
class Segment:
    """Consecutive stages that tile (``whole=False``) or run on the whole image together."""

    stages: tuple[Stage, ...]
    whole: bool

    @property
    def spec_in(self) -> ImageInfo:
        return self.stages[0].spec_in

    @property
    def spec_out(self) -> ImageInfo:
        return self.stages[-1].spec_out


@dataclass(frozen=True)
class TilePlan:
    """How a pipeline runs on an image of a given shape in tiles (see :func:`plan`)."""

    out_shape: tuple[int, ...]
    out_dtype: np.dtype[Any]
    tile_size: int
    halo: tuple[int, int, int, int]
    whole_image_steps: tuple[str, ...]
    passes: int
    peak_bytes: int
    workers: int = 1
    segments: tuple[Segment, ...] = field(default=(), repr=False)

    def explain(self) -> list[str]:
        """Lines for ``--explain``: tiles, halo, passes, memory, and every step's footprint."""
        top, bottom, left, right = self.halo
        lines = [f"tiles: {self.tile_size} x {self.tile_size} output px, {self.workers} worker(s), "
                 f"{self.passes} pass(es), halo top {top} bottom {bottom} left {left} right {right} px, "
                 f"peak working memory ~{self.peak_bytes / 2**20:.0f} MiB"]
        for segment in self.segments:
            for stage in segment.stages:
                lines.append(f"  {stage.name}: {stage.footprint.describe()}")
        if self.whole_image_steps:
            lines.append(f"whole-image steps: {', '.join(self.whole_image_steps)}")
        return lines


# ---------------------------------------------------------------- planning
def stages_of(pipeline: Pipeline, spec: ImageInfo) -> list[Stage]:
    """The compiled steps of ``pipeline`` with their footprints for an input of ``spec``."""
    stages = []
    for step in pipeline.compile():
        footprint = step.filter.footprint_for(step.params, spec)
        out = step.filter.output_info(step.params, spec)
        stages.append(Stage(step, footprint, spec, out))
        spec = out
    return stages


def _segments(stages: Sequence[Stage]) -> tuple[Segment, ...]:
    segments: list[Segment] = []
    for stage in stages:
        whole = isinstance(stage.footprint, Whole)
        if segments and segments[-1].whole == whole:
            segments[-1] = Segment((*segments[-1].stages, stage), whole)
        else:
            segments.append(Segment((stage,), whole))
    return tuple(segments)


def _spec_of_shape(shape: tuple[int, ...], dtype: np.dtype[Any]) -> ImageInfo:
    if len(shape) not in (2, 3):
        raise UsageError(f"image shape {shape} is not H x W or H x W x C")
    return ImageInfo(shape[0], shape[1], 1 if len(shape) == 2 else shape[2], np.dtype(dtype))


def _shape_of(spec: ImageInfo, like: tuple[int, ...]) -> tuple[int, ...]:
    return (spec.height, spec.width) if spec.channels == 1 and len(like) == 2 else (
        spec.height, spec.width, spec.channels)


def _bytes(spec: ImageInfo) -> int:
    return spec.height * spec.width * spec.channels * max(4, spec.dtype.itemsize)


def plan(pipeline: Pipeline, shape: tuple[int, ...], dtype: np.dtype[Any], *, tile_size: int | None = None,
         workers: int = 1, budget: int | None = None) -> TilePlan:
    """Plan a tiled run of ``pipeline`` on an image of ``shape`` and ``dtype``.

    Parameters
    ----------
    pipeline : Pipeline
    shape : tuple
        ``(h, w)`` or ``(h, w, c)``.
    dtype : numpy dtype
    tile_size : int, optional
        Output tile side; by default the largest of 512 and below (halving) whose
        working memory fits ``budget``, or 512 (measured: 1024 px tiles of the 24 MP blur chain hold
        about 190 MB of intermediates, 512 px tiles 80 MB; bench/tiles.py).
    workers : int
        Threads running tiles at once.
    budget : int, optional
        Bytes of working memory allowed (beyond the source and the sink).

    Returns
    -------
    TilePlan

    Raises
    ------
    ResourceLimitError
        A whole-image step's image (``<image>`` as its path) would not fit ``budget``.
    UsageError
        A bad ``tile_size`` or ``workers``.
    """
    if tile_size is not None and (isinstance(tile_size, bool) or not isinstance(tile_size, int) or tile_size < 1):
        raise UsageError(f"tile_size={tile_size!r} must be a positive integer")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"workers={workers!r} must be a positive integer")
    spec = _spec_of_shape(tuple(shape), np.dtype(dtype))
    stages = stages_of(pipeline, spec)
    segments = _segments(stages)
    tiled = [s for seg in segments if not seg.whole for s in seg.stages]
    halo = chain_halo([s.footprint.halo for s in tiled])
    whole_steps = tuple(s.name for seg in segments if seg.whole for s in seg.stages)
    whole_bytes = max((2 * _bytes(seg.spec_in) + 2 * _bytes(seg.spec_out) for seg in segments if seg.whole),
                      default=0)
    # A whole segment between tiled ones keeps its input and output in memory as well.
    if budget is not None and whole_bytes > budget:
        raise ResourceLimitError("<image>", f"whole-image step(s) {', '.join(whole_steps)} need about "
                                            f"{whole_bytes / 2**20:.0f} MiB, over the memory budget of "
                                            f"{budget / 2**20:.0f} MiB")
    channels = max([s.spec_in.channels for s in stages] + [s.spec_out.channels for s in stages] + [spec.channels])

    def tile_bytes(side: int) -> int:
        return workers * WORKING_COPIES * (side + halo.top + halo.bottom) * (side + halo.left + halo.right) * \
            channels * 4

    side = tile_size or DEFAULT_TILE
    if tile_size is None and budget is not None:
        while side > MIN_TILE and whole_bytes + tile_bytes(side) > budget:
            side //= 2
    out = stages[-1].spec_out if stages else spec
    passes = 1 + sum(isinstance(s.footprint, Global) for s in tiled)
    return TilePlan(out_shape=_shape_of(out, tuple(shape)), out_dtype=out.dtype, tile_size=side,
                    halo=halo.as_tuple(), whole_image_steps=whole_steps, passes=passes,
                    peak_bytes=whole_bytes + tile_bytes(side), workers=workers, segments=segments)


# ---------------------------------------------------------------- running one block
def _cpu() -> Any:
    return get_backend("cpu")


def _as_image(block: NDArray[Any]) -> NDArray[Any]:
    """A block as the pipeline sees it: 2-D for one channel."""
    return block[:, :, 0] if block.ndim == 3 and block.shape[2] == 1 else block


def need(stage: Stage, out_rect: Rect) -> Rect:
    """The rectangle of ``stage``'s input that its output rectangle ``out_rect`` depends on, aligned.

    The rectangle is widened (:func:`aligned`) so that OpenCV's vectorised loops treat
    every needed pixel as they do in the whole image.
    """
    footprint, spec = stage.footprint, stage.spec_in
    if isinstance(footprint, Geometric):
        return footprint.source(out_rect, spec)
    if isinstance(footprint, Whole):
        return (0, spec.height, 0, spec.width)
    return aligned(footprint.halo.grow(out_rect, spec.height, spec.width), spec)



def _crop(image: Any, in_rect: Rect, out_rect: Rect) -> NDArray[Any]:
    y, x = out_rect[0] - in_rect[0], out_rect[2] - in_rect[2]
    # contiguous, as a whole image is: OpenCV runs continuous images as one row (see aligned)
    return np.ascontiguousarray(image[y : y + out_rect[1] - out_rect[0], x : x + out_rect[3] - out_rect[2]])


def run_stage(stage: Stage, block: NDArray[Any], in_rect: Rect, out_rect: Rect, statistics: Any = None) -> NDArray[Any]:
    """Run one stage on the crop ``in_rect`` of its input; return its output over ``out_rect``."""
    flt, params, footprint = stage.step.filter, stage.step.params, stage.footprint
    ctx = Context(_cpu(), info_of(block))
    window = Window(in_rect, stage.spec_in)
    if isinstance(footprint, Geometric):
        return np.asarray(apply_alpha_policy(
            flt.alpha, lambda c, im: footprint.run(c, im, in_rect, out_rect, stage.spec_in), ctx, block, {}))
    if isinstance(footprint, Positional):
        out = apply_alpha_policy(flt.alpha, lambda c, im: footprint.run(c, im, window), ctx, block, {})
    elif isinstance(footprint, Global):
        out = apply_alpha_policy(flt.alpha, lambda c, im: footprint.apply(c, im, statistics, window), ctx, block, {})
    else:
        out = flt.run(ctx, block, params)
    return _crop(out, in_rect, out_rect)


def statistics_of(stage: Stage, block: NDArray[Any], rect: Rect, inner: Rect | None = None) -> Any:
    """A global stage's ``statistics`` of one block of its input at ``rect`` (under the filter's alpha policy).

    ``inner`` (within ``rect``) is the part measured; all of the block by default.
    """
    footprint = stage.footprint
    if not isinstance(footprint, Global):
        raise TypeError(f"{stage.name} is not a global step")
    found: list[Any] = []

    def measure(ctx: Context, image: Any) -> Any:
        found.append(footprint.statistics(ctx, image, Window(rect, stage.spec_in, inner)))
        return image

    apply_alpha_policy(stage.step.filter.alpha, measure, Context(_cpu(), info_of(block)), block, {})
    return found[0]


def run_block(stages: Sequence[Stage], read: Callable[[Rect], NDArray[Any]], out_rect: Rect,
              statistics: Sequence[Any] | None = None) -> NDArray[Any]:
    """The output of ``stages`` over ``out_rect``, reading the input rectangles it needs with ``read``.

    ``statistics[i]`` holds the merged statistics of stage ``i`` when it is global.
    """
    rects = [out_rect]
    for stage in reversed(stages):
        rects.append(need(stage, rects[-1]))
    rects.reverse()
    block = _as_image(read(rects[0]))
    for i, stage in enumerate(stages):
        block = run_stage(stage, block, rects[i], rects[i + 1], statistics[i] if statistics else None)
    return block


# ---------------------------------------------------------------- running a plan
def tile_rects(height: int, width: int, side: int) -> Iterator[Rect]:
    """Output tiles of ``side`` in row-major order (the last row and column may be smaller)."""
    for y0 in range(0, height, side):
        for x0 in range(0, width, side):
            yield (y0, min(height, y0 + side), x0, min(width, x0 + side))


def _ordered(fn: Callable[[Rect], Any], rects: Sequence[Rect], workers: int) -> Iterator[tuple[Rect, Any]]:
    """``(rect, fn(rect))`` in the order of ``rects``, at most ``2 workers`` computed ahead."""
    if workers <= 1 or len(rects) <= 1:
        for rect in rects:
            yield rect, fn(rect)
        return
    with opencv_single_threaded(), ThreadPoolExecutor(workers, thread_name_prefix="cvfilters-tile") as pool:
        pending: deque[tuple[Rect, Future[Any]]] = deque()
        for rect in rects:
            pending.append((rect, pool.submit(fn, rect)))
            if len(pending) >= 2 * workers:
                done_rect, future = pending.popleft()
                yield done_rect, future.result()
        while pending:
            done_rect, future = pending.popleft()
            yield done_rect, future.result()


def _run_tiled_segment(stages: tuple[Stage, ...], source: RegionSource, sink: RegionSink, side: int,
                       workers: int) -> None:
    def read(rect: Rect) -> NDArray[Any]:
        return source.read(*rect)

    statistics: list[Any] = [None] * len(stages)
    for index, stage in enumerate(stages):
        if isinstance(stage.footprint, Global):
            statistics[index] = _measure(stages[:index], stage, read, statistics[:index], side, workers)
    out = stages[-1].spec_out
    rects = list(tile_rects(out.height, out.width, side))
    for rect, block in _ordered(lambda r: run_block(stages, read, r, statistics), rects, workers):
        sink.write(rect[0], rect[2], np.asarray(block))


def _measure(before: tuple[Stage, ...], stage: Stage, read: Callable[[Rect], NDArray[Any]], statistics: list[Any],
             side: int, workers: int) -> Any:
    """The statistics pass of a global ``stage``: the steps ``before`` it tile by tile, measured and merged."""
    footprint = stage.footprint
    assert isinstance(footprint, Global)
    spec = stage.spec_in

    def measured(rect: Rect) -> Any:
        wide = aligned(rect, spec)  # per-pixel conversions see the tile as the whole image's loops do
        block = run_block(before, read, wide, statistics) if before else _as_image(read(wide))
        return statistics_of(stage, block, wide, rect)

    total: Any = None
    for _, partial in _ordered(measured, list(tile_rects(spec.height, spec.width, side)), workers):
        total = partial if total is None else footprint.merge([total, partial])
    return total


def run_tiled(pipeline: Pipeline, source: RegionSource, sink: RegionSink, *, tile_size: int | None = None,
              workers: int = 1, budget: int | None = None) -> TilePlan:
    """Run ``pipeline`` from ``source`` to ``sink`` in tiles; returns the plan it followed.

    The blocks written to ``sink`` together equal ``pipeline(whole image, backend="cpu")``
    (see the module notes). Arrays are BGR(A), OpenCV's order. Parameters as :func:`plan`.
    """
    tile_plan = plan(pipeline, tuple(source.shape), source.dtype, tile_size=tile_size, workers=workers,
                     budget=budget)
    segments = tile_plan.segments
    if not segments:  # an empty pipeline copies
        spec = _spec_of_shape(tuple(source.shape), source.dtype)
        for rect in tile_rects(spec.height, spec.width, tile_plan.tile_size):
            sink.write(rect[0], rect[2], source.read(*rect))
        return tile_plan
    current: RegionSource = source
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        out_spec = segment.spec_out
        target: RegionSink = sink if last else ArraySink(_shape_of(out_spec, (0, 0, 0)), out_spec.dtype)
        if segment.whole:
            _run_whole_segment(segment, current, target, tile_plan.tile_size)
        else:
            _run_tiled_segment(segment.stages, current, target, tile_plan.tile_size, workers)
        if not last:
            assert isinstance(target, ArraySink)
            current = ArraySource(target.array)
    return tile_plan


def _run_whole_segment(segment: Segment, source: RegionSource, sink: RegionSink, side: int) -> None:
    spec = segment.spec_in
    image = _as_image(source.read(0, spec.height, 0, spec.width))
    out, _ = run_steps(Context(_cpu(), spec), image, [stage.step for stage in segment.stages])
    out = np.asarray(out)
    for y0 in range(0, out.shape[0], side):  # row strips, so file sinks see bounded blocks
        sink.write(y0, 0, out[y0 : y0 + side])


def process(image: ArrayLike, pipeline: Pipeline | str, *, tile_size: int | None = None, workers: int = 1,
            budget: int | None = None) -> NDArray[Any]:
    """Run ``pipeline`` on an in-memory image through tiles (``cvfilters.process_tiled``).

    The same result as ``pipeline(image, backend="cpu")`` (bit for bit for point, local,
    positional and global steps; geometric steps within their stated tolerance), with
    intermediates the size of a tile instead of the image.

    Parameters
    ----------
    image : numpy.ndarray or array-like
        uint8, uint16 or float32 (float64 and int16 as :meth:`Pipeline.run` takes them);
        H x W or H x W x C with C in 1, 3, 4; BGR(A) order.
    pipeline : Pipeline or str
        A pipeline or a spec string such as ``"gaussian_blur:sigma=3 | sepia"``.
    tile_size, workers, budget
        As for :func:`plan`.

    Returns
    -------
    numpy.ndarray
    """
    pipe = as_pipeline(pipeline)
    host, entry = boundary.enter(image, "bgr", "hwc")
    if not isinstance(host, np.ndarray):
        raise UsageError("process_tiled takes numpy arrays and array-likes, not device images")
    info_of(host)  # validates dtype, channels and size with the same messages as a pipeline run
    tile_plan = plan(pipe, host.shape, host.dtype, tile_size=tile_size, workers=workers, budget=budget)
    sink = ArraySink(tile_plan.out_shape, tile_plan.out_dtype)
    run_tiled(pipe, ArraySource(host), sink, tile_size=tile_plan.tile_size, workers=workers, budget=budget)
    out = sink.array
    if len(host.shape) == 3 and host.shape[2] == 1 and out.ndim == 2:
        out = out[:, :, None]
    return boundary.leave(out, entry)
