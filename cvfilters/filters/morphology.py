"""Morphology: dilate, erode and the operators built from them, with a shaped structuring element.

Every operator is one row of :data:`OPERATIONS` (OpenCV operation, summary, formula,
default size) run through one function, :func:`morph`, on ``ctx.backend.morphology``.

Border: pixels outside the image never win. OpenCV's default for morphology is
``BORDER_CONSTANT`` with the neutral value (the lowest value for dilation, the highest for
erosion); for the rect, ellipse and cross elements of odd size, which are mirror-symmetric
about their centre, this equals replicating the edge (scipy's ``mode="nearest"``) and the
reflect101 padding of OpenCV's CUDA morphology, so the cuda backend runs them on the
device (even sizes fall back). There is no border parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.types import Image
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import square
from cvfilters.registry.params import Param

SHAPES = {"ellipse": cv2.MORPH_ELLIPSE, "rect": cv2.MORPH_RECT, "cross": cv2.MORPH_CROSS}
MAX_SIZE = 99
MAX_ITERATIONS = 20

# name: (cv2.MORPH_*, summary, formula, default size)
OPERATIONS: dict[str, tuple[int, str, str, int]] = {
    "dilate": (cv2.MORPH_DILATE, "Dilate: the maximum over a shaped neighbourhood (grows bright areas).",
               "``out(p) = max_{q in B} in(p + q)``, applied n times", 5),
    "erode": (cv2.MORPH_ERODE, "Erode: the minimum over a shaped neighbourhood (grows dark areas).",
              "``out(p) = min_{q in B} in(p + q)``, applied n times", 5),
    "open": (cv2.MORPH_OPEN, "Opening: erode then dilate (removes bright specks smaller than the element).",
             "``out = dilate^n(erode^n(in))``", 5),
    "close": (cv2.MORPH_CLOSE, "Closing: dilate then erode (fills dark gaps smaller than the element).",
              "``out = erode^n(dilate^n(in))``", 5),
    "morph_gradient": (cv2.MORPH_GRADIENT, "Morphological gradient: dilation minus erosion (outlines).",
                       "``out = dilate^n(in) - erode^n(in)``", 3),
    "top_hat": (cv2.MORPH_TOPHAT, "Top hat: image minus its opening (bright details smaller than the element).",
                "``out = in - dilate^n(erode^n(in))``", 15),
    "black_hat": (cv2.MORPH_BLACKHAT, "Black hat: closing minus image (dark details smaller than the element).",
                  "``out = erode^n(dilate^n(in)) - in``", 15),
}


def structuring_element(shape: str, size: int) -> np.ndarray:
    """The uint8 ``size`` x ``size`` element (``cv2.getStructuringElement``), anchored at its centre."""
    return cv2.getStructuringElement(SHAPES[shape], (size, size))


def morph(ctx: Context, img: Image, op: int, shape: str, size: int, iterations: int) -> Image:
    """``cv2.morphologyEx(op)`` with the neutral constant border, on the backend."""
    return ctx.backend.morphology(img, op, structuring_element(shape, size), iterations, cv2.BORDER_CONSTANT)


def _params(default_size: int) -> list[Param]:
    return [
        Param("shape", "choice", "ellipse", choices=tuple(SHAPES),
              help="structuring element: ellipse (a disc), rect (a square) or cross (a plus sign)"),
        Param("size", "int", default_size, min=1, max=MAX_SIZE, odd=True, unit="px",
              help="width and height of the structuring element (odd, so its centre is a pixel)"),
        Param("iterations", "int", 1, min=1, max=MAX_ITERATIONS,
              help="times the dilation/erosion is applied (OpenCV: open is n erosions then n dilations)"),
    ]


def _define(name: str, op: int, summary: str, formula: str, default_size: int) -> None:
    def run(ctx: Context, img: Image, *, shape: str, size: int, iterations: int) -> Image:
        return morph(ctx, img, op, shape, size, iterations)

    run.__name__ = name
    run.__doc__ = (
        f"{formula}; ``B`` is the structuring element of ``shape`` and ``size``, ``n`` is\n"
        "``iterations``.\n\n"
        "Per channel (cv2.morphologyEx); out-of-image pixels never win (OpenCV's default\n"
        "neutral constant border, the same as replicating the edge for these elements).\n"
        "With alpha, works on premultiplied colour."
    )
    register(name, category="morphology", summary=summary, params=_params(default_size), alpha="premultiply",
             footprint=square(_reach), unbounded=True)(run)


def _reach(params: Mapping[str, Any], spec: ImageInfo) -> int:
    """Reach of ``iterations`` erosions then as many dilations (the most any operation here chains)."""
    return 2 * (params["size"] // 2) * params["iterations"]


for _name, (_op, _summary, _formula, _size) in OPERATIONS.items():
    _define(_name, _op, _summary, _formula, _size)
