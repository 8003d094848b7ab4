"""A batch that survives: a dead worker, an unexpected error, Ctrl-C (issue 24).

``batch.run`` keeps at most ``max_workers`` tasks in flight on a local pool, reruns alone
the tasks whose worker died (``BrokenProcessPool`` fails every task in flight, not only
the culprit's), fails a task whose worker dies again with one line naming its file, and
lets a fresh pool take the rest (:class:`executors.RenewingPool`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.engine.pipeline import Pipeline
from cvfilters.run import batch, executors, processing
from cvfilters.run.tasks import Options, Task


def write_images(root: Path, count: int, size: tuple[int, int] = (24, 32)) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    paths = []
    for index in range(count):
        path = root / f"{index:03}.png"
        cv2.imwrite(str(path), rng.integers(0, 256, (*size, 3), dtype=np.uint8))
        paths.append(path)
    return paths


def test_a_dead_worker_fails_its_file_and_the_rest_are_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = write_images(tmp_path / "in", 7)
    tasks = [Task(source, tmp_path / "out" / source.name) for source in sources]
    options = Options(Pipeline.parse("invert").to_dict())
    culprit = sources[3].name
    calls: list[tuple[str, int]] = []

    class Pool(Executor):
        """Inline, two slots: the worker running ``culprit`` dies and takes the other task in flight with it."""

        max_workers = 2

        def __init__(self) -> None:
            self.slots: list[tuple[Future[Any], Task]] = []

        def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
            future: Future[Any] = Future()
            self.slots.append((future, args[0]))
            rerun = any(name == args[0].source.name for name, _ in calls)
            calls.append((args[0].source.name, len(self.slots)))
            if len(self.slots) == self.max_workers or args[0] is tasks[-1] or rerun:
                self.finish()
            return future

        def finish(self) -> None:
            slots, self.slots = self.slots, []
            dies = any(task.source.name == culprit for _, task in slots)
            for future, task in slots:
                if dies:
                    future.set_exception(BrokenProcessPool("A process in the process pool was terminated abruptly"))
                else:
                    future.set_result(processing.process(task, options))

    outcomes = {o.task.source.name: o for o in batch.run(tasks, options, executor=Pool())}
    assert set(outcomes) == {s.name for s in sources}
    failed = [o for o in outcomes.values() if o.status == "failed"]
    assert [o.task.source.name for o in failed] == [culprit]
    assert failed[0].message == f"{sources[3]}: the worker process died while processing it (killed by a signal, " \
                                "or out of memory)"
    assert all(o.status == "done" for name, o in outcomes.items() if name != culprit)
    reruns = [(name, slot) for i, (name, slot) in enumerate(calls) if any(n == name for n, _ in calls[:i])]
    assert sorted(reruns) == [(sources[2].name, 1), (culprit, 1)]  # the two in flight when it died, each alone
    assert len(os.listdir(tmp_path / "out")) == 6


def test_renewing_pool_starts_afresh_after_a_worker_is_killed() -> None:
    pool = executors.local_pool(1, backend="cpu")
    try:
        pid = pool.submit(os.getpid).result(timeout=120)
        with pytest.raises(BrokenProcessPool):
            pool.submit(os.kill, pid, signal.SIGKILL).result(timeout=120)
        assert pool.submit(os.getpid).result(timeout=120) != pid
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the workers through /proc")
def test_a_killed_worker_does_not_stop_the_batch(tmp_path: Path) -> None:
    write_images(tmp_path / "in", 40, size=(300, 400))
    proc = subprocess.Popen([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in"), "-o",
                             str(tmp_path / "out"), "-f", "gaussian_blur:sigma=8", "--jobs", "2"],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    killed = None
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        workers = [w for server in _children(proc.pid) for w in _children(server)]
        if workers and (tmp_path / "out").exists() and os.listdir(tmp_path / "out"):
            killed = workers[0]
            os.kill(killed, signal.SIGKILL)  # as the OOM killer would
        time.sleep(0.05)
    _, stderr = proc.communicate(timeout=180)
    assert killed is not None, "no worker found"
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr and "BrokenProcessPool" not in stderr and "internal error" not in stderr
    assert "leaked" not in stderr  # the resource tracker's warning about the killed worker's semaphores
    assert lines[-1].startswith("done ") and proc.returncode in (0, 1), stderr
    written = sorted(os.listdir(tmp_path / "out"))
    failed = [line for line in lines if line.startswith("error: ")]
    assert len(written) + len(failed) == 40 and len(failed) <= 1  # a one-off kill: its task reruns alone


def test_after_sigint_no_new_file_starts(tmp_path: Path) -> None:
    write_images(tmp_path / "in", 30, size=(600, 800))
    proc = subprocess.Popen([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in"), "-o",
                             str(tmp_path / "out"), "-f", "gaussian_blur:sigma=10", "--jobs", "2"],
                            stderr=subprocess.PIPE, text=True)
    out = tmp_path / "out"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not (out.exists() and len(os.listdir(out)) >= 2):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    at_signal = len([p for p in os.listdir(out) if not p.startswith(".")])
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    written = [p for p in os.listdir(out) if not p.startswith(".")]
    assert len(written) <= at_signal + 2, (at_signal, len(written))  # at most the two files running at the signal
    assert not [p for p in os.listdir(out) if p.startswith(".")]
