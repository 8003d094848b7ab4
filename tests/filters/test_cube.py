"""The ``lut`` filter (cvfilters.filters.cube) on float32, gray images, explicit scales and its helpers.

References are written here: .cube and .csv files written by hand, ``np.interp`` for 1-D
tables, a corner-by-corner trilinear interpolation for cubes and the BT.601 luma weights
(0.114 B + 0.587 G + 0.299 R) for gray images. The tests taking ``backend`` (LUT files, at the
end) run on every backend available; float32 results to 1e-5, integer ones to 1 level.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters import cube as cube_module
from cvfilters.filters._shared import lut_device
from tests.conftest import FIXTURES, full_scale, photo
from tests.filters.test_color import DTYPES, assert_close, sample

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


# ---------------------------------------------------------------- LUT files
def write_cube(path, values_bgr: np.ndarray, *, domain: tuple[float, float] | None = None, shaper=None) -> None:
    """Write a .cube file from a [b, g, r] -> (B, G, R) array (red varies fastest, columns R G B)."""
    n = values_bgr.shape[0]
    lines = ['TITLE "test"', "# a comment"]
    if shaper is not None:
        lines.append(f"LUT_1D_SIZE {len(shaper)}")
    lines.append(f"LUT_3D_SIZE {n}")
    if domain is not None:
        lines += [f"DOMAIN_MIN {domain[0]} {domain[0]} {domain[0]}", f"DOMAIN_MAX {domain[1]} {domain[1]} {domain[1]}"]
    if shaper is not None:
        lines += [" ".join(f"{v:.9f}" for v in row) for row in shaper]
    data = io.StringIO()
    np.savetxt(data, values_bgr.reshape(-1, 3)[:, ::-1], fmt="%.9f")
    path.write_text("\n".join(lines) + "\n" + data.getvalue())


def trilinear_reference(cube: np.ndarray, bgr: np.ndarray, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """Trilinear interpolation written out corner by corner; ``bgr`` normalised (..., 3)."""
    n = cube.shape[0]
    x = np.clip((bgr - low) / (high - low), 0, 1) * (n - 1)
    i0 = np.clip(np.floor(x).astype(int), 0, n - 2)
    f = x - i0
    out = np.zeros(bgr.shape)
    for db, dg, dr in itertools.product((0, 1), repeat=3):
        weight = ((f[..., 0] if db else 1 - f[..., 0]) * (f[..., 1] if dg else 1 - f[..., 1])
                  * (f[..., 2] if dr else 1 - f[..., 2]))
        out += weight[..., None] * cube[i0[..., 0] + db, i0[..., 1] + dg, i0[..., 2] + dr]
    return out


def stored(values: np.ndarray, dtype: type) -> np.ndarray:
    full = full_scale(dtype)
    values = np.clip(values, 0, 1) * full
    return values if np.dtype(dtype) == np.float32 else np.rint(values)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cube_matches_numpy_trilinear(backend: str, tmp_path, dtype: type) -> None:
    cube = np.random.default_rng(5).random((5, 5, 5, 3))
    write_cube(tmp_path / "random.cube", cube)
    image = sample(dtype, 4)
    out, report = Pipeline([("lut", {"file": tmp_path / "random.cube"})]).run(image, backend=backend)
    expected = stored(trilinear_reference(cube, image[..., :3] / full_scale(dtype)), dtype)
    assert_close(out[..., :3], expected)
    np.testing.assert_array_equal(out[..., 3], image[..., 3])
    assert not report.counters.fallbacks  # the cube runs on the device


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_identity_cube_is_identity(backend: str, tmp_path, dtype: type) -> None:
    t = np.linspace(0, 1, 17)
    b, g, r = np.meshgrid(t, t, t, indexing="ij")
    write_cube(tmp_path / "identity.cube", np.stack([b, g, r], axis=-1))
    image = photo(40, 50, 3, dtype)
    out = cvf.apply(image, "lut", file=str(tmp_path / "identity.cube"), backend=backend)
    assert_close(out, image.astype(np.float64))


def test_cube_domain_shaper_and_gray(backend: str, tmp_path) -> None:
    rng = np.random.default_rng(9)
    cube = rng.random((3, 3, 3, 3))
    write_cube(tmp_path / "domain.cube", cube, domain=(0.2, 0.8))
    image = sample(np.float32, 3)
    out = cvf.apply(image, "lut", file=str(tmp_path / "domain.cube"), backend=backend)
    np.testing.assert_allclose(out, stored(trilinear_reference(cube, image, 0.2, 0.8), np.float32), atol=1e-5)
    # Resolve's shaper form: a 1-D table (R G B columns) applied before the cube.
    shaper = np.stack([np.linspace(0, 1, 9) ** 0.5, np.linspace(0, 1, 9), np.linspace(0, 1, 9) ** 2], axis=-1)
    write_cube(tmp_path / "shaper.cube", cube, shaper=shaper)
    image8 = sample(np.uint8, 3)
    grid = np.linspace(0, 1, 9)
    shaped = np.stack([np.interp(image8[..., c] / 255, grid, shaper[:, 2 - c]) for c in range(3)], axis=-1)
    out = cvf.apply(image8, "lut", file=str(tmp_path / "shaper.cube"), backend=backend)
    assert_close(out, stored(trilinear_reference(cube, shaped), np.uint8))
    # gray: the luma of the cube's colour for (v, v, v)
    gray = sample(np.uint16, 1)
    out = cvf.apply(gray, "lut", file=str(tmp_path / "domain.cube"), backend=backend)
    v = gray / 65535.0
    colour = np.clip(trilinear_reference(cube, np.stack([v, v, v], axis=-1), 0.2, 0.8), 0, 1)
    assert_close(out, np.rint(colour @ LUMA * 65535))


def test_big_cube_runs_on_the_host_counted(backend: str, tmp_path, monkeypatch) -> None:
    # Cubes above MAX_REMAP_NODES (128) a side run in numpy; lower the limit to test that path cheaply.
    monkeypatch.setattr(lut_device, "MAX_REMAP_NODES", 16)
    t = np.linspace(0, 1, 6)
    b, g, r = np.meshgrid(t, t, t, indexing="ij")
    cube = np.stack([np.sqrt(b), g * g, r], axis=-1) * 0.9 + np.random.default_rng(2).random((6, 6, 6, 3)) * 0.1
    write_cube(tmp_path / "big.cube", cube)
    for dtype in DTYPES:
        image = sample(dtype)
        out, report = Pipeline([("lut", {"file": tmp_path / "big.cube"})]).run(image, backend=backend)
        assert_close(out, stored(trilinear_reference(cube, image / full_scale(dtype)), dtype))
        assert report.counters.fallbacks.get("lut (3-D cube on host)", 0) == (backend != "cpu")


def test_large_cube_file_parses(tmp_path) -> None:
    n = 65
    t = np.linspace(0, 1, n, dtype=np.float32)
    b, g, r = np.meshgrid(t, t, t, indexing="ij")
    write_cube(tmp_path / "65.cube", np.stack([b, g, r], axis=-1))
    loaded = cube_module.load_lut(tmp_path / "65.cube")
    assert loaded.cube.size == n and loaded.title == "test"
    np.testing.assert_allclose(loaded.cube.values[3, 5, 7], [t[3], t[5], t[7]], atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_1d_lut_files(backend: str, tmp_path, dtype: type) -> None:
    image = sample(dtype)
    full = full_scale(dtype)
    # 256 8-bit values, one column: an inverting table.
    (tmp_path / "inv.txt").write_text("\n".join(str(255 - i) for i in range(256)) + "\n")
    out = cvf.apply(image, "lut", file=str(tmp_path / "inv.txt"), backend=backend)
    assert_close(out, full - image.astype(np.float64))
    # 5 rows of R, G, B fractions, resampled linearly to the dtype.
    rows = np.array([[0, 0, 1], [0.5, 0.1, 0.8], [0.6, 0.2, 0.5], [0.9, 0.6, 0.2], [1, 1, 0]])
    (tmp_path / "rgb.csv").write_text("# r, g, b\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    out = cvf.apply(image, "lut", file=str(tmp_path / "rgb.csv"), backend=backend)
    grid = np.linspace(0, 1, 5)
    expected = np.stack([np.interp(image[..., c] / full, grid, rows[:, 2 - c]) for c in range(3)], axis=-1)
    assert_close(out, stored(expected, dtype))
    # the same as .npy with 16-bit values, and as a .cube LUT_1D_SIZE file
    np.save(tmp_path / "rgb.npy", np.rint(rows * 65535).astype(np.uint16))
    assert_close(cvf.apply(image, "lut", file=str(tmp_path / "rgb.npy"), backend=backend), stored(expected, dtype))
    (tmp_path / "rgb.cube").write_text("LUT_1D_SIZE 5\n" + "\n".join(" ".join(map(str, r)) for r in rows) + "\n")
    assert_close(cvf.apply(image, "lut", file=str(tmp_path / "rgb.cube"), backend=backend), stored(expected, dtype))


def test_1d_lut_table_hook(tmp_path) -> None:
    (tmp_path / "half.csv").write_text("0\n0.5\n")
    lut = cvf.get_filter("lut")
    params = lut.resolve({"file": str(tmp_path / "half.csv")})
    np.testing.assert_array_equal(cube_module.lut_table(params, ImageInfo(1, 1, 3, np.dtype(np.uint8))),
                                  np.rint(np.arange(256) * 0.5))
    cube = lut.resolve({"file": str(FIXTURES / "warm.cube")})
    assert cube_module.lut_table(cube, ImageInfo(1, 1, 3, np.dtype(np.uint8))) is None  # not per-channel
    assert cube_module.lut_table(cube, ImageInfo(1, 1, 1, np.dtype(np.uint8))).shape == (256,)
    assert cube_module.lut_file_of(cube).cube.size == 7


def test_cli_spec_reads_cube_relative_to_base_dir() -> None:
    pipe = Pipeline.parse("lut:file=@warm.cube", base_dir=FIXTURES)
    image = photo(20, 20, 3, np.uint8)
    np.testing.assert_array_equal(pipe(image, backend="cpu"),
                                  cvf.apply(image, "lut", file=str(FIXTURES / "warm.cube"), backend="cpu"))
    assert Pipeline.parse(pipe.to_spec()) == pipe


BAD_FILES = {
    "missing.cube": (None, "cannot be read"),
    "lut.png": ("x", "must end in one of"),
    "empty.cube": ("# nothing\n\n", "is empty"),
    "nosize.cube": ("TITLE \"x\"\n0 0 0\n", "no LUT_1D_SIZE or LUT_3D_SIZE"),
    "count.cube": ("LUT_3D_SIZE 2\n" + "0 0 0\n" * 7, "has 7 data rows; LUT_3D_SIZE 2^3 needs 8"),
    "row.cube": ("LUT_3D_SIZE 2\n" + "0 0 0\n" * 3 + "0 0\n" + "0 0 0\n" * 4, "line 5: expected 3 numbers"),
    "number.cube": ("LUT_1D_SIZE 2\n0 0 0\n1 x 1\n", "line 3: expected numbers"),
    "keyword.cube": ("LUT_3D_SIZE 2\nLUT_SHAPE 3\n" + "0 0 0\n" * 8, "line 2: unknown keyword 'LUT_SHAPE'"),
    "size.cube": ("LUT_3D_SIZE 1\n0 0 0\n", "line 1: LUT_3D_SIZE must be an integer from 2 to 256"),
    "domain.cube": ("LUT_1D_SIZE 2\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 0 1\n0 0 0\n1 1 1\n", "DOMAIN_MAX must be above"),
    "late.cube": ("LUT_1D_SIZE 2\n0 0 0\nTITLE \"x\"\n1 1 1\n", "line 3: keyword TITLE after the data"),
    "nan.cube": ("LUT_1D_SIZE 2\n0 0 0\n1 nan 1\n", "line 3: numbers must be finite"),
    "cols.csv": ("0,1\n1,0\n", "line 1: expected 1 value or 3"),
    "ragged.csv": ("0\n1,1,1\n", "line 2: has 3 values where earlier rows have 1"),
    "huge.csv": ("0\n70000\n", "above 65535"),
    "one.txt": ("0.5\n", "must have 2 to 65536 rows"),
    "binary.cube": (b"\xff\xfe\x00LUT", "not a text file"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_lut_files_name_the_file_and_the_problem(tmp_path, name: str) -> None:
    content, problem = BAD_FILES[name]
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(ParameterError) as err:
        Pipeline.parse(f"lut:file={path}")
    message = str(err.value)
    assert message.startswith(f"lut: file={path} ") and problem in message, message
