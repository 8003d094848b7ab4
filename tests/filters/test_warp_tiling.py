"""Warps in tiles and at their edges: flips fused with warps, custom kernels, 1 px canvases, horizons.

References: ``cv2.flip``, ``cv2.warpAffine``, ``cv2.warpPerspective`` called directly, and the
whole-image run for tiled results (exact: a footprint is bit for bit).
"""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.tiles import plan, process
from cvfilters.filters.warp import evaluate_maps, warp_kernel
from cvfilters.registry.params import Param
from tests.conftest import photo

DX = Param("dx", "float", 2.0, min=-100, max=100, unit="px", help="shift")


def shift(x: np.ndarray, y: np.ndarray, *, width: int, height: int, dx: float) -> tuple[np.ndarray, np.ndarray]:
    """Move right by ``dx`` pixels."""
    return x - dx, y


@pytest.mark.parametrize("axis", ["horizontal", "vertical", "both"])
def test_flip_fused_with_a_warp_tiles_as_the_whole_image(axis: str) -> None:
    """A flip before a rotation tiles (no whole-image step) and equals cv2.flip then cv2.warpAffine.

    Catches tile maps of the flip that are missing, mirror the wrong axis or cannot be evaluated.
    """
    image = photo(23, 29, 3, np.float32)
    pipe = Pipeline.parse(f"flip:axis={axis} | rotate:angle=180,interpolation=nearest,border=replicate")
    assert plan(pipe, image.shape, image.dtype, tile_size=7).whole_image_steps == ()
    whole = pipe(image, backend="cpu")
    np.testing.assert_array_equal(process(image, pipe, tile_size=7), whole)
    code = {"horizontal": 1, "vertical": 0, "both": -1}[axis]
    turn = cv2.getRotationMatrix2D((14.0, 11.0), 180.0, 1.0)
    expected = cv2.warpAffine(cv2.flip(image, code), turn, (29, 23), flags=cv2.INTER_NEAREST,
                              borderMode=cv2.BORDER_REPLICATE)
    np.testing.assert_allclose(whole, expected, atol=1e-6)


@pytest.mark.parametrize("axis", ["vertical", "both"])
def test_flip_alone_in_tiles_is_cv2_flip(axis: str) -> None:
    """A vertical (or both-ways) flip run in 7 px tiles is cv2.flip: catches tiles mirrored the wrong way."""
    image = photo(23, 29, 3)
    out = process(image, Pipeline.parse(f"flip:axis={axis}"), tile_size=7)
    np.testing.assert_array_equal(out, cv2.flip(image, 0 if axis == "vertical" else -1))


def test_custom_warp_tiles_keeps_out_of_range_floats_and_names_itself(names: list[str]) -> None:
    """A custom warp tiles, passes float values outside 0..1 through, and a bad tile result names it.

    Catches a kernel registered without its footprint (whole-image step), not declared linear
    (floats clipped to 0..1) or whose tile maps lose the filter's name in the error.
    """
    names.append("test_wt_shift")
    warp_kernel(shift, "test_wt_shift", summary="x", params=[DX], interpolation="nearest", border="replicate")
    image = (photo(23, 29, 3, np.float32) * 3.0 - 1.0).astype(np.float32)
    pipe = Pipeline([("test_wt_shift", {"dx": 2.0})])
    assert plan(pipe, image.shape, image.dtype, tile_size=7).whole_image_steps == ()
    expected = cv2.warpAffine(image, np.float32([[1, 0, 2], [0, 1, 0]]), (29, 23), flags=cv2.INTER_NEAREST,
                              borderMode=cv2.BORDER_REPLICATE)
    np.testing.assert_array_equal(pipe(image, backend="cpu"), expected)
    np.testing.assert_array_equal(process(image, pipe, tile_size=7), expected)

    def wrong(x: np.ndarray, y: np.ndarray, *, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
        return x[:1, :2], y  # not the tile's shape
    names.append("test_wt_wrong")
    warp_kernel(wrong, "test_wt_wrong", summary="x")
    with pytest.raises(ValueError, match="^warp kernel 'test_wt_wrong'"):
        process(photo(23, 29, 3), Pipeline([("test_wt_wrong", {})]), tile_size=7)


def test_coordinates_that_are_not_numbers_are_refused_by_name(names: list[str]) -> None:
    """A coordinate function returning text gets the kernel's error, not a numpy TypeError."""
    def text(x: np.ndarray, y: np.ndarray, *, width: int, height: int) -> tuple[object, np.ndarray]:
        return "left", y
    names.append("test_wt_text")
    flt = warp_kernel(text, "test_wt_text", summary="x")
    with pytest.raises(ValueError, match="^warp kernel 'test_wt_text'"):
        cvf.apply(photo(5, 6, 3), flt, backend="cpu")


@pytest.mark.parametrize(("angle", "shape"), [(90.0, (7, 1)), (0.0, (1, 7))])
def test_rotate_expand_keeps_a_one_pixel_side(angle: float, shape: tuple[int, int]) -> None:
    """A 1 x 7 strip turned by 0 or 90 degrees with expand is 1 px on one side (np.rot90 of it)."""
    strip = photo(1, 7, 3)
    out = cvf.apply(strip, "rotate", angle=angle, expand=True, interpolation="nearest", backend="cpu")
    assert out.shape[:2] == shape
    np.testing.assert_array_equal(out, np.rot90(strip, 1) if angle else strip)


def test_perspective_with_the_horizon_in_view_is_quiet_and_filled() -> None:
    """Output pixels on the horizon (w exactly 0) have no source: the fill, with no RuntimeWarning.

    The inverse homography's last row is (-1, 0, 2): column x = 2 lies on the horizon, columns
    beyond it behind the viewer. Catches a crash or a divide warning there.
    """
    image = np.full((5, 6, 3), 200, np.uint8)
    inverse = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 2.0]])
    forward = np.linalg.inv(inverse)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = cvf.apply(image, "perspective", matrix=forward.tolist(), interpolation="nearest",
                        border="constant", backend="cpu")
    expected = cv2.warpPerspective(image, forward, (6, 5), flags=cv2.INTER_NEAREST,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    np.testing.assert_array_equal(out[:, 2], 0)
    np.testing.assert_array_equal(out[:, :2], expected[:, :2])


def test_evaluate_maps_called_directly_names_a_warp() -> None:
    """``evaluate_maps`` without a name calls the kernel 'warp' in its error (not a garbled default)."""
    def wrong(x: np.ndarray, y: np.ndarray, *, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
        return x[:1, :2], y
    with pytest.raises(ValueError, match="^warp kernel 'warp': "):
        evaluate_maps(wrong, {}, 4, 3)
