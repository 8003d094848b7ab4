"""Masks as first-class inputs: files, shapes, feathering and region-limited filtering.

A mask is a single-channel weight in 0..1 at the image's size: 1 where an effect applies,
0 where the image stays untouched. Where a mask can be given, it can be:

- an **array** (Python only): 2-D of any dtype, scaled by its full-scale value (bool is
  0/1), or H x W x C where 4 channels use the alpha and 3 channels the BT.601 luma;
- an **image file** (``mask=@face.png`` in a spec; a path in Python): a grayscale file, or
  the alpha of an RGBA file (its luma when that alpha is opaque everywhere); a file of
  another size is stretched to the image's size;
- a **shape spec**, a string ``kind:numbers``::

      rect:x,y,w,h                 top-left corner, width and height
      ellipse:cx,cy,rx,ry          centre and semi-axes
      circle:cx,cy,r               centre and radius (r: fraction of the shorter side)
      polygon:x1,y1,x2,y2,x3,y3... three or more vertices

  A plain number is a fraction of the image width (x, w, cx, rx and polygon x) or height
  (y, h, cy, ry and polygon y); a number with a ``px`` suffix is in pixels:
  ``rect:10px,10px,0.5,0.5``. In specs, quote shapes: ``mask='ellipse:0.5,0.4,0.2,0.3'``.

Geometry convention (the whole feather family): the image covers [0, W] x [0, H]; pixel
(i, j) has its centre at (i + 0.5, j + 0.5) and belongs to a shape when its centre does
(rect: half-open; polygon: even-odd rule).

Feathering softens a mask's edge by ``radius`` pixels, two ways:

- ``gaussian`` (GIMP's "Feather"): a Gaussian blur with ``sigma = radius / 3.5``, kernel
  ``2 * ceil(3 * sigma) + 1``, replicated border (the mask continues past the image edge);
- ``distance`` (OpenCV's ``detail::FeatherBlender`` weight map): the mask is binarised at
  0.5 and ``w = min(1, k * d)`` with ``d`` the L1 distance transform (``cv2.DIST_L1``, 3x3:
  distance to the nearest pixel outside the mask; the image border does not count as
  outside) and sharpness ``k = 1 / radius``: a ramp inward from the mask's edge that
  reaches 1 at ``radius`` pixels.

:func:`apply_masked` runs any filter or pipeline only inside a (feathered) mask; the
``masked`` filter is its CLI form.
"""

from __future__ import annotations

import contextvars
import hashlib
import math
import os
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Union

import cv2
import numpy as np

from .context import Context, ImageSpec, dtype_max
from .defaults import ChannelOrder
from .errors import ParameterError
from .params import Param

FEATHER_METHODS = ("gaussian", "distance")
RADIUS_TO_SIGMA = 3.5  # GIMP: sigma = radius / 3.5 ("picked to visually match the old feather")
SHAPE_ARITY: dict[str, int | None] = {"rect": 4, "ellipse": 4, "circle": 3, "polygon": None}
MAX_FEATHER = 1000.0
# Feather radii above this need allow_large (CLI --allow-large): a Gaussian of sigma r / 3.5 has
# 2 * ceil(3 sigma) + 1 taps per pass, and the device distance ramp runs ceil(r) erosions.
LARGE_FEATHER = 300.0
MAX_NESTING = 4
# Added to alpha before un-premultiplying so fully transparent pixels divide to 0, not NaN.
ALPHA_EPSILON = 1e-12
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(px)?\s*$", re.IGNORECASE)
_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))

MaskSource = Union[np.ndarray, str, os.PathLike, "Shape"]


# ---------------------------------------------------------------------------- shapes
@dataclass(frozen=True)
class Shape:
    """A parsed shape spec: ``kind`` and ``(number, in_pixels)`` values."""

    kind: str
    values: tuple[tuple[float, bool], ...]

    def to_spec(self) -> str:
        """The canonical spec string (parsed back to an equal Shape)."""
        return f"{self.kind}:" + ",".join(_format_number(v) + ("px" if px else "") for v, px in self.values)

    def _resolve(self, width: int, height: int) -> list[float]:
        sizes = {"rect": (width, height, width, height), "ellipse": (width, height, width, height),
                 "circle": (width, height, min(width, height))}.get(self.kind)
        if sizes is None:  # polygon: x, y alternate
            sizes = tuple(width if i % 2 == 0 else height for i in range(len(self.values)))
        return [v if px else v * size for (v, px), size in zip(self.values, sizes, strict=True)]

    def render(self, width: int, height: int) -> np.ndarray:
        """The (height, width) float32 0/1 mask: 1 where a pixel centre is inside."""
        values = self._resolve(width, height)
        x = np.arange(width, dtype=np.float64)[None, :] + 0.5
        y = np.arange(height, dtype=np.float64)[:, None] + 0.5
        if self.kind == "rect":
            x0, y0, w, h = values
            inside = (x >= x0) & (x < x0 + w) & (y >= y0) & (y < y0 + h)
        elif self.kind in ("ellipse", "circle"):
            cx, cy, rx, ry = values if self.kind == "ellipse" else (*values, values[2])
            if rx <= 0 or ry <= 0:
                return np.zeros((height, width), np.float32)
            inside = ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1.0
        else:
            return _polygon(np.asarray(values, np.float64).reshape(-1, 2), width, height)
        return inside.astype(np.float32)


def _polygon(points: np.ndarray, width: int, height: int) -> np.ndarray:
    """Even-odd scanline fill: 1 where a pixel centre is inside the polygon."""
    mask = np.zeros((height, width), np.float32)
    x0, y0 = points[:, 0], points[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    centres = np.arange(width, dtype=np.float64) + 0.5
    for row in range(height):
        yc = row + 0.5
        crossing = (y0 <= yc) != (y1 <= yc)  # edges that cross this row's centre line (half-open)
        if not crossing.any():
            continue
        xa, ya, xb, yb = x0[crossing], y0[crossing], x1[crossing], y1[crossing]
        xs = np.sort(xa + (yc - ya) * (xb - xa) / (yb - ya))
        mask[row] = np.searchsorted(xs, centres, side="right") % 2
    return mask


def is_shape_spec(text: Any) -> bool:
    """True for a string that names a shape (``rect:``, ``ellipse:``, ``circle:``, ``polygon:``)."""
    if not isinstance(text, str) or ":" not in text:
        return False
    return text.split(":", 1)[0].strip().lower() in SHAPE_ARITY


def parse_shape(text: str) -> Shape:
    """Parse a shape spec such as ``ellipse:0.5,0.4,0.2,60px``.

    Raises
    ------
    ValueError
        Naming what is wrong and the allowed form.
    """
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in SHAPE_ARITY:
        raise ValueError(f"unknown shape {kind!r} (use rect, ellipse, circle or polygon)")
    items = rest.split(",")
    values = []
    for item in items:
        match = _NUMBER.match(item)
        if not match:
            raise ValueError(f"{kind}: {item.strip()!r} is not a number (fraction, or pixels with 'px')")
        number = float(match.group(1))
        if not math.isfinite(number):
            raise ValueError(f"{kind}: {item.strip()!r} is not finite")
        values.append((number, bool(match.group(2))))
    arity = SHAPE_ARITY[kind]
    forms = {"rect": "rect:x,y,w,h", "ellipse": "ellipse:cx,cy,rx,ry", "circle": "circle:cx,cy,r",
             "polygon": "polygon:x1,y1,x2,y2,x3,y3,..."}
    if arity is not None and len(values) != arity:
        raise ValueError(f"{kind} takes {arity} numbers ({forms[kind]}), not {len(values)}")
    if arity is None and (len(values) < 6 or len(values) % 2):
        raise ValueError(f"polygon takes 3 or more x,y pairs ({forms[kind]}), not {len(values)} numbers")
    sizes = {"rect": (2, 3), "ellipse": (2, 3), "circle": (2,)}.get(kind, ())
    if any(values[i][0] < 0 for i in sizes):
        raise ValueError(f"{kind}: sizes must not be negative ({forms[kind]})")
    return Shape(kind, tuple(values))


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


# ---------------------------------------------------------------------------- sources
def load_mask(path: str | os.PathLike[str], size: tuple[int, int] | None = None) -> np.ndarray:
    """Read a mask file as a float32 0..1 (height, width) array.

    Grayscale files are used as they are; RGBA files give their alpha (their luma when
    the alpha is opaque everywhere); RGB files their BT.601 luma. ``size`` is
    ``(width, height)``: a file of another size is stretched to it.
    """
    from . import io

    return mask_from_array(io.read(path), size)


def mask_from_array(array: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
    """A float32 0..1 (height, width) mask from an array (see the module docstring)."""
    array = np.asarray(array)
    if array.dtype == bool:
        array = array.astype(np.float32)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (3, 4)) or array.size == 0:
        raise ValueError(f"a mask must be H x W, H x W x 3 or H x W x 4, not shape {array.shape}")
    full = dtype_max(array.dtype) if array.dtype.kind in "uif" else 1.0
    values = array.astype(np.float32) / np.float32(full)
    if values.ndim == 3:
        if values.shape[2] == 4 and not np.all(values[:, :, 3] >= 1.0):
            values = values[:, :, 3]
        else:
            values = cv2.cvtColor(np.ascontiguousarray(values[:, :, :3]), cv2.COLOR_BGR2GRAY)
    values = np.clip(values, 0.0, 1.0).astype(np.float32)
    if size is not None and (values.shape[1], values.shape[0]) != tuple(size):
        shrink = size[0] <= values.shape[1] and size[1] <= values.shape[0]
        values = cv2.resize(values, tuple(size), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        values = np.clip(values, 0.0, 1.0)
    return np.ascontiguousarray(values, dtype=np.float32)


def make_mask(source: MaskSource, width: int, height: int, *, invert: bool = False) -> np.ndarray:
    """The (height, width) float32 0..1 mask of an array, file path, shape spec or :class:`Shape`."""
    if isinstance(source, Shape):
        mask = source.render(width, height)
    elif isinstance(source, np.ndarray):
        mask = mask_from_array(source, (width, height))
    elif is_shape_spec(source):
        mask = parse_shape(str(source)).render(width, height)
    elif isinstance(source, (str, os.PathLike)):
        mask = load_mask(source, (width, height))
    else:
        raise TypeError(f"a mask is an array, a file path or a shape spec, not {type(source).__name__}")
    return (1.0 - mask).astype(np.float32) if invert else mask


# ---------------------------------------------------------------------------- feathering
def gaussian_sigma(radius: float) -> float:
    """GIMP's feather: ``sigma = radius / 3.5``."""
    return radius / RADIUS_TO_SIGMA


def gaussian_ksize(sigma: float) -> int:
    """The odd kernel side used for a feather of ``sigma``: ``2 * ceil(3 * sigma) + 1``."""
    return 2 * math.ceil(3 * sigma) + 1


def feather_mask(mask: np.ndarray, radius: float, *, method: str = "gaussian") -> np.ndarray:
    """Soften a mask's edge by ``radius`` pixels (see the module docstring for both methods).

    Parameters
    ----------
    mask : numpy.ndarray
        2-D mask (or any array :func:`mask_from_array` takes).
    radius : float
        Feather radius in pixels; 0 returns the mask (binarised for ``distance``).
    method : {"gaussian", "distance"}
        GIMP-style Gaussian (sigma = radius / 3.5) or FeatherBlender's distance ramp
        ``min(1, distanceTransform / radius)``.

    Returns
    -------
    numpy.ndarray
        float32 (height, width) in 0..1.
    """
    if method not in FEATHER_METHODS:
        raise ValueError(f"method must be one of {', '.join(FEATHER_METHODS)}, not {method!r}")
    if not math.isfinite(radius) or radius < 0:
        raise ValueError(f"radius must be a finite number >= 0, not {radius!r}")
    values = mask_from_array(mask)
    if method == "gaussian":
        if radius == 0:
            return values
        sigma = gaussian_sigma(radius)
        k = gaussian_ksize(sigma)
        return cv2.GaussianBlur(values, (k, k), sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)
    binary = (values > 0.5).astype(np.uint8)
    if radius == 0:
        return binary.astype(np.float32)
    distance = cv2.distanceTransform(binary, cv2.DIST_L1, 3)
    return np.minimum(distance * np.float32(1.0 / radius), np.float32(1.0)).astype(np.float32)


def feather_plane(be: Any, plane: Any, radius: float, method: str) -> Any:
    """:func:`feather_mask` on the device: a float32 one-channel native image of ``be``.

    ``gaussian`` is the backend's Gaussian. ``distance`` uses ``cv2.distanceTransform``
    for host arrays and, on a device, the identity ``min(d, n) = sum_{i<n} erode^i(B)``
    (``B`` the binary mask, erosions by the 3x3 cross with the image border counting as
    inside): ``n = ceil(radius)`` device erosions give the same L1 ramp without a download.
    """
    if method == "gaussian":
        if radius == 0:
            return plane
        sigma = gaussian_sigma(radius)
        k = gaussian_ksize(sigma)
        return be.gaussian(plane, (k, k), sigma, cv2.BORDER_REPLICATE)
    binary = be.threshold(plane, 0.5, 1.0, cv2.THRESH_BINARY)
    if radius == 0:
        return binary
    if isinstance(binary, np.ndarray):
        return feather_mask(binary, radius, method="distance")
    current = be.convert(binary, np.uint8)
    total = binary
    for _ in range(math.ceil(radius) - 1):
        current = be.morphology(current, cv2.MORPH_ERODE, _CROSS, 1, cv2.BORDER_CONSTANT)
        total = be.add_weighted(total, 1.0, be.convert(current, np.float32), 1.0)
    return be.threshold(be.convert(total, np.float32, 1.0 / radius), 1.0, 1.0, cv2.THRESH_TRUNC)


def weight_map(source: MaskSource, width: int, height: int, *, feather: float = 0.0,
               method: str = "gaussian", invert: bool = False) -> np.ndarray:
    """A mask at ``(width, height)``, inverted if asked, then feathered by ``feather`` pixels."""
    mask = make_mask(source, width, height, invert=invert)
    return feather_mask(mask, feather, method=method) if feather > 0 else mask


def source_key(source: MaskSource) -> Hashable:
    """A cache key that changes when the mask source changes (file: path, mtime and size)."""
    if isinstance(source, Shape):
        return ("shape", source.to_spec())
    if isinstance(source, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(source).tobytes(), digest_size=16).hexdigest()
        return ("array", source.shape, source.dtype.str, digest)
    if is_shape_spec(source):
        return ("shape", parse_shape(str(source)).to_spec())
    return ("file", *file_stamp(source))


def file_stamp(path: str | os.PathLike[str]) -> tuple[str, int, int]:
    """``(absolute path, mtime_ns, size)``, or zeros for a file that cannot be read."""
    full = os.path.abspath(os.fspath(path))
    try:
        stat = os.stat(full)
    except OSError:
        return (full, 0, 0)
    return (full, stat.st_mtime_ns, stat.st_size)


# ---------------------------------------------------------------------------- device helpers
def once(factory: Callable[[], Any]) -> Callable[[], Any]:
    """A zero-argument factory evaluated at most once (several cached planes share one host computation)."""
    memo: list[Any] = []

    def get() -> Any:
        if not memo:
            memo.append(factory())
        return memo[0]

    return get


def replicate(plane: np.ndarray, channels: int) -> np.ndarray:
    """A (H, W) host plane as an image of ``channels`` channels (2-D for one channel)."""
    return plane if channels == 1 else np.ascontiguousarray(np.repeat(plane[:, :, None], channels, axis=2))


def premultiplied(be: Any, image: Any, spec: ImageSpec) -> tuple[Any, Any]:
    """``(colour * alpha, alpha)`` of a 4-channel native image, float32 0..1."""
    *color, alpha = be.split(be.convert(image, np.float32, 1.0 / spec.max_value))
    return be.multiply(be.merge(color), be.merge([alpha] * 3)), alpha


def from_premultiplied(be: Any, color: Any, alpha: Any, spec: ImageSpec) -> Any:
    """The ``spec`` image of premultiplied float32 colour and alpha (both clipped to 0..1)."""
    alpha = be.clip(alpha, 0.0, 1.0)
    divisor = be.convert(be.merge([alpha] * 3), np.float32, 1.0, ALPHA_EPSILON)
    straight = be.clip(be.divide(color, divisor), 0.0, 1.0)
    return be.convert(be.merge([*be.split(straight), alpha]), spec.dtype, spec.max_value)


def mix(ctx: Context, inside: Any, outside: Any, key: Hashable, weight: Callable[[], np.ndarray]) -> Any:
    """``inside * w + outside * (1 - w)`` on the device, ``w`` a cached (H, W) weight.

    4-channel images mix premultiplied colour and alpha, so a soft edge between a
    transparent and an opaque result has no dark fringe. ``w`` and ``1 - w`` are built
    by ``weight()`` once per ``key`` and kept on the device.
    """
    be, spec = ctx.be, ctx.spec
    colors = 3 if spec.channels == 4 else spec.channels
    w = be.cached((key, "w", colors), lambda: replicate(weight(), colors))
    wc = be.cached((key, "1-w", colors), lambda: replicate((1.0 - weight()).astype(np.float32), colors))
    if spec.channels != 4:
        return be.add_weighted(be.multiply(inside, w, dtype=np.float32), 1.0,
                               be.multiply(outside, wc, dtype=np.float32), 1.0, dtype=spec.dtype)
    w1 = be.cached((key, "w", 1), weight)
    wc1 = be.cached((key, "1-w", 1), lambda: (1.0 - weight()).astype(np.float32))
    color_in, alpha_in = premultiplied(be, inside, spec)
    color_out, alpha_out = premultiplied(be, outside, spec)
    color = be.add_weighted(be.multiply(color_in, w), 1.0, be.multiply(color_out, wc), 1.0)
    alpha = be.add_weighted(be.multiply(alpha_in, w1), 1.0, be.multiply(alpha_out, wc1), 1.0)
    return from_premultiplied(be, color, alpha, spec)


def run_steps(ctx: Context, image: Any, steps: Sequence[Any], owner: str = "masked") -> Any:
    """Run pipeline steps on a native image; they must keep size, channels and dtype."""
    current = ctx.spec
    for step in steps:
        image = step.filter.run(Context(ctx.be, current), image, step.params)
        current = step.filter.result_spec(step.params, current)
    if current != ctx.spec:
        raise ParameterError(owner, "filter", f"changes the image from {_describe(ctx.spec)} to "
                             f"{_describe(current)}; a masked pipeline must keep size, channels and dtype")
    return image


def _describe(spec: ImageSpec) -> str:
    return f"{spec.width}x{spec.height}x{spec.channels} {spec.dtype}"


def masked_composite(ctx: Context, image: Any, steps: Sequence[Any], key: Hashable,
                     weight: Callable[[], np.ndarray]) -> Any:
    """Run ``steps`` on ``image`` and keep the result only where the cached weight is 1."""
    filtered = run_steps(ctx, image, steps)
    return mix(ctx, filtered, image, key, once(weight))


# ---------------------------------------------------------------------------- apply_masked
def apply_masked(image: Any, pipeline: Any, mask: MaskSource, *, feather: float = 0.0,
                 feather_method: str = "gaussian", invert: bool = False, backend: str = "auto",
                 channel_order: ChannelOrder | None = None) -> Any:
    """Apply a filter or pipeline only inside a (feathered) mask.

    ``out = filtered * w + image * (1 - w)`` with ``w`` the mask, inverted if asked and
    then feathered; 4-channel images mix premultiplied colour and alpha.

    Parameters
    ----------
    image : numpy.ndarray, cv2.UMat or cv2.cuda.GpuMat
        uint8, uint16 or float32; 1, 3 or 4 channels.
    pipeline : Pipeline, str or sequence
        A :class:`~cvfilters.pipeline.Pipeline`, a spec string (``"gaussian_blur:sigma=8 |
        pixellate"``) or anything ``Pipeline(...)`` takes. It must keep size, channels, dtype.
    mask : array, path or shape spec
        See the module docstring: an array, an image file, or ``"ellipse:0.5,0.4,0.2,0.3"``.
    feather : float
        Feather radius in pixels (0: the mask's own edge).
    feather_method : {"gaussian", "distance"}
        How the edge is feathered (see :func:`feather_mask`).
    invert : bool
        Apply the filter outside the mask instead.
    backend : {"auto", "cpu", "opencl", "cuda"}
    channel_order : {"bgr", "rgb"}, optional
        The order of ``image``'s colour channels (see :func:`cvfilters.apply`).

    Returns
    -------
    The image's type, shape and dtype.

    Examples
    --------
    >>> out = apply_masked(img, "gaussian_blur:sigma=8", "ellipse:0.5,0.4,0.2,0.3", feather=20)  # doctest: +SKIP
    """
    from .pipeline import Pipeline, Step
    from .registry import Filter

    if feather_method not in FEATHER_METHODS:
        raise ParameterError("apply_masked", "feather_method",
                             f"={feather_method!r} is not one of {', '.join(FEATHER_METHODS)}")
    feather = feather_param().coerce(feather, "apply_masked")
    if isinstance(pipeline, Pipeline):
        pipe = pipeline
    elif isinstance(pipeline, str):
        pipe = Pipeline.parse(pipeline)
    else:
        pipe = Pipeline(pipeline)
    if is_shape_spec(mask):
        try:
            mask = parse_shape(str(mask))
        except ValueError as exc:
            raise ParameterError("apply_masked", "mask", f"={mask!r}: {exc}") from None
    key = ("apply_masked", source_key(mask), float(feather), feather_method, bool(invert))

    def run(ctx: Context, img: Any) -> Any:
        spec = ctx.spec
        return masked_composite(ctx, img, pipe.compile(), (key, spec.size),
                                lambda: weight_map(mask, spec.width, spec.height, feather=feather,
                                                   method=feather_method, invert=invert))

    flt = Filter("masked", "feather", "Apply a pipeline inside a mask.", (), run, "all")
    return Pipeline([Step(flt, {})])(image, backend=backend, channel_order=channel_order)


# ---------------------------------------------------------------------------- parameters
def feather_param(name: str = "feather", default: float = 0.0, help: str = "") -> Param:
    """The feather radius parameter (px, [0, 1000], above 300 only with ``allow_large``)."""
    return Param(name, "float", default, min=0.0, max=MAX_FEATHER, unit="px", large=LARGE_FEATHER,
                 help=help or "feather radius of the mask's edge (0: the mask as it is)")


_NESTING: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("cvfilters_masked_nesting", default=())


class FileParam(Param):
    """A ``path`` parameter whose file must exist when the parameter is resolved.

    ``@file`` values are relative to the pipeline file's folder, like every ``@file``
    (and, from a pipeline file, must stay inside it); a missing file is a usage error
    before anything runs.
    """

    shapes = False

    def coerce(self, value: Any, filter_name: str, *, base_dir: str | os.PathLike[str] | None = None,
               confine: bool = False) -> Any:
        if isinstance(value, np.ndarray) and not self.image:
            hint = "cvfilters.apply_masked(image, pipeline, mask)" if self.shapes else "a file"
            raise ParameterError(filter_name, self.name, f"takes a file path, not an array; use {hint}")
        path = super().coerce(value, filter_name, base_dir=base_dir, confine=confine)
        if isinstance(path, str) and not os.path.isfile(path):
            hint = " or a shape such as 'ellipse:0.5,0.5,0.3,0.4'" if self.shapes else ""
            raise ParameterError(filter_name, self.name, f"={value}: no such file (give @FILE{hint})")
        return path


class MaskParam(FileParam):
    """A mask parameter: a shape spec (kept in canonical form) or an existing image file."""

    shapes = True

    def coerce(self, value: Any, filter_name: str, *, base_dir: str | os.PathLike[str] | None = None,
               confine: bool = False) -> Any:
        if isinstance(value, str) and is_shape_spec(value):
            try:
                return parse_shape(value).to_spec()
            except ValueError as exc:
                raise ParameterError(filter_name, self.name, f"={value!r}: {exc}") from None
        return super().coerce(value, filter_name, base_dir=base_dir, confine=confine)


class PipelineParam(Param):
    """A ``str`` parameter holding a sub-pipeline: a spec string, a Pipeline, or ``@steps.yaml``.

    The value is parsed when the parameter is resolved, so a bad nested step is a usage
    error before anything runs. A spec is kept as its canonical one-line form, in which
    nested ``@file`` values are already resolved against the right folder (and, inside a
    pipeline file, confined to it); ``@file`` is kept as ``@path`` (joined to the
    pipeline file's folder, like every ``@file``) and the file is read again when the
    step runs. Files may nest :data:`MAX_NESTING` levels deep and a file that includes
    itself is refused.
    """

    def coerce(self, value: Any, filter_name: str, *, base_dir: str | os.PathLike[str] | None = None,
               confine: bool = False) -> Any:
        from .errors import UsageError
        from .pipeline import Pipeline

        if value is None:
            return super().coerce(value, filter_name)
        chain = _NESTING.get()
        if len(chain) >= MAX_NESTING:
            raise ParameterError(filter_name, self.name, f"nests {filter_name} deeper than {MAX_NESTING} levels")
        token = None
        try:
            if isinstance(value, Pipeline):
                pipe, canonical = value, value.to_spec()
            elif isinstance(value, str) and value.strip().startswith("@"):
                path = Param(self.name, "path")._from_file(value.strip()[1:], filter_name, base_dir, confine)
                label = os.path.abspath(path)
                if label in chain:
                    raise ParameterError(filter_name, self.name, f"={value}: the pipeline file includes itself")
                token = _NESTING.set((*chain, label))
                pipe, canonical = Pipeline.load(path), "@" + os.fspath(path)
            elif isinstance(value, str):
                token = _NESTING.set((*chain, "<spec>"))
                pipe = Pipeline.parse(value, base_dir=base_dir, confine=confine)
                canonical = pipe.to_spec()
                # Spec values are quoted with ' or " and have no escapes: one holding both cannot be written back.
                if ("'" in canonical and '"' in canonical) or Pipeline.parse(canonical) != pipe:
                    raise ParameterError(filter_name, self.name, "is nested too deeply to be written back as one "
                                         "spec; put the inner steps in a pipeline file (@steps.yaml)")
            else:
                raise ParameterError(filter_name, self.name, f"={value!r} must be a filter spec string")
        except ParameterError as exc:
            if exc.filter_name == filter_name and exc.param == self.name:
                raise
            raise ParameterError(filter_name, self.name, f"has a bad step: {exc}") from None
        except UsageError as exc:
            raise ParameterError(filter_name, self.name, f"has a bad step: {exc}") from None
        finally:
            if token is not None:
                _NESTING.reset(token)
        if not pipe.steps:
            raise ParameterError(filter_name, self.name, "is empty; give at least one filter step")
        return canonical


def parse_steps(spec: str) -> list[Any]:
    """The steps to run for a canonical sub-pipeline value (a spec, or ``@path`` of a pipeline file).

    Parsed once per spec (and file version), fused like any pipeline, and cached.
    """
    key: Hashable = (spec, file_stamp(spec[1:])) if spec.startswith("@") else spec
    steps = _STEPS.get(key)
    if steps is None:
        from .pipeline import Pipeline

        pipe = Pipeline.load(spec[1:]) if spec.startswith("@") else Pipeline.parse(spec)
        steps = pipe.compile()
        if len(_STEPS) > 256:
            _STEPS.clear()
        _STEPS[key] = steps
    return steps


_STEPS: dict[Hashable, list[Any]] = {}
