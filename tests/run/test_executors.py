"""Where batch tasks run: device lists, pool workers' set-up, the scheduler probe and the pool size.

The references are written out here: OpenCV's own thread count and the signal table read in
the worker itself, the environment variable OpenCV reads for its OpenCL device, a socket
this test listens on, and headers' megapixels counted by hand.
"""

from __future__ import annotations

import errno
import os
import queue
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

import cvfilters.backends
from cvfilters.backends.base import Availability
from cvfilters.core import machine
from cvfilters.core.errors import UsageError
from cvfilters.run import executors
from cvfilters.run.pools import RenewingPool

# Set in this process only: a worker forked from it (not from the forkserver, not spawned) sees it.
_MARK = {"test process": False}


def _worker_state(pause: float = 0.0) -> dict[str, Any]:
    time.sleep(pause)  # long enough that the pool hands the next task to another worker
    return {"pid": os.getpid(), "threads": cv2.getNumThreads(),
            "sigint ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
            "opencl device": os.environ.get("OPENCV_OPENCL_DEVICE"), "forked from the test": _MARK["test process"],
            "probed": sorted(cvfilters.backends.probed()), "command": os.environ.get("CVFILTERS_PARENT_PID")}


# ---------------------------------------------------------------- --devices


@pytest.fixture
def three_cuda_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: 3)


@pytest.mark.usefixtures("three_cuda_devices")
@pytest.mark.parametrize(("spec", "ids"), [("all", [0, 1, 2]), ("0", [0]), ("2", [2]), ("2,0", [2, 0]),
                                           ("0, 1,", [0, 1]), (" 1 ,2", [1, 2])])
def test_devices_resolve_to_indices(spec: str, ids: list[int]) -> None:
    assert executors.device_ids(spec, "cuda") == ids


@pytest.mark.usefixtures("three_cuda_devices")
@pytest.mark.parametrize(("spec", "message"), [
    ("3", "--devices '3': this machine has 3 cuda GPU device(s); no device 3"),
    ("-1", "--devices '-1': this machine has 3 cuda GPU device(s); no device -1"),
    ("1,5,7", "--devices '1,5,7': this machine has 3 cuda GPU device(s); no device 5"),
    ("1,1", "--devices '1,1': this machine has 3 cuda GPU device(s)"),
    (",", "--devices ',': this machine has 3 cuda GPU device(s)"),
    ("0;1", "--devices '0;1' must be 'all' or indices like 0,1"),
    ("ALL", "--devices 'ALL' must be 'all' or indices like 0,1"),
    ("one", "--devices 'one' must be 'all' or indices like 0,1"),
])
def test_bad_device_lists_are_refused_by_name(spec: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        executors.device_ids(spec, "cuda")
    assert str(info.value) == message


@pytest.mark.parametrize("asked", ["cpu", "auto", "CUDA", "OpenCL"])
def test_devices_need_a_gpu_backend(asked: str) -> None:
    with pytest.raises(UsageError) as info:
        executors.device_ids("all", asked)
    assert str(info.value) == f"--devices needs --backend cuda or opencl, not {asked!r}"


def test_no_cuda_device_refuses_every_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: 0)
    with pytest.raises(UsageError, match=r"^--devices 'all': this machine has 0 cuda GPU device\(s\)$"):
        executors.device_ids("all", "cuda")


@pytest.mark.parametrize(("is_gpu", "ids"), [(True, [0]), (False, None)])
def test_opencl_counts_its_default_device_when_it_is_a_gpu(monkeypatch: pytest.MonkeyPatch, is_gpu: bool,
                                                           ids: list[int] | None) -> None:
    asked: list[str] = []

    def availability(name: str) -> Availability:
        asked.append(name)
        return Availability(name, True, "a device", is_gpu=is_gpu)

    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: 5)  # must not count for opencl
    monkeypatch.setattr(cvfilters.backends, "availability", availability)
    if ids is None:
        with pytest.raises(UsageError, match=r"this machine has 0 opencl GPU device\(s\)"):
            executors.device_ids("all", "opencl")
    else:
        assert executors.device_ids("all", "opencl") == ids
    assert asked == ["opencl"]


# ---------------------------------------------------------------- a worker's set-up


def _set_up_worker(kind: str, device: int | None, answers: dict[str, Any] | None, results: Any) -> None:
    """In a fresh (spawned) process: a worker's set-up, then what it changed."""
    calls: list[int] = []
    cv2.cuda.setDevice = calls.append  # recorded, not run: no CUDA device here
    os.environ.pop("OPENCV_OPENCL_DEVICE", None)
    devices: queue.Queue[int] | None = None
    if device is not None:
        devices = queue.Queue()
        devices.put(device)
    executors._init_worker(devices, kind, answers)
    results.put({**_worker_state(), "set device": calls, "left": devices.qsize() if devices else None,
                 "cuda": cvfilters.backends.probed()["cuda"].reason if answers else None})


def _in_fresh_process(*args: Any) -> dict[str, Any]:
    """``_set_up_worker(*args)`` in a spawned process: it changes signals, threads and the environment, and a
    child forked from this many-threaded test process could block on a lock another thread held."""
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    results = spawn.Queue()
    process = spawn.Process(target=_set_up_worker, args=(*args, results))
    process.start()
    try:
        state: dict[str, Any] = results.get(timeout=120)
    finally:
        process.join(60)
    return state


@pytest.mark.parametrize(("kind", "device", "set_device", "opencl"), [
    ("cuda", 4, [4], None), ("opencl", 4, [], ":GPU:4"), ("opencl", 0, [], ":GPU:0"),
])
def test_a_device_worker_takes_one_device(kind: str, device: int, set_device: list[int], opencl: str | None) -> None:
    state = _in_fresh_process(kind, device, None)
    assert (state["threads"], state["sigint ignored"]) == (1, True)
    assert (state["set device"], state["opencl device"], state["left"]) == (set_device, opencl, 0)


def test_a_worker_adopts_its_parents_probe_answers() -> None:
    answers = {"cuda": Availability("cuda", False, reason="no device (test)")}
    state = _in_fresh_process("auto", None, answers)
    assert (state["threads"], state["sigint ignored"], state["cuda"]) == (1, True, "no device (test)")


def test_a_local_pool_forks_its_workers_from_the_forkserver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_MARK, "test process", True)
    pool = executors.local_pool(1, backend="cpu")
    try:
        states = [future.result(timeout=120) for future in [pool.submit(_worker_state, 0.2) for _ in range(3)]]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    assert pool.max_workers == 1 and len({state["pid"] for state in states}) == 1  # one worker, as asked
    state = states[0]
    assert (state["threads"], state["sigint ignored"], state["forked from the test"]) == (1, True, False)
    assert state["opencl device"] == os.environ.get("OPENCV_OPENCL_DEVICE")
    assert state["probed"] == []  # cpu: no GPU answers handed on
    assert state["command"] == str(os.getpid())  # what the workers and the forkserver die with (lifeline)


def test_an_auto_pool_hands_its_probe_answers_on() -> None:
    pool = executors.local_pool(1, backend="auto")
    try:
        state = pool.submit(_worker_state).result(timeout=120)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    assert {"cuda", "opencl"} <= set(state["probed"])  # this process's answers (others may be probed too)


def test_a_device_pool_spawns_one_worker_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_MARK, "test process", True)
    with executors.choose(8, 6, backend="opencl", devices=[3, 5], scheduler=None) as pool:  # as a batch asks
        assert isinstance(pool, RenewingPool)
        states = [future.result(timeout=180) for future in [pool.submit(_worker_state, 0.5) for _ in range(6)]]
    assert pool.max_workers == 2
    by_worker = {state["pid"]: state["opencl device"] for state in states}
    assert sorted(by_worker.values()) == [":GPU:3", ":GPU:5"]  # each worker its own device
    assert all(state["threads"] == 1 and state["sigint ignored"] and not state["forked from the test"]
               for state in states)


def test_a_batch_pool_has_a_worker_a_file_and_ends_with_the_batch() -> None:
    """The pool a batch is given: ``min(jobs, files)`` workers with the backend's probe answers; a Ctrl-C
    in the batch cancels the files not yet started and leaves no worker running."""
    with pytest.raises(KeyboardInterrupt), \
            executors.choose(3, 2, backend="auto", devices=None, scheduler=None) as pool:
        assert isinstance(pool, RenewingPool) and pool.max_workers == 2
        first = pool.submit(_worker_state).result(timeout=120)
        queued = [pool.submit(_worker_state, 0.1) for _ in range(20)]
        raise KeyboardInterrupt
    assert {"cuda", "opencl"} <= set(first["probed"])
    assert any(future.cancelled() for future in queued)
    pids = {first["pid"]} | {future.result()["pid"] for future in queued if not future.cancelled()}
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# ---------------------------------------------------------------- --scheduler


def test_the_scheduler_probe_connects_to_a_tcp_address() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        executors._reachable(f"tcp://127.0.0.1:{port}")
        server.settimeout(2)
        connection, _ = server.accept()  # the probe connected (and closed)
        with connection:
            assert connection.recv(1) == b""


def test_the_scheduler_probe_fails_a_refused_address_at_once() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ConnectionRefusedError):
        executors._reachable(f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("address", ["tls://127.0.0.1:9", "tcp://127.0.0.1", "inproc://scheduler", "tcp://:9"])
def test_the_scheduler_probe_leaves_other_addresses_to_dask(address: str) -> None:
    executors._reachable(address)  # no connection tried: Dask reports these itself


def _scheduler_of_this_worker() -> str:
    import distributed

    return str(distributed.get_worker().scheduler.address)


def test_a_batch_given_a_scheduler_runs_on_that_cluster() -> None:
    """Even a one-file batch (which would run in-process) goes to the scheduler named, not a cluster of its own."""
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with executors.choose(1, 1, backend="cpu", devices=None, scheduler=cluster.scheduler_address) as executor:
            assert executor is not None
            ran_on = executor.submit(_scheduler_of_this_worker).result(timeout=60)
    assert ran_on == cluster.scheduler_address


def test_a_refused_scheduler_is_a_usage_error_at_once() -> None:
    """A refused address fails at the probe, naming the address; a port that is not a number is no address."""
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(UsageError) as caught, executors.dask_executor(f"tcp://127.0.0.1:{port}"):
        pass
    assert time.monotonic() - started < 5  # the probe's refusal, not Dask's 10 s of retries
    refused = ConnectionRefusedError(errno.ECONNREFUSED, os.strerror(errno.ECONNREFUSED))
    assert str(caught.value) == f"--scheduler tcp://127.0.0.1:{port}: cannot connect ({refused})"
    with pytest.raises(UsageError) as caught, executors.dask_executor("tcp://127.0.0.1:port"):
        pass
    assert str(caught.value).startswith("--scheduler tcp://127.0.0.1:port: not a scheduler address (")


def test_without_dask_the_scheduler_option_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `from distributed import ...` raises ImportError
    with pytest.raises(UsageError) as caught, executors.dask_executor("tcp://head:8786"):
        pass
    assert str(caught.value) == '--scheduler needs Dask: pip install "cvfilters[dask]"'


# ---------------------------------------------------------------- how many workers


@pytest.fixture
def four_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "cores", lambda: 4)


def _pngs(folder: Path, sizes: list[tuple[int, int]]) -> list[Path]:
    paths = []
    for i, (width, height) in enumerate(sizes):
        path = folder / f"{i}.png"
        cv2.imwrite(str(path), np.zeros((height, width), np.uint8))
        paths.append(path)
    return paths


@pytest.mark.usefixtures("four_cores")
@pytest.mark.parametrize(("jobs", "count", "workers"), [(3, 5, 3), (8, 5, 5), (1, 5, 1), (2, 1, 1), (4, 0, 1)])
def test_asked_for_jobs_are_capped_by_the_files(tmp_path: Path, jobs: int, count: int, workers: int) -> None:
    assert executors.worker_count(jobs, [tmp_path / f"{i}.png" for i in range(count)]) == workers


@pytest.mark.usefixtures("four_cores")
def test_a_pool_starts_at_48_megapixels_of_headers(tmp_path: Path) -> None:
    small = _pngs(tmp_path, [(4000, 3000)] * 3 + [(3999, 3000)])  # 47.997 MP
    assert executors.worker_count(0, small) == 1
    (tmp_path / "more").mkdir()
    enough = _pngs(tmp_path / "more", [(4000, 3000)] * 4)
    assert executors.worker_count(0, enough) == 4
    assert executors.worker_count(0, enough[:3] + [tmp_path / "missing.png"]) == 1  # unreadable: 0 MP
    assert executors.worker_count(0, enough + [tmp_path / "x.png", tmp_path / "y.png"]) == 4  # at most the cores


@pytest.mark.usefixtures("four_cores")
def test_two_videos_pay_for_a_pool(tmp_path: Path) -> None:
    videos = [tmp_path / "a.mp4", tmp_path / "b.MOV"]
    assert executors.worker_count(0, videos) == 2
    assert executors.worker_count(0, videos[:1]) == 1


def test_one_core_never_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "cores", lambda: 1)
    assert executors.worker_count(0, [tmp_path / "a.mp4", tmp_path / "b.mp4"]) == 1
