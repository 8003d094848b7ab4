"""Built-in filters, one module per family; importing this package registers them."""

from . import blur, color, convolve, cube, distort, feather, morphology, stylize, tone, warp

__all__ = ["blur", "color", "convolve", "cube", "distort", "feather", "morphology", "stylize", "tone", "warp"]
