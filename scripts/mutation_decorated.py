"""Mutation testing of the decorated functions mutmut leaves out, one mutant at a time.

mutmut does not mutate a function that has a decorator (other than ``staticmethod`` and
``classmethod``): it cannot put its trampoline behind the decorator. In cvfilters that leaves out
the ``@register`` filter bodies, properties, ``lru_cache`` functions, context managers and Typer
commands. This script makes the mutants of those functions with mutmut's own operators (the
decorators themselves are not mutated), writes each one into the source file, runs the given tests
(``pytest -x``) in a process forked from one that has already imported pytest and the heavy
libraries, and puts the file back. Give it the module's focused tests.

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
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, cast

import libcst as cst
from libcst.metadata import MetadataWrapper
from mutmut.mutation.file_mutation import MutationVisitor
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import get_ignored_lines

_WARM_IMPORTS = ("numpy", "cv2", "PIL.Image", "scipy.ndimage", "skimage", "tifffile", "typer", "pytest")


class Mutant(NamedTuple):
    """One mutant: the whole mutated source and the decorated function it changes."""

    function: str
    code: str


def _decorated(node: cst.CSTNode) -> bool:
    """A function with a decorator mutmut skips (any but a lone staticmethod or classmethod)."""
    if not isinstance(node, cst.FunctionDef) or not node.decorators:
        return False
    only = node.decorators[0].decorator
    return not (len(node.decorators) == 1 and isinstance(only, cst.Name)
                and only.value in ("staticmethod", "classmethod"))


class _DecoratedOnly(MutationVisitor):
    """mutmut's visitor, descending into decorated functions and mutating only inside them."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self._inside: list[str] = []
        self.functions: list[str] = []

    def _skip_node_and_children(self, node: cst.CSTNode) -> bool:
        return False if _decorated(node) else bool(super()._skip_node_and_children(node))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if _decorated(node):
            self._inside.append(node.name.value)  # type: ignore[attr-defined]
        return bool(super().on_visit(node))

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if _decorated(original_node):
            self._inside.pop()
        super().on_leave(original_node)

    def _create_mutations(self, node: cst.CSTNode) -> None:
        if self._inside:
            before = len(self.mutations)
            super()._create_mutations(node)
            self.functions += [self._inside[-1]] * (len(self.mutations) - before)


def mutants(path: str, source: str, only: set[int] | None = None) -> Iterator[tuple[int, Mutant]]:
    """The mutants of the decorated functions of ``source`` numbered from 1 in source order, made
    as needed; with ``only``, just those numbers."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    visitor = _DecoratedOnly(mutation_operators, get_ignored_lines(path, source, wrapper, None))
    module = wrapper.visit(visitor)
    for number, (function, mutation) in enumerate(zip(visitor.functions, visitor.mutations, strict=True), 1):
        if only is None or number in only:
            mutated = cast(cst.Module, module.deep_replace(mutation.original_node, mutation.mutated_node))
            yield number, Mutant(function, mutated.code)


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
    args, pytest_args = parser.parse_known_args(argv)
    path: Path = args.source
    only = {int(number) for number in args.only.split(",")} if args.only else None
    os.environ["MUTANT_UNDER_TEST"] = "1"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True
    for name in _WARM_IMPORTS:
        importlib.import_module(name)
    original = path.read_text()
    counts = {"KILLED": 0, "TIMEOUT": 0, "SURVIVED": 0}
    try:
        for number, mutant in mutants(str(path), original, only):
            path.write_text(mutant.code)
            _forget_bytecode(path)
            outcome = _run_tests(["-q", "-x", "-p", "no:cacheprovider", *pytest_args], args.timeout)
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
