"""CLAHE from pieces (cvfilters.filters._shared.clahe) equals cv2.createCLAHE(...).apply on the whole plane.

OpenCV is the reference: its tile grid (padded by BORDER_REFLECT_101 when the size is not a
multiple of the grid, a whole extra tile row or column when only one side divides), its
clip-and-redistribute rule and its float32 bilinear blend. The plane is cut into odd pieces
whose histograms are summed, then each piece is interpolated at its place.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from cvfilters.filters._shared import clahe


def by_pieces(plane: np.ndarray, tiles: int, clip: float, step: int = 13) -> np.ndarray:
    """CLAHE of ``plane`` from ``step``-sized pieces: their summed tile histograms, then each piece at its place."""
    height, width = plane.shape
    levels = 256 if plane.dtype == np.uint8 else 65536
    pieces = [(y, x) for y in range(0, height, step) for x in range(0, width, step)]
    counts = np.sum([clahe.tile_counts(plane[y : y + step, x : x + step], y, x, height, width, tiles, levels)
                     for y, x in pieces], axis=0)
    table = clahe.tables(counts, clip, height, width, tiles, plane.dtype)
    out = np.empty_like(plane)
    for y, x in pieces:
        piece = clahe.interpolate(plane[y : y + step, x : x + step], y, x, height, width, tiles, table)
        assert piece.dtype == plane.dtype  # a tiled run merges pieces with the other planes of their tile
        out[y : y + step, x : x + step] = piece
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize(("height", "width", "tiles", "clip"), [
    (37, 29, 8, 2.0),    # neither side divides: both padded
    (64, 50, 8, 4.0),    # only the height divides: a whole extra tile row of padding
    (48, 48, 3, 0.0),    # both divide, clipping off
    (101, 77, 1, 2.0),   # one tile
    (40, 40, 2, 0.5),    # a clip limit below 1 still clips (OpenCV: any limit above 0)
])
def test_pieces_equal_opencv(dtype: type, height: int, width: int, tiles: int, clip: float) -> None:
    levels = 256 if dtype == np.uint8 else 65536
    rng = np.random.default_rng(height * width)
    plane: np.ndarray = (rng.random((height, width)) ** 2 * (levels - 1)).astype(dtype)  # skewed, so clipping matters
    expected = cv2.createCLAHE(clip, (tiles, tiles)).apply(plane)
    np.testing.assert_array_equal(by_pieces(plane, tiles, clip), expected)


@pytest.mark.parametrize("tiles", [1, 2])
def test_a_lone_dark_pixel_maps_to_black_as_in_opencv(tiles: int) -> None:
    """Without clipping, a tile of P > 510 pixels (576, 2304 here) maps a level one pixel holds to 0 (255 / P < 0.5)."""
    plane = np.random.default_rng(3).integers(64, 256, (48, 48), dtype=np.uint8)
    plane[5, 7], plane[40, 33] = 0, 20
    expected = cv2.createCLAHE(0.0, (tiles, tiles)).apply(plane)
    assert expected[5, 7] == expected[40, 33] == 0
    np.testing.assert_array_equal(by_pieces(plane, tiles, 0.0), expected)


def test_grid_pads_like_opencv() -> None:
    assert clahe.grid(64, 64, 8) == (8, 8, 0, 0)
    assert clahe.grid(64, 50, 8) == (9, 7, 8, 6)  # 64 divides, yet 8 rows of padding as OpenCV adds
    assert clahe.grid(37, 29, 8) == (5, 4, 3, 3)
