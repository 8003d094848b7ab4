"""Masks as first-class inputs: files, shapes, feathering and region-limited filtering.

A mask is a single-channel weight in 0..1 at the image's size: 1 where an effect applies,
0 where the image stays untouched. Where a mask can be given, it can be:

- an **array** (Python only): 2-D of any dtype, scaled by its full-scale value (bool is
  0/1), or H x W x C where 4 channels use the alpha and 3 channels the BT.601 luma;
- an **image file** (``mask=@face.png`` in a spec; a path in Python): a grayscale file, or
  the alpha of an RGBA file (its luma when that alpha is opaque everywhere); a file of
  another size is stretched to the image's size;
- a **shape text**, a string ``kind:numbers``::

      rect:x,y,w,h                 top-left corner, width and height
      ellipse:cx,cy,rx,ry          centre and semi-axes
      circle:cx,cy,r               centre and radius (r: fraction of the shorter side)
      polygon:x1,y1,x2,y2,x3,y3... three or more vertices

  A plain number is a fraction of the image width (x, w, cx, rx and polygon x) or height
  (y, h, cy, ry and polygon y); a number with a ``px`` suffix is in pixels:
  ``rect:10px,10px,0.5,0.5``. In specs, quote shapes: ``mask='ellipse:0.5,0.4,0.2,0.3'``.

Geometry convention (the whole feather family): the image covers [0, W] x [0, H]; pixel
(i, j) has its centre at (i + 0.5, j + 0.5) and belongs to a shape when its centre does
(rect: half-open; polygon: even-odd rule).

Feathering softens a mask's edge by ``radius`` pixels, two ways:

- ``gaussian`` (GIMP's "Feather"): a Gaussian blur with ``sigma = radius / 3.5``, kernel
  ``2 * ceil(3 * sigma) + 1``, replicated border (the mask continues past the image edge);
- ``distance`` (OpenCV's ``detail::FeatherBlender`` weight map): the mask is binarised at
  0.5 and ``w = min(1, k * d)`` with ``d`` the L1 distance transform (``cv2.DIST_L1``, 3x3:
  distance to the nearest pixel outside the mask; the image border does not count as
  outside) and sharpness ``k = 1 / radius``: a ramp inward from the mask's edge that
  reaches 1 at ``radius`` pixels.

:func:`apply_masked` runs any filter or pipeline only inside a (feathered) mask; the
``masked`` filter is its CLI form.
"""

from cvfilters.filters.masks.composite import apply_masked, masked_composite, mix, once, replicate, run_keeping_spec
from cvfilters.filters.masks.feathering import (
    FEATHER_METHODS,
    LARGE_FEATHER,
    MAX_FEATHER,
    RADIUS_TO_SIGMA,
    feather_mask,
    feather_plane,
    gaussian_ksize,
    gaussian_sigma,
    weight_map,
)
from cvfilters.filters.masks.params import MAX_NESTING, feather_param, parse_steps
from cvfilters.filters.masks.shapes import SHAPE_ARITY, Shape, is_shape_text, parse_shape
from cvfilters.filters.masks.sources import MaskSource, file_stamp, load_mask, make_mask, mask_from_array, source_key

__all__ = [
    "FEATHER_METHODS", "LARGE_FEATHER", "MAX_FEATHER", "MAX_NESTING", "RADIUS_TO_SIGMA", "SHAPE_ARITY",
    "MaskSource", "Shape", "apply_masked", "feather_mask", "feather_param",
    "feather_plane", "file_stamp", "gaussian_ksize", "gaussian_sigma", "is_shape_text", "load_mask", "make_mask",
    "mask_from_array", "masked_composite", "mix", "once", "parse_shape", "parse_steps", "replicate",
    "run_keeping_spec", "source_key", "weight_map",
]
