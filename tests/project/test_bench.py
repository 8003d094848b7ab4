"""The benchmark suite (bench/run.py) runs end to end in its tiny mode and renders its outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
SECTIONS = {"overhead", "chains", "peers", "backends", "memory", "startup"}


def test_suite_runs_in_tiny_mode_and_rewrites_only_its_outputs(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("before\n<!-- bench:start -->\nstale table\n<!-- bench:end -->\nafter\n")
    done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--tiny", "--backends", "cpu",
                           "--out", str(tmp_path), "--readme", str(readme)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]

    data = json.loads((tmp_path / "results.json").read_text())
    assert set(data["sections"]) == SECTIONS
    for name, entry in data["sections"].items():
        assert "error" not in entry, f"{name}: {entry.get('error')}"
        assert entry["section"]["tables"] and entry["section"]["summary"], name

    results = (tmp_path / "RESULTS.md").read_text()
    assert "## Targets" in results and "| what | target | measured | result |" in results
    assert "Machine: " in results and "OpenCV" in results
    for row in data["sections"]["chains"]["section"]["summary"]:
        assert row[3] in {"PASS", "**MISS**", "n/a"}

    text = readme.read_text()
    assert text.startswith("before\n<!-- bench:start -->") and text.endswith("<!-- bench:end -->\nafter\n")
    assert "stale table" not in text and "| what | target | measured | result |" in text
    assert "\\|" in text  # pipes inside cells (the chain specs) are escaped


def test_readme_without_markers_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    import report

    readme = tmp_path / "README.md"
    readme.write_text("# no markers here\n")
    assert report.update_readme(readme, {"sections": {}}) is False
    assert readme.read_text() == "# no markers here\n"


def test_unknown_section_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--only", "nope", "--readme", "none"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and "unknown section" in done.stderr


STAND_INS = {
    # Windows' convert.exe (FAT to NTFS) answers anything with a usage error.
    "stand-in": "#!/bin/sh\necho 'Invalid Parameter - -version' >&2\nexit 4\n",
    # Says it is ImageMagick, then fails on real work.
    "broken": "#!/bin/sh\n[ \"$1\" = -version ] && { echo 'Version: ImageMagick 6.9.11-60 Q16'; exit 0; }\nexit 1\n",
    "missing": None,
}


def tools_folder(tmp_path: Path, kind: str) -> Path:
    """A folder for PATH holding nothing but ``kind``'s ``convert`` (none for "missing")."""
    tools = tmp_path / "bin"
    tools.mkdir()
    script = STAND_INS[kind]
    if script is not None:
        (tools / "convert").write_text(script)
        (tools / "convert").chmod(0o755)
    return tools


def test_peers_skip_a_convert_that_is_missing(tmp_path: Path) -> None:
    """A fresh machine's ``convert`` may be missing (or another program: the probe's verdicts on
    those are the next test): the peers section is skipped for it, with the reason in the report,
    and the suite does not fail."""
    env = {**os.environ, "PATH": str(tools_folder(tmp_path, "missing"))}  # nothing else: the suite runs sys.executable
    done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--tiny", "--only", "peers", "--out", str(tmp_path),
                           "--readme", "none"], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    entry = json.loads((tmp_path / "results.json").read_text())["sections"]["peers"]
    assert "error" not in entry
    notes = [note for table in entry["section"]["tables"] for note in table["notes"]]
    assert any(note.startswith("ImageMagick skipped: ") and "no `convert` on PATH" in note for note in notes), notes
    assert "ImageMagick skipped: " in (tmp_path / "RESULTS.md").read_text()
    for row in entry["section"]["tables"][0]["rows"]:
        assert row[7] == "n/a"  # the ImageMagick column


@pytest.mark.parametrize("kind", ["stand-in", "broken"])
def test_peers_skip_a_convert_that_is_not_a_working_imagemagick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                kind: str) -> None:
    """Another program named ``convert`` (one that fails ``-version``, or one that passes it and then
    fails): the peers section's probe gives no input files and the reason, which the section reports
    as it reports a missing ``convert`` (the test above runs that path as a process). Here the probe
    alone, in this process: the whole section in a process took 2.4 s a kind."""
    monkeypatch.syspath_prepend(str(BENCH))
    import common
    import peers

    monkeypatch.setenv("PATH", str(tools_folder(tmp_path, kind)))
    common.imagemagick.cache_clear()  # the probe's verdict is cached per process
    try:
        height, width = common.SIZES["tiny"]
        files, why = peers._magick_files(common.test_image(height, width), common.test_gray(height, width),
                                         tmp_path / "work")
    finally:
        common.imagemagick.cache_clear()
    why_expected = {"stand-in": "is not ImageMagick (`-version` exit 4", "broken": "could not write its input files"}
    assert files == {} and why_expected[kind] in why, why


def test_gpu_check_records_test_results_in_results_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/gpu_record.py turns pytest's JUnit XML into the GPU check section of RESULTS.md."""
    monkeypatch.syspath_prepend(str(BENCH))
    import gpu_record
    import report

    assert "Nothing has run on a real GPU yet" in report.results_md({"sections": {}})
    (tmp_path / "gpu_tests.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.backends.test_cuda_backend" name="test_a"/>'
        '<testcase classname="tests.backends.test_cuda_backend" name="test_b">'
        '<failure message="max difference 5"/></testcase>'
        '<testcase classname="tests.filters.test_blur" name="test_c"><skipped message="no cuda"/></testcase>'
        '</testsuite></testsuites>')
    monkeypatch.setattr(gpu_record, "gpu_name", lambda: "NVIDIA H200")
    gpu_record.main(tmp_path, "pytest --backend=cuda,opencl")
    text = (tmp_path / "RESULTS.md").read_text()
    assert "Run " in text and "on NVIDIA H200" in text
    assert "| tests/backends/test_cuda_backend.py | 1 | 1 | 0 |" in text
    assert "| tests/filters/test_blur.py | 0 | 0 | 1 |" in text
    assert "`tests.backends.test_cuda_backend::test_b`: max difference 5" in text
    assert json.loads((tmp_path / "results.json").read_text())["gpu_check"]["gpu"] == "NVIDIA H200"


def test_cartoon_benchmark_runs_at_the_tiny_size() -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "bench" / "cartoon.py"
    proc = subprocess.run([sys.executable, str(script), "--size", "tiny", "--rounds", "2"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert "cvfilters / raw cv2:" in proc.stdout, proc.stderr
