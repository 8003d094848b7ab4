"""The ``lut`` filter (cvfilters.filters.cube) on float32, gray images, explicit scales and its helpers.

References are written here: .cube and .csv files written by hand, ``np.interp`` for 1-D
tables, a corner-by-corner trilinear interpolation for cubes and the BT.601 luma weights
(0.114 B + 0.587 G + 0.299 R) for gray images. cpu only (the backends' parity is in
tests/filters/test_color.py); float32 results to 1e-5, integer ones to 1 level.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.filters import cube as cube_module

LUMA = np.array([0.114, 0.587, 0.299])  # B, G, R
# A 2-node cube, rows R G B with red fastest; values outside 0..1 so that the clip shows.
CUBE_ROWS = [
    (0.0, 0.0, 0.0), (1.5, 0.0, 0.0), (0.0, 1.5, 0.0), (1.5, 1.5, 0.0),
    (0.0, 0.0, -0.5), (1.5, 0.0, 1.5), (0.2, 1.5, 1.5), (1.5, 1.5, 1.5),
]
# 1-D rows R, G, B for inputs 0, 0.5, 1
RGB_ROWS = np.array([[0.1, 0.9, 0.0], [0.8, 0.2, 0.5], [1.0, 0.3, 0.7]])
GRID = np.array([0.0, 0.5, 1.0])
GRAY = np.array([[0.0, 0.1, 0.25, 0.4], [0.5, 0.6, 0.9, 1.0]], np.float32)


def write_rows(path: Path, rows: Sequence[Sequence[float]] | np.ndarray, header: str = "") -> Path:
    path.write_text(header + "\n".join(" ".join(str(v) for v in row) for row in np.atleast_2d(rows)) + "\n")
    return path


def trilinear(rows: Sequence[Sequence[float]], r: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A 2-node cube's R, G, B at (r, g, b): the sum over the 8 corners of w_b w_g w_r * node."""
    out = np.zeros((*np.shape(r), 3))
    for db, dg, dr in itertools.product((0, 1), repeat=3):
        weight = (b if db else 1 - b) * (g if dg else 1 - g) * (r if dr else 1 - r)
        out += weight[..., None] * np.array(rows[dr + 2 * dg + 4 * db])
    return out


def luma_of_rgb(rgb: np.ndarray) -> np.ndarray:
    return np.asarray(rgb[..., ::-1] @ LUMA)


def test_gray_float_through_a_cube(tmp_path: Path) -> None:
    """float32 gray: the luma of the cube's colour at (v, v, v), clipped to 0..1."""
    path = write_rows(tmp_path / "hi.cube", CUBE_ROWS, "LUT_3D_SIZE 2\n")
    out = cvf.apply(GRAY, "lut", file=str(path), backend="cpu")
    expected = np.clip(luma_of_rgb(np.clip(trilinear(CUBE_ROWS, GRAY, GRAY, GRAY), 0, 1)), 0, 1)
    assert out.shape == GRAY.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_gray_float_through_one_curve(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "one.csv", [[0.2], [0.9], [0.4]])
    out = cvf.apply(GRAY, "lut", file=str(path), backend="cpu")
    assert out.shape == GRAY.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, np.interp(GRAY, GRID, [0.2, 0.9, 0.4]), atol=1e-5)


def test_gray_float_through_three_curves(tmp_path: Path) -> None:
    """A gray image through R, G, B curves: the luma of the three results."""
    path = write_rows(tmp_path / "rgb.csv", RGB_ROWS)
    out = cvf.apply(GRAY, "lut", file=str(path), backend="cpu")
    rgb = np.stack([np.interp(GRAY, GRID, RGB_ROWS[:, c]) for c in range(3)], axis=-1)
    assert out.shape == GRAY.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, luma_of_rgb(rgb), atol=1e-5)


@pytest.mark.parametrize(("scale", "full"), [("65535", 65535.0), ("1", 1.0)])
def test_explicit_scale(tmp_path: Path, scale: str, full: float) -> None:
    """scale= overrides auto (which would take 255 here); outputs above full scale clip to 1."""
    table = [0, 100, 255]
    path = write_rows(tmp_path / "t.csv", [[v] for v in table])
    colour = np.dstack([GRAY, GRAY[::-1], GRAY[:, ::-1]])
    out = cvf.apply(colour, "lut", file=str(path), scale=scale, backend="cpu")
    np.testing.assert_allclose(out, np.clip(np.interp(colour, GRID, np.array(table) / full), 0, 1), atol=1e-5)
    image8 = np.arange(0, 256, 8, dtype=np.uint8).reshape(4, 8)
    out8 = cvf.apply(image8, "lut", file=str(path), scale=scale, backend="cpu")
    expected8 = np.rint(255 * np.clip(np.interp(image8 / 255, GRID, np.array(table) / full), 0, 1))
    assert np.abs(out8.astype(float) - expected8).max() <= 1
    params = cvf.get_filter("lut").resolve({"file": str(path), "scale": scale})
    hook = cube_module.lut_table(params, ImageInfo(1, 1, 3, np.dtype(np.uint8)))
    levels = np.rint(255 * np.clip(np.interp(np.arange(256) / 255, GRID, np.array(table) / full), 0, 1))
    assert hook is not None and np.abs(np.asarray(hook, float).reshape(256, -1) - levels[:, None]).max() <= 1


def test_run_reads_with_the_given_scale(tmp_path: Path) -> None:
    """A table above 65535 needs scale= (auto refuses it); with it, it runs."""
    path = write_rows(tmp_path / "big.csv", [[0], [35000], [70000]])
    out = cvf.apply(GRAY, "lut", file=str(path), scale="65535", backend="cpu")
    np.testing.assert_allclose(out, np.clip(np.interp(GRAY, GRID, [0, 35000 / 65535, 70000 / 65535]), 0, 1),
                               atol=1e-5)
    params = cvf.get_filter("lut").resolve({"file": str(path), "scale": "65535"})
    hook = cube_module.lut_table(params, ImageInfo(1, 1, 1, np.dtype(np.uint8)))
    levels = np.rint(255 * np.clip(np.interp(np.arange(256) / 255, GRID, [0, 35000 / 65535, 70000 / 65535]), 0, 1))
    assert hook is not None and np.abs(np.asarray(hook, float).reshape(256, -1) - levels[:, None]).max() <= 1


def test_lut_file_of_scale(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "t.csv", [[0], [100], [255]])
    auto = cube_module.lut_file_of({"file": str(path)}).table
    wide = cube_module.lut_file_of({"file": str(path), "scale": "65535"}).table
    assert auto is not None and wide is not None
    np.testing.assert_allclose(auto.values[:, 0], [0, 100 / 255, 1], atol=1e-7)
    np.testing.assert_allclose(wide.values[:, 0], [0, 100 / 65535, 255 / 65535], atol=1e-7)


def test_gray_integer_through_shaper_and_cube(tmp_path: Path) -> None:
    """A shaper + cube file on a gray uint8 image: luma of cube(shaper(v)), not the shaper alone."""
    shaper = [(0.0, 0.0, 0.0), (0.3, 0.6, 0.5), (1.0, 1.0, 1.0)]
    header = "LUT_1D_SIZE 3\nLUT_3D_SIZE 2\n" + "\n".join(" ".join(map(str, row)) for row in shaper) + "\n"
    rows = [tuple(min(max(v, 0.0), 1.0) for v in row) for row in CUBE_ROWS]
    path = write_rows(tmp_path / "shaper.cube", rows, header)
    image8 = np.arange(0, 256, 8, dtype=np.uint8).reshape(4, 8)
    out = cvf.apply(image8, "lut", file=str(path), backend="cpu")
    v = image8 / 255
    shaped = [np.interp(v, GRID, [row[c] for row in shaper]) for c in range(3)]
    expected = np.rint(255 * np.clip(luma_of_rgb(trilinear(rows, *shaped)), 0, 1))
    assert out.shape == image8.shape and np.abs(out.astype(float) - expected).max() <= 1
