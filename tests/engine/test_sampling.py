"""Sampling helpers (cvfilters.engine.sampling): the shared warp parameters, pixel-centre coordinates
and the source rectangle a remap reads.

The parameter builders run when the filters register (at import), so they are called here
directly and compared with Params written out by hand. The expected coordinates are numpy
formulas; the expected rectangles are worked out by hand in the comments (``floor(x) - before``
to ``floor(x) + after + 1``, then the border rule, clipped to the image, low rounded down to even).
"""

from __future__ import annotations

import numpy as np
import pytest

from cvfilters.core.context import ImageInfo
from cvfilters.engine.sampling import center_coords, fill_param, interpolation_param, reached, warp_border_param
from cvfilters.registry.params import Param


def test_interpolation_param_is_the_documented_choice() -> None:
    """Name, kind, default ``linear``, the four kernels in order, and the help sentence."""
    want = Param("interpolation", "choice", "linear", choices=("nearest", "linear", "cubic", "lanczos"),
                 help="how a source position between pixel centres is sampled: nearest (exact pixels, blocky), "
                      "linear (bilinear, 2x2), cubic (bicubic, 4x4), lanczos (Lanczos-4, 8x8)")
    assert interpolation_param() == want
    assert interpolation_param("nearest").default == "nearest"


def test_warp_border_param_is_the_documented_choice() -> None:
    """Default ``constant``, the five borders, and the border help without its ``default`` mark."""
    want = Param("border", "choice", "constant", choices=("reflect101", "replicate", "reflect", "wrap", "constant"),
                 help="source positions outside the image: reflect101 (gfedcb|abcdefgh|gfedcba), replicate "
                      "(aaaaaa|abcdefgh|hhhhhhh, Core Image's clamp-to-extent), reflect (fedcba|abcdefgh|hgfedcb), "
                      "wrap (cdefgh|abcdefgh|abcdefg), constant (000000|abcdefgh|0000000); constant uses `fill`")
    assert warp_border_param() == want
    assert warp_border_param("wrap").default == "wrap"


def test_fill_param_is_a_colour_in_fractions() -> None:
    """Default transparent black ``(0.0,)``, range 0..1, its unit and help."""
    want = Param("fill", "color", (0.0,), min=0.0, max=1.0, unit="fraction of full scale",
                 help="colour of border=constant (black, #ff8000, rgb(...), [r,g,b]); one value is every channel, "
                      "alpha included: [0] is transparent black on images with alpha")
    assert fill_param() == want
    assert fill_param((1.0, 0.5, 0.0)).default == (1.0, 0.5, 0.0)


def test_center_coords_put_pixel_i_at_i_plus_half() -> None:
    """A 3 x 2 image covers [0, 3] x [0, 2]: centres 0.5, 1.5, 2.5 across and 0.5, 1.5 down."""
    x, y = center_coords(3, 2)
    assert x.shape == (1, 3) and y.shape == (2, 1)
    assert x.dtype == np.float64 and y.dtype == np.float64
    np.testing.assert_array_equal(x, np.array([[0.5, 1.5, 2.5]]))
    np.testing.assert_array_equal(y, np.array([[0.5], [1.5]]))


def _rect(xs: list[float], border: str, interpolation: str, size: int = 8) -> tuple[int, int]:
    """The x range ``reached`` gives for one row of coordinates on a 1 x ``size`` image (y stays at 0)."""
    map_x = np.array([xs], dtype=np.float32)
    map_y = np.zeros_like(map_x)
    rect = reached(map_x, map_y, ImageInfo(1, size, 1, np.dtype(np.uint8)), border, interpolation)  # type: ignore[arg-type]
    assert rect[:2] == (0, 1)
    return rect[2], rect[3]


@pytest.mark.parametrize(("xs", "want"), [
    ([2.5, 3.5], (2, 5)),              # linear reads floor(x) .. floor(x) + 1: 2 .. 4
    ([-100.0, 2.0], (2, 4)),           # at or beyond -size (8) a coordinate is "far outside": ignored
    ([-8.0, 2.0], (2, 4)),
    ([2.0, 16.0], (2, 4)),             # at or beyond 2 * size: ignored too
    ([2.0, 20.0], (2, 4)),
    ([2.0, np.inf, -np.inf, np.nan], (2, 4)),  # non-finite: ignored
    ([-3.0, 2.0], (0, 4)),             # constant: the part inside the image, 0 .. 3
    ([np.nan, -50.0], (0, 1)),         # nothing near: one pixel
])
def test_reached_constant_linear(xs: list[float], want: tuple[int, int]) -> None:
    """Constant border: only the pixels the coordinates touch, clipped to the image."""
    assert _rect(xs, "constant", "linear") == want


def test_reached_widens_by_the_kernel_support() -> None:
    """Cubic reads floor(x) - 1 .. floor(x) + 2; lanczos floor(x) - 3 .. floor(x) + 4; low rounded to even."""
    assert _rect([3.5], "constant", "cubic") == (2, 6)      # 2 .. 5
    assert _rect([4.2], "constant", "cubic") == (2, 7)      # 3 .. 6, low 3 -> 2
    assert _rect([4.0], "constant", "lanczos") == (0, 8)    # 1 .. 8, low -> 0
    assert _rect([4.0], "constant", "nearest") == (4, 6)    # 4 .. 5


@pytest.mark.parametrize(("xs", "want"), [
    ([-1.0, 2.0], (0, 8)),   # reaches left of 0: the whole axis
    ([0.0, 2.0], (0, 4)),    # 0 .. 3 is inside: just that
    ([1.0, 2.0], (0, 4)),    # 1 .. 3, low 1 -> 0
    ([3.0, 5.0], (2, 7)),    # 3 .. 6
    ([4.0, 6.0], (4, 8)),    # 4 .. 7 ends at the edge, still inside
    ([4.0, 7.0], (0, 8)),    # 4 .. 8 passes the right edge: whole axis
])
def test_reached_wrap_takes_the_whole_axis_only_when_it_leaves(xs: list[float], want: tuple[int, int]) -> None:
    """Wrap: inside the image as constant; once past an edge the whole axis (the far side is read)."""
    assert _rect(xs, "wrap", "linear") == want


@pytest.mark.parametrize(("xs", "want"), [
    ([-2.0, 1.0], (0, 3)),   # -2 .. 2: -2 mirrors to 2 (reflect101) or 1 (reflect): 0 .. 2
    ([6.0, 9.0], (4, 8)),    # 6 .. 10: read back from 2 * 8 - 1 - 11 = 4 (reflect101 of 10 is 4)
])
def test_reached_mirror_borders_reach_inward(xs: list[float], want: tuple[int, int]) -> None:
    """Reflecting borders: a coordinate k past an edge reads up to k pixels inward."""
    for border in ("reflect101", "reflect", "replicate"):
        assert _rect(xs, border, "linear") == want
