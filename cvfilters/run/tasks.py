"""The records of a batch: a task, the options every task shares, and a task's outcome.

A task carries two paths; workers rebuild the pipeline from the options' dict form, so no
pixels cross process boundaries. :mod:`cvfilters.run.planning` makes tasks,
:mod:`cvfilters.run.processing` runs one and :mod:`cvfilters.run.batch` runs many.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cvfilters.core import machine
from cvfilters.run import budget as budgets


@dataclass(frozen=True)
class Task:
    """One input file and the output path it is written to; ``replace``: an existing target is
    replaced (one input with an explicitly named output file, as ``cp`` does), not skipped."""

    source: Path
    target: Path
    replace: bool = False
    stdout_format: str | None = None  # the extension of the format written when the target is ``-``


@dataclass(frozen=True)
class Options:
    """What every task of a batch shares (picklable: sent to worker processes)."""

    pipeline: dict[str, Any]
    backend: str = "auto"
    overwrite: bool = False
    quality: int | None = None
    max_pixels: int | None = None
    frames: tuple[int, int | None] | None = None
    allow_large: bool = False
    workers: int = 1
    fuse: bool = True
    colorspace: str | None = None
    intent: str = "relative"
    linear: bool = False
    lossless: bool = False
    dither: bool = False
    memory: int | None = None  # the budget of the whole run (bytes); None: derived from the machine
    tile_size: int | None = None  # force this output tile side
    scheduler: str | None = None  # run the tiles of one streamed image on this Dask cluster

    def budget(self) -> int:
        """Each worker's part of the memory budget."""
        return budgets.share(budgets.resolve(self.memory), self.workers)

    def tile_workers(self) -> int:
        """Threads running the tiles of one image: every core when this is the only worker."""
        return machine.cores() if self.workers <= 1 else 1


@dataclass
class Outcome:
    """The result of one task: ``done``, ``skipped`` or ``failed``, with messages; ``usage``
    marks a failure of the request itself (an output that would replace an input), which the
    command line reports as a usage error."""

    task: Task
    status: str
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    usage: bool = False
