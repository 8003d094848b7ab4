"""Runs ``cvfilters`` commands in forked children under an address-space limit and a time limit.

The hostile-input tests run each command in its own process with ``RLIMIT_AS``, so that a
regression that reads a decompression bomb whole fails by the limit instead of taking the
machine. A new interpreter per command spends half a second importing numpy, OpenCV and
cvfilters; this server imports them once and forks a child per command (safe: it never
starts OpenCV's threads itself). Requests are JSON lines on standard input
(``args``, ``cwd``, ``out``, ``err``, ``env`` (the whole environment), ``limit`` in bytes, ``timeout``
in seconds, and optionally ``preload``: modules the server imports once before forking, for a
command that would import them itself, such as ``onnx`` (1.7 s of CPU per import here));
each reply is a JSON line: the child's wait status, its wall-clock seconds and its peak RSS
in KiB (``wait4``). Run as ``python -m tests.bounded_server`` from the repository root.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import signal
import sys
import time
import traceback

# the apply path, imported once here
import cvfilters.run.batch
import cvfilters.run.planning  # noqa: F401
from cvfilters.cli.main import main


def _child(request: dict) -> None:
    """In the forked child: limits, folder, environment and standard streams, then the command."""
    code = 70
    try:
        resource.setrlimit(resource.RLIMIT_AS, (request["limit"], request["limit"]))
        os.chdir(request["cwd"])
        os.environ.clear()  # the environment the test would give a new process
        os.environ.update(request["env"])
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(os.devnull)  # the server's buffered requests are not the command's input
        code = main(request["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001  (reported as the exit code of an uncaught error)
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def serve() -> None:
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # a child's output never reaches the replies
    for line in sys.stdin:
        request = json.loads(line)
        for name in request.get("preload", ()):
            importlib.import_module(name)  # before the clock starts: a child's time is the command's own
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            replies.close()
            _child(request)
        deadline = start + request["timeout"]
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if time.perf_counter() > deadline:
                os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                break
            time.sleep(0.002)
        replies.write(json.dumps({"status": status, "seconds": time.perf_counter() - start,
                                  "maxrss": usage.ru_maxrss}) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve()
