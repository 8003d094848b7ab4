"""cvfilters: image filters on OpenCV, one definition for cpu, OpenCL and CUDA.

>>> import cvfilters as cvf
>>> img = cvf.read("photo.jpg")                                   # doctest: +SKIP
>>> out = cvf.apply(img, "gaussian_blur", sigma=3)                 # doctest: +SKIP
>>> pipe = cvf.Pipeline.parse("gaussian_blur:sigma=3 | pixellate:size=8")
>>> cvf.write("out.png", pipe(img))                                # doctest: +SKIP
"""

from . import filters as _builtin_filters  # noqa: F401  (registers the built-in filters)
from .backends import availability as backend_availability
from .context import Context, ImageSpec
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
    "Context", "CvfError", "Filter", "ImageError", "ImageSpec", "Param", "ParameterError", "Pipeline", "RunReport",
    "UsageError", "allow_large", "apply", "apply_masked", "backend_availability", "color_kernel", "get_filter",
    "histogram", "list_filters", "quantize_palette", "read", "read_with_metadata", "register", "warp_kernel",
    "write", "__version__",
]
