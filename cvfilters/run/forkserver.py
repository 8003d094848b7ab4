"""The forkserver local pools fork their workers from, started as early as a command can guess it.

A forkserver is a fresh interpreter that imports OpenCV and cvfilters once (about 0.3 s);
workers fork from it (:func:`cvfilters.run.executors.local_pool` says why not from the
command itself). Started at the top of ``apply``, before the command's own imports and
planning, its start overlaps them instead of delaying the first file. This module imports
nothing heavy, so that it can be asked that early.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from cvfilters.core import machine
from cvfilters.run import lifeline

PRELOAD = ("cvfilters.run.lifeline", "cvfilters.run.processing")  # workers run processing.process
# About 48 MP of JPEG files (executors.POOL_MIN_MEGAPIXELS): the guess that starts the forkserver early.
POOL_MIN_BYTES = 8 * 1024 * 1024


def start() -> None:
    """Start the forkserver now, in the background (nothing when it runs); it ends with this process."""
    import multiprocessing
    from multiprocessing import forkserver

    os.environ[lifeline.PARENT_ENV] = str(os.getpid())
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
    forkserver.ensure_running()


def likely(jobs: int, inputs: Sequence[str]) -> bool:
    """A guess, before planning, whether a batch will run in a local pool: ``jobs`` > 1 with several
    inputs or a folder, or by default :data:`POOL_MIN_BYTES` of input files (a folder's own files)."""
    if jobs:
        return jobs > 1 and (len(inputs) > 1 or any(os.path.isdir(source) for source in inputs))
    if machine.cores() < 2:
        return False
    total = 0
    for size in _file_sizes(inputs):
        total += size
        if total >= POOL_MIN_BYTES:
            return True
    return False


def _file_sizes(inputs: Sequence[str]) -> Iterator[int]:
    for source in inputs:
        try:
            if not os.path.isdir(source):
                yield os.path.getsize(source)
                continue
            with os.scandir(source) as entries:
                yield from (entry.stat().st_size for entry in entries if entry.is_file())
        except OSError:  # planning names what cannot be read
            continue
