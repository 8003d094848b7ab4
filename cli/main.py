"""The ``cvfilters`` entry point: the fast path for the core commands, the full Typer app otherwise.

A plain line of ``apply``, ``list``, ``info`` or ``backends`` (:mod:`cvfilters.cli.fast`)
runs its function in :mod:`cvfilters.cli.commands` without importing Typer. It sits above
every command module: histogram, preview and sweep register their commands on
:data:`cli.app.app` when imported, which :func:`main` does only when a command needs them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cvfilters.cli.commands import CommandExit, err, state


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (the console script calls this)."""
    from cvfilters.cli.fast import plain_call

    args = sys.argv[1:] if argv is None else list(argv)
    fast = plain_call(args)
    if fast is not None:
        from cvfilters.cli import commands

        function, values = fast
        return _guarded(lambda: getattr(commands, function)(**values))
    return _guarded(lambda: _run_typer(args))


def _run_typer(args: list[str]) -> int:
    import typer

    from cvfilters.cli.app import app

    _register_all_commands()
    command = typer.main.get_command(app)
    _plain_metavars(command)
    if os.environ.get("_CVFILTERS_COMPLETE"):  # a shell asks for completions: Typer answers and exits
        command.main(args=args, prog_name="cvfilters")
    try:
        # What click's main() does, without Typer's handlers around it (they end a Ctrl-C with exit 130 and no
        # word, an EOFError as an abort, a closed pipe with exit 1): _guarded takes them as on the fast path.
        with command.make_context("cvfilters", args) as context:
            command.invoke(context)  # the commands return None: failures raise CommandExit or an error
    except typer.Exit as exc:  # --help, --version
        return exc.exit_code
    except typer.TyperException as exc:  # typer's own click: bad options, missing arguments
        if not args:  # no command at all (no_args_is_help): the help as it is written, not one escaped line
            print(exc.format_message(), file=sys.stderr)
        else:
            err(f"error: {exc.format_message()}")
        return exc.exit_code
    return 0


def _guarded(run: Callable[[], Any]) -> int:
    """Run a command: its exit code, with every error as one line (a traceback with ``--debug``)."""
    from cvfilters.core.errors import CvfError, UsageError

    try:
        code = run()
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
        return code if isinstance(code, int) else 0
    except CommandExit as exc:
        return exc.code
    except UsageError as exc:
        _report(exc)
        return 2
    except CvfError as exc:
        _report(exc)
        return 1
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except BrokenPipeError:  # `cvfilters list | head`: the reader has all it wanted
        _drop_stdout()
        return 141  # 128 + SIGPIPE, as a shell reports a command a closed pipe stopped
    except OSError as exc:
        if exc.errno not in _STDOUT_ERRORS:
            return _internal_error(exc)
        _drop_stdout()
        err(f"error: standard output: cannot be written: {exc.strerror}")
        return 1
    except Exception as exc:
        return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    """A bug: still one line unless --debug."""
    if state["debug"]:
        raise exc
    err(f"error: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
    return 1


_STDOUT_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _drop_stdout() -> None:
    """Point standard output at the null device, so the exit's flush does not fail again."""
    with contextlib.suppress(OSError, ValueError):  # no descriptor, a closed stream: nothing to point elsewhere
        descriptor = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, descriptor)
        finally:
            os.close(null)


def _register_all_commands() -> None:
    """Import the modules that add commands to ``app`` (histogram, preview, sweep)."""
    from cvfilters.cli import plots, preview, sweep  # noqa: F401  (their commands register on import)


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
    if state["debug"]:
        traceback.print_exception(exc)
    err(f"error: {exc}")
