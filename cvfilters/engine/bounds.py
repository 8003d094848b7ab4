"""Bounds on pipeline files, checked before the work they describe.

* the file: a regular file of at most :data:`MAX_PIPELINE_FILE` bytes
  (:func:`cvfilters.core.files.read_regular`: no FIFO, device or ``/proc`` file);
* its YAML: no aliases, at most :data:`MAX_DEPTH` levels of nesting (counted on the
  parser's event stream, which is not recursive, before anything is composed), no key
  given twice in a mapping (JSON alike);
* its expansion: pipeline files that name other pipeline files (``masked:filter=@f.yaml``)
  may together hold at most :data:`MAX_EXPANDED_STEPS` steps, counted as each file is read,
  so files that include each other K times per level stop after a bounded amount of work.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from cvfilters.core.errors import SpecError
from cvfilters.core.files import FileRefused, json_unique, read_regular, shown

MAX_PIPELINE_FILE = 1024 * 1024
MAX_DEPTH = 32
MAX_EXPANDED_STEPS = 256
_EXPANDED: ContextVar[list[int] | None] = ContextVar("cvfilters_expanded_steps", default=None)


def read_pipeline_text(path: Path) -> str:
    """The text of a pipeline file; :class:`SpecError` naming it unless a regular UTF-8 file within the bound."""
    try:
        return read_regular(path, MAX_PIPELINE_FILE).decode("utf-8-sig")
    except FileRefused as exc:
        raise SpecError(f"{shown(path)}: pipeline file {exc.reason}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{shown(path)}: pipeline file is not UTF-8 text") from None


def parse_document(path: Path, text: str) -> tuple[Any, Any]:
    """``(data, yaml node or None)`` of a pipeline file's text, within the bounds above."""
    import yaml

    try:
        if path.suffix.lower() == ".json":
            _check_json_depth(text, path)
            return json_unique(text), None
        _check_events(text, path)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        _check_unique_keys(node, path)
        return yaml.safe_load(text), node
    except (json.JSONDecodeError, yaml.YAMLError, RecursionError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SpecError(f"{shown(path)}: not a valid pipeline file ({shown(first)})") from None


@contextlib.contextmanager
def expansion() -> Iterator[None]:
    """Count the steps of the pipeline files read inside this block (the outermost one starts the count)."""
    token = _EXPANDED.set([0]) if _EXPANDED.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _EXPANDED.reset(token)


def count_steps(count: int, path: Path) -> None:
    """Add a file's ``count`` steps to the expansion; :class:`SpecError` past :data:`MAX_EXPANDED_STEPS`."""
    counter = _EXPANDED.get()
    if counter is None:
        return
    counter[0] += count
    if counter[0] > MAX_EXPANDED_STEPS:
        raise SpecError(f"{shown(path)}: the pipeline files it names expand to more than {MAX_EXPANDED_STEPS} "
                        "steps in all; nest fewer files or fewer steps")


def _check_events(text: str, path: Path) -> None:
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise SpecError(f"{shown(path)}: YAML aliases (*name) are not allowed in pipeline files")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise SpecError(f"{shown(path)}: nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_json_depth(text: str, path: Path) -> None:
    """Refuse JSON nested deeper than :data:`MAX_DEPTH` (brackets outside strings), before ``json`` recurses."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise SpecError(f"{shown(path)}: nested more than {MAX_DEPTH} levels deep")
        elif char in "]}":
            depth -= 1


def _check_unique_keys(node: Any, path: Path) -> None:
    from yaml.nodes import MappingNode, SequenceNode

    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, MappingNode):
            seen: set[Any] = set()
            for key, value in current.value:
                label = getattr(key, "value", None)
                if isinstance(label, str):
                    if label in seen:
                        raise SpecError(f"{shown(path)}:{key.start_mark.line + 1}: key {shown(label)!r} is given "
                                        "twice")
                    seen.add(label)
                pending.extend((key, value))
        elif isinstance(current, SequenceNode):
            pending.extend(current.value)


__all__ = ["MAX_DEPTH", "MAX_EXPANDED_STEPS", "MAX_PIPELINE_FILE", "count_steps", "expansion", "parse_document",
           "read_pipeline_text"]
