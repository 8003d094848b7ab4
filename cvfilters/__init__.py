"""cvfilters: image filters on OpenCV, one definition for cpu, OpenCL and CUDA.

>>> import cvfilters as cvf
>>> img = cvf.read("photo.jpg")                                   # doctest: +SKIP
>>> out = cvf.apply(img, "gaussian_blur", sigma=3)                 # doctest: +SKIP
>>> out = cvf.fx.gaussian_blur(img, sigma=3)                       # doctest: +SKIP
>>> pipe = cvf.Pipeline.parse("gaussian_blur:sigma=3 | pixellate:size=8")
>>> cvf.write("out.png", pipe(img))                                # doctest: +SKIP

Arrays are BGR(A), OpenCV's order; ``cvf.set_defaults(channel_order="rgb")`` (or
``channel_order="rgb"`` per call) for RGB arrays. PIL images are RGB.
"""

from . import filters as _builtin_filters  # noqa: F401  (registers the built-in filters)
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

__version__ = "0.1.0"

__all__ = [
    "ChannelOrder", "Context", "CvfError", "Filter", "ImageError", "ImageSpec", "Param", "ParameterError", "Pipeline",
    "RunReport", "UsageError", "allow_large", "apply", "apply_masked", "backend_availability", "color_kernel", "fx",
    "get_defaults", "get_filter", "histogram", "list_filters", "quantize_palette", "read", "read_with_metadata",
    "register", "set_defaults", "warp_kernel", "write", "__version__",
]
