"""Footprints: halos, the rules built from them, widened crops and the copying footprint.

A kernel's halo is checked against ``cv2.filter2D`` (which outputs a single bright input pixel
reaches); the copying footprint against ``cv2.copyMakeBorder`` computed on the whole image (its tiles
equal, bit for bit, the same crop of the whole result); the rest against values written out by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.core.context import Context, ImageInfo
from cvfilters.registry.footprints import (
    NO_HALO,
    POINT,
    UNDECLARED,
    Geometric,
    Global,
    Halo,
    Local,
    Positional,
    Whole,
    Window,
    aligned,
    chain_halo,
    copied,
    local,
    resolve,
    square,
    whole,
)

U8 = np.dtype(np.uint8)


def _spec(height: int, width: int, dtype: np.dtype = U8, channels: int = 1) -> ImageInfo:
    return ImageInfo(height, width, channels, dtype)


@pytest.mark.parametrize(("width", "height", "anchor"), [
    (5, 5, (-1, -1)), (4, 4, (-1, -1)), (3, 1, (0, 0)), (6, 3, (4, 2)), (1, 7, (0, -1)), (2, 5, (-1, 1)),
    (3, 4, (1, 0)), (4, 3, (0, 2)),  # an anchor of 0 is not the centre
])
def test_a_kernels_halo_is_what_filter2d_reads(width: int, height: int, anchor: tuple[int, int]) -> None:
    """An output pixel reads ``left`` columns before it and ``right`` after: a bright input pixel
    reaches ``left`` outputs after it and ``right`` before it (the same for rows)."""
    image = np.zeros((21, 21), np.float32)
    image[10, 10] = 1.0
    out = cv2.filter2D(image, -1, np.ones((height, width), np.float32), anchor=anchor,
                       borderType=cv2.BORDER_CONSTANT)
    rows, cols = np.nonzero(out)
    halo = Halo.kernel(width, height, anchor)
    assert halo == Halo(top=rows.max() - 10, bottom=10 - rows.min(), left=cols.max() - 10, right=10 - cols.min())


def test_halo_arithmetic_and_text() -> None:
    assert Halo.square(3) == Halo(3, 3, 3, 3)
    assert Halo(1, 2, 3, 4) + Halo(10, 20, 30, 40) == Halo(11, 22, 33, 44)
    assert Halo(1, 2, 3, 4).as_tuple() == (1, 2, 3, 4)
    assert str(Halo.square(2)) == "2 px"
    assert str(Halo(1, 2, 3, 4)) == "top 1, bottom 2, left 3, right 4 px"
    assert str(Halo(1, 1, 1, 2)) == "top 1, bottom 1, left 1, right 2 px"
    assert chain_halo([Halo(1, 0, 0, 0), Halo(0, 2, 0, 0), Halo(0, 0, 3, 4)]) == Halo(1, 2, 3, 4)
    assert chain_halo([]) == NO_HALO == Halo(0, 0, 0, 0)


def test_grow_clips_to_the_image() -> None:
    halo = Halo(1, 2, 3, 4)
    assert halo.grow((10, 20, 30, 40), 100, 200) == (9, 22, 27, 44)
    assert halo.grow((0, 99, 2, 197), 100, 200) == (0, 100, 0, 200)  # every side at an edge


def test_a_window_measures_its_inner_part() -> None:
    array = np.arange(200).reshape(10, 20)
    window = Window((10, 20, 30, 50), _spec(64, 64))
    assert window.measured(array) is array
    assert (window.y0, window.x0) == (10, 30)
    inner = Window((10, 20, 30, 50), _spec(64, 64), inner=(12, 15, 35, 40))
    assert np.array_equal(inner.measured(array), array[2:5, 5:10])
    corner = Window((10, 20, 30, 50), _spec(64, 64), inner=(16, 20, 41, 50))  # to the block's last row and column
    assert np.array_equal(corner.measured(array), array[6:10, 11:20])
    assert corner.measured(array).shape == (4, 9)


def test_each_kind_describes_itself() -> None:
    def run(*_: Any) -> Any:
        return None

    assert POINT.describe() == "point: each output pixel from the same input pixel (no halo)"
    assert POINT.halo == NO_HALO and POINT.kind == "point"
    assert Local(Halo.square(2)).describe() == "local: each output pixel from the input within a halo of 2 px"
    assert Positional(run).describe() == "positional: each output pixel from the same input pixel and its place in " \
                                         "the image"
    assert Positional(run, Halo(1, 1, 2, 2)).describe() == (
        "positional: each output pixel from the input within a halo of top 1, bottom 1, left 2, right 2 px and its "
        "place in the image")
    assert Geometric(run, run).describe() == ("geometric: an output tile from the source rectangle its coordinates "
                                              "reach (bit for bit)")
    assert Geometric(run, run, tolerance=1, reason="bilinear weights").describe() == (
        "geometric: an output tile from the source rectangle its coordinates reach (within 1 level(s): bilinear "
        "weights)")
    assert Global(run, run, run).describe() == ("global: a histogram of the whole image (a statistics pass), then "
                                                "per tile")
    assert Global(run, run, run, measures="the range").describe() == (
        "global: the range of the whole image (a statistics pass), then per tile")
    assert whole("needs every pixel") == Whole("needs every pixel")
    assert whole("needs every pixel").describe() == "whole image: needs every pixel"
    assert UNDECLARED.describe() == "whole image: no footprint declared (runs whole-image)"


def test_local_and_square_rules() -> None:
    seen: list[tuple[Mapping[str, Any], ImageInfo]] = []

    def halo_of(params: Mapping[str, Any], spec: ImageInfo) -> Halo:
        seen.append((params, spec))
        return Halo(1, 2, 3, 4)

    spec = _spec(8, 8)
    rule = local(halo_of)
    assert rule({"border": "reflect101"}, spec) == Local(Halo(1, 2, 3, 4))
    assert rule({}, spec) == Local(Halo(1, 2, 3, 4))
    assert seen == [({"border": "reflect101"}, spec), ({}, spec)]
    assert rule({"border": "wrap"}, spec) == Whole("border=wrap reads the opposite edge of the image")
    reach = square(lambda params, spec: params["size"] + spec.height)
    assert reach({"size": 2}, spec) == Local(Halo(10, 10, 10, 10))
    assert reach({"size": 2, "border": "wrap"}, spec) == Whole("border=wrap reads the opposite edge of the image")


def test_resolve_calls_a_rule_and_keeps_a_footprint() -> None:
    spec = _spec(8, 8)
    assert resolve(POINT, {}, spec) is POINT
    assert resolve(UNDECLARED, {}, spec) is UNDECLARED
    assert resolve(lambda params, s: Local(Halo.square(params["r"] + s.width)), {"r": 1}, spec) == \
        Local(Halo.square(9))


@pytest.mark.parametrize(("rect", "height", "width", "expected"), [
    ((10, 20, 70, 100), 100, 300, (10, 21, 64, 164)),  # inside: a row more, 64-column start, 64 columns more
    ((10, 20, 0, 64), 100, 300, (10, 21, 0, 128)),
    ((150, 200, 200, 290), 200, 300, (128, 200, 0, 300)),  # the last elements: rows from a 256-element offset
    ((13, 40, 40, 90), 40, 96, (8, 40, 0, 96)),
    ((13, 40, 10, 20), 40, 96, (13, 40, 0, 84)),  # short of the right edge: the start stays
    ((5, 39, 200, 220), 40, 256, (5, 40, 0, 256)),  # any row of 256 columns starts on a multiple of 256
    ((5, 38, 10, 20), 40, 50, (5, 39, 0, 50)),  # a row short of the bottom: the start stays
])
def test_aligned_widens_for_simd_loops(rect: tuple[int, int, int, int], height: int, width: int,
                                       expected: tuple[int, int, int, int]) -> None:
    out = aligned(rect, _spec(height, width))
    assert out == expected
    image = np.arange(height * width).reshape(height, width)
    y0, y1, x0, x1 = expected
    assert np.array_equal(image[out[0] : out[1], out[2] : out[3]], image[y0:y1, x0:x1])  # whole numbers, a crop
    if (out[1], out[3]) == (height, width):  # the crop holds the last elements
        assert out[0] * width % 256 == 0 and out[2] == 0


def _pad_axis(before: int, side: int) -> Any:
    """Output index -> input index of a constant pad: -1 outside the input."""
    def axis(start: int, stop: int, _: ImageInfo) -> np.ndarray:
        index = np.arange(start, stop) - before
        return np.where((index >= 0) & (index < side), index, -1)
    return axis


@pytest.mark.parametrize(("dtype", "fill"), [
    (np.uint8, (100.5, 300.0, -3.0)),  # rounded half to even, saturated: as OpenCV stores the fill
    (np.uint8, (2.5, 3.5, 254.6)),
    (np.uint16, (65535.7, 0.4, 1000.5)),
    (np.float32, (0.25, -1.5, 2.75)),
])
def test_a_copying_footprints_tiles_are_the_whole_results(dtype: type, fill: tuple[float, ...]) -> None:
    rng = np.random.default_rng(5)
    image: np.ndarray = (rng.random((6, 7, 3)) * 200).astype(dtype)
    top, bottom, left, right = 2, 3, 4, 1
    reference = cv2.copyMakeBorder(image, top, bottom, left, right, cv2.BORDER_CONSTANT, value=fill)
    spec = ImageInfo.of(image)
    footprint = copied(_pad_axis(top, 6), _pad_axis(left, 7), lambda s: fill)
    assert footprint.tolerance == 0 and footprint.maps is None
    ctx = Context.__new__(Context)  # the copy never looks at its context
    for out_rect in [(0, 4, 0, 5), (1, 9, 3, 12), (7, 11, 10, 12), (0, 11, 0, 12), (0, 1, 0, 1)]:
        source = footprint.source(out_rect, spec)
        y0, y1, x0, x1 = source
        tile = np.asarray(footprint.run(ctx, image[y0:y1, x0:x1], source, out_rect, spec))
        assert tile.flags.c_contiguous and tile.dtype == image.dtype
        assert np.array_equal(tile, reference[out_rect[0]:out_rect[1], out_rect[2]:out_rect[3]]), out_rect


def test_a_copying_footprints_source_is_the_span_it_reads() -> None:
    spec = _spec(6, 7)
    footprint = copied(_pad_axis(2, 6), _pad_axis(4, 7))
    assert footprint.source((1, 9, 3, 12), spec) == (0, 6, 0, 7)
    assert footprint.source((3, 5, 5, 8), spec) == (1, 3, 1, 4)
    assert footprint.source((0, 2, 0, 4), spec) == (0, 1, 0, 1)  # nothing inside: one pixel, never empty
    mirrored = copied(lambda start, stop, _: np.arange(start, stop)[::-1], lambda start, stop, _: np.arange(start,
                                                                                                          stop))
    image = np.arange(42, dtype=np.uint8).reshape(6, 7)
    tile = np.asarray(mirrored.run(Context.__new__(Context), image[1:4, 2:5], (1, 4, 2, 5), (1, 4, 2, 5), spec))
    assert np.array_equal(tile, image[1:4, 2:5][::-1])  # no fill: indices into the crop only


def test_a_copying_footprint_hands_its_maps_the_input_spec() -> None:
    """The index maps and the fill see the input's spec: a flip padded by a row, filled with full scale."""
    image = np.arange(5 * 6 * 2, dtype=np.uint16).reshape(5, 6, 2)
    spec = ImageInfo.of(image)

    def flipped_rows(start: int, stop: int, s: ImageInfo) -> np.ndarray:
        index = s.height - np.arange(start, stop)  # output row 0 is the pad, row 1 the last input row
        return np.where(index < s.height, index, -1)

    footprint = copied(flipped_rows, lambda start, stop, s: s.width - 1 - np.arange(start, stop),
                       lambda s: (s.max_value,) * s.channels)
    reference = np.concatenate([np.full((1, 6, 2), 65535, np.uint16), image[::-1, ::-1]])
    for out_rect in [(0, 6, 0, 6), (0, 2, 1, 3), (3, 6, 4, 6)]:
        source = footprint.source(out_rect, spec)
        tile = np.asarray(footprint.run(Context.__new__(Context), image[source[0]:source[1], source[2]:source[3]],
                                        source, out_rect, spec))
        assert np.array_equal(tile, reference[out_rect[0]:out_rect[1], out_rect[2]:out_rect[3]]), out_rect


def test_a_copying_footprint_keeps_its_maps() -> None:
    def maps(rect: tuple[int, int, int, int]) -> tuple[Any, Any]:
        return rect, rect

    assert copied(_pad_axis(0, 4), _pad_axis(0, 4), maps=maps).maps is maps
