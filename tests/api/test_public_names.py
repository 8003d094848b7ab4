"""The public names of ``cvfilters`` are listed once (``_EXPORTS``) and resolve lazily.

Type checkers cannot read that table, so ``cvfilters/__init__.py`` imports the same names under
``TYPE_CHECKING``; this test parses those imports and checks them against the table.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import cvfilters as cvf

INIT = Path(cvf.__file__)


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    """public name -> (module under cvfilters, attribute) for the imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    names: dict[str, tuple[str, str]] = {}
    private: dict[str, str] = {}  # `from cvfilters import backends as _backends`, then `x = _backends.y`
    for node in block.body:
        if isinstance(node, ast.Assign):
            (target,), value = node.targets, node.value
            assert isinstance(target, ast.Name) and isinstance(value, ast.Attribute), ast.unparse(node)
            assert isinstance(value.value, ast.Name), ast.unparse(node)
            names[target.id] = (private[value.value.id], value.attr)
            continue
        assert isinstance(node, ast.ImportFrom) and node.module is not None, ast.unparse(node)
        module = node.module.removeprefix("cvfilters").removeprefix(".")
        for alias in node.names:
            name, local = alias.name, alias.asname or alias.name
            if local.startswith("_"):
                private[local] = f"{module}.{name}" if module else name
            else:
                assert local == name, f"{ast.unparse(node)}: a re-export keeps its name (or use an assignment)"
                names[local] = (module, name) if module else (name, "")
    return names


def test_type_checking_imports_match_the_export_table() -> None:
    assert _type_checking_imports() == cvf._EXPORTS


def test_all_is_the_export_table() -> None:
    assert cvf.__all__ == [*cvf._EXPORTS, "__version__"]
    assert len(set(cvf.__all__)) == len(cvf.__all__)


def test_public_names_resolve_to_what_they_name() -> None:
    import importlib

    for name, (module, attribute) in cvf._EXPORTS.items():
        target = importlib.import_module(f"cvfilters.{module}")
        assert getattr(cvf, name) is (getattr(target, attribute) if attribute else target), name
    with pytest.raises(AttributeError):
        cvf.no_such_name  # noqa: B018


def test_import_cvfilters_loads_no_submodule_until_a_name_is_used() -> None:
    code = "import sys, cvfilters; print(sorted(m for m in sys.modules if m.startswith('cvfilters.')))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
