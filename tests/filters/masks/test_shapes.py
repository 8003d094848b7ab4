"""Shape texts (cvfilters.filters.masks.shapes): parsing, its messages, and rendering on pixel centres.

Every mask is checked against an array written out by hand from the geometry convention of
:mod:`cvfilters.filters.masks` (pixel (i, j) is inside when its centre (i + 0.5, j + 0.5) is;
rect half-open; the ellipse's boundary inside) or a numpy formula; a triangle against
scikit-image's polygon fill.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from skimage.draw import polygon as draw_polygon

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from cvfilters.filters.masks.shapes import Shape, is_shape_text, parse_shape


def render(text: str, width: int, height: int) -> np.ndarray:
    mask = parse_shape(text).render(width, height)
    assert mask.dtype == np.float32 and mask.shape == (height, width)
    return mask


def drawn(rows: str) -> np.ndarray:
    """A 0/1 float32 mask from rows of '.' and '#'."""
    return np.array([[c == "#" for c in row] for row in rows.split()], np.float32)


# ---------------------------------------------------------------- rendering
def test_rect_edges_on_pixel_centres_are_half_open() -> None:
    """x in [2.5, 5.5) and y in [1.5, 3.5): the centres on the left and top edges are in, right and bottom out."""
    np.testing.assert_array_equal(render("rect:2.5px,1.5px,3px,2px", 8, 6), drawn("""
        ........
        ..###...
        ..###...
        ........
        ........
        ........"""))


def test_polygon_fractions_are_of_the_width_then_the_height() -> None:
    """On a 40 x 20 image the rectangle polygon (0.25, 0.5)-(0.75, 0.75) is x 10..30 px, y 10..15 px."""
    expected = np.zeros((20, 40), np.float32)
    expected[10:15, 10:30] = 1
    np.testing.assert_array_equal(render("polygon:0.25,0.5,0.75,0.5,0.75,0.75,0.25,0.75", 40, 20), expected)
    triangle = render("polygon:0.1,0.1,0.9,0.3,0.3,0.95", 30, 12)
    reference = np.zeros((12, 30), np.float32)
    # vertices (3, 1.2), (27, 3.6), (9, 11.4) px; skimage's coordinates are pixel centres (X - 0.5)
    rows, cols = draw_polygon(np.array([1.2, 3.6, 11.4]) - 0.5,  # type: ignore[no-untyped-call]
                              np.array([3.0, 27.0, 9.0]) - 0.5, reference.shape)
    reference[rows, cols] = 1
    np.testing.assert_array_equal(triangle, reference)


def test_polygon_edges_on_pixel_centres_follow_the_rect_convention() -> None:
    """Vertices on centre lines: the top and left centres are in, the bottom and right ones out, as for rect."""
    expected = drawn("""
        ........
        .####...
        .####...
        ........
        ........
        ........""")
    np.testing.assert_array_equal(render("polygon:1.5px,1.5px,5.5px,1.5px,5.5px,3.5px,1.5px,3.5px", 8, 6), expected)
    np.testing.assert_array_equal(render("polygon:1.5px,3.5px,5.5px,3.5px,5.5px,1.5px,1.5px,1.5px", 8, 6), expected)
    np.testing.assert_array_equal(render("rect:1.5px,1.5px,4px,2px", 8, 6), expected)


def test_ellipse_boundary_is_inside_and_thin_axes_are_drawn() -> None:
    """Semi-axes of 1 and 2 px round (2.5, 2.5): the four centres on the boundary count."""
    tall = drawn("""
        ..#..
        ..#..
        .###.
        ..#..
        ..#..""")
    np.testing.assert_array_equal(render("ellipse:2.5px,2.5px,1px,2px", 5, 5), tall)
    np.testing.assert_array_equal(render("ellipse:2.5px,2.5px,2px,1px", 5, 5), tall.T)
    np.testing.assert_array_equal(render("circle:2.5px,2.5px,1px", 5, 5), drawn("""
        .....
        ..#..
        .###.
        ..#..
        ....."""))
    np.testing.assert_array_equal(render("ellipse:0.5,0.5,0.1,0.1", 5, 5), drawn("..... ..... ..#.. ..... ....."))


@pytest.mark.parametrize("text", ["ellipse:2.5px,2.5px,0,2px", "ellipse:2.5px,2.5px,2px,0px", "ellipse:0.5,0.5,0,0",
                                  "circle:0.5,0.5,0"])
def test_a_zero_semi_axis_is_an_empty_mask_without_warnings(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's division by zero would warn
        np.testing.assert_array_equal(render(text, 5, 4), np.zeros((4, 5), np.float32))


def test_a_shape_built_with_the_wrong_count_is_refused() -> None:
    """``Shape`` is public: a hand-made one with numbers left over is an error, not a shape that drops them."""
    for kind, count in [("circle", 4), ("rect", 5), ("ellipse", 5)]:
        with pytest.raises(ValueError):
            Shape(kind, ((0.5, False),) * count).render(6, 4)


# ---------------------------------------------------------------- parsing
@pytest.mark.parametrize(("text", "message"), [
    ("square:1,2", "unknown shape 'square' (use rect, ellipse, circle or polygon)"),
    ("rect:1,x,3,4", "rect: 'x' is not a number (fraction, or pixels with 'px')"),
    ("rect:0,0:1,1,1", "rect: '0:1' is not a number (fraction, or pixels with 'px')"),
    ("circle:0.5,0.5,1e999", "circle: '1e999' is not finite"),
    ("rect:1,2,3", "rect takes 4 numbers (rect:x,y,w,h), not 3"),
    ("ellipse:1,2,3,4,5", "ellipse takes 4 numbers (ellipse:cx,cy,rx,ry), not 5"),
    ("circle:1,2", "circle takes 3 numbers (circle:cx,cy,r), not 2"),
    ("polygon:0,0,1,1", "polygon takes 3 or more x,y pairs (polygon:x1,y1,x2,y2,x3,y3,...), not 4 numbers"),
    ("polygon:0,0,1,1,1,0,1", "polygon takes 3 or more x,y pairs (polygon:x1,y1,x2,y2,x3,y3,...), not 7 numbers"),
    ("rect:0,0,-1px,1", "rect: sizes must not be negative (rect:x,y,w,h)"),
    ("ellipse:0.5,0.5,0.2,-0.1", "ellipse: sizes must not be negative (ellipse:cx,cy,rx,ry)"),
    ("circle:0.5,0.5,-2px", "circle: sizes must not be negative (circle:cx,cy,r)"),
])
def test_bad_shapes_say_what_is_wrong_and_the_form(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_shape(text)


@pytest.mark.parametrize(("text", "message"), [
    ("circle:1,2", "circle takes 3 numbers (circle:cx,cy,r), not 2"),
    ("rect:0,0:1,1,1", "rect: '0:1' is not a number (fraction, or pixels with 'px')"),  # a shape, not a file
])
def test_the_masked_filter_passes_the_message_on(text: str, message: str) -> None:
    assert is_shape_text(text)
    expected = f"masked: mask={text!r}: {message}"
    with pytest.raises(ParameterError, match=f"^{re.escape(expected)}$"):
        cvf.get_filter("masked").resolve({"mask": text, "filter": "invert"})


def test_negative_positions_are_allowed() -> None:
    """Only sizes must not be negative: a shape may start left of or above the image."""
    np.testing.assert_array_equal(render("rect:-2px,-1px,4px,3px", 5, 4), drawn("##... ##... ..... ....."))
