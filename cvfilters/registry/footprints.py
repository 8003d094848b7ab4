"""Footprints: how a filter's output depends on its input, declared once per filter.

The tile runner (:mod:`cvfilters.engine.tiles`) reads a filter's footprint to know what
part of the input an output tile needs and how to compute the tile from it:

- :class:`Point`: output pixel ``p`` depends on input pixel ``p`` only (no halo), and
  not on where ``p`` lies: colour tables, matrices, per-pixel formulas.
- :class:`Local`: on the input pixels within a :class:`Halo` of ``p`` (blurs,
  convolutions, morphology, median, bilateral). A tile is computed from the tile grown
  by the halo (clipped to the image) and cropped back: where the grown tile meets the
  image edge OpenCV's border rule applies exactly as on the whole image; inside the
  image the halo holds the real neighbours. The halo is computed from the parameters
  and the image spec the filter sees (a Gaussian's automatic ksize depends on the depth).
- :class:`Positional`: a point or local operation that also depends on the pixel's
  position in the whole image (a vignette's distance from the centre): it runs on a
  window knowing where the window lies.
- :class:`Geometric`: output pixels come from elsewhere (crop, pad, flips, rotations,
  resizing, warps): ``source(out_rect)`` is the input rectangle an output tile needs
  (the tile's corners mapped through the inverse transform, grown by the interpolation's
  support) and ``run`` computes the tile from that crop, equal to the same crop of the
  whole result (``tolerance`` levels where a transform is re-expressed, with ``reason``).
- :class:`Global`: statistics of the whole image (a histogram, a minimum and maximum),
  then a per-pixel or per-tile operation with them: ``statistics`` of each tile,
  ``merge`` of the partial statistics, ``apply`` per tile. Exact: the merged
  statistics equal the whole image's.
- :class:`Whole`: none of these; the filter runs on the whole image, and ``reason``
  says why (``--explain`` shows it, and it counts against the memory budget).

A declaration is a footprint or a function ``rule(params, spec) -> footprint`` of the
resolved parameters and the spec of the image the filter's function sees (after its
alpha policy: 3 channels for ``passthrough``, float32 for ``premultiply`` on 4-channel
images). Filters registered without one are :data:`UNDECLARED` (whole-image).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Union

import numpy as np

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.types import Image

Rect = tuple[int, int, int, int]
"""``(y0, y1, x0, x1)``: rows ``y0:y1`` and columns ``x0:x1`` of an image."""


@dataclass(frozen=True)
class Halo:
    """Input pixels an output pixel needs beyond itself, on each side."""

    top: int = 0
    bottom: int = 0
    left: int = 0
    right: int = 0

    @classmethod
    def square(cls, reach: int) -> Halo:
        """The same reach on every side (a centred odd window of side ``2 reach + 1``)."""
        return cls(reach, reach, reach, reach)

    @classmethod
    def kernel(cls, width: int, height: int, anchor: tuple[int, int] = (-1, -1)) -> Halo:
        """The halo of a ``width`` x ``height`` kernel at ``anchor`` (x, y; -1 = OpenCV's centre, ``side // 2``)."""
        ax = width // 2 if anchor[0] < 0 else anchor[0]
        ay = height // 2 if anchor[1] < 0 else anchor[1]
        # A correlation kernel reads in[x - ax + i] for i in 0..width-1.
        return cls(ay, height - 1 - ay, ax, width - 1 - ax)

    def __add__(self, other: Halo) -> Halo:
        return Halo(self.top + other.top, self.bottom + other.bottom, self.left + other.left,
                    self.right + other.right)

    def grow(self, rect: Rect, height: int, width: int) -> Rect:
        """``rect`` grown by the halo and clipped to a ``height`` x ``width`` image."""
        y0, y1, x0, x1 = rect
        return (max(0, y0 - self.top), min(height, y1 + self.bottom), max(0, x0 - self.left),
                min(width, x1 + self.right))

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.top, self.bottom, self.left, self.right)

    def __str__(self) -> str:
        sides = {self.top, self.bottom, self.left, self.right}
        if len(sides) == 1:
            return f"{self.top} px"
        return f"top {self.top}, bottom {self.bottom}, left {self.left}, right {self.right} px"


NO_HALO = Halo()


@dataclass(frozen=True)
class Window:
    """Where a tile lies: its rectangle in an image of spec ``full``.

    ``inner`` is the part of it a statistics pass measures (the tile runner hands
    statistics a crop widened for OpenCV's vector loops; see :mod:`cvfilters.engine.tiles`).
    """

    rect: Rect
    full: ImageInfo
    inner: Rect | None = None

    def measured(self, array: Any) -> Any:
        """The part of ``array`` (an image over ``rect``) to measure: ``inner``, or all of it."""
        if self.inner is None:
            return array
        y0, y1, x0, x1 = self.inner
        return array[y0 - self.rect[0] : y1 - self.rect[0], x0 - self.rect[2] : x1 - self.rect[2]]

    @property
    def y0(self) -> int:
        return self.rect[0]

    @property
    def x0(self) -> int:
        return self.rect[2]


@dataclass(frozen=True)
class Point:
    """Each output pixel from the input pixel at the same place, wherever it is."""

    kind: ClassVar[str] = "point"
    halo: ClassVar[Halo] = NO_HALO

    def describe(self) -> str:
        return "point: each output pixel from the same input pixel (no halo)"


@dataclass(frozen=True)
class Local:
    """Each output pixel from the input pixels within ``halo`` of it."""

    halo: Halo
    kind: ClassVar[str] = "local"

    def describe(self) -> str:
        return f"local: each output pixel from the input within a halo of {self.halo}"


@dataclass(frozen=True)
class Positional:
    """A point (or local, with ``halo``) operation that depends on the pixel's place in the whole image.

    ``run(ctx, tile, window)`` computes the tile at ``window`` (``ctx.info`` is the
    tile's spec; ``window.full`` the whole image's) under the filter's alpha policy.
    """

    run: Callable[[Context, Image, Window], Image]
    halo: Halo = NO_HALO
    kind: ClassVar[str] = "positional"

    def describe(self) -> str:
        extent = "the same input pixel" if self.halo == NO_HALO else f"the input within a halo of {self.halo}"
        return f"positional: each output pixel from {extent} and its place in the image"


@dataclass(frozen=True)
class Geometric:
    """Output pixels from elsewhere in the input: the source rectangle of a tile, and the tile from it.

    ``source(out_rect, in_spec)`` is the input rectangle (clipped to the input) an output
    rectangle needs; ``run(ctx, crop, crop_rect, out_rect, in_spec)`` computes the output
    rectangle from that crop under the filter's alpha policy (``ctx.info`` is the crop's).
    ``tolerance`` is the largest difference from the whole-image result in levels of
    integer images (0: bit for bit), with ``reason``. A remap also gives its ``maps(out_rect)``:
    the float32 source coordinates of those output pixels, so fused warps compose them per tile.
    """

    source: Callable[[Rect, ImageInfo], Rect]
    run: Callable[[Context, Image, Rect, Rect, ImageInfo], Image]
    maps: Callable[[Rect], tuple[Any, Any]] | None = None
    tolerance: int = 0
    reason: str = ""
    kind: ClassVar[str] = "geometric"
    halo: ClassVar[Halo] = NO_HALO

    def describe(self) -> str:
        exact = "bit for bit" if not self.tolerance else f"within {self.tolerance} level(s): {self.reason}"
        return f"geometric: an output tile from the source rectangle its coordinates reach ({exact})"


@dataclass(frozen=True)
class Global:
    """Whole-image statistics, then a per-tile operation: the exact two-pass form.

    ``statistics(ctx, tile, window)`` measures ``window.measured(...)`` of one tile of the
    filter's input (after its alpha policy: ``ctx.info`` is what the filter's function
    sees; per-pixel conversions run on the whole tile first), ``merge(partials)``
    combines the tiles' measures into the whole image's, and ``apply(ctx, tile, stats,
    window)`` computes a tile (grown by ``halo``, under the alpha policy) from them.
    """

    statistics: Callable[[Context, Image, Window], Any]
    merge: Callable[[Sequence[Any]], Any]
    apply: Callable[[Context, Image, Any, Window], Image]
    measures: str = "a histogram"
    halo: Halo = NO_HALO
    kind: ClassVar[str] = "global"

    def describe(self) -> str:
        return f"global: {self.measures} of the whole image (a statistics pass), then per tile"


@dataclass(frozen=True)
class Whole:
    """Runs on the whole image; ``reason`` says why it cannot tile."""

    reason: str
    kind: ClassVar[str] = "whole"
    halo: ClassVar[Halo] = NO_HALO

    def describe(self) -> str:
        return f"whole image: {self.reason}"


Footprint = Union[Point, Local, Positional, Geometric, Global, Whole]  # noqa: UP007 (isinstance-able alias)
FootprintRule = Union[Footprint, Callable[[Mapping[str, Any], ImageInfo], Footprint]]  # noqa: UP007

POINT = Point()
UNDECLARED = Whole("no footprint declared (runs whole-image)")


def local(halo_of: Callable[[Mapping[str, Any], ImageInfo], Halo]) -> Callable[[Mapping[str, Any], ImageInfo],
                                                                               Footprint]:
    """A :class:`Local` rule from a halo function; a ``wrap`` border (the far side of the image) runs whole."""

    def rule(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
        if params.get("border") == "wrap":
            return Whole("border=wrap reads the opposite edge of the image")
        return Local(halo_of(params, spec))

    return rule


def square(reach_of: Callable[[Mapping[str, Any], ImageInfo], int]) -> Callable[[Mapping[str, Any], ImageInfo],
                                                                                 Footprint]:
    """A :class:`Local` rule whose halo is the same ``reach_of(params, spec)`` on every side."""
    return local(lambda params, spec: Halo.square(reach_of(params, spec)))


def whole(reason: str) -> Whole:
    """A :class:`Whole` footprint with its reason."""
    return Whole(reason)


def resolve(rule: FootprintRule, params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    """The footprint of a filter for resolved ``params`` on an image the filter's function sees as ``spec``."""
    if isinstance(rule, (Point, Local, Positional, Geometric, Global, Whole)):
        return rule
    return rule(params, spec)


ALIGN = 64
"""Columns a crop starts on a multiple of, and columns it extends past what it needs (when the image allows)."""
CONTINUOUS = 256
"""Elements (a multiple of the widest SIMD loop's step) that the last crop's first row starts on a multiple of."""


def aligned(rect: Rect, spec: ImageInfo) -> Rect:
    """``rect`` widened for OpenCV's SIMD loops: they process rows (or whole continuous images) in vectors
    of up to 64 bytes from the start and finish the remainder with scalar code, whose float rounding can
    differ by an ulp. A crop starting on a multiple of :data:`ALIGN` columns and ending :data:`ALIGN`
    columns (and one row) past what is needed (or at the image's edge) puts the needed pixels in the same
    vector lanes as in the whole image."""
    y0, y1, x0, x1 = rect
    y1, x0, x1 = min(spec.height, y1 + 1), x0 - x0 % ALIGN, min(spec.width, x1 + ALIGN)
    if (y1, x1) == (spec.height, spec.width):
        # OpenCV runs element-wise operations on a continuous image as one long row, whose scalar tail
        # is the image's last elements: the crop holding them spans the width from a row whose offset
        # is a multiple of CONTINUOUS elements, so its tail is the whole image's.
        step = CONTINUOUS // math.gcd(CONTINUOUS, spec.width)
        y0, x0 = y0 - y0 % step, 0
    return (y0, y1, x0, x1)


AxisMap = Callable[[int, int, ImageInfo], Any]
"""``axis(start, stop, spec)``: the input index of each output index ``start..stop-1`` (-1: outside, filled)."""


def copied(rows: AxisMap, cols: AxisMap, fill: Callable[[ImageInfo], tuple[float, ...]] | None = None,
           maps: Callable[[Rect], tuple[Any, Any]] | None = None) -> Geometric:
    """The exact :class:`Geometric` footprint of an operation copying pixels: crop, pad, flips, transposes.

    Output pixel ``(y, x)`` is input pixel ``(rows(y), cols(x))``, or ``fill`` (per channel,
    for an input of ``spec``) where either index is -1. ``maps`` gives the same as source
    coordinates (:attr:`Geometric.maps`), for operations that fuse with warps (flips).
    """
    def indices(rect: Rect, spec: ImageInfo) -> tuple[Any, Any]:
        return np.asarray(rows(rect[0], rect[1], spec)), np.asarray(cols(rect[2], rect[3], spec))

    def span(index: Any) -> tuple[int, int]:
        inside = index[index >= 0]
        return (int(inside.min()), int(inside.max()) + 1) if len(inside) else (0, 1)

    def source(out_rect: Rect, spec: ImageInfo) -> Rect:
        row_index, col_index = indices(out_rect, spec)
        return (*span(row_index), *span(col_index))

    def run(ctx: Context, crop: Image, crop_rect: Rect, out_rect: Rect, spec: ImageInfo) -> Image:
        row_index, col_index = indices(out_rect, spec)
        block = np.asarray(crop)
        out = block[np.ix_(np.clip(row_index - crop_rect[0], 0, block.shape[0] - 1),
                           np.clip(col_index - crop_rect[2], 0, block.shape[1] - 1))]
        if fill is not None:
            values = np.asarray(fill(spec), dtype=np.float64)
            if block.dtype.kind == "u":  # saturated and rounded half to even, as OpenCV stores a fill value
                values = np.clip(np.rint(values), 0, np.iinfo(block.dtype).max)
            values = values.astype(block.dtype)
            out[row_index < 0] = values
            out[:, col_index < 0] = values
        return np.ascontiguousarray(out)

    return Geometric(source=source, run=run, maps=maps)


def chain_halo(halos: Sequence[Halo]) -> Halo:
    """The halo of steps run one after another: the sum of theirs."""
    total = NO_HALO
    for halo in halos:
        total = total + halo
    return total
