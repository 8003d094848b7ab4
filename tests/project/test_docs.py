"""The README stays a short page and the manual in docs/ stays generated where it can be.

The filter table of docs/filters.md comes from the registry, the layer tables of
docs/architecture.md from the import-linter contract in pyproject.toml; both are rewritten by
``python scripts/update_docs.py`` and must not go stale.
"""

from __future__ import annotations

import re
import subprocess
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # the test extra installs tomli on Python 3.10
    import tomli as tomllib

import cvfilters as cvf
from tests.conftest import FIXTURES

ROOT = FIXTURES.parent
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_generated_pages_are_current() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "update_docs.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_filter_table_lists_every_filter() -> None:
    text = (DOCS / "filters.md").read_text()
    for flt in cvf.list_filters():
        assert f"| `{flt.name}` | {flt.category} |" in text


def test_architecture_page_names_every_package_of_the_tree_in_contract_order() -> None:
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    top = next(c["layers"] for c in contract if c["containers"] == ["cvfilters"])
    layered = [name.strip() for group in top for name in group.split("|")]
    tree = {p.name for p in (ROOT / "cvfilters").iterdir() if (p / "__init__.py").exists()}
    tree |= {p.stem for p in (ROOT / "cvfilters").glob("*.py") if p.stem != "__init__"}
    assert set(layered) == tree, "every package and module of cvfilters/ is one layer of the contract"
    page = (DOCS / "architecture.md").read_text()
    rows = [m.group(1) for m in re.finditer(r"^\| \d+ \| `cvfilters\.(\w+)` \|", page, re.M)]
    assert rows == layered


def test_readme_is_short_and_links_every_page_of_the_manual() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    linked = set(LINK.findall(text))
    assert {f"docs/{page.name}" for page in DOCS.glob("*.md")} <= linked
    assert "pip install -e . && cvfilters apply fixtures/astronaut.png -o out.png -f gaussian_blur:sigma=3" in text
    assert 'pip install -e ".[test]" && pytest' in text


def test_relative_links_of_the_manual_resolve() -> None:
    broken = [f"{page.name}: {target}" for page in DOCS.glob("*.md")
              for target in LINK.findall(page.read_text())
              if "://" not in target and not (page.parent / target).exists()]
    assert broken == []
