"""Pipeline fusion: consecutive steps merged into one before they run.

Core Image concatenates kernels before it renders; cvfilters does the same for the
steps whose effect is data it can compose:

- per-channel point operations (``Filter.table``) -> one lookup table. Exact for
  uint8 and uint16: a table applied to a table's output is the composed table.
  float32 images have no tables, so a fused group runs its steps one by one there.
- colour matrices (``Filter.matrix``) -> one 3 x 4 matrix. Equal to the steps one by one
  wherever no intermediate value leaves 0..1 (each step clips; the product does not)
  and up to one rounding step for integer images.
- warps (``Filter.maps``) -> one ``remap`` with composed coordinate maps: one
  resampling instead of several, so the result is sharper than running the steps (it
  differs from them by their extra interpolation), and faster.

Each fused group is itself a :class:`~cvfilters.registry.catalog.Filter` (named
``fused[a | b | c]``), so the pipeline runs a compiled plan with the same loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import cv2
import numpy as np

from cvfilters.backends import BORDERS
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.types import Image
from cvfilters.engine.sampling import INTERPOLATIONS, OUTSIDE, reached, remap, remapped
from cvfilters.engine.steps import Step, run_steps
from cvfilters.registry.catalog import Filter, register, same_info
from cvfilters.registry.footprints import POINT, Footprint, Geometric, Rect, whole

_H = TypeVar("_H")
_INTEGER = (np.dtype(np.uint8), np.dtype(np.uint16))
# Interpolations from the least to the most accurate: a fused warp samples with the best of its steps'.
_INTERPOLATION_RANK = tuple(INTERPOLATIONS).index


def _given(value: _H | None) -> _H:
    """A fusion hook (or what it returned) that the step's fusion kind (:func:`kind_of`) promises."""
    if value is None:
        raise TypeError("a fused step lacks what its fusion kind needs")
    return value


def kind_of(flt: Filter) -> str | None:
    """The fusion kind of a filter: ``table``, ``matrix``, ``warp`` or None."""
    if flt.table is not None:
        return "table"
    if flt.matrix is not None:
        return "matrix"
    if flt.maps is not None:
        return "warp"
    return None


def compile_steps(steps: Sequence[Step]) -> list[Step]:
    """Group runs of two or more consecutive fusable steps of one kind (and alpha policy) into fused steps."""
    plan: list[Step] = []
    run: list[Step] = []

    def flush() -> None:
        if len(run) >= 2 and _warp_borders_compose(run):
            plan.append(Step(fused_filter(kind_of(run[0].filter), tuple(run)), {}))
        else:
            plan.extend(run)
        run.clear()

    for step in steps:
        kind = kind_of(step.filter)
        if run and (kind is None or kind != kind_of(run[0].filter) or not _alpha_shared(run[0].filter, step.filter)):
            flush()
        if kind is None:
            plan.append(step)
        else:
            run.append(step)
    flush()
    return plan


def _alpha_shared(first: Filter, other: Filter) -> bool:
    """Whether two steps of one kind can run under one alpha policy: the same one, or warps' "all" and
    "premultiply" (a fused warp then resamples premultiplied colour, as the "premultiply" steps do)."""
    return first.alpha == other.alpha or (kind_of(first) == "warp"
                                          and {first.alpha, other.alpha} <= {"all", "premultiply"})


def fused_filter(kind: str | None, steps: tuple[Step, ...]) -> Filter:
    """A filter running ``steps`` (all of one fusion kind) as one operation."""
    name = "fused[" + " | ".join(step.to_spec() for step in steps) + "]"
    build = {"table": _table_runner, "matrix": _matrix_runner, "warp": _warp_runner}[kind or ""]
    alpha = "premultiply" if any(step.filter.alpha == "premultiply" for step in steps) else steps[0].filter.alpha
    changes_info = kind == "warp" or any(step.filter.output_info is not same_info for step in steps)
    output_info = _chained_info(steps) if changes_info else None
    footprint = _warp_footprint(steps) if kind == "warp" else POINT
    return register(name, category=steps[0].filter.category, summary=f"{len(steps)} steps fused into one",
                    alpha=alpha, output_info=output_info, description=name, footprint=footprint,
                    linear=all(step.filter.linear for step in steps),
                    unbounded=all(step.filter.unbounded for step in steps), listed=False)(build(steps))


def _one_by_one(steps: Sequence[Step], ctx: Context, img: Image) -> Image:
    """The steps' own bodies in order (the alpha policy was applied by the fused filter)."""
    return run_steps(ctx, img, steps, bare=True)[0]


# ---------------------------------------------------------------- lookup tables
def compose_tables(tables: Sequence[np.ndarray]) -> np.ndarray:
    """``T_n[...T_2[T_1]]`` for tables of shape (N,) or (N, C), per channel."""
    result = np.asarray(tables[0])
    for table in tables[1:]:
        table = np.asarray(table)
        if table.ndim == 1:
            result = table[result]
        elif result.ndim == 1:
            result = table[result, :]
        else:
            result = np.take_along_axis(table, result.astype(np.intp), axis=0)
    return result


def _table_runner(steps: tuple[Step, ...]) -> Callable[..., Any]:
    cache: dict[ImageInfo, np.ndarray] = {}

    def run(ctx: Context, img: Image) -> Image:
        if ctx.info.dtype not in _INTEGER:
            return _one_by_one(steps, ctx, img)
        if ctx.info not in cache:
            cache[ctx.info] = np.ascontiguousarray(
                compose_tables([_given(_given(step.filter.table)(step.params, ctx.info)) for step in steps]))
        return ctx.backend.lut(img, cache[ctx.info])

    return run


# ---------------------------------------------------------------- colour matrices
def compose_matrices(matrices: Sequence[np.ndarray]) -> np.ndarray:
    """The 3 x 4 affine matrix of applying ``matrices`` in order (``out = M[:, :3] @ v + M[:, 3]``)."""
    result = np.asarray(matrices[0], dtype=np.float64)
    for matrix in matrices[1:]:
        matrix = np.asarray(matrix, dtype=np.float64)
        result = np.hstack([matrix[:, :3] @ result[:, :3], (matrix[:, :3] @ result[:, 3:]) + matrix[:, 3:]])
    return result


def _matrix_runner(steps: tuple[Step, ...]) -> Callable[..., Any]:
    matrix = compose_matrices([_given(step.filter.matrix)(step.params, None) for step in steps])

    def run(ctx: Context, img: Image) -> Image:
        if ctx.info.channels != 3:
            return _one_by_one(steps, ctx, img)
        full = ctx.info.max_value
        scaled = np.hstack([matrix[:, :3], matrix[:, 3:] * full])
        out = ctx.backend.transform(img, scaled)
        return ctx.backend.clip(out, 0.0, 1.0) if ctx.info.dtype == np.float32 else out

    return run


# ---------------------------------------------------------------- warps
def _warp_borders_compose(steps: Sequence[Step]) -> bool:
    """Whether the composed maps reproduce every step's border rule.

    A constant border of a later warp is carried as coordinates far outside the
    source, so it composes only when every earlier warp that has a border is constant
    with the same fill. Warps without a border parameter (``flip``) never sample
    outside their input.
    """
    if kind_of(steps[0].filter) != "warp":
        return True
    for index, outer in enumerate(steps):
        if outer.params.get("border") != "constant":
            continue
        for inner in steps[:index]:
            border = inner.params.get("border")
            if border is not None and (border != "constant" or inner.params.get("fill") != outer.params.get("fill")):
                return False
    return True


def _chained_info(steps: tuple[Step, ...]) -> Callable[[Mapping[str, Any], ImageInfo], ImageInfo]:
    def output_info(_: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
        for step in steps:
            spec = step.filter.output_info(step.params, spec)
        return spec

    return output_info


def compose_maps(steps: Sequence[Step], spec: ImageInfo) -> tuple[np.ndarray, np.ndarray]:
    """Source coordinates of every output pixel of the warps in ``steps``, composed.

    Output pixel ``x`` of warp 2 samples warp 1's output at ``m2(x)``, which came from
    the source at ``m1(m2(x))``: ``m1`` is resampled (linearly) at ``m2``, with warp 2's
    border rule folding coordinates that leave warp 1's output.
    """
    first = steps[0]
    map_x, map_y = _given(first.filter.maps)(first.params, spec)
    current = first.filter.output_info(first.params, spec)
    for step in steps[1:]:
        outer_x, outer_y = _given(step.filter.maps)(step.params, current)
        border = BORDERS[step.params.get("border", "replicate")]
        map_x, map_y = (cv2.remap(np.ascontiguousarray(m, np.float32), outer_x, outer_y, cv2.INTER_LINEAR,
                                  borderMode=border, borderValue=(OUTSIDE,) * 4) for m in (map_x, map_y))
        current = step.filter.output_info(step.params, current)
    return map_x, map_y


def _sampling(steps: Sequence[Step]) -> tuple[Any, Mapping[str, Any], bool]:
    """How a fused warp samples: the best interpolation of its steps, the first border and fill, premultiplied."""
    best = max((step.params.get("interpolation", "nearest") for step in steps), key=_INTERPOLATION_RANK)
    sampling: Mapping[str, Any] = next((step.params for step in steps if "border" in step.params),
                                       {"border": "constant", "fill": (0.0,)})
    return best, sampling, any(step.filter.alpha == "premultiply" for step in steps)


def _warp_footprint(steps: tuple[Step, ...]) -> Callable[[Mapping[str, Any], ImageInfo], Footprint]:
    """A fused warp tiles when every step gives tile maps: :func:`compose_maps` over the area a tile reaches."""
    best, sampling, premultiplied = _sampling(steps)

    def rule(_: Mapping[str, Any], spec: ImageInfo) -> Footprint:
        tile_maps: list[Callable[[Rect], tuple[Any, Any]]] = []
        outputs = []
        for step in steps:
            footprint = step.filter.footprint_for(step.params, spec)
            if not isinstance(footprint, Geometric) or footprint.maps is None:
                return whole(f"{step.to_spec()} gives no tile maps to compose")
            tile_maps.append(footprint.maps)
            spec = step.filter.output_info(step.params, spec)
            outputs.append(spec)
        borders = [step.params.get("border", "replicate") for step in steps]

        def composed(index: int, rect: Rect) -> tuple[np.ndarray, np.ndarray]:
            """The maps of steps ``0..index`` composed, over ``rect`` of step ``index``'s output."""
            outer_x, outer_y = tile_maps[index](rect)
            if index == 0:
                return outer_x, outer_y
            area = reached(outer_x, outer_y, outputs[index - 1], borders[index], "linear")
            shifted = (np.ascontiguousarray(outer_x - np.float32(area[2])),
                       np.ascontiguousarray(outer_y - np.float32(area[0])))
            inner = _in_strips(lambda rect: composed(index - 1, rect), area)
            return tuple(cv2.remap(np.ascontiguousarray(m, np.float32), *shifted, cv2.INTER_LINEAR,  # type: ignore[return-value]
                                   borderMode=BORDERS[borders[index]], borderValue=(OUTSIDE,) * 4) for m in inner)

        return remapped(lambda rect: composed(len(steps) - 1, rect), spec, best, sampling["border"],
                        sampling["fill"], premultiplied=premultiplied)

    return rule


STRIP_PIXELS = 1 << 20
"""Pixels of maps evaluated at once over a large area (the coordinate functions' float64 temporaries stay small)."""


def _in_strips(maps: Callable[[Rect], tuple[np.ndarray, np.ndarray]], area: Rect) -> tuple[np.ndarray, np.ndarray]:
    """``maps(area)``, evaluated in strips of rows into float32 arrays (the same values, less memory)."""
    y0, y1, x0, x1 = area
    rows = max(1, STRIP_PIXELS // max(1, x1 - x0))
    if y1 - y0 <= rows:
        return maps(area)
    out_x, out_y = np.empty((y1 - y0, x1 - x0), np.float32), np.empty((y1 - y0, x1 - x0), np.float32)
    for top in range(y0, y1, rows):
        bottom = min(y1, top + rows)
        out_x[top - y0 : bottom - y0], out_y[top - y0 : bottom - y0] = maps((top, bottom, x0, x1))
    return out_x, out_y


def _warp_runner(steps: tuple[Step, ...]) -> Callable[..., Any]:
    best, sampling, premultiplied = _sampling(steps)
    composed: dict[ImageInfo, tuple[np.ndarray, np.ndarray]] = {}

    def maps(spec: ImageInfo) -> tuple[np.ndarray, np.ndarray]:
        if spec not in composed:
            composed[spec] = compose_maps(steps, spec)
        return composed[spec]

    def run(ctx: Context, img: Image) -> Image:
        key = ("fused-warp", tuple(step.to_spec() for step in steps), ctx.info)
        map_x = ctx.backend.cached((*key, "x"), lambda: maps(ctx.info)[0])
        map_y = ctx.backend.cached((*key, "y"), lambda: maps(ctx.info)[1])
        return remap(ctx, img, map_x, map_y, best, sampling["border"], sampling["fill"], premultiplied=premultiplied)

    return run
