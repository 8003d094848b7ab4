"""Shared pieces of the benchmark suite: test images, modes, interleaved timing, tables.

Every section measures the variants of one case *interleaved* (one call of each per
round, the order rotated every round) so that the noise of a shared machine hits all
of them alike, and reports medians of the rounds, never of the first (warm-up) call.
"""

from __future__ import annotations

import gc
import os
import platform
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
WORK = BENCH / "work"
SIZES = {"tiny": (64, 96), "2mp": (1080, 1920), "24mp": (4000, 6000)}
SIZE_LABEL = {"tiny": "96x64", "2mp": "2 MP (1920x1080)", "24mp": "24 MP (6000x4000)"}


# ----------------------------------------------------------------------------- images
@cache
def test_image(height: int, width: int) -> np.ndarray:
    """A scikit-image photo tiled over the canvas with light noise (as in PEERS.md), BGR uint8.

    Cached per size and returned read-only: every case works on the same pixels.
    """
    from skimage import data

    tile = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)
    reps = (-(-height // tile.shape[0]), -(-width // tile.shape[1]), 1)
    canvas = np.ascontiguousarray(np.tile(tile, reps)[:height, :width])
    noise = np.random.default_rng(0).integers(-4, 5, canvas.shape, dtype=np.int8)
    image = _add_noise(canvas, noise)
    image.setflags(write=False)
    return image


def _add_noise(canvas: np.ndarray, noise: np.ndarray) -> np.ndarray:
    out = canvas.astype(np.int16)
    out += noise
    return np.clip(out, 0, 255, out=out).astype(np.uint8)


@cache
def test_gray(height: int, width: int) -> np.ndarray:
    gray = cv2.cvtColor(test_image(height, width), cv2.COLOR_BGR2GRAY)
    gray.setflags(write=False)
    return gray


# ----------------------------------------------------------------------------- modes
@dataclass(frozen=True)
class Config:
    """How much to measure: sizes per section and the repeat policy of :func:`measure`."""

    mode: str
    overhead_sizes: tuple[str, ...]
    chain_size: str
    warp_size: str
    peer_size: str
    device_size: str
    memory_size: str
    min_repeat: int
    max_repeat: int
    budget_s: float  # timed rounds per case stop after about this long (at least min_repeat)
    slow_s: float  # a variant whose first call takes longer is timed once: that first call
    backends: tuple[str, ...] = ("cpu",)
    peers: bool = True  # tiny mode keeps the peers but runs each once

    def describe(self) -> str:
        return (f"mode `{self.mode}`: per case, every variant gets a warm-up call (not counted; skipped for "
                f"peer libraries that cache nothing) and a timed call, then {self.min_repeat}-{self.max_repeat} "
                f"interleaved rounds (rotated order, stopping after about {self.budget_s:g} s); medians of the "
                f"rounds. A variant whose timed call takes over {self.slow_s:g} s is timed once (marked `1x`)")


MODES = {
    "tiny": Config("tiny", ("tiny",), "tiny", "tiny", "tiny", "tiny", "tiny", 1, 1, 0.0, 60.0),
    "quick": Config("quick", ("2mp", "24mp"), "24mp", "2mp", "2mp", "2mp", "24mp", 5, 15, 1.0, 1.0),
    "full": Config("full", ("2mp", "24mp"), "24mp", "24mp", "24mp", "24mp", "24mp", 3, 21, 3.0, 5.0),
}


# ----------------------------------------------------------------------------- timing
@dataclass
class Stat:
    """Timings of one variant in milliseconds."""

    first: float  # the first timed call (after the warm-up, if any)
    cold: float | None = None  # the untimed-in-results warm-up call, kept for first-use costs
    samples: list[float] = field(default_factory=list)
    result: Any = None

    @property
    def once(self) -> bool:
        return not self.samples

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else self.first

    @property
    def spread(self) -> float | None:
        """Half the interquartile range as a fraction of the median (None under 4 samples)."""
        if len(self.samples) < 4:
            return None
        q1, _, q3 = statistics.quantiles(self.samples, n=4)
        return (q3 - q1) / 2 / self.median if self.median else None

    def cell(self) -> str:
        text = ms(self.median)
        if self.once:
            return f"{text} (1x)"
        spread = self.spread
        return f"{text} ±{spread * 100:.0f}%" if spread is not None else text


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000, out


def measure(variants: dict[str, Callable[[], Any]], cfg: Config, *, keep: bool = False,
            cold_ok: Iterable[str] = ()) -> dict[str, Stat]:
    """Time each variant: a warm-up call, one timed call, then interleaved rounds.

    The warm-up (kept as :attr:`Stat.cold`, never in the medians) absorbs caches, table
    and map building, and OpenCL compilation. Variants named in ``cold_ok`` (libraries
    with nothing to warm up, and too slow to call twice) skip it. A variant whose timed
    call exceeds ``cfg.slow_s`` is not called again: that call is its only sample.
    Rounds continue until about ``cfg.budget_s`` (``cfg.min_repeat``..``cfg.max_repeat``
    rounds), each round calling every other variant once in a rotated order. With
    ``keep``, each :class:`Stat` holds its first timed call's result.
    """
    gc.collect()
    cold_ok = set(cold_ok)
    stats: dict[str, Stat] = {}
    for name, fn in variants.items():
        cold = None if name in cold_ok else _timed(fn)[0]
        first, out = _timed(fn)
        stats[name] = Stat(first, cold=cold, result=out if keep else None)
        del out
    timed = [n for n in variants if stats[n].first <= cfg.slow_s * 1000]
    per_round = sum(stats[n].first for n in timed) / 1000
    rounds = cfg.max_repeat if per_round <= 0 else int(cfg.budget_s / per_round)
    rounds = max(cfg.min_repeat, min(cfg.max_repeat, rounds)) if timed else 0
    for r in range(rounds):
        order = timed[r % len(timed):] + timed[: r % len(timed)]
        for name in order:
            stats[name].samples.append(_timed(variants[name])[0])
    return stats


def paired_ratio(a: Stat, b: Stat) -> float:
    """Median over rounds of a/b, each round's two calls made moments apart (robust to load drift)."""
    if a.samples and len(a.samples) == len(b.samples):
        return statistics.median(x / y for x, y in zip(a.samples, b.samples, strict=True))
    return a.median / b.median


# ----------------------------------------------------------------------------- formatting
def ms(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def cell_md(value: object) -> str:
    """A table cell: pipes escaped (GitHub splits cells on them, even inside code spans)."""
    return re.sub(r"(?<!\\)\|", r"\\|", str(value))


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "**MISS**")


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"#### {self.title}", "", "| " + " | ".join(cell_md(c) for c in self.columns) + " |",
                 "|" + "|".join("---" for _ in self.columns) + "|"]
        lines += ["| " + " | ".join(cell_md(c) for c in row) + " |" for row in self.rows]
        if self.notes:
            lines += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"title": self.title, "columns": self.columns, "rows": self.rows, "notes": self.notes}


@dataclass
class Section:
    """One section's results: tables plus summary rows (what, target, measured, result)."""

    name: str
    title: str
    tables: list[Table] = field(default_factory=list)
    summary: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "tables": [t.as_dict() for t in self.tables],
                "summary": self.summary, "notes": self.notes}


def max_diff(a: Any, b: Any) -> str:
    """Largest and mean absolute difference of two images (ndarray, UMat or Pillow image)."""
    a, b = (np.asarray(x.get() if isinstance(x, cv2.UMat) else x) for x in (a, b))
    if a.shape != b.shape:
        return "shape differs"
    diff = np.abs(a.astype(np.int32) - b.astype(np.int32))
    peak = int(diff.max())
    return "0" if peak == 0 else f"{peak} (mean {diff.mean():.2g})"


# ----------------------------------------------------------------------------- machine
@cache
def imagemagick() -> tuple[str | None, str]:
    """ImageMagick's ``convert`` on PATH and its version line, or ``(None, why it is not used)``.

    Another program may own the name (a stand-in script, Windows' ``convert.exe``): only a
    ``convert`` whose ``-version`` names ImageMagick is used; anything else is skipped with
    the reason, never run as a peer.
    """
    path = shutil.which("convert")
    if path is None:
        return None, "no `convert` on PATH"
    try:
        done = subprocess.run([path, "-version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"`{path} -version` failed ({type(exc).__name__})"
    first = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
    if done.returncode != 0 or "ImageMagick" not in first:
        return None, f"`{path}` is not ImageMagick (`-version` exit {done.returncode}: {first[:60]!r})"
    return path, first


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def _version(module: str) -> str:
    try:
        mod = __import__(module)
    except Exception:  # noqa: BLE001 - any import failure means "not installed" here
        return "not installed"
    return str(getattr(mod, "__version__", "?"))


def machine_info() -> dict[str, str]:
    """Date, machine and the versions of every tool measured."""
    info = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": f"{os.cpu_count()} cores, {cpu_model()}",
        "memory": f"{memory_gib():.0f} GiB" if memory_gib() else "?",
        "os": _os_name(),
        "python": platform.python_version(),
        "opencv": f"{cv2.__version__} ({cv2.getNumThreads()} threads)",
        "numpy": np.__version__,
        "scikit-image": _version("skimage"),
        "scipy": _version("scipy"),
        "Pillow": _version("PIL"),
    }
    try:
        import pyvips

        info["pyvips"] = f"{pyvips.__version__} on libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}"
    except Exception:  # noqa: BLE001 - pyvips raises OSError when libvips is missing
        info["pyvips"] = "not installed"
    magick, version = imagemagick()
    info["ImageMagick"] = (version.replace("Version: ImageMagick ", "").split(" https")[0] if magick
                           else f"not used: {version}")
    info["OPENCV_OPENCL_DEVICE"] = os.environ.get("OPENCV_OPENCL_DEVICE", "(unset)")
    return info


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.platform()
