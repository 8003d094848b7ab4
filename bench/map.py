"""Pipeline.map vs a serial Python loop of ``pipe(img)``: many small images through one pipeline.

Usage: ``python bench/map.py [--images 256] [--size 256] [--rounds 5] [--record]``.
256 crops of 256 x 256 (the PEERS.md test photo with light noise), BGR uint8. Per
pipeline the variants run interleaved (one call of each per round, the order reversed
every other round, so a shared machine's noise hits them alike); medians of the rounds
after one warm-up call each. Variants: the serial loop (OpenCV's default threads),
``pipe.map(images)`` (one thread per core, OpenCV at one thread per image), the same
with OpenCV's own threads left on (what map would do without holding them at one) and
``pipe.map(images, workers=1)``. ``--record`` writes the table to bench/MAP.md.
Target: map >= 1.5x the loop for 256 images of 256 x 256 on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import test_image  # noqa: E402

import cvfilters as cvf  # noqa: E402
from cvfilters import parallel  # noqa: E402

RECORD = Path(__file__).resolve().parent / "MAP.md"
PIPELINES = ("gaussian_blur:sigma=2 | sepia | vignette", "gaussian_blur:sigma=3", "sepia", "bilateral")
TARGET_PIPELINE, TARGET = PIPELINES[0], 1.5


def crops(count: int, size: int) -> list[np.ndarray]:
    side = max(1, math.ceil(math.sqrt(count)))
    big = test_image(side * size, side * size)
    return [big[(i // side) * size:(i // side + 1) * size, (i % side) * size:(i % side + 1) * size].copy()
            for i in range(count)]


def map_keeping_opencv_threads(pipe: cvf.Pipeline, images: list[np.ndarray]) -> object:
    """``pipe.map(images)`` without holding OpenCV at one thread: the interplay map avoids."""
    held = parallel.opencv_single_threaded
    parallel.opencv_single_threaded = contextlib.nullcontext  # type: ignore[assignment]
    try:
        return pipe.map(images)
    finally:
        parallel.opencv_single_threaded = held


def interleaved(variants: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Seconds per round of each variant (after a warm-up call each), rounds interleaved."""
    for run in variants.values():
        run()  # warm-up: caches, plan, OpenCV's pool
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - start)
    return times


def speedup(times: dict[str, list[float]], name: str) -> float:
    """The median over rounds of loop time / ``name``'s time in the same round (moments apart)."""
    return statistics.median(loop / other for loop, other in zip(times["loop"], times[name], strict=True))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=256)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args(argv)
    images = crops(args.images, args.size)
    load_start = os.getloadavg()[0]
    rows = []
    for spec in PIPELINES:
        pipe = cvf.Pipeline.parse(spec)
        times = interleaved({
            "loop": lambda pipe=pipe: [pipe(img) for img in images],
            "map": lambda pipe=pipe: pipe.map(images),
            "map_cv": lambda pipe=pipe: map_keeping_opencv_threads(pipe, images),
            "map1": lambda pipe=pipe: pipe.map(images, workers=1),
        }, args.rounds)
        rows.append((spec, times))
    load_end = os.getloadavg()[0]
    lines = [
        f"Run {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC: {args.images} images of {args.size}x{args.size} "
        f"BGR uint8, {args.rounds} interleaved rounds; {os.cpu_count()} cores, OpenCV {cv2.__version__} "
        f"({cv2.getNumThreads()} threads); 1-minute load average {load_start:.1f} at the start, {load_end:.1f} "
        "at the end (other engineers share these cores).",
        "",
        "| pipeline | serial loop `pipe(img)` | `pipe.map(images)` | map, OpenCV threads kept | `map(workers=1)` "
        "| map vs loop | kept vs loop |",
        "|---|---|---|---|---|---|---|",
    ]
    for spec, times in rows:
        m = {name: statistics.median(t) for name, t in times.items()}
        lines.append(f"| `{spec.replace('|', chr(92) + '|')}` | {m['loop'] * 1000:.0f} ms | {m['map'] * 1000:.0f} ms "
                     f"| {m['map_cv'] * 1000:.0f} ms | {m['map1'] * 1000:.0f} ms | {speedup(times, 'map'):.2f}x "
                     f"| {speedup(times, 'map_cv'):.2f}x |")
    ratio = speedup(dict(rows)[TARGET_PIPELINE], "map")
    lines += ["", "Times are medians of the rounds; speed-ups are medians of the per-round ratios.",
              f"Target: map >= {TARGET}x the loop for `{TARGET_PIPELINE}`: {ratio:.2f}x, "
              f"{'PASS' if ratio >= TARGET else 'MISS'}."]
    text = "\n".join(lines)
    print(text)
    if args.record:
        RECORD.write_text("# Pipeline.map benchmark\n\nGenerated by `python bench/map.py --record`.\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
