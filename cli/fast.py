"""Run a command without Typer's runtime coercion when every value on the line is plain.

Typer coerces each non-flag value through a pydantic ``TypeAdapter``, and importing
pydantic costs about as much as the whole of a small ``apply``. The options are still
declared once, in :mod:`cvfilters.cli.app`: this reads the click command Typer builds
from them, lets click's own parser split the line, and converts the values of the
plain annotations the commands use (``str``, ``int`` with its ``min``/``max``, ``bool``,
``Path``, ``list[str]``). Anything else (a value that does not convert, a missing
argument, ``--help``, completion, an annotation of another type) returns ``None`` and
the command runs through Typer as usual, which then reports any error.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAST_COMMANDS = ("apply", "list", "info", "backends")
_SCALARS: dict[Any, Callable[[str], Any]] = {str: str, int: int, Path: Path}


def plain_call(group: Any, args: list[str]) -> tuple[Callable[..., Any], dict[str, Any]] | None:
    """The callback of ``args``' command and its converted keyword values, or None to go through Typer."""
    if not args or args[0] not in FAST_COMMANDS or any(k.endswith("_COMPLETE") for k in os.environ):
        return None
    command = group.commands.get(args[0])
    if command is None or "--help" in args[1:]:
        return None
    from typer import _click as click

    try:
        ctx = click.Context(command, info_name=args[0], parent=click.Context(group, info_name=group.name))
        opts, rest, _ = command.make_parser(ctx).parse_args(args=list(args[1:]))
        if rest:
            return None
        values = {}
        for param in command.params:
            raw, _ = param.consume_value(ctx, opts)
            values[param.name] = _convert(param, raw)
    except (click.ClickException, _NotPlain, ValueError, TypeError, AttributeError):
        return None
    return command.callback, values


class _NotPlain(Exception):
    """A value this module leaves to Typer."""


def _convert(param: Any, raw: Any) -> Any:
    annotation = param.type_descriptor.annotation
    if raw is None and not param.required:
        return None
    if raw is None or raw == () or raw == []:
        raise _NotPlain(param.name)
    if annotation is bool:
        if not isinstance(raw, bool):
            raise _NotPlain(param.name)
        return raw
    if getattr(annotation, "__origin__", None) is list and annotation.__args__ == (str,):
        if not isinstance(raw, (list, tuple)) or not all(isinstance(v, str) for v in raw):
            raise _NotPlain(param.name)
        return list(raw)
    if annotation not in _SCALARS or isinstance(raw, bool) or not isinstance(raw, (str, annotation)):
        raise _NotPlain(param.name)
    value = _SCALARS[annotation](raw)  # a string from the line, or a default of the annotated type
    info = param.type_descriptor.parameter_info
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    if annotation is int and ((low is not None and value < low) or (high is not None and value > high)):
        raise _NotPlain(param.name)
    return value
