"""Many images through one pipeline: ``Pipeline.map``.

The plan is compiled once (fused tables and maps built once, masks and maps cached on
the backend on first use, by the first image, which runs alone), then the other images
run on a pool of threads: OpenCV releases the GIL while it computes, so threads overlap
the pixel work without the start-up and copying costs of processes. Results come back
in input order.

While the threads run, OpenCV's own thread pool is set to one thread (and restored
when the last ``map`` in the process ends): one image per core instead of every image
split over all cores, with two kinds of thread fighting for them (bench/map.py measures
both ways against a serial loop; bench/MAP.md has the numbers and their noise).

Thread safety, cache by cache: the backends' mask/map cache (``Backend.cached``) is
locked; run counters and ``cv2.cuda`` filter objects (which hold scratch buffers) are
per thread; the ``lru_cache`` tables, kernels, references and cubes are thread-safe by
construction; fused table and map caches, parsed sub-pipelines and a pipeline's
compiled plan are plain dicts and attributes whose worst race is building the same
value twice (each value depends only on its key). Locks are :class:`ForkSafeLock`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import cv2
import numpy as np

from cvfilters.core import arrays, machine
from cvfilters.core.errors import InvalidImageError, UsageError
from cvfilters.core.locks import ForkSafeLock


class Runs(Protocol):
    """What ``map`` needs of a :class:`~cvfilters.engine.pipeline.Pipeline` (which sits above this module)."""

    def compile(self) -> Any: ...

    def run(self, image: Any, *, backend: str = ..., channel_order: Any = ..., layout: Any = ...) -> Any: ...


# With workers=None, when the first image took so little that the rest would take less than
# this serially, the rest runs serially: starting the pool and holding OpenCV at one thread
# (which restarts OpenCV's own pool) cost more. bench/map.py on 2 idle cores, 32 crops of
# 128 x 128: invert (2 ms in all) 2x slower through a pool, unsharp_mask and equalize (12 ms)
# 0.85x, median_blur on float32 (20 ms) 1.5x faster. The judgement is by time, not pixels:
# k-means on small crops takes seconds (1.65x through the pool).
THREADS_MIN_SECONDS = 0.02


def map_images(pipe: Runs, images: Any, *, workers: int | None, backend: str, order: str,
               layout: str) -> Any:
    """Run ``pipe`` on every image of ``images`` (an iterable, or an array batch); see :meth:`Pipeline.map`."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"workers={workers!r} must be a positive integer or None (one per core)")
    batch = _batch_array(images, layout)
    items = list(batch) if batch is not None else list(_iterate(images))
    pipe.compile()  # one plan for every image, built before the threads start

    def one(item: Any) -> Any:
        return pipe.run(item, backend=backend, channel_order=order, layout=layout)[0]

    count = min(workers or machine.cores(), len(items))
    if count <= 1:
        results = [one(item) for item in items]
    else:
        # The first image runs alone so that the masks, maps and tables of this size are
        # built once, not by every thread that would miss the cache at the same moment.
        from concurrent.futures import ThreadPoolExecutor  # here: it imports logging, which one image never needs

        start = time.perf_counter()
        first = one(items[0])
        rest = (time.perf_counter() - start) * (len(items) - 1)
        if workers is None and rest < THREADS_MIN_SECONDS:
            results = [first, *(one(item) for item in items[1:])]  # the pool would cost more than the work
        else:
            with opencv_single_threaded(), ThreadPoolExecutor(min(count, len(items) - 1),
                                                              thread_name_prefix="cvfilters-map") as pool:
                results = [first, *pool.map(one, items[1:])]
    if batch is None:
        return results
    if not results:
        return batch.copy()
    shapes = {np.shape(r) for r in results}
    if len(shapes) > 1:
        raise InvalidImageError(f"map: the results have different shapes {sorted(shapes)}; pass a list to get a list")
    return np.stack(results)


_OPENCV_THREADS = {"users": 0, "saved": 0}
_OPENCV_THREADS_LOCK = ForkSafeLock()


@contextmanager
def opencv_single_threaded() -> Iterator[None]:
    """OpenCV's thread pool at one thread inside, restored when the last such block in the process ends."""
    with _OPENCV_THREADS_LOCK:
        if _OPENCV_THREADS["users"] == 0:
            _OPENCV_THREADS["saved"] = cv2.getNumThreads()
            cv2.setNumThreads(1)
        _OPENCV_THREADS["users"] += 1
    try:
        yield
    finally:
        with _OPENCV_THREADS_LOCK:
            _OPENCV_THREADS["users"] -= 1
            if _OPENCV_THREADS["users"] == 0:
                cv2.setNumThreads(_OPENCV_THREADS["saved"])


def _after_fork_in_child() -> None:
    """A fork during a ``map``: the child has none of its threads, so it gets OpenCV's thread count back."""
    if _OPENCV_THREADS["users"]:
        _OPENCV_THREADS["users"] = 0
        cv2.setNumThreads(_OPENCV_THREADS["saved"])


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _batch_array(images: Any, layout: str) -> np.ndarray | None:
    """``images`` as an (N, H, W[, C]) array when it is one (a numpy array or an array-like), else None."""
    if arrays.is_pil(images) or arrays.is_device(images):
        raise InvalidImageError("map: expected many images (a list, an iterable or an (N, H, W[, C]) array), "
                                f"not one {type(images).__name__}; use pipe(image)")
    if isinstance(images, (list, tuple)):
        return None
    if not isinstance(images, np.ndarray) and not hasattr(images, "__dlpack__") and not hasattr(images, "__array__"):
        return None
    batch = arrays.as_array(images, "map")
    if batch.ndim not in (3, 4):
        shape = "(N, C, H, W)" if layout == "chw" else "(N, H, W) or (N, H, W, C)"
        raise InvalidImageError(f"map: an array batch must be {shape}, not shape {batch.shape}")
    return batch


def _iterate(images: Any) -> Iterable[Any]:
    if isinstance(images, (str, bytes)) or not isinstance(images, Iterable):
        raise InvalidImageError("map: expected a list, an iterable or an (N, H, W[, C]) array of images, "
                                f"not {type(images).__name__}")
    return images
