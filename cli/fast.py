"""The plain command lines of the core commands, parsed without Typer (importing it costs as much
as a small ``apply``).

The options are declared once, for Typer, in :mod:`cvfilters.cli.app`;
:mod:`cvfilters.cli.plain_options` is generated from those declarations
(``python scripts/update_cli_options.py``; a test fails when it is stale, and another that
this parser gives each command the same values as Typer). A line this parser does not take
whole (``--help``, an unknown or combined option, ``--``, a value that does not convert or is
out of range, a missing argument, an option set from the environment, shell completion)
returns None, and Typer runs the command and reports any error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cvfilters.cli.plain_options import COMMANDS, Param

_CONVERT = {"str": str, "int": int, "path": Path}


def plain_call(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The name of the function in :mod:`cvfilters.cli.commands` that runs ``args`` and its keyword
    values, or None to go through Typer."""
    if not args or args[0] not in COMMANDS or any(key.endswith("_COMPLETE") for key in os.environ):
        return None
    function, params = COMMANDS[args[0]]
    try:
        given, positionals = _split(args[1:], params)
        values = _values(params, given, positionals)
    except _NotPlain:
        return None
    return function, values


class _NotPlain(Exception):
    """A line this module leaves to Typer."""


def _split(items: list[str], params: tuple[Param, ...]) -> tuple[dict[str, list[Any]], list[str]]:
    """Option values by parameter name (in order) and the positional items."""
    flags = {flag: (param, True) for param in params for flag in param.flags}
    flags |= {flag: (param, False) for param in params for flag in param.off_flags}
    given: dict[str, list[Any]] = {}
    positionals: list[str] = []
    queue = list(items)
    while queue:
        item = queue.pop(0)
        if item == "-" or not item.startswith("-"):
            positionals.append(item)
            continue
        if item.startswith("--"):
            name, equals, attached = item.partition("=")
        else:  # -o VALUE, or -oVALUE
            name, attached = item[:2], item[2:]
            equals = "=" if attached else ""
        if name not in flags:
            raise _NotPlain(item)
        param, on = flags[name]
        if param.kind == "bool":
            if equals:
                raise _NotPlain(item)  # --flag=value, or combined short flags
            given.setdefault(param.name, []).append(on)
            continue
        if not equals:
            if not queue:
                raise _NotPlain(item)
            attached = queue.pop(0)
        given.setdefault(param.name, []).append(attached)
    return given, positionals


def _values(params: tuple[Param, ...], given: dict[str, list[Any]], positionals: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for param in params:
        if not param.flags:  # the positional argument: one value, or all of them
            raw: list[Any] = positionals if param.kind == "strs" else positionals[:1]
            if (param.kind != "strs" and len(positionals) > 1) or (param.required and not raw):
                raise _NotPlain(param.name)
            values[param.name] = list(raw) if param.kind == "strs" else raw[0] if raw else param.default
            continue
        if param.name not in given:
            if param.required or (param.envvar and param.envvar in os.environ):
                raise _NotPlain(param.name)
            values[param.name] = param.default
        elif param.kind == "strs":
            values[param.name] = list(given[param.name])
        else:
            values[param.name] = _scalar(param, given[param.name][-1])
    return values


def _scalar(param: Param, raw: Any) -> Any:
    if param.kind == "bool":
        return raw
    try:
        value = _CONVERT[param.kind](raw)
    except ValueError:
        raise _NotPlain(param.name) from None
    if (param.low is not None and value < param.low) or (param.high is not None and value > param.high):
        raise _NotPlain(param.name)
    return value
