"""The benchmark suite (bench/run.py) runs end to end in its tiny mode and renders its outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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


def test_cartoon_benchmark_runs_at_the_tiny_size() -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "bench" / "cartoon.py"
    proc = subprocess.run([sys.executable, str(script), "--size", "tiny", "--rounds", "2"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert "cvfilters / raw cv2:" in proc.stdout, proc.stderr
