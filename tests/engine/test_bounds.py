"""Bounds on pipeline files (cvfilters.engine.bounds): nesting depth, aliases and repeated keys.

The depth bound is 32 levels (docs/security.md's table of bounds); the expected messages are
written out here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cvfilters.core.errors import SpecError
from cvfilters.engine.bounds import parse_document

JSON, YAML = Path("p.json"), Path("p.yaml")


def _json_nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def _yaml_nested(levels: int) -> str:
    return "[" * levels + "]" * levels  # flow style: one sequence per bracket


@pytest.mark.parametrize(("path", "nested"), [(JSON, _json_nested), (YAML, _yaml_nested)])
def test_thirty_two_levels_pass_and_thirty_three_are_refused(path: Path, nested: object) -> None:
    assert callable(nested)
    data, _ = parse_document(path, nested(32))
    for _ in range(31):
        data = data[0]
    assert data == []
    with pytest.raises(SpecError) as caught:
        parse_document(path, nested(33))
    assert str(caught.value) == f"{path}: nested more than 32 levels deep"


@pytest.mark.parametrize("path", [JSON, YAML])
def test_depth_counts_open_collections_not_all_brackets_seen(path: Path) -> None:
    """Closed collections give their levels back: 32 siblings of depth 31 each are fine."""
    sibling = "[" * 30 + "]" * 30
    text = "[" + ", ".join([sibling] * 32) + "]"
    data, _ = parse_document(path, text)
    assert len(data) == 32
    with pytest.raises(SpecError, match="nested more than 32 levels deep"):  # 33 open after a closed one
        parse_document(path, "[[[], " + "[" * 31 + "]" * 31 + "]]")
    mapping = '{"a": ' * 32 + "1" + "}" * 32  # mappings count as levels too
    parse_document(path, mapping)
    with pytest.raises(SpecError, match="nested more than 32 levels deep"):
        parse_document(path, '{"a": ' * 33 + "1" + "}" * 33)


def test_json_brackets_inside_strings_do_not_count() -> None:
    quoted = '"' + "[" * 40 + '\\"' + "{" * 40 + '\\\\"'  # escaped quotes, then an escaped backslash ending it
    text = "[" * 31 + quoted + "]" * 31
    data, _ = parse_document(JSON, text)
    for _ in range(30):
        data = data[0]
    assert data == ["[" * 40 + '"' + "{" * 40 + "\\"]
    # after a string, escapes in it or not, brackets count again: 31 + 2 levels
    for string in ('"x"', '"\\n"'):
        with pytest.raises(SpecError, match="nested more than 32 levels deep"):
            parse_document(JSON, "[" * 31 + string + ", [[1]]" + "]" * 31)


def test_yaml_aliases_and_repeated_keys_are_refused_with_their_place() -> None:
    with pytest.raises(SpecError) as caught:
        parse_document(YAML, "a: &x [1]\nb: *x\n")
    assert str(caught.value) == "p.yaml: YAML aliases (*name) are not allowed in pipeline files"
    with pytest.raises(SpecError) as caught:
        parse_document(YAML, "steps:\n  - name: blur\n    name: sharpen\n")
    assert str(caught.value) == "p.yaml:3: key 'name' is given twice"
    data, node = parse_document(YAML, "steps:\n  - name: blur\n  - name: blur\n")  # alike keys in two mappings
    assert data == {"steps": [{"name": "blur"}, {"name": "blur"}]} and node is not None
