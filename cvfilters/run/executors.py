"""Where batch tasks run: a local process pool, one worker per GPU, or a Dask cluster.

Every choice is a ``concurrent.futures.Executor``; :func:`cvfilters.run.batch.run` only
submits tasks to it. Local workers run one OpenCV thread each (N processes x N
threads would oversubscribe the cores) and ignore Ctrl-C, so the parent decides:
it cancels what has not started and lets running tasks finish their atomic writes.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2

from cvfilters.core import machine
from cvfilters.core.errors import UsageError
from cvfilters.run import forkserver, lifeline

if TYPE_CHECKING:  # multiprocessing is imported when a pool starts: a one-file apply never needs it
    from concurrent.futures import Executor

    from cvfilters.run.pools import RenewingPool


def device_ids(spec: str, backend: str) -> list[int]:
    """Resolve ``--devices all|0,1,...`` for the cuda or opencl backend into device indices.

    Raises
    ------
    UsageError
        For another backend, a malformed list, or an index the machine does not have.
    """
    if backend not in ("cuda", "opencl"):
        raise UsageError(f"--devices needs --backend cuda or opencl, not {backend!r}")
    count = _device_count(backend)
    if spec == "all":
        ids = list(range(count))
    else:
        try:
            ids = [int(part) for part in spec.split(",") if part.strip()]
        except ValueError:
            raise UsageError(f"--devices {spec!r} must be 'all' or indices like 0,1") from None
    missing = [i for i in ids if not 0 <= i < count]
    if not ids or missing or len(set(ids)) != len(ids):
        raise UsageError(f"--devices {spec!r}: this machine has {count} {backend} GPU device(s)"
                         + (f"; no device {missing[0]}" if missing else ""))
    return ids


def _device_count(backend: str) -> int:
    if backend == "cuda":
        return cv2.cuda.getCudaEnabledDeviceCount()
    # OpenCV's Python API cannot list OpenCL devices: count the default one if it is a GPU.
    from cvfilters.backends import availability

    return int(availability("opencl").is_gpu)


def _init_worker(devices: Any, backend: str, answers: dict[str, Any] | None = None) -> None:
    lifeline.arm_worker()
    if answers:
        from cvfilters.backends import adopt

        adopt(answers)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    cv2.setNumThreads(1)
    if devices is None:
        return
    device = devices.get()
    if backend == "cuda":
        cv2.cuda.setDevice(device)
    else:  # read by OpenCV when this worker first uses OpenCL
        os.environ["OPENCV_OPENCL_DEVICE"] = f":GPU:{device}"


def local_pool(jobs: int, *, backend: str = "cpu", devices: list[int] | None = None) -> RenewingPool:
    """A pool of ``jobs`` worker processes, or one pinned worker per device in ``devices``.

    Device workers are started with ``spawn``: a forked child would inherit the
    parent's CUDA or OpenCL context, which neither runtime supports. Other workers
    fork from a forkserver. Every worker, and the forkserver, ends when this process
    does, however it ends (:mod:`cvfilters.run.lifeline`).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from cvfilters.run.pools import RenewingPool

    os.environ[lifeline.PARENT_ENV] = str(os.getpid())
    if devices:
        spawn = multiprocessing.get_context("spawn")
        queue = spawn.Manager().Queue()
        for device in devices:
            queue.put(device)
        return RenewingPool(lambda: ProcessPoolExecutor(len(devices), mp_context=spawn, initializer=_init_worker,
                                                        initargs=(queue, backend)), len(devices))
    # A forkserver: workers fork from a clean process that imported cvfilters once. Forking
    # this process instead deadlocks once OpenCV's own thread pool has started here (any
    # parallel cv2 call does that), and with other Python threads (a Dask client, a GUI).
    forkserver.start()
    context = multiprocessing.get_context("forkserver")
    answers = _probe_answers(backend)
    return RenewingPool(lambda: ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker,
                                                    initargs=(None, backend, answers)), jobs)


def _probe_answers(backend: str) -> dict[str, Any] | None:
    """For ``auto``: this process's answers about the GPUs, which its workers adopt instead of each
    probing again (a forked worker has the same devices)."""
    if backend != "auto":
        return None
    from cvfilters.backends import availability, probed

    for name in ("cuda", "opencl"):
        availability(name)  # waits for a probe already running (probe_soon)
    return probed()


@contextmanager
def dask_executor(address: str) -> Iterator[Executor]:
    """An executor on the Dask cluster at ``address`` (``tcp://host:8786``).

    Inputs and outputs must be paths the workers can see (shared storage).
    """
    try:
        from distributed import Client
    except ImportError:
        raise UsageError('--scheduler needs Dask: pip install "cvfilters[dask]"') from None
    try:
        _reachable(address)
        client = Client(address, timeout=10)
    except OSError as exc:
        raise UsageError(f"--scheduler {address}: cannot connect ({exc})") from None
    except ValueError as exc:  # a port that is not a number, an unknown scheme
        raise UsageError(f"--scheduler {address}: not a scheduler address ({exc})") from None
    try:
        with client.get_executor() as executor:
            yield executor
    finally:
        client.close()


def _reachable(address: str) -> None:
    """Open and close a TCP connection to a ``tcp://host:port`` scheduler: a refused one fails here at
    once, where Dask's client retries until its timeout (10 s). Other schemes are left to Dask."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    if parts.scheme == "tcp" and parts.hostname and parts.port:
        socket.create_connection((parts.hostname, parts.port), timeout=10).close()


@contextmanager
def choose(jobs: int, task_count: int, *, backend: str, devices: list[int] | None,
           scheduler: str | None) -> Iterator[Executor | None]:
    """The executor for a batch: Dask when a scheduler is given, else a local pool, else None (in-process)."""
    if scheduler:
        with dask_executor(scheduler) as executor:
            yield executor
        return
    workers = len(devices) if devices else min(jobs, task_count)
    if workers <= 1 and not devices:
        yield None
        return
    pool = local_pool(workers, backend=backend, devices=devices)
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# A pool pays for its start-up (a forkserver importing cvfilters, then the workers: about
# 0.7 s on 2 shared cores) only beyond about this much input. bench/batch.py --sizes, 2 MP
# JPEGs, gaussian_blur: 16 files ran 35% faster in-process than with --jobs 2; at 64 the
# pool won by 9% (load average 3.7) or lost by 12% (load 5, the second core taken).
POOL_MIN_MEGAPIXELS = 48.0
VIDEO_MEGAPIXELS = POOL_MIN_MEGAPIXELS  # a video is many frames: two videos pay for a pool


def worker_count(jobs: int, sources: Sequence[Path]) -> int:
    """Local workers for a batch of ``sources``: ``jobs`` when given, else chosen from the work.

    With ``jobs=0`` a single file or a small batch runs in this process (no pool to
    start); a pool of one worker per core runs only when the files add up to
    :data:`POOL_MIN_MEGAPIXELS` (read from their headers; unreadable files count 0).
    """
    if jobs:
        return max(1, min(jobs, len(sources)))
    cores = machine.cores()
    if len(sources) < 2 or cores < 2:
        return 1
    from cvfilters.core.errors import CvfError
    from cvfilters.io import reading
    from cvfilters.io.formats import VIDEO_EXTENSIONS

    total = 0.0
    for source in sources:
        if source.suffix.lower() in VIDEO_EXTENSIONS:
            total += VIDEO_MEGAPIXELS
        else:
            try:
                width, height = reading.probe(source)
                total += width * height / 1e6
            except CvfError:
                pass
        if total >= POOL_MIN_MEGAPIXELS:
            return min(cores, len(sources))
    return 1
