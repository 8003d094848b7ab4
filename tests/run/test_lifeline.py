"""Workers never outlive the command: SIGKILL a real ``cvfilters apply DIR -o OUT --jobs 2`` and
check through /proc that none of its descendants (pool workers, forkserver, resource tracker)
is alive a few seconds later; then the next run cleans up and completes the batch."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from cvfilters.core import atomic, leftovers
from cvfilters.run import lifeline

ROOT = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")


def children() -> dict[int, int]:
    """pid -> parent pid of every live (non-zombie) process."""
    tree = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != b"Z":
                tree[int(entry.name)] = int(fields[1])
    return tree


def descendants(root: int, tree: dict[int, int]) -> set[int]:
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in tree.items() if parent in frontier} - found
        found |= frontier
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "(gone)"


@linux_only
def test_sigkill_of_the_command_ends_its_pool_forkserver_and_tracker(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    rng = np.random.default_rng(0)
    for i in range(40):
        cv2.imwrite(str(src / f"{i:02}.png"), rng.integers(0, 256, (500, 700, 3), dtype=np.uint8))
    command = subprocess.Popen([sys.executable, "-m", "cvfilters", "apply", str(src), "-o", str(out), "-f",
                                "gaussian_blur:sigma=8", "--jobs", "2", "--backend", "cpu"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    helpers: set[int] = set()
    while time.monotonic() < deadline:
        helpers = descendants(command.pid, children())
        if len(helpers) >= 4 and out.is_dir() and any(out.iterdir()):  # 2 workers, forkserver, tracker; working
            break
        time.sleep(0.05)
    assert len(helpers) >= 4, [command_line(pid) for pid in helpers]
    command.send_signal(signal.SIGKILL)
    command.wait(timeout=10)
    deadline = time.monotonic() + 10
    alive = helpers
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        live = children()
        alive = {pid for pid in helpers if pid in live}
    assert not alive, [command_line(pid) for pid in alive]

    # The next run (a minute later) removes what the killed writers left and finishes the batch.
    for path in out.iterdir():
        os.utime(path, (time.time() - 120, time.time() - 120))
    rerun = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(src), "-o", str(out), "-f",
                            "gaussian_blur:sigma=8", "--jobs", "1", "--backend", "cpu"], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(p.name for p in out.iterdir()) == [f"{i:02}.png" for i in range(40)]
    for path in out.iterdir():
        assert cv2.imread(str(path)) is not None


def test_watchdog_ends_the_process_when_the_watched_one_is_gone() -> None:
    """A child that watches a process which then exits ends itself (the fallback without prctl)."""
    code = ("import sys, time; from cvfilters.run import lifeline; lifeline.watch(int(sys.argv[1]), 0.05); "
            "time.sleep(30); print('outlived')")
    target = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    watcher = subprocess.run([sys.executable, "-c", code, str(target.pid)], capture_output=True, text=True,
                             timeout=20, cwd=ROOT)
    target.wait()
    assert watcher.returncode == 1 and "outlived" not in watcher.stdout


def test_alive_tells_running_dead_and_zombie_processes_apart() -> None:
    assert lifeline.alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while lifeline.alive(child.pid) and time.monotonic() < deadline:  # a zombie until reaped
        time.sleep(0.02)
    assert not lifeline.alive(child.pid)
    child.wait()
    assert not lifeline.alive(child.pid)


def _forked(work: Callable[[int], int]) -> tuple[int, int]:
    """``work(write_fd)`` in a forked child, which exits with its return value: (exit code, int it wrote)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.close(read)
            code = work(write)
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), int(text or -1)


def _death_signal() -> int:
    """This process's parent-death signal, read back from the kernel (prctl PR_GET_PDEATHSIG)."""
    value = ctypes.c_int(-1)
    ctypes.CDLL(None, use_errno=True).prctl(2, ctypes.byref(value), 0, 0, 0)
    return value.value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
@pytest.mark.parametrize("expected", [True, False], ids=["named parent", "any parent"])
def test_die_with_parent_asks_the_kernel_for_sigkill(expected: bool) -> None:
    def work(write: int) -> int:
        armed = lifeline.die_with_parent(os.getppid() if expected else None)
        os.write(write, str(_death_signal()).encode())
        return 0 if armed is True else 4

    assert _forked(work) == (0, int(signal.SIGKILL))


def test_die_with_parent_exits_when_the_parent_is_not_the_one_named() -> None:
    def work(write: int) -> int:
        lifeline.die_with_parent(os.getppid() + 1_000_000)  # a parent that is already gone
        os.write(write, b"5")
        return 0

    assert _forked(work) == (1, -1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_process_that_asked_dies_with_its_parent() -> None:
    def work(write: int) -> int:  # the child forks a grandchild that asks, then exits
        asked, told = os.pipe()
        grandchild = os.fork()
        if grandchild == 0:
            lifeline.die_with_parent(os.getppid())
            os.write(told, b"x")
            time.sleep(30)
            os._exit(0)
        os.read(asked, 1)  # the grandchild has asked
        os.write(write, str(grandchild).encode())
        return 0

    code, grandchild = _forked(work)
    deadline = time.monotonic() + 10
    while lifeline.alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert code == 0 and not lifeline.alive(grandchild)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux's")
def test_alive_reads_the_state_after_the_last_parenthesis_of_the_name() -> None:
    """/proc/PID/stat is ``pid (comm) state ...``; a name may hold ") Z" itself."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        ctypes.CDLL(None).prctl(15, b"x) Z (y", 0, 0, 0)  # PR_SET_NAME
        os.write(write, b"named")
        time.sleep(30)
        os._exit(0)
    try:
        assert os.read(read, 5) == b"named"
        assert lifeline.alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_alive_without_a_readable_stat_trusts_the_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_proc(path: object, *args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("builtins.open", no_proc)
    assert lifeline.alive(os.getpid())


def test_remove_stale_touches_only_our_unheld_temporaries(tmp_path: Path) -> None:
    ours = tmp_path / ".photo.png.0123456789abcdef.tmp"
    held = tmp_path / ".other.png.00000000000000ff.tmp"
    theirs = [tmp_path / ".photo.png.tmp", tmp_path / "photo.png.0123456789abcdef.tmp",
              tmp_path / ".photo.png.0123456789ABCDEF.tmp", tmp_path / "photo.png"]
    video = tmp_path / ".clip.0123456789abcdef.tmp.mp4"
    mux = tmp_path / "..clip.0123456789abcdef.tmp.fedcba9876543210.tmp.mp4"  # the audio remux of a video
    fresh = tmp_path / ".new.png.00000000000000aa.tmp"
    for path in [ours, held, video, mux, fresh, *theirs]:
        path.write_bytes(b"x")
        if path != fresh:
            os.utime(path, (time.time() - 120, time.time() - 120))  # two minutes old
    with open(held, "rb"):
        assert sorted(leftovers.remove_stale(tmp_path)) == sorted([ours, video, mux])
    assert not ours.exists() and held.exists() and fresh.exists() and all(p.exists() for p in theirs)
    assert atomic.is_temporary_name(atomic.temporary_name(tmp_path / "a.png").name)
    assert atomic.is_temporary_name(atomic.temporary_name(tmp_path / "a.mkv", keep_suffix=True).name)
