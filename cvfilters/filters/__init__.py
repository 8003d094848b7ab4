"""Built-in filters, one module per family; importing this package registers them."""

from . import (
    blend,
    blur,
    cartoon,
    color,
    convolve,
    cube,
    distort,
    feather,
    geometry,
    histogram,
    learned,
    looks,
    morphology,
    photo,
    stylize,
    tone,
    warp,
)

__all__ = ["blend", "blur", "cartoon", "color", "convolve", "cube", "distort", "feather", "geometry", "histogram",
           "learned", "looks", "morphology", "photo", "stylize", "tone", "warp"]
