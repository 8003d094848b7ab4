"""Every outcome of ``cvfilters apply`` is true: exit code, the one stderr line, what is on disk.

Run by subprocess, as a user would. Each case states what existed before, what must exist
after (byte for byte where it must be untouched), and the exit code docs/cli.md documents:
0 all done (skips included), 1 some inputs failed, 2 usage error and nothing written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters
from tests import cli_runner

ROOT = Path(__file__).resolve().parents[2]
ASTRONAUT = ROOT / "fixtures" / "astronaut.png"
BADGE = ROOT / "fixtures" / "badge-rgba.png"


def run_cli(*args: object, cwd: Path, stdin: bytes | None = None, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[bytes]:
    return cli_runner.run_cli(*args, cwd=cwd, stdin=stdin, env=env, text=False)


def lines(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    text = proc.stderr.decode()
    assert "Traceback" not in text, text
    return [line for line in text.splitlines() if line.strip()]


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def one_error(proc: subprocess.CompletedProcess[bytes], code: int, *fragments: str) -> str:
    got = lines(proc)
    assert proc.returncode == code, (proc.returncode, got)
    assert len(got) == 1 and got[0].startswith("error:"), got
    for fragment in fragments:
        assert fragment in got[0], (fragment, got[0])
    return got[0]


def inverted(source: Path) -> np.ndarray:
    return 255 - cv2.imread(str(source), cv2.IMREAD_UNCHANGED)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(ASTRONAUT, tmp_path / "a.png")
    (tmp_path / "old.png").write_bytes(BADGE.read_bytes())  # an existing output
    (tmp_path / "text.png").write_text("not an image\n")
    (tmp_path / "empty.png").write_bytes(b"")
    big = np.zeros((40, 50, 3), np.uint8)
    cv2.imwrite(str(tmp_path / "big.png"), big)
    return tmp_path


# ---------------------------------------------------------------- bad inputs whatever the output
@pytest.mark.parametrize("source, fragment, extra", [
    ("missing.png", "no such file", []),
    ("empty.png", "empty", []),
    ("text.png", "not an image", []),
    ("big.png", "exceeds the limit of 1000", ["--max-pixels", "1000"]),
], ids=["missing", "empty", "text", "too-large"])
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"], ["--no-clobber"]], ids=["plain", "overwrite", "no-clobber"])
def test_a_bad_input_is_an_error_even_when_its_output_exists(folder: Path, source: str, fragment: str,
                                                             extra: list[str], overwrite: list[str]) -> None:
    before = files(folder)
    proc = run_cli("apply", source, "-o", "old.png", "-f", "invert", *extra, *overwrite, cwd=folder)
    one_error(proc, 1, source, fragment)
    assert files(folder) == before


def test_a_bad_input_in_a_batch_is_an_error_even_when_its_output_exists(folder: Path) -> None:
    src, out = folder / "src", folder / "out"
    src.mkdir()
    out.mkdir()
    (src / "text.png").write_text("not an image\n")
    shutil.copy(ASTRONAUT, src / "good.png")
    (out / "text.png").write_bytes(b"an old output")
    proc = run_cli("apply", "src", "-o", "out", "-f", "invert", "--jobs", "1", cwd=folder)
    got = lines(proc)
    assert proc.returncode == 1, got
    assert any(line.startswith("error: src/text.png") for line in got), got
    assert re.search(r"done 1, failed 1", got[-1]), got
    assert (out / "text.png").read_bytes() == b"an old output"


def test_a_bad_video_is_an_error_even_when_its_output_exists(folder: Path) -> None:
    (folder / "clip.mp4").write_bytes(b"not a video at all" * 100)
    (folder / "out.mp4").write_bytes(b"an old output")
    proc = run_cli("apply", "clip.mp4", "-o", "out.mp4", "-f", "invert", "--no-clobber", cwd=folder)
    one_error(proc, 1, "clip.mp4", "cannot be opened as a video")
    assert (folder / "out.mp4").read_bytes() == b"an old output"


# ---------------------------------------------------------------- one named output file
def test_a_named_output_file_is_replaced_by_a_changed_rerun(folder: Path) -> None:
    first = run_cli("apply", "a.png", "-o", "out.png", "-f", "gaussian_blur:sigma=3", cwd=folder)
    assert first.returncode == 0 and not lines(first)
    blurred_3 = cv2.imread(str(folder / "out.png"))
    second = run_cli("apply", "a.png", "-o", "out.png", "-f", "gaussian_blur:sigma=5", cwd=folder)
    assert second.returncode == 0 and not lines(second)
    expected = cv2.GaussianBlur(cv2.imread(str(ASTRONAUT)), (0, 0), 5)  # an independent reference
    got = cv2.imread(str(folder / "out.png"))
    assert np.abs(got.astype(int) - expected).max() <= 1
    assert np.abs(got.astype(int) - blurred_3).max() > 10  # not the old output
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_no_clobber_refuses_an_existing_named_output_and_writes_nothing(folder: Path) -> None:
    before = files(folder)
    proc = run_cli("apply", "a.png", "-o", "old.png", "-f", "invert", "--no-clobber", cwd=folder)
    one_error(proc, 2, "old.png", "--no-clobber")
    assert files(folder) == before
    fresh = run_cli("apply", "a.png", "-o", "new.png", "-f", "invert", "--no-clobber", cwd=folder)
    assert fresh.returncode == 0
    np.testing.assert_array_equal(cv2.imread(str(folder / "new.png")), inverted(ASTRONAUT))


def test_a_rerun_replaces_the_named_compare_sheet_too(folder: Path) -> None:
    for sigma in (1, 6):
        proc = run_cli("apply", "a.png", "-o", "out.png", "-f", f"gaussian_blur:sigma={sigma}", "--compare", "c.png",
                       cwd=folder)
        assert proc.returncode == 0 and not lines(proc)
        right = cv2.imread(str(folder / "c.png"))[:, -256:]
        same = (right == cv2.imread(str(folder / "out.png"))).all(axis=2)
        assert same.mean() > 0.98  # the current result, but for the label drawn on it


def test_overwrite_and_no_clobber_together_is_a_usage_error(folder: Path) -> None:
    before = files(folder)
    one_error(run_cli("apply", "a.png", "-o", "x.png", "-f", "invert", "--overwrite", "--no-clobber", cwd=folder),
              2, "--no-clobber")
    assert files(folder) == before


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["plain", "overwrite"])
def test_same_input_and_output_is_a_usage_error(folder: Path, overwrite: list[str]) -> None:
    before = files(folder)
    one_error(run_cli("apply", "a.png", "-o", "a.png", "-f", "invert", *overwrite, cwd=folder), 2, "a.png", "input")
    one_error(run_cli("apply", "a.png", "-o", "./sub/../a.png", "-f", "invert", *overwrite, cwd=folder), 2, "input")
    assert files(folder) == before


# ---------------------------------------------------------------- several inputs
@pytest.mark.parametrize("inputs, output", [
    (["a.png", "old.png"], "out/e3.png"),
    (["a.png", "old.png"], "e3.jpg"),
    (["src"], "flat.png"),
    (["src/*.png"], "out.tif"),
], ids=["two-files", "two-files-jpg", "directory", "glob"])
def test_several_inputs_into_a_file_name_is_a_usage_error_creating_nothing(folder: Path, inputs: list[str],
                                                                           output: str) -> None:
    (folder / "src").mkdir()
    shutil.copy(ASTRONAUT, folder / "src" / "x.png")
    before = files(folder)
    one_error(run_cli("apply", *inputs, "-o", output, "-f", "invert", cwd=folder), 2, output, "directory")
    assert files(folder) == before
    assert not (folder / output).exists() and not (folder / "out").exists()


def test_directory_batches_skip_existing_outputs_and_count_them(folder: Path) -> None:
    src, out = folder / "src", folder / "out"
    src.mkdir()
    out.mkdir()
    for name in ("a.png", "b.png", "c.png"):
        shutil.copy(ASTRONAUT, src / name)
    (out / "b.png").write_bytes(BADGE.read_bytes())
    proc = run_cli("apply", "src", "-o", "out", "-f", "invert", "--jobs", "1", cwd=folder)
    got = lines(proc)
    assert proc.returncode == 0, got
    assert "out/b.png: exists, skipped (--overwrite replaces it)" in got
    assert got[-1].startswith("done 2, skipped 1"), got
    assert (out / "b.png").read_bytes() == BADGE.read_bytes()
    again = run_cli("apply", "src", "-o", "out", "-f", "invert", "--jobs", "1", "--overwrite", cwd=folder)
    assert again.returncode == 0 and lines(again)[-1].startswith("done 3, failed 0")
    np.testing.assert_array_equal(cv2.imread(str(out / "b.png")), inverted(ASTRONAUT))


def test_a_directory_onto_itself_is_a_usage_error(folder: Path) -> None:
    before = files(folder)
    proc = run_cli("apply", ".", "-o", ".", "-f", "invert", "--overwrite", cwd=folder)
    got = lines(proc)
    assert proc.returncode == 2 and all(line.startswith("error:") and "input" in line for line in got), got
    assert files(folder) == before


# ---------------------------------------------------------------- standard input and output
def test_dash_reads_stdin_and_writes_stdout_with_nothing_else_on_it(folder: Path) -> None:
    # a real process: a codec's chatter on the file descriptors themselves would show
    proc = cli_runner.run_process("apply", "-", "-o", "-", "--format", "png", "-f", "invert", cwd=folder,
                                  stdin=ASTRONAUT.read_bytes(), text=False)
    assert proc.returncode == 0 and not lines(proc)
    assert proc.stdout.startswith(b"\x89PNG")
    np.testing.assert_array_equal(cv2.imdecode(np.frombuffer(proc.stdout, np.uint8), cv2.IMREAD_UNCHANGED),
                                  inverted(ASTRONAUT))
    jpeg = run_cli("apply", "a.png", "-o", "-", "--format", "jpg", "-f", "invert", "--explain", cwd=folder)
    assert jpeg.returncode == 0 and jpeg.stdout.startswith(b"\xff\xd8\xff")  # --explain goes to stderr
    assert any(line.startswith("backend:") for line in lines(jpeg))
    written = run_cli("apply", "-", "-o", "from-stdin.png", "-f", "invert", cwd=folder, stdin=BADGE.read_bytes())
    assert written.returncode == 0 and written.stdout == b""
    np.testing.assert_array_equal(cv2.imread(str(folder / "from-stdin.png"), cv2.IMREAD_UNCHANGED),
                                  cvfilters.apply(cvfilters.read(BADGE), "invert"))


@pytest.mark.parametrize("args, stdin, fragment", [
    (["-", "-o", "-"], ASTRONAUT.read_bytes(), "--format"),
    (["-", "-o", "-", "--format", "png"], b"", "standard input is empty"),
    (["-", "-o", "-", "--format", "png"], b"garbage bytes", "not an image"),
    (["-", "a.png", "-o", "-", "--format", "png"], b"", "exactly one input"),
], ids=["no-format", "empty", "garbage", "two-inputs"])
def test_dash_errors(folder: Path, args: list[str], stdin: bytes, fragment: str) -> None:
    before = files(folder)
    proc = run_cli("apply", *args, "-f", "invert", cwd=folder, stdin=stdin)
    one_error(proc, 2 if fragment in ("--format", "exactly one input") else 1, fragment)
    assert proc.stdout == b"" and files(folder) == before


# ---------------------------------------------------------------- dry run
def test_dry_run_says_what_would_happen_and_writes_nothing(folder: Path) -> None:
    (folder / "out").mkdir()
    (folder / "out" / "a.png").write_bytes(b"existing")
    leftover = folder / "out" / ".x.png.0123456789abcdef.tmp"  # a run would remove it; a dry run does not
    leftover.write_bytes(b"half")
    os.utime(leftover, (time.time() - 120, time.time() - 120))
    shutil.copy(BADGE, folder / "b.png")
    before = files(folder)
    proc = run_cli("apply", "a.png", "b.png", "text.png", "-o", "out", "--dry-run", "-f",
                   "gaussian_blur:sigma=3 | invert | gamma:gamma=2", cwd=folder)
    out = proc.stdout.decode().splitlines()
    assert proc.returncode == 1, (out, proc.stderr)
    assert len(lines(proc)) == 1 and lines(proc)[0].startswith("error: text.png: not an image"), proc.stderr
    assert "out/a.png: exists, skipped (--overwrite replaces it)" in out
    assert any(line.startswith("read b.png (") and line.endswith("-> write out/b.png") for line in out), out
    assert "step 1: gaussian_blur:sigma=3" in out and any(line.startswith("step 2: fused[") for line in out), out
    assert out[-1] == "dry run: would write 1, skip 1, fail 1; nothing written"
    assert files(folder) == before


def test_dry_run_with_overwrite_says_replace(folder: Path) -> None:
    proc = run_cli("apply", "a.png", "-o", "old.png", "--dry-run", "-f", "invert", cwd=folder)
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines()[0] == "read a.png (256x256) -> replace old.png"
    assert (folder / "old.png").read_bytes() == BADGE.read_bytes()


# ---------------------------------------------------------------- stale temporary files
def test_stale_temporaries_of_a_killed_run_are_removed_by_the_next(folder: Path) -> None:
    out = folder / "out"
    out.mkdir()
    stale = out / ".a.png.0123456789abcdef.tmp"
    stale.write_bytes(b"half a PNG")
    held = out / ".b.png.fedcba9876543210.tmp"
    held.write_bytes(b"being written")
    mine = out / ".notes.tmp"  # not our pattern
    mine.write_bytes(b"someone else's")
    young = out / ".c.png.00000000000000aa.tmp"  # may be a write between two of its steps
    young.write_bytes(b"just written")
    for path in (stale, held, mine):
        os.utime(path, (time.time() - 120, time.time() - 120))
    with open(held, "rb"):  # a live writer holds it open
        proc = run_cli("apply", "a.png", "-o", "out/a.png", "-f", "invert", cwd=folder)
    assert proc.returncode == 0
    assert not stale.exists() and held.exists() and mine.exists() and young.exists()
    assert sorted(p.name for p in out.iterdir()) == sorted([".b.png.fedcba9876543210.tmp", ".notes.tmp",
                                                            ".c.png.00000000000000aa.tmp", "a.png"])


def test_exit_codes_are_as_documented_for_a_mixed_batch(folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CVFILTERS_MAX_PIXELS"}
    proc = run_cli("apply", "a.png", "text.png", "-o", "mixed", "-f", "invert", "--jobs", "1", cwd=folder, env=env)
    assert proc.returncode == 1 and lines(proc)[-1].startswith("done 1, failed 1")
    assert sorted(os.listdir(folder / "mixed")) == ["a.png"]
