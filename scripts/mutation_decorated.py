"""Mutation testing of the decorated functions mutmut leaves out, one mutant at a time.

mutmut does not mutate a function that has a decorator (other than ``staticmethod`` and
``classmethod``): it cannot put its trampoline behind the decorator. In cvfilters that leaves out
the ``@register`` filter bodies, properties, ``lru_cache`` functions, context managers and Typer
commands. This script makes the mutants of those functions with mutmut's own operators (the
decorators themselves are not mutated), writes each one into the source file, runs the given tests
(``pytest -x``), and puts the file back. Slower than mutmut (a test process per mutant): give it
the module's focused tests.

    python scripts/mutation_decorated.py cvfilters/cli/plots.py tests/cli/test_plots.py [-k EXPR ...]

Prints one line a mutant (number, KILLED or SURVIVED, the changed lines), then the total. The
source file is restored even when the run is interrupted.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path
from typing import cast

import libcst as cst
from libcst.metadata import MetadataWrapper
from mutmut.mutation.file_mutation import MutationVisitor
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import get_ignored_lines


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
        self._depth = 0

    def _skip_node_and_children(self, node: cst.CSTNode) -> bool:
        return False if _decorated(node) else bool(super()._skip_node_and_children(node))

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._depth += _decorated(node)
        return bool(super().on_visit(node))

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._depth -= _decorated(original_node)
        super().on_leave(original_node)

    def _create_mutations(self, node: cst.CSTNode) -> None:
        if self._depth:
            super()._create_mutations(node)


def mutants(path: str, source: str) -> list[str]:
    """Every mutant of the decorated functions of ``source``, each as the whole mutated source."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    visitor = _DecoratedOnly(mutation_operators, get_ignored_lines(path, source, wrapper, None))
    module = wrapper.visit(visitor)
    return [cast(cst.Module, module.deep_replace(mutation.original_node, mutation.mutated_node)).code
            for mutation in visitor.mutations]


def main(argv: list[str]) -> int:
    path, tests = Path(argv[0]), argv[1:]
    original = path.read_text()
    killed = total = 0
    try:
        for number, code in enumerate(mutants(str(path), original), 1):
            path.write_text(code)
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                                 capture_output=True, text=True, timeout=600)
            path.write_text(original)
            changed = [line.strip() for line in difflib.unified_diff(original.splitlines(), code.splitlines(),
                                                                     lineterm="", n=0)
                       if line[:1] in "+-" and line[:3] not in ("---", "+++")]
            total += 1
            killed += run.returncode != 0
            print(number, "KILLED" if run.returncode else "SURVIVED", " | ".join(changed)[:400], flush=True)
    finally:
        path.write_text(original)
    print(f"{killed} / {total} killed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
