"""cvfilters: image filters on OpenCV, one definition for cpu, OpenCL and CUDA.

>>> import cvfilters as cvf
>>> img = cvf.read("photo.jpg")                                   # doctest: +SKIP
>>> out = cvf.apply(img, "gaussian_blur", sigma=3)                 # doctest: +SKIP
>>> out = cvf.fx.gaussian_blur(img, sigma=3)                       # doctest: +SKIP
>>> pipe = cvf.Pipeline.parse("gaussian_blur:sigma=3 | pixellate:size=8")
>>> cvf.write("out.png", pipe(img))                                # doctest: +SKIP

Arrays are BGR(A), OpenCV's order; ``cvf.set_defaults(channel_order="rgb")`` (or
``channel_order="rgb"`` per call) for RGB arrays. PIL images are RGB.

Names are imported on first use (PEP 562), so ``import cvfilters`` and the command
line start fast; built-in filter families load when one of their filters is looked up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "backend_availability": ("backends", "availability"),
    "Context": ("context", "Context"), "ImageSpec": ("context", "ImageSpec"),
    "ChannelOrder": ("defaults", "ChannelOrder"), "get_defaults": ("defaults", "get_defaults"),
    "set_defaults": ("defaults", "set_defaults"), "fx": ("fx", ""),
    "CvfError": ("errors", "CvfError"), "ImageError": ("errors", "ImageError"),
    "ParameterError": ("errors", "ParameterError"), "UsageError": ("errors", "UsageError"),
    "color_kernel": ("filters.color", "color_kernel"), "warp_kernel": ("filters.warp", "warp_kernel"),
    "histogram": ("histograms", "histogram"),
    "read": ("io", "read"), "read_with_metadata": ("io", "read_with_metadata"), "write": ("io", "write"),
    "apply_masked": ("masks", "apply_masked"),
    "Param": ("params", "Param"), "allow_large": ("params", "allow_large"),
    "Pipeline": ("pipeline", "Pipeline"), "RunReport": ("pipeline", "RunReport"), "apply": ("pipeline", "apply"),
    "quantize_palette": ("quantize", "quantize_palette"),
    "Filter": ("registry", "Filter"), "register": ("registry", "register"),
    "list_filters": ("registry", "filters"), "get_filter": ("registry", "get"),
}

__all__ = [
    "ChannelOrder", "Context", "CvfError", "Filter", "ImageError", "ImageSpec", "Param", "ParameterError", "Pipeline",
    "RunReport", "UsageError", "allow_large", "apply", "apply_masked", "backend_availability", "color_kernel", "fx",
    "get_defaults", "get_filter", "histogram", "list_filters", "quantize_palette", "read", "read_with_metadata",
    "register", "set_defaults", "warp_kernel", "write", "__version__",
]

if TYPE_CHECKING:
    from . import fx
    from .backends import availability as backend_availability
    from .context import Context, ImageSpec
    from .defaults import ChannelOrder, get_defaults, set_defaults
    from .errors import CvfError, ImageError, ParameterError, UsageError
    from .filters.color import color_kernel
    from .filters.warp import warp_kernel
    from .histograms import histogram
    from .io import read, read_with_metadata, write
    from .masks import apply_masked
    from .params import Param, allow_large
    from .pipeline import Pipeline, RunReport, apply
    from .quantize import quantize_palette
    from .registry import Filter, register
    from .registry import filters as list_filters
    from .registry import get as get_filter


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'cvfilters' has no attribute {name!r}") from None
    value = importlib.import_module(f"{__name__}.{module}")
    if attribute:  # else the module itself (cvfilters.fx)
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
