"""The command line run inside the test process, answering as :func:`subprocess.run` does.

A new Python process per command costs about half a second here (importing numpy, OpenCV and
cvfilters): most of the suite's time, for nothing the tests check. :func:`run_cli` calls the
console script's :func:`cvfilters.cli.main.main` with the arguments, working folder,
environment and standard input a process would get, and returns its exit code and what it
wrote on standard output and standard error. Tests of what only a real process shows (the
modules a start-up imports, signals, memory limits, a terminal, inherited descriptors, a
command prefix) start one with :func:`run_process`.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path


def run_process(*args: object, cwd: Path | None = None, stdin: bytes | None = None,
                env: Mapping[str, str] | None = None, text: bool = True, prefix: tuple[str, ...] = (),
                timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m cvfilters ARGS`` in a new process (never a shell: globs stay quoted)."""
    return subprocess.run([*prefix, sys.executable, "-m", "cvfilters", *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, env=None if env is None else dict(env), timeout=timeout, text=text)


def run_cli(*args: object, cwd: Path | None = None, stdin: bytes | None = None,
            env: Mapping[str, str] | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """``cvfilters ARGS`` in this process; ``env`` replaces the environment as it would a process's.

    The result's ``stdout`` and ``stderr`` are text, or bytes when ``text`` is false.
    """
    from cvfilters.cli.commands import state
    from cvfilters.cli.main import main

    argv = [str(arg) for arg in args]
    out, err = io.BytesIO(), io.BytesIO()
    with _process_state(cwd, env), warnings.catch_warnings():
        warnings.simplefilter("default")  # a fresh process shows each warning once: so does every run here
        # held here: a wrapper closes its buffer when it is collected
        streams = (io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8"),
                   io.TextIOWrapper(out, encoding="utf-8", write_through=True),
                   io.TextIOWrapper(err, encoding="utf-8", write_through=True))
        sys.stdin, sys.stdout, sys.stderr = streams
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            state["debug"] = False
            for stream in streams[1:]:
                stream.flush()
            output, errors = out.getvalue(), err.getvalue()
    if text:
        return subprocess.CompletedProcess(["cvfilters", *argv], code, output.decode(), errors.decode())
    return subprocess.CompletedProcess(["cvfilters", *argv], code, output, errors)


@contextlib.contextmanager
def _process_state(cwd: Path | None, env: Mapping[str, str] | None) -> Iterator[None]:
    """Folder, environment, standard streams and signal handlers, restored after the command."""
    folder, environment = os.getcwd(), dict(os.environ)
    streams = sys.stdin, sys.stdout, sys.stderr
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(folder)
        os.environ.clear()
        os.environ.update(environment)
        for number, handler in handlers.items():
            signal.signal(number, handler)
