"""Built-in filters, one module per family; importing this package registers them."""

from . import blur, color, convolve, feather, stylize, warp

__all__ = ["blur", "color", "convolve", "feather", "stylize", "warp"]
