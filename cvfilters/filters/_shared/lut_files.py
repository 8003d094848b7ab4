"""Reading LUT files: ``.cube`` (1-D, 3-D, shaper + cube), ``.csv``/``.txt`` rows and ``.npy`` arrays."""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import numpy as np

from cvfilters.core.errors import ParameterError
from cvfilters.core.files import FileRefused, check_regular, npy_array, read_regular, shown
from cvfilters.filters._shared.lut_model import (
    _KEYWORDS,
    FILTER,
    MAX_1D,
    MAX_3D,
    SCALES,
    SUFFIXES,
    Cube3D,
    Lut1D,
    LutFile,
    LutFileError,
)

MAX_LUT_FILE = 640 << 20  # bytes: a 256^3 cube written with 6 decimals takes about 450 MiB
MAX_LUT_NPY = 4 * MAX_1D * 8 + 4096  # bytes: the largest 1-D table as float64, and its header


def load_lut(file: str | os.PathLike[str], scale: str = "auto") -> LutFile:
    """Read and validate a LUT file (cached per path, modification time and size).

    Raises
    ------
    ParameterError
        ``lut: file=PATH ...`` naming the file and what is wrong with it.
    """
    path = os.fspath(file)
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise _file_error(path, f"must end in one of {', '.join(SUFFIXES)} (a .cube colour cube or a 1-D table)")
    try:
        stat = check_regular(path, MAX_LUT_FILE).stat()
        return _load(path, scale, (stat.st_mtime_ns, stat.st_size))
    except FileRefused as exc:
        raise _file_error(path, exc.reason) from None
    except LutFileError as exc:
        raise _file_error(path, str(exc)) from None


def _file_error(path: str, problem: str) -> ParameterError:
    return ParameterError(FILTER, "file", f"={shown(path)} {problem}")


@lru_cache(maxsize=16)
def _load(path: str, scale: str, stamp: tuple[int, int]) -> LutFile:
    suffix = Path(path).suffix.lower()
    data = read_regular(path, MAX_LUT_NPY if suffix == ".npy" else MAX_LUT_FILE)  # FileRefused: load_lut names it
    if suffix == ".npy":
        return LutFile(path, "", _table_from_array(npy_array(data, path, 4 * MAX_1D), scale), None, stamp)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LutFileError("is not a text file (not UTF-8)") from None
    if suffix == ".cube":
        return _parse_cube(text, path, stamp)
    return LutFile(path, "", _table_from_array(_parse_rows(text), scale), None, stamp)


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
    raise LutFileError("has data rows numpy cannot read")  # e.g. "1_0": a float to Python, not to numpy


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


