"""The entry point (:mod:`cvfilters.cli.main`): exit codes and the one line on stderr, on both paths.

A plain ``list`` takes the fast path; ``list --`` (Typer takes ``--``, the fast parser does not) the
same command through Typer: every outcome below is checked on both. Expected lines are written
out by hand; the C library's messages come from :func:`os.strerror`.
"""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer

from cvfilters.cli import commands
from cvfilters.cli.main import _plain_metavars, main
from tests.cli_runner import run_cli

PATHS = {"fast": ["list"], "typer": ["list", "--"]}
BOTH = pytest.mark.parametrize("path", sorted(PATHS))


def failing(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """``cvfilters list`` raises ``exc``."""
    def raise_it(**_: Any) -> None:
        raise exc

    monkeypatch.setattr(commands, "list_filters", raise_it)


# ---------------------------------------------------------------- interrupts and bugs
def test_both_paths_list_the_same_and_exit_0() -> None:
    fast, typer_path = (run_cli(*PATHS[path]) for path in ("fast", "typer"))
    assert (typer_path.returncode, typer_path.stdout, typer_path.stderr) == (0, fast.stdout, "")
    assert fast.returncode == 0 and any(line.split()[:1] == ["gaussian_blur"] for line in fast.stdout.splitlines())


@BOTH
def test_ctrl_c_is_interrupted_and_exit_130(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """Typer itself turns Ctrl-C into a silent exit 130: through it too the line is "interrupted"."""
    failing(monkeypatch, KeyboardInterrupt())
    proc = run_cli(*PATHS[path])
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "interrupted\n")


@BOTH
@pytest.mark.parametrize("exc", [RuntimeError("boom"), EOFError("no more input"), KeyError("k")],
                         ids=["RuntimeError", "EOFError", "KeyError"])
def test_a_bug_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch, path: str, exc: Exception) -> None:
    """Any exception that is not a cvfilters error; an EOFError too (Typer read it as an interrupt)."""
    failing(monkeypatch, exc)
    proc = run_cli(*PATHS[path])
    message = {"RuntimeError": "boom", "EOFError": "no more input", "KeyError": "'k'"}[type(exc).__name__]
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (f"error: internal error: {type(exc).__name__}: {message} "
                           "(run with --debug for the traceback)\n")


@BOTH
def test_a_usage_error_is_its_line_and_exit_2(path: str) -> None:
    proc = run_cli("info", "no_such_filter", *PATHS[path][1:])
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2, "", "error: unknown filter 'no_such_filter'; `cvfilters list` shows them all\n")


def test_another_cvfilters_error_is_its_line_and_exit_1(tmp_path: Path) -> None:
    """Not a usage error (an input that does not exist): exit 1; ``--debug`` puts the traceback before the line."""
    missing, sheet = tmp_path / "no.png", tmp_path / "sheet.png"
    proc = run_cli("sweep", missing, "-o", sheet, "-f", "vignette:intensity=0..2/3")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"error: {missing}: no such file\n")
    proc = run_cli("--debug", "sweep", missing, "-o", sheet, "-f", "vignette:intensity=0..2/3")
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and lines[0] == "Traceback (most recent call last):", lines
    assert lines[-2].endswith(f"FileMissingError: {missing}: no such file")
    assert lines[-1] == f"error: {missing}: no such file"
    assert not sheet.exists()


def test_with_debug_a_bug_leaves_main(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--debug``: the exception itself leaves :func:`main`, for the interpreter's traceback."""
    failing(monkeypatch, RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="^boom$"):
        run_cli("--debug", "list")


def test_a_bug_in_a_real_process_with_and_without_debug(tmp_path: Path) -> None:
    """The console script's exit and stderr: one line, or with ``--debug`` the traceback (exit 1)."""
    script = ("import sys\nfrom cvfilters.cli import commands, main\n"
              "def boom(**_):\n    raise RuntimeError('boom')\n"
              "commands.list_filters = boom\nsys.exit(main())\n")
    for debug in ([], ["--debug"]):
        proc = subprocess.run([sys.executable, "-c", script, *debug, "list"], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)
        lines = proc.stderr.splitlines()
        assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
        if debug:
            assert lines[0] == "Traceback (most recent call last):" and lines[-1] == "RuntimeError: boom", lines
        else:
            assert lines == ["error: internal error: RuntimeError: boom (run with --debug for the traceback)"]


# ---------------------------------------------------------------- standard output
class Stdout(io.TextIOBase):
    """Standard output whose writes fail with ``error``; its descriptor is ``descriptor``, or that raises."""

    def __init__(self, error: OSError, descriptor: int | Exception) -> None:
        self.error, self.descriptor = error, descriptor

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise self.error

    def fileno(self) -> int:
        if isinstance(self.descriptor, Exception):
            raise self.descriptor
        return self.descriptor


def run_with_stdout(stdout: Stdout, args: list[str], capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """:func:`main` with ``stdout`` as standard output: its exit code and standard error."""
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", stdout)
    code = main(args)
    monkeypatch.undo()
    return code, capsys.readouterr().err


def open_descriptors() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


# Why standard output cannot be pointed at /dev/null after its reader went: a stream without a
# descriptor (StringIO, a test's capture), a closed one, a descriptor number dup2 refuses (EBADF).
NO_REDIRECT: dict[str, int | Exception] = {"no descriptor": io.UnsupportedOperation("fileno"),
                                           "closed": ValueError("I/O operation on closed file"), "refused": 1 << 30}


@BOTH
@pytest.mark.parametrize("why", sorted(NO_REDIRECT))
def test_a_closed_pipe_is_141_and_nothing_more_in_process(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, path: str,
                                                          why: str) -> None:
    """The reader of standard output has gone (``cvfilters list | head``): 141, as a shell shows SIGPIPE."""
    before = open_descriptors()
    stdout = Stdout(BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE)), NO_REDIRECT[why])
    assert run_with_stdout(stdout, PATHS[path], capsys, monkeypatch) == (141, "")
    assert open_descriptors() == before  # /dev/null opened for the redirection is closed again


@BOTH
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO],
                         ids=["ENOSPC", "EDQUOT", "EFBIG", "EIO"])
def test_a_full_standard_output_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch, path: str, code: int) -> None:
    stdout = Stdout(OSError(code, os.strerror(code)), io.UnsupportedOperation("fileno"))
    assert run_with_stdout(stdout, PATHS[path], capsys, monkeypatch) == (
        1, f"error: standard output: cannot be written: {os.strerror(code)}\n")


def test_another_error_of_standard_output_is_an_internal_error(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """EBADF (standard output closed by the shell, ``>&-``) is not a full disk."""
    stdout = Stdout(OSError(errno.EBADF, os.strerror(errno.EBADF)), io.UnsupportedOperation("fileno"))
    assert run_with_stdout(stdout, ["list"], capsys, monkeypatch) == (
        1, f"error: internal error: OSError: [Errno {errno.EBADF}] {os.strerror(errno.EBADF)} "
           "(run with --debug for the traceback)\n")


@pytest.mark.parametrize("args", [["list"], ["--debug", "list"]], ids=["fast", "typer"])
def test_a_closed_pipe_is_141_and_nothing_more(args: list[str]) -> None:
    """A real process, its pipe's reader gone before it writes: no "Exception ignored" at exit."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "cvfilters", *args], stdout=write, stderr=subprocess.PIPE,
                              timeout=120)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (141, b"")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full to fill")
def test_a_full_standard_output_through_typer() -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "cvfilters", "--debug", "info", "lut"], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (1, "error: standard output: cannot be written: No space left on device\n")


# ---------------------------------------------------------------- Typer's usage errors and help
@pytest.mark.parametrize(("args", "line"), [
    (["list", "--bogus"], "error: No such option: --bogus"),
    (["info"], "error: Missing argument 'NAME'."),
    (["nosuch"], "error: No such command 'nosuch'."),
    (["histogram", "a.png", "-o", "h.png", "--bins", "1"],
     "error: Invalid value for '--bins': Input should be greater than or equal to 2"),
])
def test_typer_usage_errors_are_one_line_and_exit_2(args: list[str], line: str) -> None:
    proc = run_cli(*args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", line + "\n")


def test_no_command_shows_the_help_on_stderr_and_exits_2() -> None:
    """As Typer does alone: the help, not one line of it with its newlines escaped (``\\n``)."""
    proc = run_cli(env={**os.environ, "COLUMNS": "80"})
    assert (proc.returncode, proc.stdout) == (2, "")
    lines = proc.stderr.splitlines()
    assert lines[0] == "Usage: cvfilters [OPTIONS] COMMAND [ARGS]..." and "\\n" not in proc.stderr
    assert "Commands:" in lines and any(line.split()[:1] == ["apply"] for line in lines), lines
    assert proc.stderr == run_cli("--help", env={**os.environ, "COLUMNS": "80"}).stdout


def test_help_names_the_program_and_option_values_as_words() -> None:
    proc = run_cli("histogram", "--help", env={**os.environ, "COLUMNS": "80"})
    lines = [line.strip().split("  ")[0] for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and lines[0] == "Usage: cvfilters histogram [OPTIONS] {INPUT [INPUT2]}..."
    for option in ("-o, --output PATH", "--bins N", "--width N", "--height N", "--title TEXT", "--log"):
        assert option in lines, (option, lines)


def test_the_bash_completion_script_completes_cvfilters() -> None:
    """``_CVFILTERS_COMPLETE=source_bash``: the script bash sources, bound to the command ``cvfilters``."""
    proc = run_cli(env={**os.environ, "_CVFILTERS_COMPLETE": "source_bash"})
    lines = proc.stdout.strip().splitlines()
    assert (proc.returncode, proc.stderr) == (0, "")
    assert lines[0] == "_cvfilters_completion() {" and "_CVFILTERS_COMPLETE=complete_bash $1 ) )" in proc.stdout
    assert lines[-1] == "complete -o default -F _cvfilters_completion cvfilters"


def test_plain_metavars_name_each_type() -> None:
    """int N, float X, str TEXT, Path PATH, a list by its element; given names, flags and arguments kept."""
    app = typer.Typer()

    @app.command()
    def one(name: str, count: int = 1, scale: float | None = None, label: str = "", where: Path | None = None,
            sizes: list[int] | None = None, named: Annotated[int, typer.Option(metavar="K")] = 0,
            on: bool = False) -> None:
        """One command."""

    @app.command()
    def two(paths: Annotated[list[Path] | None, typer.Option("--path")] = None) -> None:
        """A second one."""

    group = typer.main.get_command(app)
    _plain_metavars(group)
    metavars = {(command.name, param.name): param.metavar for command in group.commands.values()  # type: ignore[attr-defined]
                for param in command.params}
    assert metavars == {("one", "name"): None, ("one", "count"): "N", ("one", "scale"): "X", ("one", "label"): "TEXT",
                        ("one", "where"): "PATH", ("one", "sizes"): "N", ("one", "named"): "K", ("one", "on"): None,
                        ("two", "paths"): "PATH"}
