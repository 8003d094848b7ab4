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

# Every public name, once: public name -> (module, attribute); ``__all__`` is derived from it.
_EXPORTS: dict[str, tuple[str, str]] = {
    "backend_availability": ("backends", "availability"),
    "Context": ("core.context", "Context"), "ImageInfo": ("core.context", "ImageInfo"),
    "ChannelOrder": ("core.defaults", "ChannelOrder"), "get_defaults": ("core.defaults", "get_defaults"),
    "set_defaults": ("core.defaults", "set_defaults"), "fx": ("fx", ""),
    "CvfError": ("core.errors", "CvfError"), "ImageError": ("core.errors", "ImageError"),
    "ParameterError": ("core.errors", "ParameterError"), "UsageError": ("core.errors", "UsageError"),
    "color_kernel": ("filters.color", "color_kernel"), "warp_kernel": ("filters.warp", "warp_kernel"),
    "histogram": ("filters._shared.histograms", "histogram"),
    "read": ("io.reading", "read"), "read_with_metadata": ("io.reading", "read_with_metadata"),
    "write": ("io.writing", "write"),
    "apply_masked": ("filters.masks", "apply_masked"),
    "Param": ("registry.params", "Param"), "allow_large": ("registry.params", "allow_large"),
    "Pipeline": ("engine.pipeline", "Pipeline"), "RunReport": ("engine.running", "RunReport"),
    "apply": ("engine.apply", "apply"), "process_tiled": ("engine.tiles", "process"),
    "stream_file": ("run.streaming", "stream_file"),
    "quantize_palette": ("filters._shared.quantize", "quantize_palette"),
    "Filter": ("registry.catalog", "Filter"), "register": ("registry.catalog", "register"),
    "list_filters": ("registry.catalog", "filters"), "get_filter": ("registry.catalog", "get"),
}

__all__ = [*_EXPORTS, "__version__"]

# The same names for type checkers, which cannot read the table above; a test checks that these
# imports and _EXPORTS name the same objects (tests/api/test_public_names.py).
if TYPE_CHECKING:  # `import x as x` and assignments: explicit re-exports, as type checkers require
    from cvfilters import backends as _backends
    from cvfilters import fx as fx
    from cvfilters.core.context import Context as Context
    from cvfilters.core.context import ImageInfo as ImageInfo
    from cvfilters.core.defaults import ChannelOrder as ChannelOrder
    from cvfilters.core.defaults import get_defaults as get_defaults
    from cvfilters.core.defaults import set_defaults as set_defaults
    from cvfilters.core.errors import CvfError as CvfError
    from cvfilters.core.errors import ImageError as ImageError
    from cvfilters.core.errors import ParameterError as ParameterError
    from cvfilters.core.errors import UsageError as UsageError
    from cvfilters.engine import tiles as _tiles
    from cvfilters.engine.apply import apply as apply
    from cvfilters.engine.pipeline import Pipeline as Pipeline
    from cvfilters.engine.running import RunReport as RunReport
    from cvfilters.filters._shared.histograms import histogram as histogram
    from cvfilters.filters._shared.quantize import quantize_palette as quantize_palette
    from cvfilters.filters.color import color_kernel as color_kernel
    from cvfilters.filters.masks import apply_masked as apply_masked
    from cvfilters.filters.warp import warp_kernel as warp_kernel
    from cvfilters.io.reading import read as read
    from cvfilters.io.reading import read_with_metadata as read_with_metadata
    from cvfilters.io.writing import write as write
    from cvfilters.registry import catalog as _catalog
    from cvfilters.registry.catalog import Filter as Filter
    from cvfilters.registry.catalog import register as register
    from cvfilters.registry.params import Param as Param
    from cvfilters.registry.params import allow_large as allow_large
    from cvfilters.run.streaming import stream_file as stream_file

    backend_availability = _backends.availability
    list_filters = _catalog.filters
    process_tiled = _tiles.process
    get_filter = _catalog.get

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
