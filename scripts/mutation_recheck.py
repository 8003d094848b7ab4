"""Re-check listed mutmut mutants one at a time against chosen tests, outside mutmut.

``scripts/mutation.sh`` lists each module's survivors, timeouts, "no tests" and (for a run cut by
its bound) "not checked" mutants with their diffs in ``mutation-results/<module>-survivors.txt``.
This script applies such a mutant to the source file of the current checkout, runs
``pytest -x -q`` with the given arguments, puts the file back, and prints one line a mutant: its
name, KILLED, SURVIVED, TIMEOUT or NOAPPLY (its function's text has changed since the run), the
status mutmut gave it and the first failing test. It first checks that the tests pass on the clean
source. Use it to confirm that a new test kills a survivor, or to check a cut run's remainder.

    python scripts/mutation_recheck.py mutation-results/after/io.apng-survivors.txt x__over:3,17,40-45 \\
        -- tests/io/test_apng.py
    python scripts/mutation_recheck.py FILE 'xǁApngWriterǁadd' --show

The selection is ``all``, a function's mutmut prefix (``x__over``, ``xǁApngWriterǁadd``) or a prefix
with numbers. mutmut's diffs show the function dedented and may number its lines differently from
the file (it reprints the function; a docstring keeps its indentation), so each hunk is matched by
its lines' text inside the function, nearest to its stated place. Run it in a checkout of its own:
while a test runs, the source file holds the mutant.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


class Listed(NamedTuple):
    """One listed mutant: mutmut's status, the source file and the diff's hunk lines."""

    status: str
    source: Path
    hunks: list[str]


def read_listing(path: Path) -> dict[str, Listed]:
    """The mutants of a ``-survivors.txt`` file by mutmut's name, in file order."""
    listed: dict[str, Listed] = {}
    for block in re.split(r"^=== ", path.read_text(), flags=re.MULTILINE)[1:]:
        lines = block.split("\n")
        status = lines[1].rsplit(":", 1)[-1].strip()
        source = next((line[4:] for line in lines if line.startswith("--- ")), "")
        hunks = [line for line in lines[2:] if line.startswith("@@")
                 or (line[:1] in {" ", "-", "+"} and not line.startswith(("--- ", "+++ ")))]
        listed[lines[0].strip()] = Listed(status, Path(source), hunks)
    return listed


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """The function a mutmut name mutates: ``x_name`` at module level, ``xǁClassǁname`` a method."""
    short = name.rsplit(".", 1)[-1].split("__mutmut_")[0]
    body: list[ast.stmt] = tree.body
    wanted = short[2:]
    if short.startswith("xǁ"):
        _, cls, wanted = short.split("ǁ")
        body = next((node.body for node in tree.body if isinstance(node, ast.ClassDef) and node.name == cls), [])
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == wanted:
            return node
    raise LookupError(f"no function {short} in the source")


def apply(source: str, name: str, hunks: list[str]) -> str:
    """``source`` with the mutant's hunks applied inside its function (ValueError where they do not match)."""
    node = _function(ast.parse(source), name)
    lines = source.split("\n")
    first, indent, shift = node.lineno - 1, " " * node.col_offset, 0
    starts = [i for i, line in enumerate(hunks) if line.startswith("@@")] + [len(hunks)]
    for start, end in pairwise(starts):
        stated = _HUNK.match(hunks[start])
        if stated is None:
            raise ValueError(f"not a hunk header: {hunks[start]}")
        body = [(line[:1], line[1:]) for line in hunks[start + 1:end]]
        old = [text.strip() for tag, text in body if tag != "+"]
        last = (node.end_lineno or node.lineno) + shift
        # from a few lines above the def: mutmut's text of a function starts at the comments above it
        matches = [at for at in range(max(first - 10, 0), last - len(old) + 1)
                   if [line.strip() for line in lines[at:at + len(old)]] == old]
        if not matches:
            raise ValueError("the hunk does not match the function's text")
        near = first + int(stated.group(1)) - 1 + shift
        at = min(matches, key=lambda match: abs(match - near))
        found = iter(lines[at:at + len(old)])
        new: list[str] = []
        for tag, text in body:
            if tag == " ":
                new.append(next(found))
            elif tag == "-":
                next(found)
            else:
                new.append(indent + text if text.strip() else "")
        lines[at:at + len(old)] = new
        shift += len(new) - len(old)
    return "\n".join(lines)


def choose(names: list[str], selection: str) -> list[str]:
    """The names picked by ``all``, a function prefix, or ``prefix:1,4,7-9``."""
    if selection == "all":
        return names
    prefix, _, numbers = selection.partition(":")
    wanted: set[int] | None = None
    if numbers:
        wanted = set()
        for part in numbers.split(","):
            low, _, high = part.partition("-")
            wanted.update(range(int(low), int(high or low) + 1))
    picked = []
    for name in names:
        function, _, number = name.rsplit(".", 1)[-1].partition("__mutmut_")
        if function == prefix and (wanted is None or int(number) in wanted):
            picked.append(name)
    return picked


def _forget_bytecode(source: Path) -> None:
    """Remove the source's cached bytecode: a mutant of the same size written in the same second as the
    last version would pass Python's (mtime, size) check and run the old code."""
    for cached in source.parent.glob(f"__pycache__/{source.stem}.*.pyc"):
        cached.unlink(missing_ok=True)


def _run(command: list[str], timeout: float) -> str:
    """KILLED (with the first failing test), SURVIVED or TIMEOUT."""
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                             env=os.environ | {"PYTHONDONTWRITEBYTECODE": "1"})
    except subprocess.TimeoutExpired:
        return "TIMEOUT"
    if run.returncode == 0:
        return "SURVIVED"
    failed = [line for line in run.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return " ".join(["KILLED", *failed[:1]])


def main(argv: list[str]) -> int:
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("listing", type=Path, help="a mutation-results/...-survivors.txt file")
    parser.add_argument("selection", help="all, a function's mutmut prefix, or prefix:numbers")
    parser.add_argument("--show", action="store_true", help="print the chosen mutants' diffs only")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a mutant's tests may take")
    args = parser.parse_args(argv[:split])
    listing = read_listing(args.listing)
    names = choose(list(listing), args.selection)
    if args.show:
        for name in names:
            print("===", name, listing[name].status)
            print(*listing[name].hunks, sep="\n")
        return 0
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *argv[split + 1:]]
    if subprocess.run(command, capture_output=True, timeout=args.timeout * 3).returncode != 0:
        print("the tests fail on the clean source", file=sys.stderr)
        return 1
    for name in names:
        listed = listing[name]
        original = listed.source.read_text()
        try:
            try:
                listed.source.write_text(apply(original, name, listed.hunks))
                _forget_bytecode(listed.source)
            except (LookupError, ValueError) as error:
                print(name, "NOAPPLY", listed.status, error, flush=True)
                continue
            print(name, _run(command, args.timeout), f"(mutmut: {listed.status})", flush=True)
        finally:
            listed.source.write_text(original)
            _forget_bytecode(listed.source)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
