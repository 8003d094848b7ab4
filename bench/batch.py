"""Batch throughput: cvfilters apply vs a bare cv2 process pool, ImageMagick and libvips.

Usage: ``python bench/batch.py [--images 64] [--rounds 3] [--sizes 1,4,16,64]``. Generates
2 MP JPEGs under ``bench/work/``, runs ``gaussian_blur:sigma=3`` (JPEG quality 90 out) with
each tool, and prints images/s (best of ``rounds``, tools interleaved per round) and the
peak resident memory of the largest process. ImageMagick (``mogrify``) and libvips
(``vips``) are used when installed (Debian: imagemagick, libvips-tools). Every time is
the whole command's wall clock, start-up included.

``--sizes``: for batches of each size, the default worker choice against ``--jobs 1``
and ``--jobs 2``, interleaved; target: the default within 10% of the better of the two.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
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


def measure(command: str) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of the largest process the command ran."""
    out = WORK / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "subprocess.run(sys.argv[1], shell=True, check=True); "
             "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    result = subprocess.run([sys.executable, "-c", probe, command], capture_output=True, text=True, check=True)
    seconds, peak_kb = result.stdout.split()
    return float(seconds), int(peak_kb) / 1024


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
                seconds, _ = measure(command.format(src=folders[size]) + variants[name])
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
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.rounds):
        for name, command in commands.items():
            seconds, peak = measure(command)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, peak)
    decoded_mb = 1080 * 1920 * 3 / 2**20
    print(f"{args.images} JPEGs of 2 MP, gaussian sigma 3, quality 90; best of {args.rounds}; "
          f"{os.cpu_count()} cores; cv2 {cv2.__version__}; one decoded image = {decoded_mb:.1f} MB\n")
    pool = args.images / best["cv2 pool (2 processes)"][0]
    print("| tool | images/s | vs cv2 pool | peak RSS of largest process (MB) |\n|---|---|---|---|")
    for name, (seconds, peak) in best.items():
        rate = args.images / seconds
        print(f"| {name} | {rate:.1f} | {rate / pool:.2f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
