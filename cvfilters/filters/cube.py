"""LUT files: per-channel 1-D tables and 3-D colour cubes (``.cube``), the ``lut`` filter.

Files
    ``.cube`` (Adobe / DaVinci Resolve text format): ``TITLE``, ``LUT_1D_SIZE N``
    (2..65536) and/or ``LUT_3D_SIZE N`` (2..256), ``DOMAIN_MIN r g b`` /
    ``DOMAIN_MAX r g b``, Resolve's ``LUT_1D_INPUT_RANGE lo hi`` /
    ``LUT_3D_INPUT_RANGE lo hi``, ``#`` comments, then rows of three numbers R G B
    (red varies fastest in a 3-D cube). A file with both sizes is Resolve's shaper
    form: the 1-D rows come first and are applied before the cube.
    ``.csv`` / ``.txt``: rows of 1 number (all channels) or 3 numbers (R, G, B, the
    .cube column order, not OpenCV's BGR) separated by commas, semicolons or spaces;
    ``#`` starts a comment. ``.npy``: an (N,), (N, 1) or (N, 3) array.
    Rows are outputs for inputs evenly spaced over the domain (0..1 unless the .cube
    says otherwise); in between, values are interpolated linearly (1-D) or
    trilinearly (3-D); inputs outside the domain are clamped to it.

How it runs
    A 1-D file is a per-channel curve: a lookup table for uint8/uint16 (exposed by
    ``Filter.table``) and exact linear interpolation with ``remap`` on a 1 x N row
    for float32, on every backend. A 3-D cube is trilinear interpolation written
    with backend primitives: the cube is laid out as an N x N^2 image (slice ``b``
    at columns ``b*N .. b*N+N-1``), two bilinear ``remap`` calls sample the two
    blue slices around each pixel and a blend by the blue fraction finishes the
    trilinear weight. It runs on the device on opencl and cuda (cpu runs the same
    calls on numpy), with the cube uploaded once and cached. Cubes above 128 nodes
    a side (layout wider than ``remap`` coordinates allow) run in numpy on the
    host, counted as ``lut (3-D cube on host)`` off the cpu. Small cubes are first
    refined to 33+ nodes by an integer factor (the same trilinear function), which
    keeps fixed-point ``remap`` weights (1/32 pixel in some OpenCV builds) accurate.
    Gray images take the luma of the cube at (v, v, v): a lookup table too.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..context import Context
from ..errors import ParameterError
from ..params import Param
from ..pixels import LUMA_BGR, full_scale
from ..registry import register
from .color import Curve, PointOp

FILTER = "lut"
SUFFIXES = (".cube", ".csv", ".txt", ".npy")
MAX_1D = 65536
MAX_3D = 256
MAX_REMAP_NODES = 128  # a 3-D layout 128^2 = 16384 wide; remap coordinates must stay below 32767
MAX_REMAP_ROW = 16384  # longest 1-D row interpolated with remap
MIN_NODES_3D = 33  # small cubes are refined to at least this many nodes a side
MIN_NODES_1D = 1025
SCALES = {"auto": None, "1": 1.0, "255": 255.0, "65535": 65535.0}
_CHUNK = 1 << 18  # pixels per block of the numpy trilinear path
_KEYWORDS = ("TITLE", "LUT_1D_SIZE", "LUT_3D_SIZE", "DOMAIN_MIN", "DOMAIN_MAX", "LUT_1D_INPUT_RANGE",
             "LUT_3D_INPUT_RANGE")


class LutFileError(ValueError):
    """A problem with a LUT file's contents (turned into a ParameterError naming the file)."""


@dataclass(frozen=True, eq=False)
class Lut1D:
    """Per-channel 1-D table: ``values[k, c]`` is the output (0..1) of channel c (B, G, R) at entry k.

    Entry k sits at input ``low[c] + k / (N - 1) * (high[c] - low[c])``.
    """

    values: np.ndarray  # (N, 3) float64, B G R columns
    low: np.ndarray  # (3,) B G R
    high: np.ndarray

    @property
    def size(self) -> int:
        return len(self.values)

    def curve(self, c: int) -> Curve:
        xs = np.linspace(self.low[c], self.high[c], self.size)
        ys = self.values[:, c]
        return lambda v: np.interp(v, xs, ys)

    def curves(self) -> list[Curve]:
        if np.all(self.values == self.values[:, :1]) and np.all(self.low == self.low[0]) and np.all(
                self.high == self.high[0]):
            return [self.curve(0)]
        return [self.curve(c) for c in range(3)]

    def __call__(self, bgr: np.ndarray) -> np.ndarray:
        """Apply to normalised (..., 3) B, G, R values."""
        return np.stack([self.curve(c)(bgr[..., c]) for c in range(3)], axis=-1)

    def refined(self) -> Lut1D:
        """The same piecewise-linear function on at least MIN_NODES_1D entries (integer refinement)."""
        factor = math.ceil((MIN_NODES_1D - 1) / (self.size - 1))
        if factor <= 1 or (self.size - 1) * factor + 1 > MAX_REMAP_ROW:
            return self
        t = np.linspace(0.0, 1.0, (self.size - 1) * factor + 1)
        grid = np.linspace(0.0, 1.0, self.size)
        values = np.stack([np.interp(t, grid, self.values[:, c]) for c in range(3)], axis=-1)
        return Lut1D(values, self.low, self.high)


@dataclass(frozen=True, eq=False)
class Cube3D:
    """3-D table: ``values[b, g, r]`` is the (B, G, R) output (0..1) at node (b, g, r).

    Node k of channel c sits at input ``low[c] + k / (N - 1) * (high[c] - low[c])``.
    """

    values: np.ndarray  # (N, N, N, 3) float32
    low: np.ndarray  # (3,) B G R
    high: np.ndarray

    @property
    def size(self) -> int:
        return self.values.shape[0]

    def node_coords(self, bgr: np.ndarray) -> np.ndarray:
        """Normalised (..., 3) inputs as node coordinates 0..N-1 (clamped to the domain)."""
        values = np.asarray(bgr)
        dtype = np.float32 if values.dtype == np.float32 else np.float64
        low, span = self.low.astype(dtype), (self.high - self.low).astype(dtype)
        return np.clip((values - low) / span, 0.0, 1.0) * dtype(self.size - 1)

    def __call__(self, bgr: np.ndarray) -> np.ndarray:
        """Trilinear interpolation at normalised (..., 3) B, G, R inputs, in numpy (float32 result)."""
        bgr = np.asarray(bgr)
        flat_in = bgr.reshape(-1, 3)
        out = np.empty(flat_in.shape, np.float32)
        for start in range(0, len(flat_in), _CHUNK):
            out[start:start + _CHUNK] = self._trilinear(self.node_coords(flat_in[start:start + _CHUNK]))
        return out.reshape(bgr.shape)

    def _trilinear(self, x: np.ndarray) -> np.ndarray:
        n = self.size
        i0 = np.minimum(np.floor(x), n - 2).astype(np.intp)
        f = (x - i0).astype(np.float32)
        base = (i0[:, 0] * n + i0[:, 1]) * n + i0[:, 2]
        flat = self.values.reshape(-1, 3)
        fb, fg, fr = f[:, 0:1], f[:, 1:2], f[:, 2:3]

        def along_r(offset: int) -> np.ndarray:
            low = flat[base + offset]
            return low + fr * (flat[base + offset + 1] - low)

        g0 = along_r(0)
        g0 += fg * (along_r(n) - g0)
        g1 = along_r(n * n)
        g1 += fg * (along_r(n * n + n) - g1)
        return g0 + fb * (g1 - g0)

    def refined(self) -> Cube3D:
        """The same trilinear function on at least MIN_NODES_3D nodes a side (integer refinement).

        Within each refined cell the original interpolant is trilinear, so sampling it at
        the refined nodes and interpolating again reproduces it exactly.
        """
        factor = math.ceil((MIN_NODES_3D - 1) / (self.size - 1))
        if factor <= 1:
            return self
        nodes = (self.size - 1) * factor + 1
        t = np.linspace(0.0, 1.0, nodes)
        grid = np.stack(np.meshgrid(t, t, t, indexing="ij"), axis=-1)  # [b, g, r] -> (tb, tg, tr)
        values = self(self.low + grid * (self.high - self.low))
        return Cube3D(values.astype(np.float32), self.low, self.high)

    def layout(self) -> np.ndarray:
        """The cube as an N x N^2 3-channel float32 image: row g, column b * N + r."""
        n = self.size
        return np.ascontiguousarray(self.values.transpose(1, 0, 2, 3).reshape(n, n * n, 3), dtype=np.float32)


@dataclass(frozen=True, eq=False)
class LutFile:
    """A parsed LUT file: a 1-D table, a 3-D cube, or a 1-D shaper followed by a cube."""

    path: str
    title: str
    table: Lut1D | None
    cube: Cube3D | None
    stamp: tuple[int, int]  # (mtime_ns, size) of the file it was read from

    def __call__(self, bgr: np.ndarray) -> np.ndarray:
        """The whole LUT on normalised (..., 3) B, G, R values, in numpy (unclipped)."""
        values = self.table(bgr) if self.table is not None else bgr
        return self.cube(values) if self.cube is not None else values

    def gray_curve(self) -> Curve:
        """Gray images: the BT.601 luma of the LUT's colour for (v, v, v)."""

        def curve(v: np.ndarray) -> np.ndarray:
            v = np.asarray(v)
            colour = np.clip(self(np.repeat(v[..., None], 3, axis=-1)), 0.0, 1.0)
            return colour @ LUMA_BGR

        return curve


# ---------------------------------------------------------------- reading files
def load_lut(file: str | os.PathLike[str], scale: str = "auto") -> LutFile:
    """Read and validate a LUT file (cached per path, modification time and size).

    Raises
    ------
    ParameterError
        ``lut: file=PATH ...`` naming the file and what is wrong with it.
    """
    path = os.fspath(file)
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise _file_error(path, f"cannot be read ({exc.strerror or exc})") from None
    if not os.path.isfile(path):
        raise _file_error(path, "is not a file")
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise _file_error(path, f"must end in one of {', '.join(SUFFIXES)} (a .cube colour cube or a 1-D table)")
    try:
        return _load(path, scale, (stat.st_mtime_ns, stat.st_size))
    except LutFileError as exc:
        raise _file_error(path, str(exc)) from None


def _file_error(path: str, problem: str) -> ParameterError:
    return ParameterError(FILTER, "file", f"={path} {problem}")


@lru_cache(maxsize=16)
def _load(path: str, scale: str, stamp: tuple[int, int]) -> LutFile:
    suffix = Path(path).suffix.lower()
    if suffix == ".npy":
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise LutFileError(f"is not a readable .npy array ({exc})") from None
        return LutFile(path, "", _table_from_array(array, scale), None, stamp)
    text = _read_text(path)
    if suffix == ".cube":
        return _parse_cube(text, path, stamp)
    return LutFile(path, "", _table_from_array(_parse_rows(text), scale), None, stamp)


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return handle.read()
    except UnicodeDecodeError:
        raise LutFileError("is not a text file (not UTF-8)") from None
    except OSError as exc:
        raise LutFileError(f"cannot be read ({exc.strerror or exc})") from None


def _content_lines(text: str) -> list[tuple[int, str]]:
    lines = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append((number, line))
    if not lines:
        raise LutFileError("is empty (no data rows)")
    return lines


def _numbers(number: int, tokens: list[str], count: int | None = None) -> list[float]:
    try:
        values = [float(t) for t in tokens]
    except ValueError:
        raise LutFileError(f"line {number}: expected numbers, got {' '.join(tokens)!r}") from None
    if count is not None and len(values) != count:
        raise LutFileError(f"line {number}: expected {count} numbers, got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise LutFileError(f"line {number}: numbers must be finite")
    return values


def _parse_rows(text: str) -> np.ndarray:
    rows, width = [], None
    for number, line in _content_lines(text):
        values = _numbers(number, [t for t in re.split(r"[,;\s]+", line) if t])
        if len(values) not in (1, 3):
            raise LutFileError(f"line {number}: expected 1 value or 3 (R, G, B), got {len(values)}")
        if width is not None and len(values) != width:
            raise LutFileError(f"line {number}: has {len(values)} values where earlier rows have {width}")
        width = len(values)
        rows.append(values)
    return np.asarray(rows, dtype=np.float64)


def _table_from_array(array: np.ndarray, scale: str) -> Lut1D:
    array = np.asarray(array)
    if array.dtype.kind not in "uif":
        raise LutFileError(f"must hold numbers, not {array.dtype}")
    array = array.astype(np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[1] not in (1, 3):
        raise LutFileError(f"must be N values or N rows of 3 (R, G, B), not shape {array.shape}")
    if not 2 <= len(array) <= MAX_1D:
        raise LutFileError(f"must have 2 to {MAX_1D} rows, not {len(array)}")
    if not np.all(np.isfinite(array)):
        raise LutFileError("holds NaN or infinite values")
    full = SCALES[scale]
    if full is None:
        top = float(array.max())
        full = next((s for s in (1.0, 255.0, 65535.0) if top <= s), None)
        if full is None:
            raise LutFileError(f"has values up to {top:g}, above 65535 (give scale=)")
    bgr = np.repeat(array, 3, axis=1) if array.shape[1] == 1 else array[:, ::-1]
    return Lut1D(np.ascontiguousarray(bgr / full), np.zeros(3), np.ones(3))


def _parse_cube(text: str, path: str, stamp: tuple[int, int]) -> LutFile:
    lines = text.splitlines()
    header: dict[str, tuple[int, list[str]]] = {}
    first_data = len(lines)
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        word = tokens[0].upper()
        if re.match(r"^[-+.\d]", word):
            first_data = number - 1
            break
        if word not in _KEYWORDS:
            raise LutFileError(f"line {number}: unknown keyword {tokens[0]!r} (known: {', '.join(_KEYWORDS)})")
        if word in header:
            raise LutFileError(f"line {number}: {word} is given twice")
        header[word] = (number, tokens[1:])
    if not header and first_data == len(lines):
        raise LutFileError("is empty (no data rows)")
    title = " ".join(header["TITLE"][1]).strip('"') if "TITLE" in header else ""
    size1 = _size(header, "LUT_1D_SIZE", MAX_1D)
    size3 = _size(header, "LUT_3D_SIZE", MAX_3D)
    if size1 is None and size3 is None:
        raise LutFileError("has no LUT_1D_SIZE or LUT_3D_SIZE line")
    rows = _data_rows(lines, first_data)
    expected = (size1 or 0) + (size3 or 0) ** 3
    if len(rows) != expected:
        sizes = " + ".join(f"{k} {v}" + ("^3" if k == "LUT_3D_SIZE" else "") for k, v in
                           (("LUT_1D_SIZE", size1), ("LUT_3D_SIZE", size3)) if v)
        raise LutFileError(f"has {len(rows)} data rows; {sizes} needs {expected}")
    low, high = _domain(header)
    table = cube = None
    if size1:
        lo1, hi1 = _range(header, "LUT_1D_INPUT_RANGE", low, high)
        table = Lut1D(np.ascontiguousarray(rows[:size1, ::-1]), lo1, hi1)
    if size3:
        lo3, hi3 = _range(header, "LUT_3D_INPUT_RANGE", low, high)
        values = rows[size1 or 0:].reshape(size3, size3, size3, 3)[..., ::-1]  # [b, g, r] -> (B, G, R)
        cube = Cube3D(np.ascontiguousarray(values, dtype=np.float32), lo3, hi3)
    return LutFile(path, title, table, cube, stamp)


def _data_rows(lines: list[str], start: int) -> np.ndarray:
    """The R G B rows from line index ``start`` on: numpy's C parser, or a line-by-line diagnosis."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data" is reported below
            rows = np.loadtxt(lines[start:], comments="#", ndmin=2, dtype=np.float64)
        if rows.size and rows.shape[1] == 3 and np.all(np.isfinite(rows)):
            return rows
    except ValueError:
        pass
    count = 0
    for number, raw in enumerate(lines[start:], start + 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        if not re.match(r"^[-+.\d]", tokens[0]) and tokens[0].upper() in _KEYWORDS:
            raise LutFileError(f"line {number}: keyword {tokens[0].upper()} after the data rows")
        if len(tokens) != 3 and re.match(r"^[-+.\d]", tokens[0]):
            raise LutFileError(f"line {number}: expected 3 numbers (R G B), got {len(tokens)}")
        _numbers(number, tokens, 3)
        count += 1
    if count == 0:
        raise LutFileError("has no data rows")
    raise LutFileError("has data rows numpy cannot read")  # not reached for files the checks above accept


def _size(header: Mapping[str, tuple[int, list[str]]], key: str, largest: int) -> int | None:
    if key not in header:
        return None
    number, tokens = header[key]
    if len(tokens) != 1 or not tokens[0].isdigit() or not 2 <= int(tokens[0]) <= largest:
        raise LutFileError(f"line {number}: {key} must be an integer from 2 to {largest}, not {' '.join(tokens)!r}")
    return int(tokens[0])


def _domain(header: Mapping[str, tuple[int, list[str]]]) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.zeros(3), np.ones(3)
    for key in ("DOMAIN_MIN", "DOMAIN_MAX"):
        if key in header:
            number, tokens = header[key]
            values = np.array(_numbers(number, tokens, 3))[::-1]  # R G B -> B G R
            if key == "DOMAIN_MIN":
                low = values
            else:
                high = values
    if np.any(high <= low):
        raise LutFileError("DOMAIN_MAX must be above DOMAIN_MIN in every channel")
    return low, high


def _range(header: Mapping[str, tuple[int, list[str]]], key: str, low: np.ndarray,
           high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if key not in header:
        return low, high
    number, tokens = header[key]
    lo, hi = _numbers(number, tokens, 2)
    if hi <= lo:
        raise LutFileError(f"line {number}: {key} maximum must be above its minimum")
    return np.full(3, lo), np.full(3, hi)


# ---------------------------------------------------------------- running
def _coords(ctx: Context, plane: Any, scale: float, low: float, high: float, nodes: int) -> Any:
    """``(plane / scale - low) / (high - low) * (nodes - 1)`` as float32 (node coordinates)."""
    gain = (nodes - 1) / (high - low)
    return ctx.be.convert(plane, np.float32, gain / scale, -low * gain)


def _interp_rows(ctx: Context, lut: LutFile, table: Lut1D, planes: list[Any], columns: list[int],
                 scale: float) -> list[Any]:
    """Exact linear interpolation of each plane through a column of ``table``, with ``remap`` on a 1 x N row.

    ``planes[i]`` (values 0..scale) goes through column ``columns[i]`` (0, 1, 2: B, G, R).
    Returns float32 planes on the 0..1 scale (unclipped).
    """
    table = table.refined()
    be = ctx.be
    out = []
    for plane, c in zip(planes, columns, strict=True):
        x = _coords(ctx, plane, scale, table.low[c], table.high[c], table.size)
        row = be.cached(("lut-row", lut.path, lut.stamp, table.size, c),
                        lambda c=c: np.ascontiguousarray(table.values[None, :, c], dtype=np.float32))
        zeros = be.convert(x, np.float32, 0.0, 0.0)
        out.append(be.remap(row, x, zeros, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE))
    return out


def apply_cube(ctx: Context, img: Any, lut: LutFile) -> Any:
    """A 3-D LUT (with its shaper) on a 3-channel native image: ``remap`` trilinear, or numpy for big cubes."""
    spec, be = ctx.spec, ctx.be
    full = spec.max_value
    cube = lut.cube.refined()
    if cube.size > MAX_REMAP_NODES or (lut.table is not None and lut.table.size > MAX_REMAP_ROW):
        return ctx.be.on_host(img, lambda host: _host_apply(lut, host), f"{FILTER} (3-D cube on host)")
    n = cube.size
    uniform = bool(np.all(cube.low == cube.low[0]) and np.all(cube.high == cube.high[0]))
    if lut.table is not None:
        planes = _interp_rows(ctx, lut, lut.table, be.split(img), [0, 1, 2], full)
        xb, xg, xr = (_coords(ctx, p, 1.0, cube.low[c], cube.high[c], n) for c, p in enumerate(planes))
    elif uniform:  # one conversion of the 3-channel image, then split
        xb, xg, xr = be.split(_coords(ctx, img, full, cube.low[0], cube.high[0], n))
    else:
        xb, xg, xr = (_coords(ctx, p, full, cube.low[c], cube.high[c], n) for c, p in enumerate(be.split(img)))
    covered = np.all(cube.low <= 0.0) and np.all(cube.high >= 1.0)
    if spec.dtype == np.float32 or lut.table is not None or not covered:
        # Clamp to the domain; green needs no clamp, remap's replicated border does it.
        xb, xr = be.clip(xb, 0.0, n - 1.0), be.clip(xr, 0.0, n - 1.0)
    # floor(xb) (xb >= 0): xb rounded, less 1 where rounding went up. At xb = n - 1 the
    # second slice, read past the layout's edge, has weight 0.
    rounded = be.convert(be.convert(xb, np.uint16), np.float32)
    b0 = be.select(be.compare(rounded, xb, cv2.CMP_GT), be.convert(rounded, np.float32, 1.0, -1.0), rounded)
    fb = be.add_weighted(xb, 1.0, b0, -1.0)
    map0 = be.add_weighted(xr, 1.0, b0, float(n))
    map1 = be.convert(map0, np.float32, 1.0, float(n))
    layout = be.cached(("lut-cube", lut.path, lut.stamp, n), cube.layout)
    low = be.remap(layout, map0, xg, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE)
    high = be.remap(layout, map1, xg, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE)
    step = be.multiply(be.add_weighted(high, 1.0, low, -1.0), be.merge([fb, fb, fb]))
    out = be.add_weighted(low, 1.0, step, 1.0)
    return be.clip(out, 0.0, 1.0) if spec.dtype == np.float32 else be.convert(out, spec.dtype, full)


def _host_apply(lut: LutFile, host: np.ndarray) -> np.ndarray:
    full = full_scale(host.dtype)
    out = np.clip(lut(host.astype(np.float32) / full), 0.0, 1.0)
    if host.dtype.kind == "u":
        return np.rint(out * full).astype(host.dtype)
    return out.astype(np.float32)


def _lut_float(ctx: Context, img: Any, *, file: str, scale: str, stamp: Any = None) -> Any:
    """Float32 with a 1-D file, or a gray image with a cube: on the device with remap."""
    lut = load_lut(file, scale)
    be = ctx.be
    if lut.cube is not None:  # gray image: (v, v, v) through the cube, then luma
        colour = apply_cube(ctx.with_spec(channels=3), be.merge([img, img, img]), lut)
        return be.clip(be.transform(colour, LUMA_BGR[None, :]), 0.0, 1.0)
    single = len(lut.table.curves()) == 1
    gray = ctx.spec.channels == 1
    if single:
        planes, columns = ([img] if gray else be.split(img)), [0] * (1 if gray else 3)
    else:
        planes, columns = ([img] * 3 if gray else be.split(img)), [0, 1, 2]
    out = [be.clip(p, 0.0, 1.0) for p in _interp_rows(ctx, lut, lut.table, planes, columns, 1.0)]
    if gray and not single:
        return be.clip(be.transform(be.merge(out), LUMA_BGR[None, :]), 0.0, 1.0)
    return out[0] if gray else be.merge(out)


def _curves(params: Mapping[str, Any], full: float) -> list[Curve]:
    lut = load_lut(params["file"], params["scale"])
    return [lut.gray_curve()] if lut.cube is not None else lut.table.curves()


_OP = PointOp(FILTER, _curves, _lut_float)


def _op_params(params: Mapping[str, Any], lut: LutFile) -> dict[str, Any]:
    # The file's stamp is part of the table cache key: an edited file builds a new table.
    return {"file": params["file"], "scale": params["scale"], "stamp": lut.stamp}


def lut_table(params: Mapping[str, Any], spec: Any) -> np.ndarray | None:
    """The lookup table of a ``lut`` step, in ``Filter.table``'s form: a 1-D file, or a cube on a gray spec.

    None for a 3-D cube on a colour spec (not a per-channel table: see
    :func:`lut_file_of`) and for float32. Not declared as ``Filter.table`` because that
    declaration makes a filter a table for every parameter value (fusion relies on it).
    """
    lut = load_lut(params["file"], params["scale"])
    if lut.cube is not None and spec.channels != 1:
        return None
    return _OP.table(_op_params(params, lut), spec)


def lut_file_of(params: Mapping[str, Any]) -> LutFile:
    """The parsed file behind a ``lut`` step (its 1-D ``table`` and/or 3-D ``cube``)."""
    return load_lut(params["file"], params.get("scale", "auto"))


def _check(params: dict[str, Any]) -> str | None:
    load_lut(params["file"], params["scale"])  # raises ParameterError naming the file
    return None


def _run(ctx: Context, img: Any, *, file: str, scale: str) -> Any:
    lut = load_lut(file, scale)
    if lut.cube is None or ctx.spec.channels == 1:
        return _OP.run(ctx, img, _op_params({"file": file, "scale": scale}, lut))
    return apply_cube(ctx, img, lut)


_EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "warm.cube"

lut = register(
    FILTER, category="color", summary="Apply a LUT file: a .cube colour cube (3-D) or a 1-D table per channel.",
    params=(
        Param("file", "path", None, required=True, example=str(_EXAMPLE),
              help="a .cube file (LUT_3D_SIZE and/or LUT_1D_SIZE) or a 1-D table (.csv/.txt rows of 1 or "
                   "3 values R,G,B, or .npy); @path works too (inside a pipeline file, relative to its folder)"),
        Param("scale", "choice", "auto", choices=tuple(SCALES),
              help="full-scale value of a .csv/.txt/.npy table: auto takes 1, 255 or 65535, the smallest "
                   "at or above its largest value; .cube values are always 0..1"),
    ),
    description="""``out = LUT(in)``: a 3-D cube interpolates trilinearly between its nodes
    (``out = sum over the 8 corners of w_b w_g w_r * node``); a 1-D table interpolates
    linearly per channel. Inputs outside the file's domain are clamped to it; outputs
    are clipped to 0..1 of full scale. .cube columns (and 3-column tables) are R, G, B.

    Runs on every backend with lookup tables (1-D, uint8/uint16), ``remap`` (1-D
    float32; 3-D cubes up to 128 nodes, on the device on opencl and cuda) or numpy
    (larger cubes, a counted host fallback). Gray images get the luma of the LUT's
    colour for (v, v, v).""",
    check=_check,
    # No ``table`` hook: whether a file is a per-channel table depends on the file, and
    # fusion picks table filters by declaration; ``lut_table`` gives the table of 1-D files.
)(_run)
