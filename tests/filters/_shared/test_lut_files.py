"""Reading LUT files (cvfilters.filters._shared.lut_files.load_lut): tables written by hand here,
what they become, and each refusal's one-line message."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from cvfilters.filters._shared.lut_files import load_lut
from cvfilters.filters.cube import lut_file_of


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _refusal(path: Path, scale: str = "auto") -> str:
    with pytest.raises(ParameterError) as caught:
        load_lut(path, scale)
    return str(caught.value).removeprefix(f"lut: file={path} ")


def test_text_tables_rows_comments_and_separators(tmp_path: Path) -> None:
    rgb = _write(tmp_path, "t.txt", "# R G B\n0, 10; 20  # first\n\n255 128 64\n")
    table = load_lut(rgb).table
    assert table is not None
    np.testing.assert_allclose(table.values, [[20 / 255, 10 / 255, 0.0], [64 / 255, 128 / 255, 1.0]])  # B G R
    np.testing.assert_array_equal(table.low, [0, 0, 0])
    np.testing.assert_array_equal(table.high, [1, 1, 1])
    gray = load_lut(_write(tmp_path, "g.csv", "0\n0.5\n1\n")).table
    assert gray is not None
    np.testing.assert_allclose(gray.values, [[0, 0, 0], [0.5, 0.5, 0.5], [1, 1, 1]])  # scale 1 (top <= 1)
    assert load_lut(_write(tmp_path, "x.txt", "0\n300\n")).table.values[-1, 0] == pytest.approx(300 / 65535)
    given = load_lut(_write(tmp_path, "s.txt", "0\n1\n"), "255").table  # scale= given: not guessed from the top
    assert given is not None and given.values[-1, 0] == pytest.approx(1 / 255)


def test_text_table_refusals(tmp_path: Path) -> None:
    assert _refusal(_write(tmp_path, "e.txt", "# only a comment\n\n")) == "is empty (no data rows)"
    assert _refusal(_write(tmp_path, "w.txt", "0 0.5\n1\n")) == "line 1: expected 1 value or 3 (R, G, B), got 2"
    assert _refusal(_write(tmp_path, "m.txt", "0\n1 1 1\n")) == "line 2: has 3 values where earlier rows have 1"
    assert _refusal(_write(tmp_path, "n.txt", "0\nabc 1\n")) == "line 2: expected numbers, got 'abc 1'"
    assert _refusal(_write(tmp_path, "i.txt", "0\ninf\n")) == "line 2: numbers must be finite"
    assert _refusal(_write(tmp_path, "one.txt", "0.5\n")) == "must have 2 to 65536 rows, not 1"
    assert _refusal(_write(tmp_path, "big.txt", "0\n70000\n")) == "has values up to 70000, above 65535 (give scale=)"
    hashes = _write(tmp_path, "h.txt", "0 # a # b\n1\n")  # everything after the first # is a comment
    assert load_lut(hashes).table is not None


def test_npy_tables(tmp_path: Path) -> None:
    np.save(tmp_path / "ok.npy", np.array([[0, 0, 0], [255, 255, 0]], np.uint8))
    table = load_lut(tmp_path / "ok.npy").table
    assert table is not None
    np.testing.assert_allclose(table.values, [[0, 0, 0], [0, 1, 1]])
    np.save(tmp_path / "s.npy", np.array(["a", "b"]))
    assert _refusal(tmp_path / "s.npy") == "must hold numbers, not <U1"
    np.save(tmp_path / "r.npy", np.zeros((3, 2)))
    assert _refusal(tmp_path / "r.npy") == "must be N values or N rows of 3 (R, G, B), not shape (3, 2)"
    np.save(tmp_path / "c.npy", np.zeros((2, 3, 1)))
    assert _refusal(tmp_path / "c.npy") == "must be N values or N rows of 3 (R, G, B), not shape (2, 3, 1)"
    np.save(tmp_path / "f.npy", np.array([0.0, np.nan]))
    assert _refusal(tmp_path / "f.npy") == "holds NaN or infinite values"
    np.save(tmp_path / "most.npy", np.linspace(0, 1, 65536))
    assert load_lut(tmp_path / "most.npy").table.values.shape == (65536, 3)


def test_cube_input_ranges(tmp_path: Path) -> None:
    ramp = "0 0 0\n1 1 1\n"
    cube = _write(tmp_path, "r.cube", f"LUT_1D_SIZE 2\nLUT_1D_INPUT_RANGE -0.5 2\n{ramp}")
    table = load_lut(cube).table
    assert table is not None
    np.testing.assert_array_equal(table.low, [-0.5] * 3)
    np.testing.assert_array_equal(table.high, [2.0] * 3)
    bad = _write(tmp_path, "b.cube", f"LUT_1D_SIZE 2\nLUT_1D_INPUT_RANGE 1 1\n{ramp}")
    assert _refusal(bad) == "line 2: LUT_1D_INPUT_RANGE maximum must be above its minimum"
    short = _write(tmp_path, "s.cube", f"LUT_1D_SIZE 2\nLUT_1D_INPUT_RANGE 0\n{ramp}")
    assert _refusal(short) == "line 2: expected 2 numbers, got 1"


def test_npy_size_limits_and_text_that_is_not_utf8(tmp_path: Path) -> None:
    np.save(tmp_path / "long.npy", np.zeros(300_000, np.uint8))  # a small file with too many values: its header says
    assert _refusal(tmp_path / "long.npy") == "holds 300000 = 300000 values, more than 262144"
    np.save(tmp_path / "big.npy", np.zeros(263_000))  # float64: refused by its size, not read (128-byte header)
    assert _refusal(tmp_path / "big.npy") == "is 2104128 bytes, larger than the limit of 2052 KiB"
    (tmp_path / "latin.txt").write_bytes(b"0\n\xe9\n")
    assert _refusal(tmp_path / "latin.txt") == "is not a text file (not UTF-8)"


# The parsed file is cached per path, modification time and size, and so are the tables built from it (on the
# host and on the device): an edited file, or another file of the same size and time, is another LUT.
# Two-node tables: "0, 1" is the identity, "1, 0" the inversion v -> full - v (exact in uint8, 1e-6 in float32).
IDENTITY = {".txt": "0\n1\n", ".cube": "LUT_1D_SIZE 2\n0 0 0\n1 1 1\n"}
INVERSION = {".txt": "1\n0\n", ".cube": "LUT_1D_SIZE 2\n1 1 1\n0 0 0\n"}
RAMP = np.arange(256, dtype=np.uint8).reshape(16, 16)


def _write_lut(path: Path, inverted: bool, when: int) -> str:
    if path.suffix == ".npy":
        np.save(path, np.array([1.0, 0.0] if inverted else [0.0, 1.0]))
    else:
        path.write_text((INVERSION if inverted else IDENTITY)[path.suffix])
    os.utime(path, ns=(when, when))
    return str(path)


def _check_through(path: str, inverted: bool) -> None:
    out8 = cvf.apply(RAMP, "lut", file=path)
    np.testing.assert_array_equal(out8, 255 - RAMP if inverted else RAMP)
    ramp = RAMP.astype(np.float32) / 255
    np.testing.assert_allclose(cvf.apply(ramp, "lut", file=path), 1 - ramp if inverted else ramp, rtol=0, atol=1e-6)


@pytest.mark.parametrize("suffix", [".txt", ".npy", ".cube"])
def test_an_edited_file_and_a_file_of_the_same_size_and_time_are_other_luts(tmp_path: Path, suffix: str) -> None:
    path = _write_lut(tmp_path / f"l{suffix}", False, 10**18)
    _check_through(path, False)
    assert lut_file_of({"file": path}).title == ""  # no TITLE line
    _check_through(_write_lut(tmp_path / f"l{suffix}", True, 2 * 10**18), True)  # the same path, edited
    twin = _write_lut(tmp_path / f"twin{suffix}", False, 2 * 10**18)  # the same size and time as the edited file
    _check_through(twin, False)


def test_two_cubes_of_the_same_size_and_time_are_two_luts(tmp_path: Path) -> None:
    corners = [(r, g, b) for b in (0, 1) for g in (0, 1) for r in (0, 1)]  # red fastest, as .cube files list them
    image = np.dstack([RAMP, RAMP[::-1], RAMP.T])
    for name, inverted in (("a.cube", False), ("b.cube", True)):
        rows = "".join(f"{1 - r} {1 - g} {1 - b}\n" if inverted else f"{r} {g} {b}\n" for r, g, b in corners)
        (tmp_path / name).write_text("LUT_3D_SIZE 2\n" + rows)
        os.utime(tmp_path / name, ns=(10**18, 10**18))
        out = cvf.apply(image, "lut", file=str(tmp_path / name))
        np.testing.assert_array_equal(out, 255 - image if inverted else image)  # trilinear on a linear cube: exact


CORNERS = "".join(f"{r} {g} {b}\n" for b in (0, 1) for g in (0, 1) for r in (0, 1))  # identity, red fastest


def test_cube_header_comments_title_shaper_and_3d_range(tmp_path: Path) -> None:
    """Comments (two # on a line), blank lines and a quoted TITLE in a .cube header; a shaper's own columns
    and the cube after it; LUT_3D_INPUT_RANGE. Catches comments cut at the last #, a lost title, shaper
    columns left R G B, the cube read from row 0 and the 3-D range ignored."""
    text = ('# made by hand # twice\n\nTITLE "Xmas look"  # name\n\nLUT_1D_SIZE 2 # a # b\nLUT_3D_SIZE 2\n'
            "LUT_3D_INPUT_RANGE -1 2\n0 0.25 0.5\n1 0.75 0.5\n" + CORNERS)
    lut = load_lut(_write(tmp_path, "s.cube", text))
    assert lut.title == "Xmas look"
    assert lut.table is not None and lut.cube is not None
    np.testing.assert_array_equal(lut.table.values, [[0.5, 0.25, 0.0], [0.5, 0.75, 1.0]])  # B G R
    np.testing.assert_array_equal(lut.table.low, [0, 0, 0])
    np.testing.assert_array_equal(lut.table.high, [1, 1, 1])
    node = np.indices((2, 2, 2)).transpose(1, 2, 3, 0)  # values[b, g, r] == (b, g, r) for the identity
    assert lut.cube.values.dtype == np.float32  # the documented type of a cube's nodes (half a float64's memory)
    np.testing.assert_array_equal(lut.cube.values, node)
    np.testing.assert_array_equal(lut.cube.low, [-1, -1, -1])
    np.testing.assert_array_equal(lut.cube.high, [2, 2, 2])


def test_cube_header_refusals(tmp_path: Path) -> None:
    """Each .cube header refusal's whole message (the known keywords written out here)."""
    known = "TITLE, LUT_1D_SIZE, LUT_3D_SIZE, DOMAIN_MIN, DOMAIN_MAX, LUT_1D_INPUT_RANGE, LUT_3D_INPUT_RANGE"
    unknown = _write(tmp_path, "k.cube", "LUT_3D_SIZE 2\nLUT_SHAPE 3\n" + CORNERS)
    assert _refusal(unknown) == f"line 2: unknown keyword 'LUT_SHAPE' (known: {known})"
    twice = _write(tmp_path, "t.cube", "LUT_3D_SIZE 2\nTITLE a\nLUT_3D_SIZE 2\n" + CORNERS)
    assert _refusal(twice) == "line 3: LUT_3D_SIZE is given twice"
    assert _refusal(_write(tmp_path, "e.cube", "# nothing\n\n")) == "is empty (no data rows)"
    assert _refusal(_write(tmp_path, "h.cube", "LUT_3D_SIZE 2\n")) == "has no data rows"
    assert _refusal(_write(tmp_path, "d.cube", CORNERS)) == "has no LUT_1D_SIZE or LUT_3D_SIZE line"
    count = _write(tmp_path, "c.cube", "LUT_1D_SIZE 2\nLUT_3D_SIZE 2\n" + "0 0 0\n" * 9)
    assert _refusal(count) == "has 9 data rows; LUT_1D_SIZE 2 + LUT_3D_SIZE 2^3 needs 10"
    one = _write(tmp_path, "o.cube", "LUT_1D_SIZE 3\n" + "0 0 0\n" * 2)
    assert _refusal(one) == "has 2 data rows; LUT_1D_SIZE 3 needs 3"


def test_cube_sizes_one_integer_up_to_the_largest(tmp_path: Path) -> None:
    """LUT_1D_SIZE 65536 (the largest) is read; a size line with two numbers is refused, quoting both.
    Catches the top size refused and a second token ignored."""
    most = load_lut(_write(tmp_path, "m.cube", "LUT_1D_SIZE 65536\n" + "0.5 0.5 0.5\n" * 65536)).table
    assert most is not None and most.values.shape == (65536, 3)
    two = _write(tmp_path, "two.cube", "LUT_3D_SIZE 2 3\n" + CORNERS)
    assert _refusal(two) == "line 1: LUT_3D_SIZE must be an integer from 2 to 256, not '2 3'"


def test_cube_domain_per_channel_and_its_refusals(tmp_path: Path) -> None:
    """DOMAIN_MIN / DOMAIN_MAX are R G B (stored B G R); three numbers each, named by line; max above min.
    Catches the domain left R G B, a short domain accepted and a message without its line."""
    lut = load_lut(_write(tmp_path, "d.cube", "LUT_1D_SIZE 2\nDOMAIN_MIN 0 0.1 0.2\nDOMAIN_MAX 1 2 3\n0 0 0\n1 1 1\n"))
    assert lut.table is not None
    np.testing.assert_allclose(lut.table.low, [0.2, 0.1, 0.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(lut.table.high, [3.0, 2.0, 1.0], rtol=0, atol=1e-12)
    ramp = "0 0 0\n1 1 1\n"
    short = _write(tmp_path, "s.cube", f"LUT_1D_SIZE 2\nDOMAIN_MIN 0 0\n{ramp}")
    assert _refusal(short) == "line 2: expected 3 numbers, got 2"
    bad = _write(tmp_path, "x.cube", f"LUT_1D_SIZE 2\nDOMAIN_MAX 1 x 1\n{ramp}")
    assert _refusal(bad) == "line 2: expected numbers, got '1 x 1'"
    flat = _write(tmp_path, "f.cube", f"LUT_1D_SIZE 2\nDOMAIN_MIN 0 1 0\n{ramp}")
    assert _refusal(flat) == "DOMAIN_MAX must be above DOMAIN_MIN in every channel"


def test_a_file_of_another_kind_is_refused_naming_the_kinds(tmp_path: Path) -> None:
    """A .png given as a LUT: the message lists the four suffixes read (catches a garbled list)."""
    kinds = ".cube, .csv, .txt, .npy"
    png = _write(tmp_path, "l.png", "0\n1\n")
    assert _refusal(png) == f"must end in one of {kinds} (a .cube colour cube or a 1-D table)"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_cube_data_rows_with_comments_and_blank_lines_among_them_are_read(tmp_path: Path, newline: str) -> None:
    """Comment lines, trailing comments (with no space, with two #) and blank lines between a .cube's data rows,
    with Unix, Windows and old Mac line endings, as editors and hand edits leave them. Catches such a valid file
    refused ("numpy cannot read") when the fast reader does not skip comments."""
    rows = ["0 0.25 0.5 # shaper", "# a note between the rows", "", "\t1 0.75 0.5#no space",
            *CORNERS.splitlines()[:4], "  # half way # twice", *CORNERS.splitlines()[4:7], "1 1 1 # a # b", ""]
    path = tmp_path / "c.cube"
    path.write_bytes(newline.join(["LUT_1D_SIZE 2", "LUT_3D_SIZE 2", *rows]).encode())
    lut = load_lut(path)
    assert lut.table is not None and lut.cube is not None
    np.testing.assert_array_equal(lut.table.values, [[0.5, 0.25, 0.0], [0.5, 0.75, 1.0]])  # B G R
    np.testing.assert_array_equal(lut.cube.values, np.indices((2, 2, 2)).transpose(1, 2, 3, 0))  # the identity


def test_cube_data_row_refusals_name_the_line(tmp_path: Path) -> None:
    """Each refusal of a bad data row, whole (the line-by-line diagnosis after the fast reader fails): comment
    lines, trailing comments and blank lines before the bad row are skipped, a size line after the rows is
    named as a keyword, a one-value row as one number of three. Catches the diagnosis stopping at a blank
    line or reading a comment as data, a message without its line, and an IndexError for a one-row file."""
    head = "LUT_1D_SIZE 2\n0 0 0 # a # b\n# a note\n\n"  # lines 1 to 4
    bad = {
        "1 x 1": "line 5: expected numbers, got '1 x 1'",
        "x 1 1": "line 5: expected numbers, got 'x 1 1'",
        "LUT_3D_SIZE 2": "line 5: keyword LUT_3D_SIZE after the data rows",
        "0.5": "line 5: expected 3 numbers (R G B), got 1",
        "inf 1": "line 5: expected 3 numbers, got 2",
        "1_0 1 1": "has data rows numpy cannot read",  # Python's float reads 1_0 (as 10), numpy's parser does not
    }
    for number, (row, message) in enumerate(bad.items()):
        assert _refusal(_write(tmp_path, f"{number}.cube", f"{head}{row}\n")) == message
    assert _refusal(_write(tmp_path, "one.cube", "LUT_1D_SIZE 2\n0 0 0\n")) == "has 1 data rows; LUT_1D_SIZE 2 needs 2"
