"""Peak memory of the 24 MP colour chain, each variant in a fresh process.

Part of the suite: ``python bench/run.py --only memory``. The worker (this file run as a
script) imports everything and runs the variant once on a 16x16 image (library
initialisation), resets the kernel's peak-RSS mark (``/proc/self/clear_refs``) and takes
the resident size as the baseline, loads the decoded image from a ``.npy`` file (one
allocation of exactly the image), runs the chain once and reads the peak (``VmHWM``).
Peak beyond the baseline therefore counts the input image, the output and every
temporary. Target: under 3x the decoded image for cvfilters (fused).

Why not ``ru_maxrss``: a child started by ``subprocess`` inherits, through fork/exec, the
peak of the parent's address space (``signal->maxrss``), so in a worker started from a
large benchmark process ``ru_maxrss`` reports the parent's size. ``VmHWM`` is the
worker's own address space only; where ``/proc`` is missing, ``ru_maxrss`` is used and
the table says so.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

VARIANTS = {
    "fused": "cvfilters pipeline, fused (default)",
    "unfused": "cvfilters pipeline, `fuse=False`",
    "raw4": "hand-written cv2: 2 LUT + convertScaleAbs + bitwise_not",
    "lut": "one `cv2.LUT` with the composed table",
}
TARGET = 3.0


def _status(field_name: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current VmRSS
        return True
    except OSError:
        return False


def _peak() -> int:
    hwm = _status("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _variant(name: str) -> Callable[[np.ndarray], Any]:
    import cv2
    from chains import COLOUR, colour_raw, colour_single_table

    import cvfilters as cvf

    if name in ("fused", "unfused"):
        pipe = cvf.Pipeline.parse(COLOUR, fuse=name == "fused")
        return lambda img: pipe(img, backend="cpu")
    if name == "raw4":
        return colour_raw
    table = colour_single_table()
    return lambda img: cv2.LUT(img, table)


def worker(name: str, path: str) -> None:
    run = _variant(name)
    run(np.zeros((16, 16, 3), np.uint8))
    reset = _reset_peak()
    base = _status("VmRSS") if reset else _peak()
    img = np.load(path)
    loaded = _peak()
    out = run(img)
    peak = _peak()
    assert out.shape == img.shape
    source = "VmHWM" if _status("VmHWM") is not None else "ru_maxrss"
    print(json.dumps({"base": base, "loaded": loaded, "peak": peak, "source": source, "reset": reset}))


def _run_workers(pending: list[tuple[str, int]], results: dict[str, list[dict[str, Any]]], command: list[str],
                 path: Path) -> None:
    while pending:
        batch, pending = pending[:4], pending[4:]
        procs = [(name, subprocess.Popen([*command, name, str(path)], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)) for name, _ in batch]
        for name, proc in procs:
            out, err = proc.communicate()
            if proc.returncode:
                raise RuntimeError(f"memory worker {name} failed: {err.strip().splitlines()[-1:]}")
            results[name].append(json.loads(out.strip().splitlines()[-1]))


def section(cfg: Any) -> Any:
    from common import SIZE_LABEL, SIZES, WORK, Section, Table, test_image, verdict

    height, width = SIZES[cfg.memory_size]
    folder = WORK / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{cfg.memory_size}.npy"
    np.save(path, test_image(height, width))
    image_mb = height * width * 3 / 1e6
    runs = max(1, min(cfg.min_repeat, 3))
    table = Table(f"Colour chain (4 steps), {SIZE_LABEL[cfg.memory_size]} BGR uint8: decoded image "
                  f"{image_mb:.1f} MB; median of {runs} fresh process{'es' if runs > 1 else ''} per variant",
                  ["variant", "peak RSS beyond baseline (MB)", "x decoded image", "of which the input (MB)",
                   "chain alone (MB)", "target < 3x (cvfilters fused)"])
    sec = Section("memory", f"Peak memory, {SIZE_LABEL[cfg.memory_size]} colour chain, fresh process per variant")
    command = [sys.executable, str(Path(__file__).resolve())]
    # Up to four worker processes at a time: memory is per process and nothing is timed here.
    pending = [(name, i) for i in range(runs) for name in VARIANTS]
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    try:
        _run_workers(pending, results, command, path)
    finally:
        path.unlink(missing_ok=True)
    for name, label in VARIANTS.items():
        total = statistics.median(r["peak"] - r["base"] for r in results[name]) / 1e6
        load = statistics.median(r["loaded"] - r["base"] for r in results[name]) / 1e6
        times = total / image_mb
        ok = times < TARGET if name == "fused" else None
        table.rows.append([label, f"{total:.1f}", f"{times:.2f}x", f"{load:.1f}", f"{total - load:.1f}",
                           verdict(ok)])
        if name == "fused":
            sec.summary.append([f"peak memory, {SIZE_LABEL[cfg.memory_size]} 4-step colour chain (fused)",
                                "< 3x the decoded image", f"{times:.2f}x ({total:.0f} MB for a {image_mb:.0f} MB "
                                "image, input included)", verdict(ok)])
    sample = results["fused"][0]
    table.notes += [
        f"Peak from `{sample['source']}`"
        + (" after resetting it with `/proc/self/clear_refs`" if sample["reset"] else "")
        + ": the baseline is the resident size after imports and a 16x16 warm-up run, so library "
        "initialisation is not counted; the input image (loaded with `np.load`) is. `ru_maxrss` is not used: a "
        "subprocess inherits the parent's peak through fork/exec.",
        "Page-granular and allocator-dependent (glibc returns large blocks to the system on free); at tiny sizes "
        "the numbers are noise.",
    ]
    sec.tables.append(table)
    return sec


if __name__ == "__main__":
    worker(sys.argv[1], sys.argv[2])
