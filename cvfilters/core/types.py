"""Type aliases shared by every layer: images, dtypes and the named choices of the API.

The lowest layer of :mod:`cvfilters.core`, below every other module of it: it imports only numpy
and os at run time (cv2's types are named as forward references, so listing filters never loads cv2).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

import numpy as np

if TYPE_CHECKING:
    import cv2

Image: TypeAlias = "np.ndarray | cv2.UMat | cv2.cuda.GpuMat"
"""A native image of some backend: a numpy array (cpu), ``cv2.UMat`` (opencl) or ``cv2.cuda.GpuMat`` (cuda)."""
StrPath: TypeAlias = str | os.PathLike[str]
"""A file path as callers give it: a ``str`` or an ``os.PathLike`` such as ``pathlib.Path``."""
DType: TypeAlias = np.dtype[Any] | type[np.generic]
"""A dtype as primitives take it: ``np.float32`` or ``np.dtype(np.float32)``."""
AlphaPolicy = Literal["passthrough", "premultiply", "all"]
BorderName = Literal["reflect101", "replicate", "reflect", "wrap", "constant"]
InterpolationName = Literal["nearest", "linear", "cubic", "lanczos"]
FeatherMethod = Literal["gaussian", "distance"]
Category = Literal[
    "blur", "convolve", "morphology", "color", "tone", "cube", "photo", "warp", "distort",
    "geometry", "stylize", "looks", "learned", "feather", "blend", "histogram", "cartoon",
]
"""A filter's category: the family module of cvfilters.filters that defines it (listing order)."""
ImageT = TypeVar("ImageT", np.ndarray, "cv2.UMat", "cv2.cuda.GpuMat")
"""An image whose type a call keeps: a numpy array in gives a numpy array out, a UMat a UMat."""
