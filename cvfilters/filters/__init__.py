"""Built-in filters, one module per family; importing this package registers them."""

from . import (
    blur,
    cartoon,
    color,
    convolve,
    cube,
    distort,
    feather,
    histogram,
    morphology,
    stylize,
    tone,
    warp,
)

__all__ = ["blur", "cartoon", "color", "convolve", "cube", "distort", "feather", "histogram", "morphology",
           "stylize", "tone", "warp"]
