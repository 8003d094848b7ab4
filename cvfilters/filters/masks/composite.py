"""Region-limited filtering: run steps, then mix the result into the image through a cached weight."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.defaults import ChannelOrder
from cvfilters.core.errors import ParameterError
from cvfilters.core.pixels import premultiply, unpremultiply
from cvfilters.core.types import FeatherMethod, Image, ImageT
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.steps import Step, run_steps
from cvfilters.filters.masks.feathering import FEATHER_METHODS, weight_map
from cvfilters.filters.masks.params import feather_param
from cvfilters.filters.masks.shapes import is_shape_text, parse_shape
from cvfilters.filters.masks.sources import MaskSource, source_key
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import whole

_T = TypeVar("_T")


def once(factory: Callable[[], _T]) -> Callable[[], _T]:
    """A zero-argument factory evaluated at most once (several cached planes share one host computation)."""
    memo: list[_T] = []

    def get() -> _T:
        if not memo:
            memo.append(factory())
        return memo[0]

    return get


def replicate(plane: np.ndarray, channels: int) -> np.ndarray:
    """A (H, W) host plane as an image of ``channels`` channels (2-D for one channel)."""
    return plane if channels == 1 else np.ascontiguousarray(np.repeat(plane[:, :, None], channels, axis=2))


def mix(ctx: Context, inside: Image, outside: Image, key: Hashable, weight: Callable[[], np.ndarray]) -> Image:
    """``inside * w + outside * (1 - w)`` on the device, ``w`` a cached (H, W) weight.

    4-channel images mix premultiplied colour and alpha, so a soft edge between a
    transparent and an opaque result has no dark fringe. ``w`` and ``1 - w`` are built
    by ``weight()`` once per ``key`` and kept on the device.
    """
    be, spec = ctx.backend, ctx.info
    colors = 3 if spec.channels == 4 else spec.channels
    w = be.cached((key, "w", colors), lambda: replicate(weight(), colors))
    wc = be.cached((key, "1-w", colors), lambda: replicate((1.0 - weight()).astype(np.float32), colors))
    if spec.channels != 4:
        return be.add_weighted(be.multiply(inside, w, dtype=np.float32), 1.0,
                               be.multiply(outside, wc, dtype=np.float32), 1.0, dtype=spec.dtype)
    w1 = be.cached((key, "w", 1), weight)
    wc1 = be.cached((key, "1-w", 1), lambda: (1.0 - weight()).astype(np.float32))
    color_in, alpha_in = premultiply(be, inside, spec)
    color_out, alpha_out = premultiply(be, outside, spec)
    color = be.add_weighted(be.multiply(color_in, w), 1.0, be.multiply(color_out, wc), 1.0)
    alpha = be.add_weighted(be.multiply(alpha_in, w1), 1.0, be.multiply(alpha_out, wc1), 1.0)
    return unpremultiply(be, color, alpha, spec)


def run_keeping_spec(ctx: Context, image: Image, steps: Sequence[Step], owner: str = "masked") -> Image:
    """Run pipeline steps on a native image; they must keep size, channels and dtype."""
    image, current = run_steps(ctx, image, steps)
    if current != ctx.info:
        raise ParameterError(owner, "filter", f"changes the image from {_describe(ctx.info)} to "
                             f"{_describe(current)}; a masked pipeline must keep size, channels and dtype")
    return image


def _describe(spec: ImageInfo) -> str:
    return f"{spec.width}x{spec.height}x{spec.channels} {spec.dtype}"


def masked_composite(ctx: Context, image: Image, steps: Sequence[Any], key: Hashable,
                     weight: Callable[[], np.ndarray]) -> Image:
    """Run ``steps`` on ``image`` and keep the result only where the cached weight is 1."""
    filtered = run_keeping_spec(ctx, image, steps)
    return mix(ctx, filtered, image, key, once(weight))


def apply_masked(image: ImageT, pipeline: Any, mask: MaskSource, *, feather: float = 0.0,
                 feather_method: FeatherMethod = "gaussian", invert: bool = False, backend: str = "auto",
                 channel_order: ChannelOrder | None = None) -> ImageT:
    """Apply a filter or pipeline only inside a (feathered) mask.

    ``out = filtered * w + image * (1 - w)`` with ``w`` the mask, inverted if asked and
    then feathered; 4-channel images mix premultiplied colour and alpha.

    Parameters
    ----------
    image : numpy.ndarray, cv2.UMat or cv2.cuda.GpuMat
        uint8, uint16 or float32; 1, 3 or 4 channels.
    pipeline : Pipeline, str or sequence
        A :class:`~cvfilters.engine.pipeline.Pipeline`, a spec string (``"gaussian_blur:sigma=8 |
        pixellate"``) or anything ``Pipeline(...)`` takes. It must keep size, channels, dtype.
    mask : array, path or shape text
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
    if is_shape_text(mask):
        try:
            mask = parse_shape(str(mask))
        except ValueError as exc:
            raise ParameterError("apply_masked", "mask", f"={mask!r}: {exc}") from None
    key = ("apply_masked", source_key(mask), float(feather), feather_method, bool(invert))

    def run(ctx: Context, img: Image) -> Image:
        spec = ctx.info
        return masked_composite(ctx, img, pipe.compile(), (key, spec.size),
                                lambda: weight_map(mask, spec.width, spec.height, feather=feather,
                                                   method=feather_method, invert=invert))

    flt = register("masked", category="feather", summary="Apply a pipeline inside a mask.", alpha="all",
                   footprint=whole("the mask is placed on the whole image"), listed=False)(run)
    return Pipeline([Step(flt, {})])(image, backend=backend, channel_order=channel_order)


