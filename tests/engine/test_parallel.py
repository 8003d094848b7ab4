"""Pipeline.map, pipelines shared by threads, and cvfilters in forked children.

The reference for every threaded or forked result is the same pipeline run serially
in this process (itself pinned by the filter tests). A deadlock must fail, not hang:
forked work runs under a timeout.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

import cvfilters as cvf
from cvfilters.backends import get_backend
from cvfilters.core import machine
from cvfilters.core.errors import InvalidImageError, UsageError
from cvfilters.registry import catalog as registry
from tests.array_likes import ArrayOnly, BrokenArray, DLPackOnly
from tests.conftest import FIXTURES, photo

# Steps that cache something: a fused LUT run, a vignette mask, a warp map, a blend overlay; and a seeded
# k-means palette computed on the host. One k-means++ seeding (attempts=1; test_cartoon's quantize tests
# run the default 3) is the same host fallback and seeded generator in each thread, at a third of the
# cost: k-means was most of these tests' time.
CACHING = ("brightness_contrast:contrast=1.2 | gamma:gamma=0.8 | vignette:radius=0.8 | swirl:strength=2 "
           "| gaussian_blur:sigma=1.2 | quantize:k=6,attempts=1")


def images(count: int, size: int = 64, channels: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    base = photo(size, size, channels)
    return [np.clip(base.astype(int) + rng.integers(-30, 30, base.shape), 0, 255).astype(np.uint8)
            for _ in range(count)]


@pytest.fixture
def counting_filters() -> Iterator[dict[str, int]]:
    """A warp and a colour kernel that count how often their maps and tables are built."""
    calls = {"warp": 0, "color": 0}

    def test_map_shift(x: np.ndarray, y: np.ndarray, *, width: int, height: int) -> tuple[Any, Any]:
        calls["warp"] += 1
        return x + 1.5, y

    def test_map_curve(v: np.ndarray) -> np.ndarray:
        calls["color"] += 1
        return v ** 0.7

    cvf.warp_kernel(test_map_shift, summary="Shift right by 1.5 px (test).")
    cvf.color_kernel(test_map_curve, summary="A gamma curve (test).")
    yield calls
    registry.unregister("test_map_shift")
    registry.unregister("test_map_curve")


# ---------------------------------------------------------------- map
def test_map_of_a_list_is_the_serial_loop_in_order() -> None:
    pipe = cvf.Pipeline.parse(CACHING)
    batch = images(12)
    want = [pipe(img) for img in batch]
    for workers in (None, 1, 3):
        got = pipe.map(batch, workers=workers)
        assert isinstance(got, list) and len(got) == len(want)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_map_builds_maps_and_tables_once(counting_filters: dict[str, int]) -> None:
    pipe = cvf.Pipeline.parse("test_map_shift | test_map_curve | invert")
    out = pipe.map(images(16), workers=4)
    assert len(out) == 16
    assert counting_filters == {"warp": 1, "color": 1}


def test_array_batches_come_back_as_array_batches() -> None:
    pipe = cvf.Pipeline.parse("sepia | gaussian_blur:sigma=1")
    stack = np.stack(images(6))
    out = pipe.map(stack)
    assert isinstance(out, np.ndarray) and out.shape == stack.shape and out.dtype == stack.dtype
    assert all(np.array_equal(out[i], pipe(stack[i])) for i in range(len(stack)))
    gray = stack[..., 0]
    assert np.array_equal(pipe.map(gray)[2], pipe(gray[2]))
    nchw = np.ascontiguousarray(stack.transpose(0, 3, 1, 2))
    assert np.array_equal(pipe.map(nchw, layout="chw"), out.transpose(0, 3, 1, 2))
    rgb = np.ascontiguousarray(stack[..., ::-1])
    assert np.array_equal(pipe.map(rgb, channel_order="rgb")[..., ::-1], out)
    assert pipe.map(stack[:0]).shape == (0, *stack.shape[1:])


def test_map_takes_iterables_and_pil_images() -> None:
    pipe = cvf.Pipeline.parse("invert")
    batch = images(5)
    got = pipe.map(img for img in batch)
    assert [np.array_equal(g, 255 - b) for g, b in zip(got, batch, strict=True)] == [True] * 5
    pils = pipe.map([Image.fromarray(b) for b in batch])
    assert all(isinstance(p, Image.Image) and p.mode == "RGB" for p in pils)
    assert pipe.map([]) == []


@pytest.mark.parametrize("wrap", [ArrayOnly, DLPackOnly], ids=["__array__", "__dlpack__"])
def test_array_likes_are_batches(wrap: Any) -> None:
    batch = np.stack(images(3))
    out = cvf.Pipeline.parse("invert").map(wrap(batch))
    assert isinstance(out, np.ndarray) and np.array_equal(out, 255 - batch)


@pytest.mark.parametrize(("images_arg", "kwargs", "message"), [
    (np.zeros((4, 4), np.uint8), {},
     r"^map: an array batch must be \(N, H, W\) or \(N, H, W, C\), not shape \(4, 4\)$"),
    (np.zeros((4, 4), np.uint8), {"layout": "chw"}, r"^map: an array batch must be \(N, C, H, W\), not shape"),
    (Image.new("RGB", (4, 4)), {}, r"^map: expected many images \(a list, an iterable or an \(N, H, W\[, C\]\) "
                                   r"array\), not one Image; use pipe\(image\)$"),
    (cv2.UMat(np.zeros((4, 4), np.uint8)), {}, r"^map: expected many images .*, not one UMat; use pipe\(image\)$"),
    (42, {}, r"^map: expected a list, an iterable or an \(N, H, W\[, C\]\) array of images, not int$"),
    ("photo.png", {}, r"^map: expected a list, .* not str$"),
    (BrokenArray(), {}, r"^map: BrokenArray.__array__ failed"),
    ([np.zeros((4, 4), np.uint8)], {"workers": 0}, "workers=0 must be a positive integer"),
    ([np.zeros((4, 4), np.uint8)], {"workers": 2.5}, "workers=2.5 must be a positive integer"),
    ([np.zeros((4, 4), np.uint8)], {"workers": "2"}, "workers='2' must be a positive integer"),
    ([np.zeros((4, 4), np.uint8)], {"workers": True}, "workers=True must be a positive integer"),
    ([np.zeros((4, 4), np.uint8)], {"backend": "no-such-backend"}, "no-such-backend"),
])
def test_map_errors_are_one_line(images_arg: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((InvalidImageError, UsageError), match=message) as info:
        cvf.Pipeline.parse("invert").map(images_arg, **kwargs)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- threads
def test_one_pipeline_and_apply_from_many_threads_equal_serial_runs() -> None:
    batch = images(16, size=96, channels=4)
    pipe = cvf.Pipeline.parse(CACHING.replace("vignette:radius=0.8", "vignette:radius=0.77"))  # a cold mask
    want_pipe = [pipe(img) for img in batch]
    fresh = cvf.Pipeline.parse(CACHING.replace("swirl:strength=2", "swirl:strength=2.5"))  # cold maps in threads
    start = threading.Barrier(4)

    def work(img: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        try:
            start.wait(timeout=5)
        except threading.BrokenBarrierError:
            pass
        return pipe(img), fresh(img), cvf.apply(img, "blend", source=batch[0], opacity=0.4)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, batch))
    want_fresh = [fresh(img) for img in batch]
    want_blend = [cvf.apply(img, "blend", source=batch[0], opacity=0.4) for img in batch]
    for (a, b, c), wa, wb, wc in zip(results, want_pipe, want_fresh, want_blend, strict=True):
        assert np.array_equal(a, wa) and np.array_equal(b, wb) and np.array_equal(c, wc)


def test_run_reports_count_their_own_thread() -> None:
    pipe = cvf.Pipeline.parse("vignette:radius=0.61")
    batch = images(8)
    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(lambda img: pipe.run(img, backend="cpu")[1], batch))
    assert all(r.counters.uploads == 0 and r.counters.downloads == 0 for r in reports)


# ---------------------------------------------------------------- fork
def _child_work(seed: int) -> float:
    img = np.random.default_rng(seed).integers(0, 255, (600, 800, 3), np.uint8)
    out = cvf.apply(img, "vignette", radius=0.5 + seed / 100)  # a new mask: the backend cache is written
    return float(cvf.apply(out, "gaussian_blur", sigma=3).mean())


def _fork_pool_results(count: int) -> list[float]:
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        pending = pool.map_async(_child_work, range(count))
        try:
            return pending.get(timeout=60)
        except multiprocessing.TimeoutError:
            pool.terminate()
            pytest.fail("forked workers deadlocked (no result within 60 s)")


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="fork is not available")
def test_forked_children_run_after_the_parent_ran_threaded_filters() -> None:
    big = np.random.default_rng(0).integers(0, 255, (2000, 3000, 3), np.uint8)
    cvf.apply(big, "gaussian_blur", sigma=4)  # OpenCV's thread pool is up in the parent
    cvf.Pipeline.parse("vignette | sepia").map([big[:500, :500]] * 4, workers=2)
    stop = threading.Event()

    def busy() -> None:  # OpenCV and cvfilters busy in other threads at the moment of the fork
        while not stop.is_set():
            cvf.apply(big[:1000], "gaussian_blur", sigma=2)

    threads = [threading.Thread(target=busy, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        got = _fork_pool_results(4)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert got == pytest.approx([_child_work(i) for i in range(4)], abs=1e-9)
    assert cv2.getNumThreads() >= 1


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="fork is not available")
def test_a_cache_lock_held_at_fork_time_is_free_in_the_child() -> None:
    backend = get_backend("cpu")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with backend._cache_lock:
            held.set()
            release.wait(timeout=120)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(timeout=10)
    try:
        got = _fork_pool_results(2)
    finally:
        release.set()
        holder.join(timeout=10)
    assert got == pytest.approx([_child_work(i) for i in range(2)], abs=1e-9)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available")
def test_a_child_forked_during_a_map_gets_opencvs_thread_count_back() -> None:
    """The child has none of the map's threads: its OpenCV thread count is the parent's from before the map."""
    before = cv2.getNumThreads()
    reports: list[tuple[int, ...]] = []
    once = threading.Lock()

    @cvf.register(category="color", summary="Forks once and reports the child's OpenCV thread counts (test).")
    def test_map_fork(ctx: Any, img: Any) -> Any:
        if threading.current_thread().name.startswith("cvfilters-map") and once.acquire(blocking=False):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: after the fork, inside a new single-threaded block, after it
                try:
                    from cvfilters.engine.parallel import opencv_single_threaded
                    counts = [cv2.getNumThreads()]
                    with opencv_single_threaded():
                        counts.append(cv2.getNumThreads())
                    counts.append(cv2.getNumThreads())
                    os.write(write, ",".join(map(str, counts)).encode())
                finally:
                    os._exit(0)
            os.close(write)
            with os.fdopen(read) as pipe:
                reports.append(tuple(int(n) for n in pipe.read().split(",")))
            os.waitpid(pid, 0)
        return img

    try:
        cvf.Pipeline.parse("test_map_fork").map(images(3, size=8), workers=2)
    finally:
        registry.unregister("test_map_fork")
    assert reports == [(before, 1, before)]


def test_map_restores_opencvs_thread_count() -> None:
    before = cv2.getNumThreads()
    seen: list[int] = []

    @cvf.register(category="color", summary="Records OpenCV's thread count (test).")
    def test_map_threads(ctx: Any, img: Any) -> Any:
        seen.append(cv2.getNumThreads())
        return img

    try:
        cvf.Pipeline.parse("test_map_threads").map(images(6), workers=3)
    finally:
        registry.unregister("test_map_threads")
    assert cv2.getNumThreads() == before
    assert seen[0] == before and set(seen[1:]) == {1}  # the first image alone, the others one thread each


def test_map_benchmark_runs_in_a_tiny_mode() -> None:
    proc = subprocess.run([sys.executable, str(FIXTURES.parent / "bench" / "map.py"), "--images", "4", "--size", "32",
                           "--rounds", "1"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| pipeline | loop | thread pool | `pipe.map` |" in proc.stdout and "Misses: " in proc.stdout


@pytest.fixture
def thread_names() -> Iterator[list[str]]:
    """A filter ``test_map_thread_names`` that records the name of the thread each image runs on."""
    names: list[str] = []

    @cvf.register(category="color", summary="Records the thread it runs on (test).")
    def test_map_thread_names(ctx: Any, img: Any) -> Any:
        names.append(threading.current_thread().name)
        return img

    yield names
    registry.unregister("test_map_thread_names")


@pytest.mark.parametrize(("clock", "count", "pooled"), [
    ((0.0, 0.01), 3, True),  # the rest would take 2 x 10 ms = 20 ms: not under 20 ms
    ((0.0, 0.009), 3, False),  # 18 ms
    ((0.0, 0.015), 3, True),  # 30 ms (15 ms / 2 would be serial)
    ((0.0, 0.006), 4, False),  # 3 x 6 ms = 18 ms (4 x 6 would not)
    ((0.0, 0.015), 2, False),  # one image left: 15 ms
    ((1000.0, 1000.001), 3, False),  # the clock's start does not count
])
def test_map_judges_the_pool_by_the_first_images_time(monkeypatch: pytest.MonkeyPatch, thread_names: list[str],
                                                       clock: tuple[float, float], count: int,
                                                       pooled: bool) -> None:
    """With workers=None the rest of the images use a pool when (first image's time) x (images left) >= 20 ms."""
    ticks = iter(clock)  # map reads the clock before and after the first image
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks, clock[-1]))
    monkeypatch.setattr(machine, "cores", lambda: 2)
    cvf.Pipeline.parse("test_map_thread_names").map(images(count, size=8))
    assert len(thread_names) == count
    assert any(name.startswith("cvfilters-map") for name in thread_names) == pooled


def test_map_pools_at_most_the_workers_asked_for(thread_names: list[str]) -> None:
    pipe = cvf.Pipeline.parse("test_map_thread_names | gaussian_blur:sigma=3")
    pipe.map(images(12, size=96), workers=2)
    assert len({name for name in thread_names if name.startswith("cvfilters-map")}) <= 2
    thread_names.clear()
    pipe.map(images(2, size=8), workers=2)  # one image left for the pool: a pool of one
    assert [name.startswith("cvfilters-map") for name in thread_names] == [False, True]
    thread_names.clear()
    pipe.map(images(3, size=8), workers=1)
    assert set(thread_names) == {threading.current_thread().name}


def test_map_refuses_a_batch_whose_results_differ_in_shape() -> None:
    """A filter whose output size depends on the content (a user's trim) cannot make one array batch."""

    @cvf.register(category="geometry", summary="Trims one row, or two from a bright image (test).",
                  output_info=lambda params, info: replace(info, height=info.height - 1))
    def test_map_trim(ctx: Any, img: Any) -> Any:
        return img[1 + int(img[0, 0, 0] > 127):]

    batch = np.stack([np.zeros((8, 8, 3), np.uint8), np.full((8, 8, 3), 255, np.uint8)])
    try:
        with pytest.raises(InvalidImageError, match=r"^map: the results have different shapes \[\(6, 8, 3\), "
                                                    r"\(7, 8, 3\)\]; pass a list to get a list$"):
            cvf.Pipeline.parse("test_map_trim").map(batch, workers=1)
    finally:
        registry.unregister("test_map_trim")


def test_map_runs_work_too_small_for_a_pool_in_the_calling_thread(monkeypatch: pytest.MonkeyPatch,
                                                                   thread_names: list[str]) -> None:
    """Judged by the first image's time: a pool and OpenCV's thread switch would cost more than the rest."""
    from cvfilters.engine import parallel

    monkeypatch.setattr(parallel, "THREADS_MIN_SECONDS", 1e9)  # any first image is quick enough (no timing here)
    pipe = cvf.Pipeline.parse("test_map_thread_names")
    pipe.map(images(6))
    assert set(thread_names) == {threading.current_thread().name}
    thread_names.clear()
    monkeypatch.setattr(parallel, "THREADS_MIN_SECONDS", 0.0)
    pipe.map(images(6))
    assert any(name.startswith("cvfilters-map") for name in thread_names[1:])
    thread_names.clear()
    monkeypatch.setattr(parallel, "THREADS_MIN_SECONDS", 1e9)
    pipe.map(images(6), workers=2)  # asked for: threads whatever the time
    assert any(name.startswith("cvfilters-map") for name in thread_names[1:])


def test_a_nested_single_threaded_block_keeps_the_outer_one_single_threaded() -> None:
    """OpenCV's thread count (read from cv2) is 1 until the outermost block ends, then what it was."""
    from cvfilters.engine.parallel import opencv_single_threaded

    before = cv2.getNumThreads()
    cv2.setNumThreads(2)
    try:
        with opencv_single_threaded():
            with opencv_single_threaded():
                assert cv2.getNumThreads() == 1
            assert cv2.getNumThreads() == 1  # the inner block's end does not restore it yet
        assert cv2.getNumThreads() == 2
    finally:
        cv2.setNumThreads(before)
