"""The ``cvfilters`` entry point: the fast path for the core commands, the full Typer app otherwise.

It sits above every command module: histogram, preview and sweep register their commands
on :data:`cli.app.app` when imported, which :func:`main` does only when a command needs them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import typer

from cvfilters.cli.app import _err, _state, app


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (the console script calls this)."""
    from cvfilters.cli.fast import FAST_COMMANDS, plain_call
    from cvfilters.core.errors import CvfError, UsageError

    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] not in FAST_COMMANDS:
        _register_all_commands()
    command = typer.main.get_command(app)
    try:
        fast = plain_call(command, args)
        if fast is not None:
            callback, values = fast
            callback(**values)
            return 0
        if _register_all_commands():
            command = typer.main.get_command(app)
        _plain_metavars(command)
        code = command.main(args=args, prog_name="cvfilters", standalone_mode=False)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
        return code if isinstance(code, int) else 0
    except BrokenPipeError:  # `cvfilters list | head`: the reader has all it wanted
        _drop_stdout()
        return 141  # 128 + SIGPIPE, as a shell reports a command a closed pipe stopped
    except OSError as exc:
        if exc.errno not in _STDOUT_ERRORS:
            raise
        _drop_stdout()
        _err(f"error: standard output: cannot be written: {exc.strerror}")
        return 1
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        _err("interrupted")
        return 130
    except typer.TyperException as exc:  # typer's own click: bad options, missing arguments
        _err(f"error: {exc.format_message()}")
        return getattr(exc, "exit_code", 2)
    except UsageError as exc:
        _report(exc)
        return 2
    except CvfError as exc:
        _report(exc)
        return 1
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Exception as exc:  # a bug: still one line unless --debug
        if _state["debug"]:
            raise
        _err(f"error: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
        return 1


_STDOUT_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _drop_stdout() -> None:
    """Point standard output at the null device, so the exit's flush does not fail again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _register_all_commands() -> bool:
    """Import the modules that add commands to ``app`` (histogram, preview, sweep); True if it was needed."""
    if all(f"cvfilters.cli.{name}" in sys.modules for name in ("plots", "preview", "sweep")):
        return False
    from cvfilters.cli import plots, preview, sweep  # noqa: F401  (their commands register on import)

    return True


_METAVARS = {int: "N", float: "X", str: "TEXT", Path: "PATH"}


def _plain_metavars(group: Any) -> None:
    """Name option values in help as words (``--bins N``), not as Typer's type placeholders (``<int range>``)."""
    for command in group.commands.values():
        for param in command.params:
            annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            element = getattr(annotation, "__args__", (annotation,))[0] if hasattr(annotation, "__origin__") \
                else annotation
            if param.param_type_name == "option" and param.metavar is None and element in _METAVARS:
                param.metavar = _METAVARS[element]


def _report(exc: Exception) -> None:
    if _state["debug"]:
        traceback.print_exception(exc)
    _err(f"error: {exc}")
