"""Start-up: whole ``cvfilters`` commands as a shell runs them, against a bare python+cv2 script.

Usage: ``python bench/startup.py [--rounds 15]``, or as part of the suite:
``python bench/run.py --only startup``. One interleaved run: each round runs every
command once, in rotated order, as a fresh process, timed by wall clock from spawn to
exit. Reported: best and median of the rounds. Targets: ``cvfilters apply`` of one
512 x 512 PNG (``-f invert``) within 1.3x of ``python -c "import cv2; ..."`` doing the
same read, invert and write (ratio of medians); ``--help``, ``list`` and ``info NAME``
under 0.3 s (median).
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

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from common import Config, Section, Table, verdict  # noqa: E402

WORK = HERE / "work" / "startup"
APPLY_TARGET = 1.3
COMMAND_TARGET_S = 0.3
ROUNDS = {"tiny": 1, "quick": 11, "full": 21}


def cvfilters_command() -> list[str]:
    """The console script next to this interpreter (what a shell runs), else ``python -m cvfilters``."""
    script = Path(sys.executable).with_name("cvfilters")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cvfilters"]


def commands(work: Path) -> dict[str, tuple[list[str], Path | None]]:
    """Label -> (argv, output file removed before each run)."""
    import cv2
    from common import test_image

    work.mkdir(parents=True, exist_ok=True)
    source = work / "in.png"
    if not source.exists():
        cv2.imwrite(str(source), test_image(512, 512))
    ours, bare_out = work / "cvfilters.png", work / "bare.png"
    bare = f"import cv2; cv2.imwrite({str(bare_out)!r}, cv2.bitwise_not(cv2.imread({str(source)!r})))"
    cvf = cvfilters_command()
    return {
        'bare script: python -c "import cv2; ... bitwise_not ..."': ([sys.executable, "-c", bare], bare_out),
        "cvfilters apply in.png -o out.png -f invert": ([*cvf, "apply", str(source), "-o", str(ours), "-f", "invert"],
                                                        ours),
        "cvfilters --help": ([*cvf, "--help"], None),
        "cvfilters list": ([*cvf, "list"], None),
        "cvfilters info gaussian_blur": ([*cvf, "info", "gaussian_blur"], None),
    }


def installed_environment() -> dict[str, str]:
    """This environment as an installed package sees it: bytecode caches written and used.

    ``pip install`` compiles every module; an environment with ``PYTHONDONTWRITEBYTECODE``
    (common in containers) would instead compile cvfilters' sources on every start, which
    costs more than the whole command and is not what a user's shell runs.
    """
    return {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def measure(rounds: int, work: Path = WORK) -> dict[str, list[float]]:
    """Seconds per command per round, the commands interleaved in rotated order."""
    table = commands(work)
    env = installed_environment()
    names = list(table)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds + 1):  # round 0 warms the file cache and the bytecode caches; not counted
        order = names[round_ % len(names):] + names[: round_ % len(names)]
        for name in order:
            argv, output = table[name]
            if output is not None:
                output.unlink(missing_ok=True)
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            elapsed = time.perf_counter() - start
            if output is not None and not output.exists():
                raise RuntimeError(f"{name}: wrote no {output}")
            if round_:
                samples[name].append(elapsed)
    return samples


def section(cfg: Config, rounds: int | None = None) -> Section:
    rounds = rounds or ROUNDS.get(cfg.mode, 11)
    samples = measure(rounds)
    sec = Section("startup", "Start-up: whole commands vs a bare python+cv2 script")
    names = list(samples)
    bare, apply = names[0], names[1]
    ratio = statistics.median(samples[apply]) / statistics.median(samples[bare])
    best_ratio = min(samples[apply]) / min(samples[bare])
    table = Table(f"one 512 x 512 PNG; {rounds} interleaved rounds; {os.cpu_count()} cores; "
                  f"load {os.getloadavg()[0]:.1f}",
                  ["command", "best (s)", "median (s)", "vs bare script (median)", "target", "result"])
    for name in names:
        best, median = min(samples[name]), statistics.median(samples[name])
        if name == bare:
            row = ["1.00x", "-", "-"]
        elif name == apply:
            row = [f"{ratio:.2f}x (best {best_ratio:.2f}x)", f"<= {APPLY_TARGET}x", verdict(ratio <= APPLY_TARGET)]
        else:
            row = [f"{median / statistics.median(samples[bare]):.2f}x", f"<= {COMMAND_TARGET_S} s",
                   verdict(median <= COMMAND_TARGET_S)]
        table.rows.append([f"`{name}`", f"{best:.3f}", f"{median:.3f}", *row])
    table.notes.append("wall clock from spawn to exit of a fresh process, output file removed before each run; "
                       "round 0 (file and bytecode caches) not counted")
    sec.tables.append(table)
    sec.summary.append(["`cvfilters apply` one 512x512 PNG vs bare cv2 script", f"<= {APPLY_TARGET}x",
                        f"{ratio:.2f}x", verdict(ratio <= APPLY_TARGET)])
    slowest = max(names[2:], key=lambda n: statistics.median(samples[n]))
    worst = statistics.median(samples[slowest])
    sec.summary.append(["`--help`, `list`, `info NAME` (slowest median)", f"<= {COMMAND_TARGET_S} s",
                        f"{worst:.3f} s ({slowest.split(' ', 1)[1]})", verdict(worst <= COMMAND_TARGET_S)])
    return sec


def main() -> None:
    from common import MODES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep bench/work/startup (the test image)")
    args = parser.parse_args()
    try:
        sec = section(MODES["quick"], args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(WORK, ignore_errors=True)
    for table in sec.tables:
        print(table.markdown() + "\n")


if __name__ == "__main__":
    main()
