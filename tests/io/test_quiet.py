"""cvfilters.io.quiet: what libraries print about a damaged file stays off the terminal.

What C code writes is written here with ``os.write(2, ...)`` (libpng and libjpeg write to descriptor 2
the same way); pytest's ``capfd`` holds descriptor 2, so what was not caught shows there."""

from __future__ import annotations

import logging
import os
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import cv2
import pytest
import tifffile

from cvfilters.io import quiet as quiet_module
from cvfilters.io.quiet import quiet, tifffile_logger_quiet

# A TIFF header whose first-page offset points past the end of the file: tifffile logs it.
BROKEN_TIFF = b"II*\x00" + (3042).to_bytes(4, "little") + b"\x00" * 16


def open_broken(path: Path) -> None:
    try:
        tifffile.TiffFile(path).close()
    except Exception:  # noqa: BLE001  (tifffile raises several types on damaged files)
        pass


def test_tifffile_logs_a_damaged_file_and_the_guard_silences_it(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "broken.tif"
    path.write_bytes(BROKEN_TIFF)
    with caplog.at_level(logging.WARNING, logger="tifffile"):
        open_broken(path)
    assert any(record.name == "tifffile" for record in caplog.records)  # the library does log this file
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tifffile"), tifffile_logger_quiet():
        open_broken(path)
    assert not caplog.records


def test_the_logger_is_restored_afterwards(tmp_path: Path) -> None:
    logger = logging.getLogger("tifffile")
    logger.disabled = False
    with tifffile_logger_quiet():
        assert logger.disabled
    assert not logger.disabled
    with pytest.raises(RuntimeError), tifffile_logger_quiet():
        raise RuntimeError("a failure inside")
    assert not logger.disabled



def test_a_logger_disabled_before_stays_disabled() -> None:
    logger = logging.getLogger("tifffile")
    logger.disabled = True  # by the caller, before cvfilters reads a TIFF
    try:
        with tifffile_logger_quiet():
            pass
        assert logger.disabled is True
    finally:
        logger.disabled = False


@pytest.fixture
def warning_level() -> Iterator[int]:
    """OpenCV's log level set to WARNING for the test (a level quiet() must hand back), restored after."""
    before = cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_WARNING)
    yield cv2.utils.logging.LOG_LEVEL_WARNING
    cv2.utils.logging.setLogLevel(before)


def fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


def test_descriptor_2_is_caught_line_by_line_and_given_back(capfd: pytest.CaptureFixture[str],
                                                            warning_level: int) -> None:
    capfd.readouterr()
    open_before = fds()
    with quiet() as printed:
        assert cv2.utils.logging.getLogLevel() == cv2.utils.logging.LOG_LEVEL_SILENT
        os.write(2, b"libpng warning: iCCP: known incorrect sRGB profile\n  \n\xff\xfe not UTF-8\n")
        assert printed == []  # filled when the block ends
    assert printed == ["libpng warning: iCCP: known incorrect sRGB profile", "\ufffd\ufffd not UTF-8"]
    assert cv2.utils.logging.getLogLevel() == warning_level
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"  # descriptor 2 is the terminal's again, nothing leaked there
    assert fds() == open_before


def test_at_most_4096_bytes_are_kept(capfd: pytest.CaptureFixture[str]) -> None:
    with quiet() as printed:
        os.write(2, b"x" * 4095 + b"\nlater\n")
    assert printed == ["x" * 4095]
    assert capfd.readouterr().err == ""


def test_blocks_that_overlap_give_their_lines_to_neither(capfd: pytest.CaptureFixture[str]) -> None:
    """Another thread inside at the same time: whose lines they are is unknown, so neither block gets them."""
    inside, done = threading.Event(), threading.Event()
    lists: dict[str, list[str]] = {}

    def other() -> None:
        inside.wait(timeout=30)
        with quiet() as printed:
            os.write(2, b"from the other thread\n")
        lists["other"] = printed
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with quiet() as printed:
        inside.set()
        done.wait(timeout=30)
        os.write(2, b"from this thread\n")
    thread.join(timeout=30)
    assert (printed, lists["other"]) == ([], [])
    with quiet() as alone:  # the next block alone inside gets its lines again
        os.write(2, b"alone\n")
    assert alone == ["alone"]
    assert capfd.readouterr().err == ""


def test_without_a_python_stderr_descriptor_2_is_still_caught(monkeypatch: pytest.MonkeyPatch,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    """pythonw and some daemons run with sys.stderr None: its flush fails, the catch goes on."""
    monkeypatch.setattr(sys, "stderr", None)
    with quiet() as printed:
        os.write(2, b"chatter\n")
    assert printed == ["chatter"]


@pytest.mark.parametrize("failing", ["dup", "dup2"])
def test_where_descriptor_2_cannot_be_moved_nothing_is_caught_and_nothing_leaks(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], failing: str) -> None:
    """No descriptor 2 (dup fails, as in a daemon) or dup2 refused: the block runs, the list stays empty."""
    def refuse(*args: int) -> int:
        raise OSError(9, "Bad file descriptor")

    monkeypatch.setattr(quiet_module, "os", types.SimpleNamespace(**{**vars(os), failing: refuse}))
    capfd.readouterr()
    open_before = fds()
    with quiet() as printed:
        os.write(2, b"not caught\n")
    assert printed == []
    assert capfd.readouterr().err == "not caught\n"
    assert fds() == open_before


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no memfd_create here")
def test_the_catcher_is_a_named_memfd_where_linux_has_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    def no_temporary_file(*args: object, **kwargs: object) -> None:
        raise OSError("tempfile was used")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_temporary_file)
    with quiet() as printed:
        assert os.readlink("/proc/self/fd/2") == "/memfd:cvfilters-stderr (deleted)"  # what lsof shows
        os.write(2, b"caught in memory\n")
    assert printed == ["caught in memory"]


def test_without_memfd_a_temporary_file_catches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)
    with quiet() as printed:
        os.write(2, b"caught in a file\n")
    assert printed == ["caught in a file"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available")
def test_a_child_forked_while_a_thread_is_inside_gets_descriptor_2_back(warning_level: int) -> None:
    """The child has no thread inside: descriptor 2 and the log level are the parent's from before the block,
    and quiet() works there (its lock may have been held by the parent's thread)."""
    before = os.fstat(2)
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with quiet(), quiet_module._QUIET_LOCK:  # inside, and holding the lock at the fork
            inside.set()
            leave.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(30)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                now = os.fstat(2)
                report = [(now.st_dev, now.st_ino) == (before.st_dev, before.st_ino),
                          cv2.utils.logging.getLogLevel() == warning_level]
                with quiet() as printed:
                    os.write(2, b"in the child\n")
                report += [printed == ["in the child"], cv2.utils.logging.getLogLevel() == warning_level]
                os.write(write, repr(report).encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            got = pipe.read()
        os.waitpid(pid, 0)
    finally:
        leave.set()
        holder.join(30)
    assert got == repr([True, True, True, True])
