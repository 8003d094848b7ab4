"""Mutation testing of the decorated functions mutmut leaves out, one mutant at a time.

mutmut does not mutate a function that has a decorator (other than ``staticmethod`` and
``classmethod``): it cannot put its trampoline behind the decorator. In cvfilters that leaves out
the ``@register`` filter bodies, properties, ``lru_cache`` functions, context managers and Typer
commands. This script makes the mutants of those functions with mutmut's own operators (the
decorators themselves are not mutated), writes each one into the source file, runs the given tests
(``pytest -x``) in a process forked from one that has already imported pytest and the heavy
libraries, and puts the file back. As mutmut does, it runs a mutant against only the tests that run
its lines: the given test files run once first under coverage, with a context per test (and must
pass). A def's header (defaults run at import, perhaps inside whichever test imports the module
first), a cached function's body (run only by the first test that calls it with given arguments), a
line run at collection, in no test, or only in a test's subprocess gets every given test.

    python scripts/mutation_decorated.py cvfilters/cli/plots.py tests/cli/test_plots.py [-k EXPR ...]
    python scripts/mutation_decorated.py --only 4,28 cvfilters/filters/blur.py tests/filters/test_blur.py

Prints one line a mutant (number, KILLED, TIMEOUT or SURVIVED, the function, the changed lines),
then the total. Run it in a checkout of its own: while it runs the source file holds a mutant, and
any other process importing it there would test the mutant. The source file is restored even when
the run is interrupted.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, cast

import libcst as cst
from coverage import CoverageData
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.file_mutation import MutationVisitor
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import get_ignored_lines

_WARM_IMPORTS = ("numpy", "cv2", "PIL.Image", "scipy.ndimage", "skimage", "tifffile", "typer", "pytest")


class Mutant(NamedTuple):
    """One mutant: the whole mutated source, the decorated function it changes, the lines it is on."""

    function: str
    code: str
    lines: range


def _decorated(node: cst.CSTNode) -> bool:
    """A function with a decorator mutmut skips (any but a lone staticmethod or classmethod)."""
    if not isinstance(node, cst.FunctionDef) or not node.decorators:
        return False
    only = node.decorators[0].decorator
    return not (len(node.decorators) == 1 and isinstance(only, cst.Name)
                and only.value in ("staticmethod", "classmethod"))


def _cached(node: cst.FunctionDef) -> bool:
    """Whether a decorator caches the function's results (``lru_cache``, ``cache``, ``cached_property``)."""
    return any("cache" in cst.Module([]).code_for_node(decorator.decorator) for decorator in node.decorators)


class _DecoratedOnly(MutationVisitor):
    """mutmut's visitor, descending into decorated functions and mutating only inside them."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self._inside: list[str] = []
        self._cached: list[bool] = []
        self._statements: list[cst.CSTNode] = []
        self.functions: list[str] = []
        self.lines: list[range] = []

    def _skip_node_and_children(self, node: cst.CSTNode) -> bool:
        return False if _decorated(node) else bool(super()._skip_node_and_children(node))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if _decorated(node):
            self._inside.append(node.name.value)  # type: ignore[attr-defined]
            self._cached.append(_cached(cast(cst.FunctionDef, node)))
        if isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            self._statements.append(node)
        return bool(super().on_visit(node))

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if _decorated(original_node):
            self._inside.pop()
            self._cached.pop()
        if isinstance(original_node, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            self._statements.pop()
        super().on_leave(original_node)

    def _create_mutations(self, node: cst.CSTNode) -> None:
        if self._inside:
            before = len(self.mutations)
            super()._create_mutations(node)
            made = len(self.mutations) - before
            statement = self._statements[-1]
            # A tracer may report a statement's first line for any of its lines: from there to the node's end.
            # A def's header (its defaults) runs when the module is imported, which may happen inside
            # whichever test imports it first: no lines, so every test runs.
            first = self.get_metadata(PositionProvider, statement).start.line
            end = self.get_metadata(PositionProvider, node).end.line + 1
            self.functions += [self._inside[-1]] * made
            # A cached function's body runs only in the first test that calls it with given arguments.
            everywhere = isinstance(statement, cst.FunctionDef) or any(self._cached)
            self.lines += [range(0) if everywhere else range(first, end)] * made


def mutants(path: str, source: str, only: set[int] | None = None) -> Iterator[tuple[int, Mutant]]:
    """The mutants of the decorated functions of ``source`` numbered from 1 in source order, made
    as needed; with ``only``, just those numbers."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    visitor = _DecoratedOnly(mutation_operators, get_ignored_lines(path, source, wrapper, None))
    module = wrapper.visit(visitor)
    made = zip(visitor.functions, visitor.lines, visitor.mutations, strict=True)
    for number, (function, lines, mutation) in enumerate(made, 1):
        if only is None or number in only:
            mutated = cast(cst.Module, module.deep_replace(mutation.original_node, mutation.mutated_node))
            yield number, Mutant(function, mutated.code, lines)


def _tests_by_line(path: Path, files: list[str], options: list[str]) -> dict[int, set[str]]:
    """The tests (coverage contexts) that run each line of ``path``: the test files run once under
    coverage with a context per test. Raises when they fail without a mutant."""
    with tempfile.TemporaryDirectory() as scratch:
        config, data = Path(scratch, "coveragerc"), Path(scratch, "coverage")
        config.write_text(f"[run]\ninclude =\n    {path.absolute()}\n    {path.resolve()}\n"
                          "dynamic_context = test_function\n")
        clean = subprocess.run([sys.executable, "-m", "coverage", "run", f"--rcfile={config}", f"--data-file={data}",
                                "-m", "pytest", "-q", "-p", "no:cacheprovider", *files, *options],
                               capture_output=True, text=True, check=False)
        if clean.returncode != 0:
            raise SystemExit(f"the tests fail without a mutant:\n{clean.stdout[-3000:]}")
        covered = CoverageData(str(data))
        covered.read()
        for measured in covered.measured_files():
            if Path(measured).resolve() == path.resolve():
                return {line: set(tests) for line, tests in covered.contexts_by_lineno(measured).items()}
    return {}


def _node_ids(contexts: set[str]) -> list[str]:
    """pytest node ids of coverage's test-function contexts (``tests.io.test_x.test_y``)."""
    ids = set()
    for context in contexts:
        parts = context.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            file = Path(*parts[:cut]).with_suffix(".py")
            if file.is_file():
                ids.add(f"{file}::{'::'.join(parts[cut:])}")
                break
    return sorted(ids)


def _selection(lines: range, by_line: dict[int, set[str]], files: list[str]) -> list[str]:
    """The tests that run the mutated lines; all the files where a line runs at import, in no test
    or only in a subprocess (which coverage does not follow here)."""
    contexts = set().union(*(by_line.get(line, set()) for line in lines))
    return files if not contexts or "" in contexts else _node_ids(contexts)


def _forget_bytecode(path: Path) -> None:
    """Remove the file's cached bytecode: a mutant of the same size and second would reuse it."""
    for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        cached.unlink()


def _run_tests(pytest_args: list[str], timeout: float) -> str:
    """KILLED, TIMEOUT or SURVIVED: the tests run in a forked child, silenced."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child never returns
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        code = 3
        try:
            code = int(importlib.import_module("pytest").main(pytest_args))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            return "SURVIVED" if os.waitstatus_to_exitcode(status) == 0 else "KILLED"
        time.sleep(0.02)
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    return "TIMEOUT"


def _changed_lines(original: str, code: str) -> str:
    return " | ".join(line.strip() for line in difflib.unified_diff(original.splitlines(), code.splitlines(),
                                                                     lineterm="", n=0)
                      if line[:1] in "+-" and line[:3] not in ("---", "+++"))[:400]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--only", help="comma-separated mutant numbers to run (default: all)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a mutant's tests may take")
    parser.add_argument("--all-tests", action="store_true",
                        help="run every given test for every mutant (default: the tests that run its lines)")
    args, pytest_args = parser.parse_known_args(argv)
    files = [arg for arg in pytest_args if os.path.exists(arg.split("::")[0])]  # False for a long -k text
    options = [arg for arg in pytest_args if arg not in files]
    path: Path = args.source
    only = {int(number) for number in args.only.split(",")} if args.only else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # through `finally`: the source put back
    os.environ["MUTANT_UNDER_TEST"] = "1"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True
    for name in _WARM_IMPORTS:
        importlib.import_module(name)
    original = path.read_text()
    by_line = {} if args.all_tests else _tests_by_line(path, files, options)
    counts = {"KILLED": 0, "TIMEOUT": 0, "SURVIVED": 0}
    try:
        for number, mutant in mutants(str(path), original, only):
            path.write_text(mutant.code)
            _forget_bytecode(path)
            tests = files if args.all_tests else _selection(mutant.lines, by_line, files)
            outcome = _run_tests(["-q", "-x", "-p", "no:cacheprovider", *tests, *options], args.timeout)
            path.write_text(original)
            counts[outcome] += 1
            print(number, outcome, mutant.function, _changed_lines(original, mutant.code), flush=True)
    finally:
        path.write_text(original)
        _forget_bytecode(path)
    print(f"{counts['KILLED'] + counts['TIMEOUT']} / {sum(counts.values())} killed "
          f"({counts['TIMEOUT']} by timeout)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
