"""The README's filter table is generated from the registry and must not go stale."""

from __future__ import annotations

import cvfilters as cvf
from cvfilters.viz.describe import with_filter_table
from tests.conftest import FIXTURES

README = FIXTURES.parent / "README.md"


def test_readme_filter_table_is_current() -> None:
    text = README.read_text()
    assert with_filter_table(text) == text, "run: python scripts/update_readme.py"
    for flt in cvf.list_filters():
        assert f"| `{flt.name}` |" in text
