"""LUT model (cvfilters.filters._shared.lut_model) against numpy written out here.

1-D tables by ``np.interp`` per channel; 3-D cubes by trilinear interpolation written out corner
by corner; a ``.cube`` file written by hand (R fastest, rows R G B); BT.601 luma weights
0.114 B + 0.587 G + 0.299 R. Float64 tables compare to 1e-12, float32 cubes to 1e-5.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cvfilters.filters._shared.lut_files import load_lut
from cvfilters.filters._shared.lut_model import Cube3D, Lut1D, LutFile

LUMA = np.array([0.114, 0.587, 0.299])


def interp_1d(table: np.ndarray, low: np.ndarray, high: np.ndarray, bgr: np.ndarray) -> np.ndarray:
    """Each channel by np.interp on its own evenly spaced nodes."""
    n = len(table)
    return np.stack([np.interp(bgr[..., c], np.linspace(low[c], high[c], n), table[:, c]) for c in range(3)],
                    axis=-1)


def trilinear(values: np.ndarray, low: np.ndarray, high: np.ndarray, bgr: np.ndarray) -> np.ndarray:
    """values[b, g, r] interpolated at (..., 3) B, G, R inputs, the eight corners weighted by hand."""
    n = values.shape[0]
    pts = np.asarray(bgr, np.float64).reshape(-1, 3)
    x = np.clip((pts - low) / (high - low), 0.0, 1.0) * (n - 1)
    i = np.minimum(np.floor(x).astype(int), n - 2)
    f = x - i
    out = np.zeros((len(pts), 3))
    for db in (0, 1):
        for dg in (0, 1):
            for dr in (0, 1):
                w = ((f[:, 0] if db else 1 - f[:, 0]) * (f[:, 1] if dg else 1 - f[:, 1])
                     * (f[:, 2] if dr else 1 - f[:, 2]))
                out += w[:, None] * values[i[:, 0] + db, i[:, 1] + dg, i[:, 2] + dr].astype(np.float64)
    return out.reshape(np.shape(bgr))


def random_table(n: int, seed: int = 0) -> Lut1D:
    """A table with different nodes per channel and per-channel input ranges."""
    rng = np.random.default_rng(seed)
    return Lut1D(rng.random((n, 3)), np.array([0.0, 0.1, -0.2]), np.array([1.0, 0.8, 1.3]))


def random_cube(n: int, seed: int = 0) -> Cube3D:
    rng = np.random.default_rng(seed)
    values = rng.random((n, n, n, 3)).astype(np.float32)
    return Cube3D(values, np.array([0.0, 0.1, -0.2]), np.array([1.0, 0.9, 1.2]))


def test_table_call_is_np_interp_per_channel() -> None:
    """A (2, 5, 3) image comes back (2, 5, 3), each channel through its own column and range."""
    table = random_table(7)
    bgr = np.random.default_rng(1).uniform(-0.3, 1.4, (2, 5, 3))
    out = table(bgr)
    assert out.shape == (2, 5, 3)
    np.testing.assert_allclose(out, interp_1d(table.values, table.low, table.high, bgr), rtol=0, atol=1e-12)


def test_table_curves_one_when_channels_agree() -> None:
    """Equal columns and ranges give one curve; otherwise three, each np.interp of its channel."""
    v = np.linspace(0.0, 1.0, 5) ** 2
    same = Lut1D(np.stack([v, v, v], axis=-1), np.zeros(3), np.ones(3))
    x = np.linspace(0.0, 1.0, 11)
    [curve] = same.curves()
    np.testing.assert_allclose(curve(x), x * 0 + np.interp(x, np.linspace(0, 1, 5), v), atol=1e-12)
    table = random_table(5)
    curves = table.curves()
    assert len(curves) == 3
    for c in range(3):
        ref = np.interp(x, np.linspace(table.low[c], table.high[c], 5), table.values[:, c])
        np.testing.assert_allclose(curves[c](x), ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 10, 17, 600])
def test_table_refined_is_smallest_integer_refinement(n: int) -> None:
    """At least 1025 entries, the fewest that divide every cell evenly, and the same function."""
    table = random_table(n)
    r = table.refined()
    assert (r.size - 1) % (n - 1) == 0
    assert r.size >= 1025 > r.size - (n - 1)
    step = (r.size - 1) // (n - 1)
    np.testing.assert_array_equal(r.values[::step], table.values)
    bgr = np.random.default_rng(2).uniform(-0.3, 1.4, (500, 3))
    np.testing.assert_allclose(r(bgr), interp_1d(table.values, table.low, table.high, bgr), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [1025, 2000])
def test_table_refined_keeps_large_tables(n: int) -> None:
    r = random_table(n).refined()
    assert r.size == n


def test_cube_call_is_trilinear() -> None:
    cube = random_cube(4)
    bgr = np.random.default_rng(3).uniform(-0.3, 1.4, (3, 7, 3)).astype(np.float32)
    out = cube(bgr)
    assert out.shape == (3, 7, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out, trilinear(cube.values, cube.low, cube.high, bgr), rtol=0, atol=1e-5)


@pytest.mark.parametrize("n", [2, 3, 17])
def test_cube_refined_is_smallest_integer_refinement(n: int) -> None:
    """At least 33 nodes a side, the fewest dividing every cell evenly, and the same trilinear function."""
    cube = random_cube(n)
    r = cube.refined()
    assert (r.size - 1) % (n - 1) == 0
    assert r.size >= 33 > r.size - (n - 1)
    step = (r.size - 1) // (n - 1)
    np.testing.assert_allclose(r.values[::step, ::step, ::step], cube.values, rtol=0, atol=1e-5)
    bgr = np.random.default_rng(4).uniform(-0.3, 1.4, (500, 3))
    np.testing.assert_allclose(r(bgr), trilinear(cube.values, cube.low, cube.high, bgr), rtol=0, atol=1e-5)


def test_cube_refined_keeps_large_cubes() -> None:
    assert random_cube(33).refined().size == 33


def test_cube_layout() -> None:
    """Row g, column b * N + r holds values[b, g, r], as float32."""
    cube = random_cube(3)
    layout = cube.layout()
    assert layout.shape == (3, 9, 3) and layout.dtype == np.float32
    for b in range(3):
        for g in range(3):
            for r in range(3):
                np.testing.assert_array_equal(layout[g, b * 3 + r], cube.values[b, g, r])


def write_cube(path: Path, shaper: np.ndarray | None, cube: np.ndarray | None) -> Path:
    """A .cube file written by hand: rows R G B, the 3-D part with R changing fastest."""
    lines = ['TITLE "hand"']
    if shaper is not None:
        lines.append(f"LUT_1D_SIZE {len(shaper)}")
    if cube is not None:
        lines.append(f"LUT_3D_SIZE {cube.shape[0]}")
    if shaper is not None:
        lines += [f"{r:.9f} {g:.9f} {b:.9f}" for b, g, r in shaper]
    if cube is not None:
        n = cube.shape[0]
        lines += [" ".join(f"{x:.9f}" for x in cube[b, g, r, ::-1])
                  for b in range(n) for g in range(n) for r in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("parts", ["shaper", "cube", "both"])
def test_file_call(tmp_path: Path, parts: str) -> None:
    """A shaper alone, a cube alone, and a shaper then a cube, against np.interp and trilinear."""
    rng = np.random.default_rng(5)
    shaper = rng.random((6, 3)) if parts != "cube" else None
    cube = rng.random((3, 3, 3, 3)).astype(np.float32) if parts != "shaper" else None
    lut = load_lut(write_cube(tmp_path / "a.cube", shaper, cube))
    bgr = rng.random((4, 5, 3))
    ref = bgr
    if shaper is not None:
        ref = interp_1d(shaper, np.zeros(3), np.ones(3), ref)
    if cube is not None:
        ref = trilinear(cube, np.zeros(3), np.ones(3), ref)
    out = lut(bgr)
    assert out.shape == (4, 5, 3)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-5)


def test_gray_curve_clips_colour_before_luma() -> None:
    """Each channel of the LUT's colour at (v, v, v) is clipped to 0..1, then weighted; a 2-D input keeps its shape."""
    column = np.array([[-0.5, 0.2, 1.5], [0.3, 1.6, -0.4], [1.5, 0.9, 0.1]])  # rows: entries 0, 1, 2
    lut = LutFile("x", "", Lut1D(column, np.zeros(3), np.ones(3)), None, (0, 0))
    v = np.array([[0.0, 0.25, 0.5], [0.75, 1.0, 0.6]])
    colour = interp_1d(column, np.zeros(3), np.ones(3), np.repeat(v[..., None], 3, axis=-1))
    out = lut.gray_curve()(v)
    assert out.shape == v.shape
    np.testing.assert_allclose(out, np.clip(colour, 0.0, 1.0) @ LUMA, rtol=0, atol=1e-9)
