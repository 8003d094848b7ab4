"""The filter text grammar ("spec"): steps written as text, parsed into steps and written back.

Syntax (CLI ``-f`` and :meth:`cvfilters.Pipeline.parse`)::

    name                       a filter with its defaults
    name:key=value,key=value   values: numbers, true/false, words, [lists], @file,
                               or 'quoted text' when a value holds , | or :
    step | step | step         several steps in one string
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from cvfilters.core.errors import SpecError, UsageError
from cvfilters.engine.steps import Step
from cvfilters.registry import catalog as registry


def parse_spec(spec: str | Sequence[str], *, base_dir: str | os.PathLike[str] | None = None,
               confine: bool = False) -> list[Step]:
    """The steps of one spec string (steps joined by ``|``) or of a sequence of them.

    Raises
    ------
    SpecError, UnknownFilterError, ParameterError
        Naming the step or parameter at fault.
    """
    texts = [spec] if isinstance(spec, str) else list(spec)
    return [_parse_step(part.strip(), base_dir, confine) for text in texts for part in split_spec(text, "|")]


def format_spec(steps: Sequence[Step]) -> str:
    """The one-line text of ``steps``, parsed back by :func:`parse_spec` to the same steps."""
    return " | ".join(step.to_spec() for step in steps)


def split_spec(text: str, sep: str) -> list[str]:
    """Split spec text on ``sep`` (``|`` between steps, ``,`` between values) outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if quote or depth:
        raise SpecError(f"unbalanced {'quote' if quote else 'brackets'} in {text!r}")
    parts.append(text[start:])
    return parts


def _parse_step(text: str, base_dir: str | os.PathLike[str] | None, confine: bool = False) -> Step:
    if not text:
        raise SpecError("empty filter step (two '|' in a row, or a trailing '|')")
    try:
        return _step_from_text(text, base_dir, confine)
    except UsageError as exc:
        hint = _missing_bar_hint(text)
        if hint:
            exc.args = (f"{exc}; {hint}",)
        raise


def _missing_bar_hint(text: str) -> str:
    """A hint when a step's text holds a second filter after a space: ``sigma=3 pixellate`` lacks a ``|``."""
    words = text.split()
    for i, word in enumerate(words[1:], 1):
        name = word.partition(":")[0]
        if name and registry.is_filter_name(name):
            fixed = " ".join(words[:i]) + " | " + " ".join(words[i:])
            return f"steps are separated by '|': did you mean {fixed!r}?"
    return ""


def _step_from_text(text: str, base_dir: str | os.PathLike[str] | None, confine: bool) -> Step:
    name, _, rest = text.partition(":")
    flt = registry.get(name.strip())
    values: dict[str, Any] = {}
    for item in split_spec(rest, ",") if rest.strip() else []:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SpecError(f"{flt.name}: expected key=value, got {item.strip()!r}")
        if key in values:
            raise SpecError(f"{flt.name}: {key} is given twice")
        values[key] = _unquote(value.strip())
    return Step(flt, flt.resolve(values, base_dir=base_dir, confine=confine))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
