"""Write the table of mutation scores in docs/mutation.md from scripts/mutation.sh's results.

Reads ``mutation-results/<module>.txt`` (a header line, then mutmut's ``export-cicd-stats``
JSON) for every module of ``python scripts/mutation_plan.py --list`` and rewrites the part of
docs/mutation.md between ``<!-- mutation-table:start -->`` and ``<!-- mutation-table:end -->``:
one row per module, measured or not. A mutant counts as killed when a test failed or timed
out on it; "checked" counts the mutants a run reached (a run cut at its time bound leaves the
rest of "mutants" unchecked), with "no tests" and segfaults as not killed; the score is
killed / checked.

    python scripts/mutation_summary.py [RESULTS_DIR]      (default: mutation-results/)

A re-run after new tests (``MUTATION_OUT=mutation-results/after scripts/mutation.sh MODULE``)
fills the "after" column. A module with no result file keeps the row the document has for it
(measured in an earlier session whose result files were not kept), or "not run".
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_plan import ROOT, has_functions, modules  # a script beside this one

DOC = ROOT / "docs" / "mutation.md"
START, END = "<!-- mutation-table:start -->", "<!-- mutation-table:end -->"
TARGET = 85.0


def _read(report: Path) -> tuple[dict[str, str], dict[str, int]] | None:
    """The header fields and the stats of one result file, or None where there is none."""
    if not report.exists():
        return None
    header, _, body = report.read_text().partition("\n")
    try:
        stats = {key: int(value) for key, value in json.loads(body).items()}
    except (json.JSONDecodeError, AttributeError):
        stats = {}
    return {key: value.strip() for key, value in re.findall(r"(\w+): ([^;]*)", header)}, stats


def score(result: tuple[dict[str, str], dict[str, int]] | None) -> str:
    """``killed / checked (percent)``, flagged below the target or when the run was cut short."""
    if result is None:
        return "not run"
    fields, stats = result
    if not stats:
        return f"no result (exit {fields.get('exit', '?')})"
    killed = stats["killed"] + stats["timeout"]
    checked = killed + sum(stats.get(key, 0) for key in ("survived", "no_tests", "suspicious", "segfault"))
    if not checked:
        return f"none checked (exit {fields.get('exit', '?')})"
    cut = f", cut at {fields.get('limit', '?')} s" if fields.get("exit") == "124" else ""
    percent = 100.0 * killed / checked
    return f"{killed} / {checked} ({percent:.1f}%{cut})" + (" below target" if percent < TARGET else "")


def row(name: str, results: Path, after: Path | None, earlier: str | None = None) -> str:
    """The table row of module ``name``; ``earlier`` (its row now in the document) gives the
    first-run cell where that run's result file is gone."""
    stem = name.replace("/", ".")
    first = _read(results / f"{stem}.txt")
    later = _read(after / f"{stem}.txt") if after else None
    stats = (later or first or ({}, {}))[1]
    first_cell = score(first)
    if first is None and earlier is not None:
        first_cell = earlier.split("|")[2].strip()
    return (f"| `{name}` | {first_cell} | {score(later) if later else ''} | {stats.get('survived', '')} | "
            f"{stats.get('no_tests', '')} | {stats.get('total', '')} |")


def earlier_rows(text: str) -> dict[str, str]:
    """The rows of the table now in the document, by module: measured earlier, results no longer on disk."""
    return {match.group(1): match.group(0) for match in re.finditer(r"^\| `([^`]+)` \|.*$", text, re.MULTILINE)}


def table(results: Path, after: Path | None, earlier: dict[str, str] | None = None) -> str:
    """The table; a module with no result file keeps its earlier row (if it had one measured)."""
    lines = ["| module | first run: killed / checked | after the new tests | survived (last run) | no tests | "
             "mutants |", "|---|---|---|---|---|---|"]
    for name, source in modules().items():
        if not has_functions(source):
            lines.append(f"| `{name}` | nothing to mutate (no function) |  |  |  |  |")
            continue
        stem = name.replace("/", ".")
        measured = (results / f"{stem}.txt").exists() or (after is not None and (after / f"{stem}.txt").exists())
        kept = (earlier or {}).get(name)
        lines.append(row(name, results, after, kept) if measured or kept is None else kept)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    results = Path(argv[0]) if argv else ROOT / "mutation-results"
    after = results / "after" if (results / "after").is_dir() else None
    text = DOC.read_text()
    if START not in text or END not in text:
        print(f"{DOC}: the markers {START} and {END} are missing", file=sys.stderr)
        return 2
    head, _, rest = text.partition(START)
    current, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{START}\n{table(results, after, earlier_rows(current))}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
