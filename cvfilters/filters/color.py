"""Colour (point) filters: each output pixel depends on the same input pixel only.

Two kinds of point operation live here, and each exposes what a pipeline needs to
merge consecutive steps into one:

Per-channel curves (colour kernels)
    ``out_c = f_c(in_c)``. They run as a lookup table on every backend: 256 rows for
    uint8, 65536 for uint16, built once per parameters and dtype and cached.
    ``Filter.table(params, spec)`` returns that table; :class:`PointOp` (see
    :func:`point_op_of`) evaluates the same curves on float32 values. Built on it:
    :func:`color_kernel` (a Python function becomes a filter), ``invert``, the tone
    filters of :mod:`.tone` (``levels``, ``tone_curve``, ``gamma``, ``exposure``,
    ``brightness_contrast``, ``posterize``, ``solarize``, ``threshold``) and the 1-D
    files of ``lut`` (:mod:`.cube`).
Colour matrices
    ``out = M @ [b, g, r, 1]``, run by ``ctx.backend.transform`` (``cv2.transform``).
    ``Filter.matrix(params, spec)`` (and :func:`color_matrix_of`, which resolves the
    parameters first) returns the 3 x 4 matrix of ``saturation``, ``hue_shift``,
    ``color_matrix`` and ``grayscale``. ``sepia`` is ImageMagick's ``-sepia-tone``
    (toning, then a whole-image normalize and contrast), not a matrix.

Value convention (curves and matrices alike): values are normalised to 0..1 (integer
value / 255 or / 65535; float32 as is), results are clipped to 0..1 and, for integer
images, scaled back and rounded half to even. Float32 results are clipped to 0..1
too, so one step gives the same picture at every bit depth.

Gray (1-channel) images behave as the colour ``(v, v, v)`` whose result is reduced to
BT.601 luma (``0.114 B + 0.587 G + 0.299 R``, the weights of ``grayscale``) and kept
in one channel. A curve applied to all channels is therefore simply applied to the
gray values; saturation and hue shifts leave gray unchanged (and warn once); a curve on
one colour channel or a colour matrix changes gray by the luma of its colour result;
sepia tones gray into 3-channel brown (its declared output spec), as ImageMagick does.

Float32 images have no table: curves are evaluated with numpy on the host. On a
device backend (UMat, GpuMat) that is a counted host fallback (download, evaluate,
upload; shown by ``--explain`` as ``NAME (float32 on host)``) unless the filter has an
exact device form: ``invert``, ``exposure``, ``brightness_contrast`` and ``threshold``
run float32 with device primitives on every backend.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from cvfilters.backends.base import CV_DEPTH
from cvfilters.backends.cpu import host
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.pixels import LUMA_BGR, full_scale
from cvfilters.core.types import Category
from cvfilters.filters._shared import sepia_tone
from cvfilters.registry import catalog as registry
from cvfilters.registry.catalog import Filter, register
from cvfilters.registry.footprints import POINT
from cvfilters.registry.params import Param
from cvfilters.registry.signatures import check_keywords

CHANNELS = ("b", "g", "r")
TABLE_CACHE = 64

Curve = Callable[[np.ndarray], Any]
"""A function of normalised values (0..1) returning normalised values, elementwise."""
CurvesFn = Callable[[Mapping[str, Any], float], Sequence[Curve | None]]
"""``curves(params, full_scale)`` -> one curve for every channel, or three (B, G, R); None is identity."""


def table_size(dtype: np.dtype | type) -> int | None:
    """Rows of a lookup table for ``dtype``: 256 (uint8), 65536 (uint16), None (float32: no table)."""
    return {np.dtype(np.uint8): 256, np.dtype(np.uint16): 65536}.get(np.dtype(dtype))


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(_freeze(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


def _params_key(params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A hashable cache key; lists (unresolved parameter values) become tuples."""
    return tuple(sorted((k, _freeze(v)) for k, v in params.items()))


class PointOp:
    """The per-channel curves of one filter, as tables (integers) or evaluated (float32).

    Parameters
    ----------
    name : str
        The filter's name (error messages, fallback counters).
    curves : callable
        ``curves(params, full_scale)`` returns one :data:`Curve` applied to every
        channel, or three (B, G, R order; None leaves that channel unchanged).
        ``full_scale`` is 255, 65535 or 1.0 for curves that need the dtype's units.
    float_device : callable, optional
        ``float_device(ctx, img, **params)``: an exact float32 form written with
        device primitives; without it float32 is evaluated on the host.
    native : callable, optional
        ``native(ctx, img, **params)``: an exact form for every dtype that replaces the
        table when running (``invert``: ``bitwise_not``); the table is still exposed.
    """

    def __init__(self, name: str, curves: CurvesFn, float_device: Callable[..., Any] | None = None,
                 native: Callable[..., Any] | None = None) -> None:
        self.name = name
        self.curves = curves
        self.float_device = float_device
        self.native = native
        self._tables = lru_cache(maxsize=TABLE_CACHE)(self._build)

    # ------------------------------------------------------------ tables
    def table(self, params: Mapping[str, Any], spec: ImageInfo) -> np.ndarray | None:
        """The lookup table for ``spec``: (N,) or (N, 3) in B, G, R columns, the image's dtype.

        N is 256 for uint8 and 65536 for uint16; row ``i`` holds the output for input
        value ``i``. It describes the colour channels (alpha passes through), so a
        4-channel spec gets the 3-channel table; a gray spec always gets (N,). Float32
        has no table: returns None (use :meth:`evaluate`). Tables are cached per
        parameters and dtype and are read-only.
        """
        if table_size(spec.dtype) is None:
            return None
        return self._tables(_params_key(params), np.dtype(spec.dtype).str, spec.channels != 1)

    def _build(self, key: tuple[tuple[str, Any], ...], dtype_str: str, colour: bool) -> np.ndarray:
        dtype = np.dtype(dtype_str)
        full = full_scale(dtype)
        ramp = np.arange(table_size(dtype) or 0, dtype=np.float64) / full
        columns = self._columns(dict(key), full, ramp)
        if len(columns) == 3 and not colour:
            values = sum(w * c for w, c in zip(LUMA_BGR, columns, strict=True))
        elif len(columns) == 3:
            values = np.stack(columns, axis=-1)
        else:
            values = columns[0]
        # Rounding at 9 decimals first lets exact halves (k + 0.5) round to even like
        # OpenCV's saturate_cast, instead of going wherever float64 error puts them.
        table = np.clip(np.rint(np.round(values * full, 9)), 0, full).astype(dtype)
        table.setflags(write=False)
        return table

    def _curves(self, params: Mapping[str, Any], full: float) -> list[Curve | None]:
        curves = list(self.curves(params, full))
        if len(curves) not in (1, 3):
            raise ValueError(f"{self.name}: curves() must return 1 or 3 curves, not {len(curves)}")
        return curves[:1] if len(curves) == 3 and curves[0] is curves[1] is curves[2] else curves

    def _apply(self, curve: Curve | None, values: np.ndarray) -> np.ndarray:
        if curve is None:
            return values
        with np.errstate(all="ignore"):  # NaN and inf in a float image are expected to pass through
            result = np.asarray(curve(values))
        if result.dtype.kind not in "f":
            result = result.astype(np.float64)
        result = np.broadcast_to(result, values.shape)
        given = np.isfinite(values)
        if not np.all(np.isfinite(result) | ~given):
            raise ValueError(f"colour kernel {self.name!r} returned NaN or infinite values")
        clipped = np.clip(result, 0.0, 1.0)
        return clipped if given.all() else np.where(given, clipped, np.nan)  # non-finite in, NaN out

    def _columns(self, params: Mapping[str, Any], full: float, values: np.ndarray) -> list[np.ndarray]:
        return [self._apply(curve, values) for curve in self._curves(params, full)]

    # ------------------------------------------------------------ float32
    def evaluate(self, image: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
        """The curves applied to a float32 host image (values 0..1), as float32.

        ``image`` is H x W (gray) or H x W x 3 (B, G, R). Curves receive float32 arrays.
        """
        values = np.asarray(image, dtype=np.float32)
        if values.ndim == 3 and values.shape[2] == 1:
            return self.evaluate(values[..., 0], params)[..., None]
        curves = self._curves(params, 1.0)
        if len(curves) == 1:
            return self._apply(curves[0], values).astype(np.float32)
        if values.ndim == 2:
            planes = [self._apply(c, values) for c in curves]
            return sum(w * p for w, p in zip(LUMA_BGR, planes, strict=True)).astype(np.float32)
        out = np.empty_like(values)
        for c, curve in enumerate(curves):
            out[..., c] = self._apply(curve, values[..., c])
        return out

    # ------------------------------------------------------------ running
    def run(self, ctx: Context, img: Any, params: Mapping[str, Any]) -> Any:
        """Apply to a native image of ``ctx.backend`` (1 or 3 channels: alpha is handled by the policy)."""
        if self.native is not None:
            return self.native(ctx, img, **params)
        table = self.table(params, ctx.info)
        if table is not None:
            return ctx.backend.lut(img, lut_layout(table))
        if self.float_device is not None:
            return self.float_device(ctx, img, **params)
        return ctx.backend.on_host(img, lambda host: self.evaluate(host, params), f"{self.name} (float32 on host)")


def lut_layout(table: np.ndarray) -> np.ndarray:
    """A (N,) or (N, C) table in the layout every backend's ``lut`` takes: (N,) or (N, 1, C)."""
    return table if table.ndim == 1 else table.reshape(len(table), 1, -1)


_POINT_OPS: dict[str, PointOp] = {}


def point_op_of(flt: str | Filter) -> PointOp | None:
    """The :class:`PointOp` of a per-channel point filter (None for other filters).

    ``point_op_of(name).evaluate(values, params)`` evaluates its curves on float32
    values (``Filter.table`` covers uint8 and uint16).
    """
    name = flt.name if isinstance(flt, Filter) else flt
    op = _POINT_OPS.get(name)
    return op if op is not None and registry.get(name).table == op.table else None


def point_filter(name: str, curves: CurvesFn, *, summary: str, params: Iterable[Param] = (),
                 description: str = "", category: Category = "color",
                 check: Callable[[dict[str, Any]], str | None] | None = None,
                 float_device: Callable[..., Any] | None = None, native: Callable[..., Any] | None = None,
                 replace: bool = False) -> Filter:
    """Register a filter made of per-channel curves (the machinery under :func:`color_kernel`).

    The filter runs as ``ctx.backend.lut`` for uint8/uint16 and exposes ``Filter.table``;
    float32 runs ``float_device`` when given, else the curves on the host; ``native``
    replaces the table for every dtype (see :class:`PointOp`). The alpha policy is
    "passthrough".
    """
    op = PointOp(name, curves, float_device, native)

    def run(ctx: Context, img: Any, **values: Any) -> Any:
        return op.run(ctx, img, values)

    flt = register(name, category=category, summary=summary, params=params, check=check, table=op.table,
                   footprint=POINT,
                   description=description or summary, replace=replace)(run)
    _POINT_OPS[name] = op
    return flt


def color_kernel(fn: Callable[..., Any], name: str | None = None, *, summary: str, params: Iterable[Param] = (),
                 category: Category = "color", check: Callable[[dict[str, Any]], str | None] | None = None,
                 description: str | None = None, replace: bool = False) -> Filter:
    """Register a filter defined by a function on channel values; it runs as a lookup table.

    Parameters
    ----------
    fn : callable
        ``fn(v, **params) -> values``. ``v`` is a numpy float array of channel values
        normalised to 0..1 (uint8 value / 255, uint16 value / 65535, float32 as is);
        the filter's declared parameters come as keywords with their resolved values.
        It returns values on the same 0..1 scale, elementwise (an array of ``v``'s
        shape, or anything that broadcasts to it). Results are clipped to 0..1 and,
        for integer images, scaled and rounded half to even. The same function
        applies to every colour channel; alpha passes through untouched.

        For uint8 and uint16, ``fn`` runs once per parameters and dtype on the 256 or
        65536 possible values (float64), and the table runs as ``LUT`` on every backend
        (16-bit tables index on the host where a device lacks them, counted). For
        float32 images it runs on the image itself (float32 values) with numpy: on a
        device backend that is a counted host fallback.
    name : str, optional
        snake_case filter name; ``fn.__name__`` by default (required for a lambda and for
        a callable without ``__name__``, such as a ``functools.partial``).
    summary : str
        One line for ``cvfilters list``.
    params : iterable of Param
        The kernel's own parameters.
    category : str
        Registry category, "color" by default.
    check : callable, optional
        Cross-parameter validation returning a problem description or None.
    description : str, optional
        The formula for ``cvfilters info``; ``fn``'s docstring by default.
    replace : bool
        Allow replacing a registered filter of the same name.

    Returns
    -------
    Filter
        Registered; ``Filter.table(params, spec)`` returns its (N,) table for a uint8
        or uint16 spec (None for float32). It runs through :func:`cvfilters.apply`,
        ``Pipeline([(flt, {})])`` and ``Pipeline.parse("<name>")``.

    Raises
    ------
    ValueError
        At registration for a bad name; when it runs, if ``fn`` returns NaN or inf.

    Examples
    --------
    >>> square = color_kernel(lambda v: v ** 2, "square", summary="Square every channel value.")
    >>> square.table({}, ImageInfo(1, 1, 3, np.dtype(np.uint8)))[128]
    np.uint8(64)
    """
    filter_name = str(name or getattr(fn, "__name__", ""))
    if filter_name in ("", "<lambda>"):  # "": a callable without __name__ (a functools.partial, an object)
        raise ValueError("color_kernel: pass name= for a lambda or a callable without __name__")
    params = tuple(params)
    check_keywords(filter_name, fn, params, positional=1)

    def curves(values: Mapping[str, Any], full: float) -> list[Curve]:
        return [lambda v: fn(v, **values)]

    doc = description or inspect.getdoc(fn) or summary
    return point_filter(filter_name, curves, summary=summary, params=params, description=doc,
                        category=category, check=check, replace=replace)


# ---------------------------------------------------------------- colour matrices
_REVERSE = np.eye(3)[::-1]  # RGB <-> BGR


def color_matrix_of(flt: str | Filter, params: Mapping[str, Any] | None = None) -> np.ndarray:
    """The affine colour matrix a matrix filter applies: ``Filter.matrix`` with parameters resolved.

    Parameters
    ----------
    flt : str or Filter
        ``saturation``, ``hue_shift``, ``color_matrix`` or ``grayscale``.
    params : mapping, optional
        Its parameters (validated and completed with defaults).

    Returns
    -------
    numpy.ndarray
        float64 3 x 4 ``M`` with ``out = M[:, :3] @ [b, g, r] + M[:, 3]`` on values
        normalised to 0..1 (offsets are fractions of full scale), in B, G, R order like
        the images; two steps compose as ``A[:, :3] @ B`` plus ``A``'s offsets. Each
        step clips its result to 0..1 (integers saturate) when steps run one by one, so
        a composed matrix agrees wherever no intermediate value leaves 0..1. Gray
        images go through M as (v, v, v), clipped, then BT.601 luma.

    Raises
    ------
    KeyError
        For a filter that is not a colour matrix.
    """
    flt = registry.get(flt)
    if flt.matrix is None:
        names = ", ".join(f.name for f in registry.filters() if f.matrix is not None)
        raise KeyError(f"{flt.name} is not a colour-matrix filter (matrix filters: {names})")
    return flt.matrix(flt.resolve(params or {}), None)


def run_matrix(ctx: Context, img: Any, matrix: np.ndarray) -> Any:
    """Apply a normalised 3 x 4 BGR colour matrix with ``ctx.backend.transform``.

    Gray images go through it as (v, v, v) and back to one channel by BT.601 luma
    (``cvtColor``); a matrix that keeps every gray (rows summing to 1, no offsets)
    leaves them unchanged without running.
    """
    be, spec = ctx.backend, ctx.info
    if spec.channels == 1:
        keeps_gray = np.allclose(matrix[:, :3].sum(axis=1), 1.0, rtol=0, atol=1e-12) and np.allclose(
            matrix[:, 3], 0.0, rtol=0, atol=1e-12)
        if keeps_gray:
            return img
        colour = run_matrix(ctx.with_info(channels=3), be.merge([img, img, img]), matrix)
        return be.cvt_color(colour, cv2.COLOR_BGR2GRAY)
    scaled = np.array(matrix, dtype=np.float64)
    scaled[:, -1] *= spec.max_value
    out = be.transform(img, scaled)
    return be.clip(out, 0.0, 1.0) if spec.dtype == np.float32 else out


GRAY_POLICIES = ("luma", "color", "unchanged")
_WARNED: set[str] = set()


def matrix_filter(name: str, matrix: Callable[[Mapping[str, Any]], np.ndarray], *, summary: str,
                  params: Iterable[Param] = (), description: str = "",
                  check: Callable[[dict[str, Any]], str | None] | None = None, gray: str = "luma",
                  identity: str = "") -> Filter:
    """Register a colour-matrix filter: ``matrix(params)`` returns the normalised 3 x 4 BGR matrix.

    The filter exposes it as ``Filter.matrix(params, spec)`` (the spec is not needed).
    ``gray`` says what a 1-channel image becomes: ``luma`` (the luma of the colour
    result, one channel), ``color`` (the 3-channel BGR colour result: a tint such as
    sepia turns gray into colour; declared by ``output_info``) or ``unchanged`` (the
    matrix keeps every gray, as saturation and hue do: returned as is, with a warning
    once per process that the filter has no effect on gray). ``identity`` as in
    :func:`~cvfilters.registry.catalog.register`.
    """
    if gray not in GRAY_POLICIES:
        raise ValueError(f"matrix_filter {name!r}: gray must be one of {GRAY_POLICIES}, not {gray!r}")

    def run(ctx: Context, img: Any, **values: Any) -> Any:
        if ctx.info.channels == 1 and gray == "color":
            return run_matrix(ctx.with_info(channels=3), ctx.backend.merge([img, img, img]), matrix(values))
        if ctx.info.channels == 1 and gray == "unchanged" and name not in _WARNED:
            _WARNED.add(name)
            warnings.warn(f"{name}: a gray (1-channel) image has no colour to change; it is returned unchanged",
                          stacklevel=2)
        return run_matrix(ctx, img, matrix(values))

    def to_color(values: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
        return spec.with_(channels=3) if spec.channels == 1 else spec

    return register(name, category="color", summary=summary, params=params, check=check, footprint=POINT,
                    output_info=to_color if gray == "color" else None, matrix=lambda values, spec: matrix(values),
                    description=description or summary, identity=identity)(run)


def _affine(linear: np.ndarray, offset: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0)) -> np.ndarray:
    return np.hstack([np.asarray(linear, dtype=np.float64), np.asarray(offset, dtype=np.float64)[:, None]])


def saturation_matrix(amount: float) -> np.ndarray:
    """``L + amount (I - L)``: every row of ``L`` is the BT.601 luma weights (BGR)."""
    luma = np.tile(LUMA_BGR, (3, 1))
    return _affine(luma + amount * (np.eye(3) - luma))


# NTSC YIQ (RGB order): Y is BT.601 luma, I and Q span the chroma plane.
_YIQ_RGB = np.array([[0.299, 0.587, 0.114], [0.595716, -0.274453, -0.321263], [0.211456, -0.522591, 0.311135]])


def hue_matrix(degrees: float) -> np.ndarray:
    """Rotation of the YIQ chroma plane by ``-degrees`` (luma kept), as a BGR matrix."""
    theta = np.deg2rad(degrees)
    c, s = np.cos(theta), np.sin(theta)
    rotate = np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]])
    rgb = np.linalg.solve(_YIQ_RGB, rotate @ _YIQ_RGB)
    return _affine(_REVERSE @ rgb @ _REVERSE)


def user_matrix(matrix: Sequence[Sequence[float]], order: str) -> np.ndarray:
    """A 3 x 3 or 3 x 4 matrix given in ``order`` ("rgb" or "bgr"), as a normalised BGR 3 x 4 matrix."""
    array = np.asarray(matrix, dtype=np.float64)
    linear, offset = array[:, :3], (array[:, 3] if array.shape[1] == 4 else np.zeros(3))
    if order == "rgb":
        linear, offset = _REVERSE @ linear @ _REVERSE, offset[::-1]
    return _affine(linear, offset)


# ---------------------------------------------------------------- filters: invert
invert = point_filter(
    "invert", lambda p, full: [lambda v: 1.0 - v],
    summary="Negative: full scale minus each channel.",
    native=lambda ctx, img: (ctx.backend.convert(img, np.float32, -1.0, 1.0) if ctx.info.dtype == np.float32
                             else ctx.backend.bitwise_not(img)),
    description="""``out = max - in`` per channel (255, 65535 or 1.0); alpha is kept.

    Runs as ``bitwise_not`` on integers and ``1 - in`` on float32 (exact, on the device
    for every dtype); ``Filter.table`` gives the same as a table. Float32 input is clamped
    to 0..1 first (the float policy), so ``invert`` of 3.0 is 0, not -2.""",
)


# ---------------------------------------------------------------- filters: matrices
def _gray_matrix(params: Mapping[str, Any]) -> np.ndarray:
    return _affine(np.tile(LUMA_BGR, (3, 1)))


@register(footprint=POINT, category="color", summary="Luma (BT.601) grey, kept in the image's channel count.",
          matrix=lambda params, spec: _gray_matrix(params))
def grayscale(ctx: Context, img: Any) -> Any:
    """``Y = 0.299 R + 0.587 G + 0.114 B`` (``cv2.cvtColor``), copied into B, G and R.

    The channel count is kept so the result fits any pipeline; alpha is kept.
    """
    if ctx.info.channels == 1:
        return img
    return ctx.backend.cvt_color(ctx.backend.cvt_color(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)



saturation = matrix_filter(
    "saturation", lambda p: saturation_matrix(p["amount"]),
    summary="Scale colourfulness around the pixel's luma; 0 = gray, 1 = unchanged.",
    # Default: a "vivid" boost (Core Image's CIColorControls saturation runs 0..2 around 1).
    params=[Param("amount", "float", 1.5, min=0.0, max=4.0,
                  help="0 gives gray (BT.601 luma), 1 leaves the image, 2 doubles the saturation")],
    gray="unchanged",
    description="""``out = Y + amount * (in - Y)`` per channel, ``Y`` the BT.601 luma
    (``0.114 B + 0.587 G + 0.299 R``): a colour matrix (``color_matrix_of``) run by
    ``cv2.transform``. Luma is kept; gray (1-channel) images are returned unchanged,
    with a warning once per process.""",
)

hue_shift = matrix_filter(
    "hue_shift", lambda p: hue_matrix(p["degrees"]),
    summary="Rotate hues around the gray axis, keeping luma.",
    # Default: a visible turn (CIHueAdjust's angle runs -pi..pi around 0; GIMP's hue -180..180).
    params=[Param("degrees", "float", 30.0, min=-360.0, max=360.0, unit="deg",
                  help="positive turns red towards yellow and green (the direction of HSV hue); 0 or 360 = "
                       "unchanged")],
    gray="unchanged",
    description="""A rotation by ``-degrees`` of the chroma plane (I, Q) of NTSC YIQ:
    ``out = T^-1 R(-degrees) T in``, T the RGB to YIQ matrix. Luma (BT.601) is kept,
    grays are unchanged, 360 degrees is the identity, and shifts add up. A colour
    matrix (``color_matrix_of``) run by ``cv2.transform``. A gray (1-channel) image has
    no hue: it is returned unchanged, with a warning once per process.""",
)

def _sepia_spec(params: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
    return spec.with_(channels=3) if spec.channels == 1 else spec


@register(
    category="color",
    summary="Sepia tone as ImageMagick's -sepia-tone: brown toning, normalized, contrast raised.",
    params=[Param("strength", "float", 0.8, min=0.0, max=1.0,
                  help="ImageMagick's threshold (-sepia-tone 80% is 0.8): higher is browner and darker"),
            Param("intensity", "float", 1.0, min=0.0, max=1.0,
                  help="mix with the original: 1 = full sepia, 0 = unchanged (Core Image's CISepiaTone intensity)")],
    output_info=_sepia_spec,
)
def sepia(ctx: Context, img: Any, *, strength: float, intensity: float) -> Any:
    """``out = (1 - intensity) * in + intensity * T(in)`` with ``T`` ImageMagick 6's
    ``-sepia-tone`` (:mod:`cvfilters.filters._shared.sepia_tone`; the default 0.8 is
    ``-sepia-tone 80%``, within a level of ``convert``'s output on photos). A gray (1-channel) image is toned as
    (v, v, v) and comes back as 3-channel BGR, as ImageMagick's does. ``T`` depends on a
    pixel's intensity alone: the intensity is taken in 65536 steps, their histogram gives
    the normalize quantiles, and a table of the steps gives the colours. Whole-image (the
    normalize step takes the image's quantiles); host only, counted off the cpu.
    """
    spec = ctx.info

    def compute(pixels: np.ndarray) -> np.ndarray:
        image = pixels.reshape(spec.height, spec.width, spec.channels)
        step = (sepia_tone.STEPS - 1) / spec.max_value
        weights = np.array([[1.0]]) if spec.channels == 1 else sepia_tone.REC709_BGR[None, :]
        steps = cv2.transform(image.astype(np.float32), weights * step)
        steps = np.rint(steps, out=steps).astype(np.uint16)
        counts = cv2.calcHist([steps], [0], None, [sepia_tone.STEPS], [0, sepia_tone.STEPS]).ravel()
        table = sepia_tone.table(strength, *sepia_tone.normalize_range(counts, strength))
        bgr = cv2.merge([image] * 3) if spec.channels == 1 else image
        if intensity == 1.0:
            return host().convert(table, spec.dtype, spec.max_value)[steps]
        toned = table.astype(np.float32)[steps] * spec.max_value
        return cv2.addWeighted(bgr, 1.0 - intensity, toned, intensity, 0.0, dtype=CV_DEPTH[spec.dtype])

    return ctx.backend.on_host(img, compute, "sepia (on host)")


def _check_matrix(params: dict[str, Any]) -> str | None:
    shape = np.shape(params["matrix"])
    if shape not in ((3, 3), (3, 4)):
        return f"matrix must be 3x3 or 3x4 (the last column adds offsets), not {shape[0]}x{shape[1]}"
    return None


color_matrix = matrix_filter(
    "color_matrix", lambda p: user_matrix(p["matrix"], p["order"]),
    summary="Any 3x3 colour matrix, or 3x4 with offsets, applied to every pixel.",
    params=[
        Param("matrix", "kernel", ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
              example=((1.1, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 0.85)),
              help="3x3 [[..],[..],[..]] or 3x4 whose last column is an offset in fractions of full scale; "
                   "rows are output channels, columns input channels, in `order`; or @file"),
        Param("order", "choice", "rgb", choices=("rgb", "bgr"),
              help="channel order of the matrix rows and columns: rgb (as published matrices are) or "
                   "bgr (OpenCV's storage order)"),
    ],
    check=_check_matrix,
    identity="the default matrix is the identity: give `matrix` (e.g. the example, a warm tint)",
    description="""``out = M[:, :3] @ in + M[:, 3] * max`` per pixel, saturated (float32
    clipped to 0..1). With ``order=rgb`` (default) ``in`` and ``out`` are (R, G, B) and
    the matrix is reordered for OpenCV's BGR images; ``order=bgr`` applies it as
    written. Gray images get the luma of the result for (v, v, v). Run by
    ``cv2.transform`` (uint8 coefficients in OpenCV's 1/1024 fixed point).""",
)
