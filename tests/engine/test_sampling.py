"""Sampling helpers (cvfilters.engine.sampling): the shared warp parameters, both coordinate grids,
the fill's border values and its alpha warning, the remap with a per-channel fill, the tiled remap
footprint and the source rectangle a remap reads.

The parameter builders run when the filters register (at import), so they are called here
directly and compared with Params written out by hand. The expected coordinates are numpy
formulas; the expected rectangles are worked out by hand in the comments (``floor(x) - before``
to ``floor(x) + after + 1``, then the border rule, clipped to the image, low rounded down to even).
Remaps are compared with cv2.remap called directly, one plane at a time with its own border value.
"""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.core.context import Context, ImageInfo
from cvfilters.engine import sampling
from cvfilters.engine.sampling import (
    center_coords,
    fill_param,
    fill_values,
    index_grid,
    interpolation_param,
    reached,
    remap,
    remapped,
    warp_border_param,
)
from cvfilters.registry.footprints import Rect
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
    ([8.0], (0, 1)),                   # 8 .. 9, just past the right edge: nothing inside, one pixel
    ([-2.0], (0, 1)),                  # -2 .. -1, just past the left edge: the same
    ([6.0, 9.0], (6, 8)),              # 6 .. 10: constant reads nothing back from the edge (reflect101: 4)
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
    ([-3.0, 0.0], (0, 4)),   # -3 .. 1: -3 mirrors to 3 (reflect101), past what 0 .. 1 reads
])
def test_reached_mirror_borders_reach_inward(xs: list[float], want: tuple[int, int]) -> None:
    """Reflecting borders: a coordinate k past an edge reads up to k pixels inward."""
    for border in ("reflect101", "reflect", "replicate"):
        assert _rect(xs, border, "linear") == want


def test_index_grid_puts_pixel_centres_at_integers() -> None:
    """float64 writable ``(x, y)`` grids equal to ``np.meshgrid(arange)``: an int64 grid would truncate in place."""
    x, y = index_grid(3, 2)
    want_x, want_y = np.meshgrid(np.arange(3.0), np.arange(2.0))
    assert x.dtype == np.float64 and y.dtype == np.float64
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)
    x += 0.5  # a caller shifts the grid in place: needs float and writable
    y += 0.5
    np.testing.assert_array_equal(x, want_x + 0.5)


@pytest.fixture
def fresh_fill_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty once-per-process record of warned fills, so each test sees its first warning."""
    monkeypatch.setattr(sampling, "_WARNED_FILL_ALPHA", set())


@pytest.mark.parametrize(("fill", "channels", "premultiplied", "want"), [
    ((0.5,), 1, True, (127.5,)),                          # one value: every channel
    ((1.0, 0.5, 0.0), 3, True, (0.0, 127.5, 255.0)),       # RGB in, BGR out
    ((1.0, 0.5, 0.0), 1, True, (0.299 * 255 + 0.587 * 127.5,)),  # gray: BT.601 luma
    ((1.0, 0.5, 0.0, 0.5), 4, False, (0.0, 127.5, 255.0, 127.5)),
    ((1.0, 0.5, 0.0, 0.5), 4, True, (0.0, 63.75, 127.5, 127.5)),  # premultiplied by alpha
    ((0.4, 0.5), 4, False, (102.0, 102.0, 102.0, 127.5)),  # gray and alpha
])
def test_fill_values_are_per_channel_in_the_image_scale(fill: tuple[float, ...], channels: int,
                                                       premultiplied: bool, want: tuple[float, ...]) -> None:
    """Border values in BGR(A) order at 255 full scale; a swapped order or an unscaled fraction is caught."""
    got = fill_values(fill, ImageInfo(2, 2, channels, np.dtype(np.uint8)), premultiplied)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_fill_alpha_warning_names_the_fill_and_points_at_the_caller(fresh_fill_warnings: None) -> None:
    """A translucent fill on an image without alpha: one FillAlphaWarning, the caller's line, the full advice."""
    with pytest.warns(sampling.FillAlphaWarning) as record:
        fill_values((1.0, 1.0, 1.0, 0.5), ImageInfo(2, 2, 3, np.dtype(np.uint8)), True)
    assert len(record) == 1 and record[0].filename == __file__
    assert str(record[0].message) == (
        "fill [1.0, 1.0, 1.0, 0.5] has alpha 0.5 but the image has no alpha channel, so the fill is drawn opaque: "
        "outputs keep the input's channels (a JPEG could not hold alpha). For transparent corners give the image "
        "an alpha channel first (a PNG with alpha, or cv2.cvtColor(image, cv2.COLOR_BGR2BGRA))")


@pytest.mark.parametrize(("fill", "channels", "warns"), [
    ((0.5, 0.25), 1, True),              # gray and alpha 0.25 on gray: warns
    ((0.5, 0.25), 3, True),
    ((1.0, 1.0, 1.0, 0.5), 4, False),    # the image has alpha: no warning
    ((0.5, 1.0), 3, False),              # explicit alpha 1: opaque as asked
    ((1.0, 1.0, 1.0, 1.0), 1, False),
    ((0.5,), 3, False),                  # one value: no explicit alpha
])
def test_fill_alpha_warning_only_when_alpha_is_lost(fresh_fill_warnings: None, fill: tuple[float, ...],
                                                    channels: int, warns: bool) -> None:
    """Warned only for an explicit alpha below 1 on an image without alpha, then once per fill."""
    spec = ImageInfo(2, 2, channels, np.dtype(np.uint8))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fill_values(fill, spec, True)
        fill_values(fill, spec, True)  # the same fill again: never a second warning
    assert [w.category for w in record] == ([sampling.FillAlphaWarning] if warns else [])


def _shifted_maps(rect: Rect, dx: float, dy: float) -> tuple[np.ndarray, np.ndarray]:
    """float32 maps of the output pixels in ``rect``: output (x, y) samples the source at (x + dx, y + dy)."""
    y0, y1, x0, x1 = rect
    x, y = np.meshgrid(np.arange(x0, x1, dtype=np.float32) + dx, np.arange(y0, y1, dtype=np.float32) + dy)
    return x, y


def _per_plane_remap(image: np.ndarray, maps: tuple[np.ndarray, np.ndarray], interpolation: int,
                     border_values: tuple[float, ...]) -> np.ndarray:
    """cv2.remap of each channel with a constant border of its own value (the reference)."""
    return np.dstack([cv2.remap(np.ascontiguousarray(image[..., c]), *maps, interpolation,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=(v,) * 4)
                      for c, v in enumerate(border_values)])


@pytest.mark.parametrize(("channels", "fill", "border_values"), [
    (3, (1.0, 0.5, 0.0), (0.0, 127.5, 255.0)),               # RGB orange, BGR planes
    (4, (1.0, 0.5, 0.0, 0.5), (0.0, 63.75, 127.5, 127.5)),   # default: premultiplied by the fill's alpha
])
def test_remap_fills_each_channel_with_its_own_colour(backend: str, channels: int, fill: tuple[float, ...],
                                                       border_values: tuple[float, ...]) -> None:
    """A fill whose channels differ, bilinear across the edge: as cv2.remap per plane (within 1 level)."""
    image = np.random.default_rng(5).integers(0, 256, (6, 8, channels), dtype=np.uint8)
    maps = _shifted_maps((0, 6, 0, 8), -1.5, 0.25)
    be = get_backend(backend)
    ctx = Context(be, ImageInfo.of(image))
    got = be.download(remap(ctx, be.upload(image), *maps, "linear", "constant", fill))
    want = _per_plane_remap(image, maps, cv2.INTER_LINEAR, border_values)
    np.testing.assert_allclose(got.astype(int), want.astype(int), rtol=0, atol=1)


def test_remap_with_a_mirror_border_ignores_the_fill(backend: str, fresh_fill_warnings: None) -> None:
    """reflect101 reads no fill: as cv2.remap directly, and no alpha warning about a fill it never draws."""
    image = np.random.default_rng(6).integers(0, 256, (6, 8, 3), dtype=np.uint8)
    maps = _shifted_maps((0, 6, 0, 8), -1.5, 0.25)
    be = get_backend(backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = be.download(remap(Context(be, ImageInfo.of(image)), be.upload(image), *maps, "linear", "reflect101",
                                (1.0, 0.5, 0.0, 0.5)))
    want = cv2.remap(image, *maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(got.astype(int), want.astype(int), rtol=0, atol=1)


@pytest.mark.parametrize("out_rect", [(3, 7, 0, 5), (3, 7, 67, 73)])  # at the left edge; past one 64-column lane
def test_remapped_tile_equals_the_whole_remap_cropped(out_rect: Rect) -> None:
    """A tile of a remap from its source crop: bit for bit the whole image's cv2.remap, cropped (straight alpha)."""
    image = np.random.default_rng(7).integers(0, 256, (10, 80, 4), dtype=np.uint8)
    spec = ImageInfo.of(image)
    fill = (1.0, 0.5, 0.0, 0.5)

    def tile_maps(rect: Rect) -> tuple[np.ndarray, np.ndarray]:
        return _shifted_maps(rect, -1.5, 0.25)

    footprint = remapped(tile_maps, spec, "linear", "constant", fill, premultiplied=False)
    y0, y1, x0, x1 = source = footprint.source(out_rect, spec)
    crop = np.ascontiguousarray(image[y0:y1, x0:x1])
    got = footprint.run(Context(get_backend("cpu"), ImageInfo.of(crop)), crop, source, out_rect, spec)
    whole = _per_plane_remap(image, tile_maps((0, 10, 0, 80)), cv2.INTER_LINEAR, (0.0, 127.5, 255.0, 127.5))
    np.testing.assert_array_equal(got, whole[out_rect[0]:out_rect[1], out_rect[2]:out_rect[3]])


def test_remapped_constant_border_reads_no_rows_it_does_not_reach() -> None:
    """Coordinates all above the image (constant border): one row of source, not rows mirrored inward."""
    spec = ImageInfo(10, 8, 1, np.dtype(np.uint8))
    footprint = remapped(lambda rect: _shifted_maps(rect, 0.0, -6.0), spec, "linear", "constant", (0.0,),
                         premultiplied=False)
    assert footprint.source((0, 2, 0, 4), spec)[:2] == (0, 1)   # rows -6 .. -2 (one past the tile): none inside


def test_remapped_gives_its_tile_maps_for_fusion() -> None:
    """The footprint hands out its coordinates per output rectangle (fused warps compose them per tile)."""
    spec = ImageInfo(10, 8, 1, np.dtype(np.uint8))
    footprint = remapped(lambda rect: _shifted_maps(rect, 0.5, -6.0), spec, "linear", "constant", (0.0,),
                         premultiplied=False)
    assert footprint.maps is not None
    map_x, map_y = footprint.maps((1, 3, 2, 5))
    np.testing.assert_array_equal(map_x, [[2.5, 3.5, 4.5]] * 2)
    np.testing.assert_array_equal(map_y, [[-5.0] * 3, [-4.0] * 3])
