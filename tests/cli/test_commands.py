"""The commands' helpers in this process (:mod:`cvfilters.cli.commands`), each checked exactly.

tests/cli/test_cli.py and tests/cli/test_outcomes.py run whole command lines; this mirror calls
the option parsers, checks and printers directly, with expected values written out by hand,
so that a mutation run of the module has fast tests to run (the command-line files' stats
pass alone outlasted a 300 s bound).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import tifffile

from cvfilters.cli import commands
from cvfilters.core.errors import UsageError
from cvfilters.run.tasks import Outcome, Task


# ---------------------------------------------------------------- lines
def test_echo_and_err_write_one_line_each_err_escaping_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    commands.echo("out\tline")
    commands.err("a\nname")
    assert capsys.readouterr() == ("out\tline\n", "a\\nname\n")


def test_echo_lines_keep_their_place_among_err_lines_in_one_pipe() -> None:
    """``cmd 2>&1 | less``: a piped stdout is block-buffered, so each line is flushed as printed."""
    script = "from cvfilters.cli import commands; commands.echo('one'); commands.err('two'); commands.echo('three')"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # Python's defaults, as a user has them
    done = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env=env, check=True, timeout=60)
    assert done.stdout == b"one\ntwo\nthree\n"


def test_command_exit_carries_its_code() -> None:
    assert commands.CommandExit(3).code == 3 and commands.CommandExit(3).args == (3,)


# ---------------------------------------------------------------- option values
@pytest.mark.parametrize(("text", "wanted"), [(None, None), ("3:8", (3, 8)), (":8", (0, 8)), ("3:", (3, None)),
                                              (":", (0, None)), ("0:1", (0, 1))])
def test_frames_are_start_and_stop(text: str | None, wanted: tuple[int, int | None] | None) -> None:
    assert commands._frame_range(text) == wanted


@pytest.mark.parametrize("text", ["3", "8:3", "3:3", "-1:4", "a:4", "1:b", "1:2:3", ""])
def test_frames_out_of_order_or_not_numbers_are_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as raised:
        commands._frame_range(text)
    assert str(raised.value) == f"--frames {text!r} must be START:STOP with 0 <= START < STOP (either may be empty)"


@pytest.mark.parametrize(("fmt", "wanted"), [(None, None), ("png", ".png"), ("JPG", ".jpg"), (".webp", ".webp"),
                                             ("..tif", ".tif")])
def test_format_is_an_image_extension(fmt: str | None, wanted: str | None) -> None:
    assert commands._extension(fmt) == wanted


@pytest.mark.parametrize("fmt", ["mp4", "txt", "", "p ng"])
def test_a_format_cvfilters_does_not_write_is_a_usage_error(fmt: str) -> None:
    with pytest.raises(UsageError) as raised:
        commands._extension(fmt)
    assert str(raised.value) == f"--format {fmt!r} is not an image format cvfilters writes"


@pytest.mark.parametrize(("value", "wanted"), [("keep", None), ("KEEP", None), ("sRGB", "srgb"),
                                               ("Adobe-RGB", "adobe-rgb"), ("adobergb", "adobergb"),
                                               ("adobe_rgb", "adobe_rgb")])
def test_colour_targets_by_name(value: str, wanted: str | None) -> None:
    assert commands._colour_target(value) == wanted


def test_a_colour_profile_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert commands._colour_target("profiles/p.icc") == os.path.join(str(tmp_path), "profiles", "p.icc")


def test_an_unknown_intent_or_an_unreadable_profile_is_a_usage_error(tmp_path: Path) -> None:
    commands._check_colour("keep", "perceptual")
    commands._check_colour("srgb", "absolute")
    with pytest.raises(UsageError) as raised:
        commands._check_colour("keep", "vivid")
    assert str(raised.value) == "--intent 'vivid' is not one of perceptual, relative, saturation, absolute"
    with pytest.raises(UsageError):
        commands._check_colour(str(tmp_path / "missing.icc"), "perceptual")


def test_memory_budget_in_bytes_or_none() -> None:
    assert commands._budget(None) is None
    assert commands._budget("64M") == 64 * 2**20 and commands._budget("1G") == 2**30


# ---------------------------------------------------------------- checks on the planned tasks
def task(source: str | Path, target: str | Path) -> Task:
    return Task(Path(source), Path(target))


def test_a_format_that_disagrees_with_the_output_suffix_is_a_usage_error(tmp_path: Path) -> None:
    commands._check_format_agrees(None, [task("a.png", tmp_path / "a.jpg")])
    commands._check_format_agrees("jpg", [task("a.png", tmp_path / "a.jpeg")])  # the same format
    commands._check_format_agrees("png", [task("a.png", tmp_path / "a.out")])  # no format named
    with pytest.raises(UsageError) as raised:
        commands._check_format_agrees("png", [task("a.png", tmp_path / "a.png"), task("b.png", tmp_path / "b.jpg")])
    assert str(raised.value) == f"-o {tmp_path / 'b.jpg'} is JPEG but --format png asks for PNG; give one of them"


@pytest.mark.parametrize(("option", "tasks", "failures", "message"), [
    ("--compare", [], [], "--compare needs exactly one input image (not a video, directory or glob)"),
    ("--histogram", [("a.png", "o.png"), ("b.png", "p.png")], [],
     "--histogram needs exactly one input image (not a video, directory or glob)"),
    ("--compare", [("a.png", "o.png")], ["bad"], "--compare needs exactly one input image (not a video, directory "
                                                 "or glob)"),
    ("--compare", [("clip.MP4", "o.mp4")], [], "--compare needs exactly one input image (not a video, directory "
                                               "or glob)"),
    ("--compare", [("-", "o.png")], [], "--compare needs files, not standard input or output"),
    ("--histogram", [("a.png", "-")], [], "--histogram needs files, not standard input or output"),
    ("--compare", [("a.png", "c.png")], [], "--compare c.png: must differ from the input and the output"),
    ("--compare", [("c.png", "o.png")], [], "--compare c.png: must differ from the input and the output"),
])
def test_compare_and_histogram_need_one_image_apart_from_input_and_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str, tasks: list[tuple[str, str]],
        failures: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as raised:
        commands._check_single_image(option, Path("c.png"), [task(*t) for t in tasks], failures)
    assert str(raised.value) == message


def test_one_image_with_another_name_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    commands._check_single_image("--compare", Path("c.png"), [task("a.png", "o.png")], [])


def test_a_tiny_single_file_is_not_probed_for_the_gpus(tmp_path: Path) -> None:
    small, large = tmp_path / "small.png", tmp_path / "large.png"
    small.write_bytes(b"x" * (64 * 1024 - 1))
    large.write_bytes(b"x" * (64 * 1024))
    assert not commands._may_be_large([str(small)])
    assert commands._may_be_large([str(large)])
    assert commands._may_be_large([str(small), str(small)])  # a batch
    assert commands._may_be_large([str(tmp_path)])  # a directory
    assert commands._may_be_large([str(tmp_path / "*.png")])  # a glob


def test_only_one_streamed_or_large_file_runs_in_tiles(tmp_path: Path) -> None:
    assert not commands._runs_in_tiles([str(tmp_path / "missing.png")])
    assert not commands._runs_in_tiles([str(tmp_path)])
    (tmp_path / "tiny.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert not commands._runs_in_tiles([str(tmp_path / "tiny.png")])


def png_header(path: Path, width: int, height: int) -> None:
    """A PNG whose header promises an 8-bit RGB image of this size (its pixels are never read)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunks = chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunks)


def test_a_streamed_tiff_or_a_file_large_by_its_header_runs_in_tiles(tmp_path: Path) -> None:
    tiff, big, small = tmp_path / "small.tif", tmp_path / "big.png", tmp_path / "small.png"
    tifffile.imwrite(tiff, np.zeros((4, 4, 3), np.uint8))  # a plain TIFF streams, however small
    png_header(big, 4000, 4000)  # 48 M samples: over 256 MiB at the peak however the peak is counted
    png_header(small, 64, 64)
    assert commands._runs_in_tiles([str(tiff)])
    assert commands._runs_in_tiles([str(big)])
    assert not commands._runs_in_tiles([str(small)])
    assert not commands._runs_in_tiles([str(tiff), str(tiff)])  # a batch never


# ---------------------------------------------------------------- outcomes
def outcome(status: str, message: str = "", warnings: list[str] | None = None,
            report: list[str] | None = None) -> Outcome:
    return Outcome(task("a.png", "o.png"), status, message, warnings or [], report or [])


@pytest.mark.parametrize(("result", "explain", "lines"), [
    (outcome("failed", "a.png: broken", ["odd"]), False, "warning: odd\nerror: a.png: broken\n"),
    (outcome("skipped", "o.png: exists, skipped"), True, "o.png: exists, skipped\n"),
    (outcome("done", "", ["w1", "w2"], ["step 1", "step 2"]), True, "warning: w1\nwarning: w2\nstep 1\nstep 2\n"),
    (outcome("done", "", [], ["step 1"]), False, ""),
])
def test_an_outcome_prints_its_warnings_then_its_status(capsys: pytest.CaptureFixture[str], result: Outcome,
                                                         explain: bool, lines: str) -> None:
    commands._print_outcome(result, explain)
    assert capsys.readouterr() == ("", lines)


# ---------------------------------------------------------------- list, info, backends
def test_list_prints_aligned_columns_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    commands.list_filters(category="blur", as_json=True)
    out = capsys.readouterr().out
    assert out.startswith('[\n  {\n    "name": ')  # indented by two
    entries = json.loads(out)
    assert entries and all(set(e) == {"name", "category", "summary"} and e["category"] == "blur" for e in entries)
    commands.list_filters(category="blur", as_json=False)
    lines = capsys.readouterr().out.splitlines()
    width = max(len(e["name"]) for e in entries)
    assert lines == [f"{e['name'].ljust(width)}  {'blur'.ljust(9)}  {e['summary']}" for e in entries]


def test_info_prints_a_filter_as_text_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    commands.info(name="invert", as_json=True)
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == ["{", '  "name": "invert",', '  "category": "color",']
    data = json.loads(out)
    assert data["name"] == "invert" and data["params"] == []
    commands.info(name="invert", as_json=False)
    assert capsys.readouterr().out.startswith("invert")


def test_backends_prints_one_row_each(capsys: pytest.CaptureFixture[str]) -> None:
    commands.backends(as_json=True)
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == ["[", "  {", '    "name": "cpu",']
    rows = json.loads(out)
    assert [row["name"] for row in rows] == ["cpu", "opencl", "cuda"]
    commands.backends(as_json=False)
    lines = capsys.readouterr().out.splitlines()
    for row, line in zip(rows, lines, strict=True):
        state = "available" if row["available"] else "unavailable"
        detail = row["device"] if row["available"] else row["reason"]
        assert line == f"{row['name'].ljust(7)} {state.ljust(11)}  {detail}"
