"""Batch throughput: cvfilters apply vs a bare cv2 process pool, ImageMagick and libvips.

Usage: ``python bench/batch.py [--images 64] [--rounds 3] [--sizes 1,4,16,64]``. Generates
2 MP JPEGs under ``bench/work/``, runs ``gaussian_blur:sigma=3`` (JPEG quality 90 out) with
each tool, and prints images/s (median of ``rounds``, tools interleaved per round), the
peak resident memory of the command's own process and of its largest worker process
(sampled from /proc while it runs). ImageMagick (``mogrify``) and libvips (``vips``) are used
when installed (Debian: imagemagick, libvips-tools). Every time is the whole command's
wall clock, start-up included.

Targets (PASS/MISS): the default ``apply DIR`` >= 0.95x the bare 2-process cv2 pool;
``--jobs 2`` >= 1.5x ``--jobs 1``; the largest cvfilters worker's peak RSS <= 1.5x the
largest bare pool worker's. ``--sizes``: for batches of each size, the default worker
choice against ``--jobs 1`` and ``--jobs 2``, interleaved; target: the default within 10%
of the better of the two.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import test_image

WORK = Path(__file__).resolve().parent / "work" / "batch"
BARE_POOL = """
import sys, cv2
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
def init(): cv2.setNumThreads(1)
def one(args):
    src, dst = args
    cv2.imwrite(dst, cv2.GaussianBlur(cv2.imread(src), (0, 0), 3), [cv2.IMWRITE_JPEG_QUALITY, 90])
if __name__ == "__main__":
    src, dst, jobs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    tasks = [(str(p), str(dst / p.name)) for p in sorted(src.glob("*.jpg"))]
    if jobs == 1:
        for t in tasks: one(t)
    else:
        with ProcessPoolExecutor(jobs, initializer=init) as pool: list(pool.map(one, tasks, chunksize=4))
"""


def make_inputs(count: int) -> Path:
    inputs = WORK / "in"
    if len(list(inputs.glob("*.jpg"))) != count:
        shutil.rmtree(inputs, ignore_errors=True)
        inputs.mkdir(parents=True)
        base = test_image(1080 * 2, 1920 * 2)
        for i in range(count):
            y, x = (i * 97) % 1080, (i * 211) % 1920
            crop = base[y : y + 1080, x : x + 1920]
            cv2.imwrite(str(inputs / f"img{i:03}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return inputs


def tools(inputs: Path) -> dict[str, str]:
    out = WORK / "out"
    py = sys.executable
    commands = {
        "cv2 loop (1 process)": f"{py} -c '{BARE_POOL}' {inputs} {out} 1",
        "cv2 pool (2 processes)": f"{py} -c '{BARE_POOL}' {inputs} {out} 2",
        "cvfilters apply --jobs 1": f"{py} -m cvfilters apply {inputs} -o {out} -f gaussian_blur:sigma=3 "
                                    "--quality 90 --overwrite --jobs 1",
        "cvfilters apply --jobs 2": f"{py} -m cvfilters apply {inputs} -o {out} -f gaussian_blur:sigma=3 "
                                    "--quality 90 --overwrite --jobs 2",
        "cvfilters apply (default jobs)": f"{py} -m cvfilters apply {inputs} -o {out} -f gaussian_blur:sigma=3 "
                                          "--quality 90 --overwrite",
    }
    if shutil.which("vips"):
        each = 'vips gaussblur "$0" "$1/$(basename "$0")[Q=90]" 3'
        commands["vips gaussblur, xargs -P 2"] = f"ls {inputs}/*.jpg | xargs -P 2 -I{{}} sh -c '{each}' {{}} {out}"
    if shutil.which("mogrify"):
        commands["ImageMagick mogrify -blur 0x3"] = f"mogrify -path {out} -quality 90 -blur 0x3 {inputs}/*.jpg"
    return commands


def _descendants(root: int) -> dict[int, tuple[str, int]]:
    """Live descendants of ``root``: pid -> (command line, parent pid)."""
    parents: dict[int, int] = {}
    lines: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            lines[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = {}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found[child] = (lines.get(child, ""), parent)
                frontier.append(child)
    return found


def _peak_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


HELPERS = ("forkserver", "resource_tracker", "semaphore_tracker")


def measure(command: str) -> tuple[float, float, float]:
    """Seconds, peak RSS (MB) of the command's main process and of its largest worker process.

    The shell's child is the main process; workers are its descendants other than
    multiprocessing's helpers (forkserver, resource tracker), sampled every 20 ms.
    """
    out = WORK / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start = time.perf_counter()
    shell = subprocess.Popen(["sh", "-c", command])
    peaks: dict[int, int] = {}
    helpers: set[int] = set()
    main_pid = None
    while shell.poll() is None:
        found = _descendants(shell.pid)
        try:  # a shell may exec the command: then its own process is the main one
            own = Path(f"/proc/{shell.pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            own = b"sh"
        if not own.endswith(b"sh"):
            found = {shell.pid: (own.decode(), 0), **found}
        for pid, (line, parent) in found.items():
            if main_pid is None:
                main_pid = pid
            if parent == main_pid and any(helper in line for helper in HELPERS):
                helpers.add(pid)  # the forkserver itself; the workers it forks share its command line
            peaks[pid] = max(peaks.get(pid, 0), _peak_kb(pid))
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    if shell.returncode:
        raise RuntimeError(f"{command}: exit {shell.returncode}")
    workers = [kb for pid, kb in peaks.items() if pid not in helpers and pid != main_pid]
    return seconds, peaks.get(main_pid or -1, 0) / 1024, max(workers, default=0) / 1024


def subset(inputs: Path, count: int) -> Path:
    """A folder of links to the first ``count`` inputs."""
    folder = WORK / f"in{count}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for source in sorted(inputs.glob("*.jpg"))[:count]:
        (folder / source.name).symlink_to(source)
    return folder


def worker_choice(inputs: Path, sizes: list[int], rounds: int) -> None:
    """Default --jobs against --jobs 1 and --jobs 2 per batch size, best of ``rounds`` interleaved."""
    out, py = WORK / "out", sys.executable
    command = f"{py} -m cvfilters apply {{src}} -o {out} -f gaussian_blur:sigma=3 --quality 90 --overwrite"
    variants = {"default": "", "--jobs 1": " --jobs 1", "--jobs 2": " --jobs 2"}
    folders = {size: subset(inputs, size) for size in sizes}
    best: dict[tuple[int, str], float] = {}
    for round_ in range(rounds):
        for size in sizes:
            names = list(variants)
            names = names[round_ % 3:] + names[: round_ % 3]
            for name in names:
                seconds, _, _ = measure(command.format(src=folders[size]) + variants[name])
                best[size, name] = min(best.get((size, name), seconds), seconds)
    print(f"\nworker choice: 2 MP JPEGs, gaussian sigma 3; best of {rounds}, interleaved; {os.cpu_count()} cores\n")
    print("| files | default (s) | --jobs 1 (s) | --jobs 2 (s) | default vs best | target <= 1.10 |")
    print("|---|---|---|---|---|---|")
    for size in sizes:
        default, one, two = (best[size, name] for name in variants)
        ratio = default / min(one, two)
        verdict = "PASS" if ratio <= 1.1 else "MISS"
        print(f"| {size} | {default:.2f} | {one:.2f} | {two:.2f} | {ratio:.2f} | {verdict} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="", help="comma-separated batch sizes for the worker-choice table")
    parser.add_argument("--skip-tools", action="store_true", help="only the worker-choice table")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    inputs = make_inputs(max([args.images, *sizes]))
    if sizes:
        worker_choice(inputs, sizes, args.rounds)
    if args.skip_tools:
        return
    commands = tools(inputs if args.images == max([args.images, *sizes]) else subset(inputs, args.images))
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for round_ in range(args.rounds):
        names = list(commands) if round_ % 2 == 0 else list(commands)[::-1]
        for name in names:
            runs[name].append(measure(commands[name]))
    decoded_mb = 1080 * 1920 * 3 / 2**20
    print(f"{args.images} JPEGs of 2 MP, gaussian sigma 3, quality 90; median of {args.rounds} interleaved rounds; "
          f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}; cv2 {cv2.__version__}; one decoded image = "
          f"{decoded_mb:.1f} MB\n")
    rate = {name: args.images / statistics.median(r[0] for r in rows) for name, rows in runs.items()}
    main_mb = {name: max(r[1] for r in rows) for name, rows in runs.items()}
    worker_mb = {name: max(r[2] for r in rows) for name, rows in runs.items()}
    pool = rate["cv2 pool (2 processes)"]
    print("| tool | images/s | vs cv2 pool | peak RSS, main process (MB) | peak RSS, largest worker (MB) |")
    print("|---|---|---|---|---|")
    for name in runs:
        worker = f"{worker_mb[name]:.0f}" if worker_mb[name] else "-"
        print(f"| {name} | {rate[name]:.1f} | {rate[name] / pool:.2f} | {main_mb[name]:.0f} | {worker} |")
    default = rate["cvfilters apply (default jobs)"] / pool
    scaling = rate["cvfilters apply --jobs 2"] / rate["cvfilters apply --jobs 1"]
    bare_worker = worker_mb["cv2 pool (2 processes)"]
    memory = worker_mb["cvfilters apply --jobs 2"] / bare_worker if bare_worker else float("nan")
    print("\n| target | goal | measured | result |\n|---|---|---|---|")
    for label, goal, value, ok in (
            ("default `apply DIR` vs bare 2-process cv2 pool", ">= 0.95x", default, default >= 0.95),
            ("`--jobs 2` vs `--jobs 1`", ">= 1.5x", scaling, scaling >= 1.5),
            ("largest worker RSS, `--jobs 2` vs bare pool worker", "<= 1.5x", memory, 0 < memory <= 1.5)):
        print(f"| {label} | {goal} | {value:.2f}x | {'PASS' if ok else 'MISS'} |")

if __name__ == "__main__":
    main()
