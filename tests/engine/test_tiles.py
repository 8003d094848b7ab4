"""The tile runner's plan and contract (cvfilters.engine.tiles); exactness over the registry is in
tests/properties/test_tiling.py."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.core.errors import ResourceLimitError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.tiles import (
    ArraySink,
    ArraySource,
    need,
    plan,
    run_block,
    run_tiled,
    stages_of,
    statistics_of,
)
from cvfilters.registry.footprints import Global, Halo, Window


def test_halo_of_a_kernel_follows_opencvs_anchor() -> None:
    assert Halo.kernel(5, 5) == Halo(2, 2, 2, 2)
    assert Halo.kernel(4, 4) == Halo(2, 1, 2, 1)  # anchor w // 2: two pixels before it, one after
    assert Halo.kernel(3, 1, (0, 0)) == Halo(0, 0, 0, 2)


def test_a_chains_halo_is_the_sum_of_its_steps() -> None:
    # uint8 Gaussian sigma 2: ksize round(2 * 3 * 2 + 1) | 1 = 13, reach 6; a 4 x 4 box: 2 before, 1 after;
    # median 5: reach 2. Invert (a point step) adds nothing.
    pipe = Pipeline.parse("gaussian_blur:sigma=2 | invert | box_blur:size=4 | median_blur:size=5")
    tiles = plan(pipe, (100, 80, 3), np.dtype(np.uint8), tile_size=32)
    assert tiles.halo == (6 + 2 + 2, 6 + 1 + 2, 6 + 2 + 2, 6 + 1 + 2)
    assert tiles.passes == 1 and tiles.whole_image_steps == () and tiles.tile_size == 32
    # float32 takes OpenCV's other automatic rule: 8 sigma + 1 = 17, reach 8
    assert plan(Pipeline.parse("gaussian_blur:sigma=2"), (100, 80), np.dtype(np.float32)).halo == (8, 8, 8, 8)


def test_plan_counts_statistics_passes_and_names_whole_steps() -> None:
    pipe = Pipeline.parse("equalize | white_balance | clahe | normalize")
    tiles = plan(pipe, (64, 64, 3), np.dtype(np.uint16))
    assert tiles.whole_image_steps == ("white_balance",)
    assert tiles.passes == 4  # three global steps (equalize, clahe, normalize): a statistics pass each
    text = "\n".join(tiles.explain())
    assert "white_balance: whole image: the white point" in text and "clahe: global" in text


def test_output_shape_and_dtype_follow_the_steps() -> None:
    tiles = plan(Pipeline.parse("pad:top=3,left=2 | crop:x=1,y=1,width=10,height=7 | grayscale"), (20, 30),
                 np.dtype(np.float32))
    assert tiles.out_shape == (7, 10) and tiles.out_dtype == np.float32


def test_a_whole_image_step_over_the_budget_is_refused_before_any_work() -> None:
    """The refusal names the image as ``<image>``, every whole step, and both sizes in MiB: by hand, float32 copies
    of the segment's input and output, twice each, 4 x 2000 * 2000 * 3 * 4 = 192,000,000 B = 183.1 MiB."""
    with pytest.raises(ResourceLimitError) as refused:
        plan(Pipeline.parse("sepia | white_balance"), (2000, 2000, 3), np.dtype(np.uint8), budget=1 << 20)
    assert refused.value.path == "<image>"
    assert refused.value.detail == ("whole-image step(s) sepia, white_balance need about 183 MiB, "
                                    "over the memory budget of 1 MiB")


def test_a_budget_of_exactly_the_whole_image_need_is_enough() -> None:
    """A budget equal to the whole steps' 192,000,000 B (worked out above) is not over it: the plan is made, with the
    smallest tile (64 px) since nothing is left for tiles."""
    tiles = plan(Pipeline.parse("sepia | white_balance"), (2000, 2000, 3), np.dtype(np.uint8), budget=192_000_000)
    assert tiles.tile_size == 64


def test_peak_memory_counts_the_halo_on_every_side() -> None:
    """Halo (8, 7, 8, 7) (Gaussian reach 6 plus a 4 x 4 box's 2 before, 1 after) around a 32 px tile of 3 channels,
    6 float32 working copies: 6 * 47 * 47 * 3 * 4 = 159,048 B, by hand; no whole step adds nothing."""
    tiles = plan(Pipeline.parse("gaussian_blur:sigma=2 | box_blur:size=4"), (100, 80, 3), np.dtype(np.uint8),
                 tile_size=32)
    assert tiles.halo == (8, 7, 8, 7)
    assert tiles.peak_bytes == 6 * 47 * 47 * 3 * 4


@pytest.mark.parametrize(("budget", "side"), [(6 * 512 * 512 * 3 * 4, 512), (6 * 256 * 256 * 3 * 4, 256), (1, 64)])
def test_the_budget_picks_the_largest_halved_tile_that_fits(budget: int, side: int) -> None:
    """A point step on 3 channels holds 6 float32 copies of a tile (6 * side * side * 3 * 4 B): a budget of exactly
    that keeps the side, halving from 512 stops at the first that fits, and at 64 px whatever the budget."""
    assert plan(Pipeline.parse("invert"), (4000, 4000, 3), np.dtype(np.uint8), budget=budget).tile_size == side


def test_a_one_pixel_tile_is_allowed() -> None:
    """``tile_size=1`` is a positive integer: each pixel is its own tile (numpy reference)."""
    image = np.random.default_rng(9).integers(0, 256, (5, 4, 3), dtype=np.uint8)
    np.testing.assert_array_equal(cvf.process_tiled(image, "invert", tile_size=1), 255 - image)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_workers_is_a_usage_error(bad: object) -> None:
    """``workers`` that is not a positive integer is refused by name before any work."""
    with pytest.raises(UsageError, match=rf"^workers={bad!r} must be a positive integer$"):
        plan(Pipeline.parse("sepia"), (10, 10, 3), np.dtype(np.uint8), workers=bad)  # type: ignore[arg-type]


def test_the_budget_shrinks_the_tile() -> None:
    pipe = Pipeline.parse("gaussian_blur:sigma=3")
    small = plan(pipe, (4000, 4000, 3), np.dtype(np.uint8), budget=16 << 20)
    assert small.tile_size < 512 and small.peak_bytes <= 16 << 20


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_tile_size_is_a_usage_error(bad: object) -> None:
    with pytest.raises(UsageError, match="tile_size"):
        plan(Pipeline.parse("sepia"), (10, 10, 3), np.dtype(np.uint8), tile_size=bad)  # type: ignore[arg-type]


def test_run_tiled_writes_row_major_blocks_that_make_the_whole_result() -> None:
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (45, 38, 3), dtype=np.uint8)
    pipe = Pipeline.parse("gaussian_blur:sigma=1.5 | clahe:tiles=3 | rotate:angle=7")
    sink = _Recording(image.shape, image.dtype)
    run_tiled(pipe, ArraySource(image), sink, tile_size=11, workers=2)
    np.testing.assert_array_equal(sink.array, cvf.apply(image, pipe, backend="cpu"))
    order = [(y, x) for y, x, _ in sink.writes]
    assert order == sorted(order) and len(order) == 5 * 4


def test_process_tiled_keeps_the_callers_kind_of_array() -> None:
    image = np.linspace(0, 1, 30 * 20 * 3).reshape(30, 20, 3)  # float64: runs as float32, comes back float64
    out = cvf.process_tiled(image, "gamma:gamma=2", tile_size=7)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, cvf.apply(image, "gamma:gamma=2", backend="cpu"))


def test_explain_states_the_peak_memory_and_names_every_whole_step() -> None:
    """Two whole-image steps on 2000 x 2000 x 3 uint8: by hand, float32-sized copies of the segment's input and
    output, twice each (4 x 2000 * 2000 * 3 * 4 = 192,000,000 B), plus 6 float32 working copies of one 512 px
    3-channel tile (6 * 512 * 512 * 3 * 4 = 18,874,368 B): 210,874,368 B, 201.1 MiB."""
    tiles = plan(Pipeline.parse("white_balance | sepia"), (2000, 2000, 3), np.dtype(np.uint8))
    assert tiles.peak_bytes == 192_000_000 + 18_874_368
    lines = tiles.explain()
    assert lines[0].endswith("peak working memory ~201 MiB")
    assert lines[-1] == "whole-image steps: white_balance, sepia"


class _Recording(ArraySink):
    """An array sink that also records each write's corner and block shape."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
        super().__init__(shape, dtype)
        self.writes: list[tuple[int, int, tuple[int, ...]]] = []

    def write(self, y0: int, x0: int, block: np.ndarray) -> None:
        self.writes.append((y0, x0, block.shape))
        super().write(y0, x0, block)


def test_each_block_written_is_exactly_its_tile() -> None:
    """A local and a global step in 7 px tiles of 37 x 29: the sink sees each tile once, cut to the tile's size
    (a larger block would be hidden by the next tile's write into an array, not in a file), row-major."""
    image = np.random.default_rng(5).integers(0, 256, (37, 29, 3), dtype=np.uint8)
    pipe = Pipeline.parse("gaussian_blur:sigma=2 | equalize")
    sink = _Recording(image.shape, np.dtype(np.uint8))
    run_tiled(pipe, ArraySource(image), sink, tile_size=7)
    expected = [(y, x, (min(7, 37 - y), min(7, 29 - x), 3)) for y in range(0, 37, 7) for x in range(0, 29, 7)]
    assert sink.writes == expected
    np.testing.assert_array_equal(sink.array, cvf.apply(image, pipe, backend="cpu"))


def test_a_whole_image_step_reads_the_source_once_and_writes_row_strips() -> None:
    """A whole-image step on a tall 40 x 9 image: one read of the whole rectangle, then strips of tile_size rows
    that cover the output once (a file sink sees bounded blocks)."""
    image = np.random.default_rng(6).integers(0, 256, (40, 9, 3), dtype=np.uint8)
    reads: list[tuple[Any, ...]] = []

    class Source(ArraySource):
        def read(self, y0: int, y1: int, x0: int, x1: int) -> np.ndarray:
            reads.append((y0, y1, x0, x1))
            return super().read(y0, y1, x0, x1)

    sink = _Recording(image.shape, np.dtype(np.uint8))
    sink.array[...] = 0
    run_tiled(Pipeline.parse("sepia"), Source(image), sink, tile_size=8)
    assert reads == [(0, 40, 0, 9)]
    assert sink.writes == [(y, 0, (8, 9, 3)) for y in range(0, 40, 8)]
    np.testing.assert_array_equal(sink.array, cvf.apply(image, "sepia", backend="cpu"))


def test_statistics_of_hands_the_step_its_window() -> None:
    """The Dask entry: a global step's statistics see the block's rectangle, the whole input's spec and the part
    to measure; a step that is not global is refused by name."""
    spec = ImageInfo(37, 29, 3, np.dtype(np.uint8))
    blur, equalize = stages_of(Pipeline.parse("gaussian_blur:sigma=2 | equalize"), spec)
    seen: list[Window] = []

    def statistics(ctx: Any, img: Any, window: Window) -> int:
        seen.append(window)
        return 1

    footprint = Global(statistics=statistics, merge=sum, apply=lambda ctx, img, stats, window: img)
    block = np.zeros((9, 16, 3), np.uint8)
    assert statistics_of(replace(equalize, footprint=footprint), block, (8, 17, 0, 16), (8, 15, 0, 7)) == 1
    assert seen == [Window((8, 17, 0, 16), ImageInfo(37, 29, 3, np.dtype(np.uint8)), (8, 15, 0, 7))]
    with pytest.raises(TypeError, match=r"^gaussian_blur.* is not a global step$"):
        statistics_of(blur, block, (8, 17, 0, 16))


def test_an_empty_pipeline_copies_the_source_tile_by_tile() -> None:
    """An empty pipeline must write every tile of the source at its own place (no step to run)."""
    image = np.random.default_rng(5).integers(0, 256, (37, 29, 3), dtype=np.uint8)
    sink = _Recording(image.shape, image.dtype)
    run_tiled(Pipeline(), ArraySource(image), sink, tile_size=10)
    np.testing.assert_array_equal(sink.array, image)
    assert [(y, x) for y, x, _ in sink.writes] == [(y, x) for y in (0, 10, 20, 30) for x in (0, 10, 20)]


def test_process_tiled_keeps_a_one_channel_hwc_image_hwc() -> None:
    """An H x W x 1 image comes back H x W x 1 with the filter applied to its one plane (numpy reference)."""
    image = np.random.default_rng(6).integers(0, 256, (33, 21, 1), dtype=np.uint8)
    out = cvf.process_tiled(image, "invert", tile_size=8)
    assert out.shape == (33, 21, 1)
    np.testing.assert_array_equal(out, 255 - image)
    # a global step measures the plane itself (CLAHE's tiles over an H x W x 1 block broke the tiled run)
    clahe = cvf.process_tiled(image, "clahe", tile_size=8)
    np.testing.assert_array_equal(clahe[:, :, 0], cv2.createCLAHE(2.0, (8, 8)).apply(image[:, :, 0]))


def test_run_tiled_plans_with_the_callers_workers_and_budget() -> None:
    """The plan run_tiled returns (and follows) takes ``workers`` and ``budget`` as given."""
    image = np.zeros((4000, 4000, 3), np.uint8)
    sink = ArraySink((4000, 4000, 3), np.dtype(np.uint8))
    tiles = run_tiled(Pipeline.parse("invert"), ArraySource(image), sink, workers=3, budget=32 << 20)
    assert tiles.workers == 3 and tiles.tile_size < 512 and tiles.peak_bytes <= 32 << 20
    np.testing.assert_array_equal(sink.array, 255)


def test_run_block_without_statistics_runs_local_steps() -> None:
    """Dask's entry: ``run_block`` without statistics (no global step) gives the crop of a whole-image cv2 run."""
    image = np.random.default_rng(7).integers(0, 256, (40, 30), dtype=np.uint8)
    stages = stages_of(Pipeline.parse("box_blur:size=3"), ImageInfo(40, 30, 1, np.dtype(np.uint8)))
    out = run_block(stages, lambda r: image[r[0] : r[1], r[2] : r[3]], (5, 20, 3, 17))
    np.testing.assert_array_equal(out, cv2.blur(image, (3, 3))[5:20, 3:17])


def test_a_whole_image_step_needs_its_whole_input() -> None:
    """``need`` of a whole-image step is the whole of its input, whatever the output rectangle."""
    stage = stages_of(Pipeline.parse("white_balance"), ImageInfo(40, 30, 3, np.dtype(np.uint8)))[0]
    assert need(stage, (10, 20, 5, 15)) == (0, 40, 0, 30)


def test_a_one_channel_image_through_a_whole_step_between_tiled_ones() -> None:
    """A gray image through tiled, whole-image, tiled segments: the intermediates stay 2-D (numpy reference)."""
    image = np.random.default_rng(8).integers(0, 256, (26, 19), dtype=np.uint8)
    pipe = Pipeline.parse("invert | box_blur:size=3,border=wrap | invert")
    assert plan(pipe, image.shape, image.dtype).whole_image_steps == ("box_blur:size=3,border=wrap",)
    out = cvf.process_tiled(image, pipe, tile_size=8)
    np.testing.assert_allclose(out, 255 - np.round(_wrap_mean_3x3(255 - image)), atol=1)


def _wrap_mean_3x3(image: np.ndarray) -> np.ndarray:
    """The 3 x 3 mean of a gray image with wrapped edges, in float64 (numpy)."""
    height, width = image.shape
    padded = np.pad(image, 1, mode="wrap").astype(np.float64)
    return sum(padded[dy : dy + height, dx : dx + width] for dy in range(3) for dx in range(3)) / 9


class _Blocks:
    """A sink that is not an array (as a file writer is not): it keeps each block written, at its corner."""

    def __init__(self) -> None:
        self.blocks: list[tuple[int, int, np.ndarray]] = []

    def write(self, y0: int, x0: int, block: np.ndarray) -> None:
        self.blocks.append((y0, x0, block.copy()))

    def image(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
        out = np.zeros(shape, dtype)
        for y0, x0, block in self.blocks:
            out[y0 : y0 + block.shape[0], x0 : x0 + block.shape[1]] = block
        return out


def test_segments_before_the_last_go_to_memory_not_to_the_callers_sink() -> None:
    """Tiled, whole-image, tiled segments into a sink that is not an array: only the last segment writes there (an
    intermediate written into a file sink, then read back from it, broke the run), and the result is the numpy one."""
    image = np.random.default_rng(8).integers(0, 256, (26, 19), dtype=np.uint8)
    sink = _Blocks()
    run_tiled(Pipeline.parse("invert | box_blur:size=3,border=wrap | invert"), ArraySource(image), sink, tile_size=8)
    np.testing.assert_allclose(sink.image(image.shape, image.dtype), 255 - np.round(_wrap_mean_3x3(255 - image)),
                               atol=1)


def test_a_shape_that_is_not_hw_or_hwc_is_refused_with_it() -> None:
    """A 4-D or 1-D shape is refused before any work, the message quoting the shape."""
    for shape in ((10, 10, 3, 1), (10,)):
        with pytest.raises(UsageError, match=rf"^image shape {re.escape(str(shape))} is not H x W or H x W x C$"):
            plan(Pipeline.parse("invert"), shape, np.dtype(np.uint8))


def test_a_one_channel_hwc_image_plans_a_one_channel_hwc_output() -> None:
    """The plan's output shape (a caller's sink is sized from it) keeps an H x W x 1 input's third axis, and a 2-D
    input's output stays 2-D."""
    assert plan(Pipeline.parse("invert"), (20, 30, 1), np.dtype(np.uint8)).out_shape == (20, 30, 1)
    assert plan(Pipeline.parse("invert"), (20, 30), np.dtype(np.uint8)).out_shape == (20, 30)


def test_process_tiled_refuses_a_device_image_by_name() -> None:
    """A UMat (a device image) is refused with a message naming process_tiled."""
    with pytest.raises(UsageError, match="^process_tiled takes numpy arrays and array-likes, not device images$"):
        cvf.process_tiled(cv2.UMat(np.zeros((8, 8, 3), np.uint8)), "invert")
