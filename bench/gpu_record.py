"""Record a GPU check's test results in results.json and re-render RESULTS.md.

Usage (from bench/gpu_check.sh): ``python bench/gpu_record.py OUT_DIR "COMMAND"`` after
``pytest --junitxml=OUT_DIR/gpu_tests.xml``. The other sections of results.json are kept.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import cv2
import report


def gpu_name() -> str:
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                               text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "no GPU (nvidia-smi missing)"
    return names.replace("\n", ", ") or "no GPU"


def tally(xml: Path) -> tuple[dict[str, dict[str, int]], list[tuple[str, str]]]:
    """Passed, failed and skipped tests per file, and each failure's first line, from a JUnit XML."""
    files: dict[str, dict[str, int]] = defaultdict(lambda: {"passed": 0, "failed": 0, "skipped": 0})
    failures = []
    for case in ET.parse(xml).getroot().iter("testcase") if xml.exists() else []:
        name = case.get("classname", "").replace(".", "/") + ".py"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        kind = "failed" if bad is not None else "skipped" if case.find("skipped") is not None else "passed"
        files[name][kind] += 1
        if bad is not None:
            failures.append((f"{case.get('classname')}::{case.get('name')}", (bad.get("message") or "")[:200]))
    return dict(files), failures


def main(out: Path, command: str) -> None:
    files, failures = tally(out / "gpu_tests.xml")
    data = report.load(out / "results.json")
    data["gpu_check"] = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "gpu": gpu_name(),
                         "opencv": cv2.__version__, "command": command, "files": files, "failures": failures}
    (out / "results.json").write_text(json.dumps(data, indent=1) + "\n")
    (out / "RESULTS.md").write_text(report.results_md(data))
    passed, skipped = (sum(row[k] for row in files.values()) for k in ("passed", "skipped"))
    print(f"{passed} passed, {len(failures)} failed, {skipped} skipped; written to {out / 'RESULTS.md'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
