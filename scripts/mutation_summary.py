"""Write the table of mutation scores in docs/mutation.md from scripts/mutation.sh's results.

Reads ``mutation-results/<module>.txt`` (a header line, then mutmut's ``export-cicd-stats``
JSON) for every module of ``python scripts/mutation_plan.py --list`` and rewrites the part of
docs/mutation.md between ``<!-- mutation-table:start -->`` and ``<!-- mutation-table:end -->``:
one row per module, measured or not. A mutant counts as killed when a test failed or timed
out on it; "checked" counts the mutants a run reached (a run cut at its time bound leaves the
rest of "mutants" unchecked), with "no tests" and segfaults as not killed; the score is
killed / checked.

    python scripts/mutation_summary.py [RESULTS_DIR]      (default: mutation-results/)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_plan import ROOT, modules  # a script beside this one

DOC = ROOT / "docs" / "mutation.md"
START, END = "<!-- mutation-table:start -->", "<!-- mutation-table:end -->"
TARGET = 85.0


def row(name: str, results: Path) -> str:
    """The table row of module ``name``."""
    report = results / f"{name.replace('/', '.')}.txt"
    if not report.exists():
        return f"| `{name}` | not run | | | | | |"
    header, _, body = report.read_text().partition("\n")
    fields = dict(re.findall(r"(\w+): ([^;]*)", header))
    try:
        stats = json.loads(body)
    except json.JSONDecodeError:
        return f"| `{name}` | no result (exit {fields.get('exit', '?')}) | | | | | {fields.get('date', '')} |"
    killed = int(stats["killed"]) + int(stats["timeout"])
    checked = killed + sum(int(stats.get(key, 0)) for key in ("survived", "no_tests", "suspicious", "segfault"))
    score = 100.0 * killed / checked if checked else 0.0
    cut = fields.get("exit", "0").strip() == "124"
    run = f"cut at {fields.get('limit', '?')} s" if cut else f"complete ({fields.get('seconds', '?')} s)"
    flag = "" if score >= TARGET and not cut else " (below target)" if score < TARGET else ""
    return (f"| `{name}` | {killed} / {checked} ({score:.1f}%){flag} | {stats['survived']} | {stats['no_tests']} | "
            f"{stats['total']} | {run} | {fields.get('date', '').strip()} |")


def table(results: Path) -> str:
    lines = ["| module | killed / checked | survived | no tests | mutants | run | date |",
             "|---|---|---|---|---|---|---|"]
    lines += [row(name, results) for name in modules()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    results = Path(argv[0]) if argv else ROOT / "mutation-results"
    text = DOC.read_text()
    if START not in text or END not in text:
        print(f"{DOC}: the markers {START} and {END} are missing", file=sys.stderr)
        return 2
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{START}\n{table(results)}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
