"""Many images through one pipeline: ``Pipeline.map``.

The plan is compiled once (fused tables and maps built once, masks and maps cached on
the backend on first use, by the first image, which runs alone), then the other images
run on a pool of threads: OpenCV releases the GIL while it computes, so threads overlap
the pixel work without the start-up and copying costs of processes. Results come back
in input order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from . import boundary
from .errors import InvalidImageError, UsageError

if TYPE_CHECKING:
    from .pipeline import Pipeline


def default_workers() -> int:
    """Threads ``map`` uses when not told: one per CPU core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def map_images(pipe: Pipeline, images: Any, *, workers: int | None, backend: str, order: str,
               layout: str) -> Any:
    """Run ``pipe`` on every image of ``images`` (an iterable, or an array batch); see :meth:`Pipeline.map`."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"workers={workers!r} must be a positive integer or None (one per core)")
    batch = _batch_array(images, layout)
    items = list(batch) if batch is not None else list(_iterate(images))
    pipe.compile()  # one plan for every image, built before the threads start

    def one(item: Any) -> Any:
        host, entry = boundary.enter(item, order, layout)
        out, _ = pipe._run_native(host, backend, entry.order)
        return boundary.leave(out, entry)

    count = min(workers or default_workers(), len(items))
    if count <= 1:
        results = [one(item) for item in items]
    else:
        # The first image runs alone so that the masks, maps and tables of this size are
        # built once, not by every thread that would miss the cache at the same moment.
        first = one(items[0])
        with ThreadPoolExecutor(min(count, len(items) - 1), thread_name_prefix="cvfilters-map") as pool:
            results = [first, *pool.map(one, items[1:])]
    if batch is None:
        return results
    if not results:
        return batch.copy()
    shapes = {np.shape(r) for r in results}
    if len(shapes) > 1:
        raise InvalidImageError(f"map: the results have different shapes {sorted(shapes)}; pass a list to get a list")
    return np.stack(results)


def _batch_array(images: Any, layout: str) -> np.ndarray | None:
    """``images`` as an (N, H, W[, C]) array when it is one (a numpy array or an array-like), else None."""
    if boundary.is_pil(images) or boundary.is_device(images):
        raise InvalidImageError("map: expected many images (a list, an iterable or an (N, H, W[, C]) array), "
                                f"not one {type(images).__name__}; use pipe(image)")
    if isinstance(images, (list, tuple)):
        return None
    if not isinstance(images, np.ndarray) and not hasattr(images, "__dlpack__") and not hasattr(images, "__array__"):
        return None
    batch = boundary.as_array(images, "map")
    if batch.ndim not in (3, 4):
        shape = "(N, C, H, W)" if layout == "chw" else "(N, H, W) or (N, H, W, C)"
        raise InvalidImageError(f"map: an array batch must be {shape}, not shape {batch.shape}")
    return batch


def _iterate(images: Any) -> Iterable[Any]:
    if isinstance(images, (str, bytes)) or not isinstance(images, Iterable):
        raise InvalidImageError("map: expected a list, an iterable or an (N, H, W[, C]) array of images, "
                                f"not {type(images).__name__}")
    return images
