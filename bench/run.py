"""Run the cvfilters benchmark suite and rewrite bench/RESULTS.md and the benchmark table of docs/benchmarks.md.

Usage::

    python bench/run.py [--quick] [--only SECTION]... [--backends cpu,opencl,cuda]

Sections: overhead (cvf.apply vs raw cv2), chains (fused vs unfused vs hand-written
cv2), peers (scikit-image, Pillow, pyvips, ImageMagick), backends (cpu vs opencl vs
cuda), memory (peak RSS of a 24 MP chain), startup (whole commands vs a bare cv2
script). Without ``--quick`` the full suite takes about 10-15 minutes on 2 cores;
``--quick`` (pinned sizes and rounds) under 3.

Results are kept in ``bench/results.json``: ``--only`` replaces those sections and keeps
the others, then both Markdown outputs are rendered from it. When ``opencl`` is
requested and ``OPENCV_OPENCL_DEVICE`` is unset, OpenCV's default device is probed in a
subprocess and, if there is none, ``:CPU:`` (pocl) is used.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

SECTIONS = ("overhead", "chains", "peers", "backends", "memory", "startup")
BACKENDS = ("cpu", "opencl", "cuda")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="pinned reduced mode (under 3 minutes on 2 cores)")
    mode.add_argument("--tiny", action="store_true", help="96x64 images, one round: a smoke test of the suite")
    parser.add_argument("--only", action="append", default=[], metavar="SECTION",
                        help=f"run only these sections (repeatable or comma-separated): {', '.join(SECTIONS)}")
    parser.add_argument("--backends", default="cpu,opencl,cuda",
                        help="backends for the backends section, comma-separated (default cpu,opencl,cuda; "
                             "unavailable ones are reported, not measured)")
    parser.add_argument("--out", type=Path, default=HERE,
                        help="folder for results.json and RESULTS.md (default bench/)")
    parser.add_argument("--readme", default=str(HERE.parent / "docs" / "benchmarks.md"),
                        help="page whose benchmark block is rewritten (default docs/benchmarks.md); "
                             "'none' to leave it alone")
    args = parser.parse_args(argv)
    only = [s.strip() for item in args.only for s in item.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(f"--only: unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    args.sections = [s for s in SECTIONS if s in only] if only else list(SECTIONS)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    bad = sorted(set(backends) - set(BACKENDS))
    if bad:
        parser.error(f"--backends: unknown {', '.join(bad)}; choose from {', '.join(BACKENDS)}")
    args.backend_list = tuple(dict.fromkeys(["cpu", *backends]))
    args.mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    return args


def choose_opencl_device() -> str | None:
    """Use pocl (``:CPU:``) when OpenCV's default OpenCL device is unavailable and nothing was chosen."""
    if "OPENCV_OPENCL_DEVICE" in os.environ:
        return None
    probe = ("import cv2; ok = cv2.ocl.haveOpenCL() and cv2.ocl.Device.getDefault().available(); "
             "print(int(bool(ok)))")
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    if out.strip() != "1":
        os.environ["OPENCV_OPENCL_DEVICE"] = ":CPU:"
        return ":CPU:"
    return None


def command_line(args: argparse.Namespace) -> str:
    parts = ["python bench/run.py"]
    if args.mode != "full":
        parts.append(f"--{args.mode}")
    if args.sections != list(SECTIONS):
        parts.append("--only " + ",".join(args.sections))
    if args.backends != "cpu,opencl,cuda":
        parts.append(f"--backends {args.backends}")
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if "backends" in args.sections and "opencl" in args.backend_list:
        chosen = choose_opencl_device()
        if chosen:
            print(f"OPENCV_OPENCL_DEVICE unset and no default OpenCL device: using {chosen}", file=sys.stderr)

    # Imported here, after OPENCV_OPENCL_DEVICE is settled: OpenCV reads it once.
    import chains
    import devices
    import memory
    import overhead
    import peers
    import report
    import startup
    from common import MODES, machine_info

    modules = {"overhead": overhead, "chains": chains, "peers": peers, "backends": devices, "memory": memory,
               "startup": startup}
    cfg = dataclasses.replace(MODES[args.mode], backends=args.backend_list)
    machine = machine_info()
    results_path = args.out / "results.json"
    data = report.load(results_path)
    command = command_line(args)
    started = time.perf_counter()
    run_id = time.time()
    load_start = os.getloadavg()[0]
    failed = []
    print(f"{command}: {', '.join(args.sections)}; {machine['cpu']}; OpenCV {machine['opencv']}", file=sys.stderr)
    for name in args.sections:
        t0 = time.perf_counter()
        print(f"[{name}] running ...", file=sys.stderr, flush=True)
        entry: dict[str, object] = {}
        try:
            section = modules[name].section(cfg)
            entry["section"] = section.as_dict()
            for table in section.tables:
                print(table.markdown() + "\n")
        except Exception as exc:  # noqa: BLE001 - one failing section must not lose the others' results
            traceback.print_exc()
            entry["error"] = f"{type(exc).__name__}: {exc}"
            failed.append(name)
        elapsed = time.perf_counter() - t0
        print(f"[{name}] {elapsed:.0f} s", file=sys.stderr, flush=True)
        entry["meta"] = {"run": run_id, "machine": machine, "command": command, "mode": args.mode,
                         "method": cfg.describe(),
                         "elapsed": f"{elapsed:.0f} s for this section"}
        data["sections"][name] = entry
    total = time.perf_counter() - started
    load = f"{load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    for entry in data["sections"].values():
        if entry["meta"]["machine"] is machine:
            entry["meta"]["elapsed"] = f"{total:.0f} s in all"
            entry["meta"]["load"] = load
    args.out.mkdir(parents=True, exist_ok=True)
    results_path.write_text(json.dumps(data, indent=1) + "\n")
    (args.out / "RESULTS.md").write_text(report.results_md(data))
    if args.readme.lower() != "none":
        link = os.path.relpath(args.out / "RESULTS.md", Path(args.readme).resolve().parent)
        if not report.update_readme(Path(args.readme), data, link):
            print(f"{args.readme}: no {report.START} ... {report.END} markers; page left unchanged",
                  file=sys.stderr)
    print(f"done in {total:.0f} s; wrote {results_path}, {args.out / 'RESULTS.md'}"
          + ("" if args.readme.lower() == "none" else f" and {args.readme}"), file=sys.stderr)
    if failed:
        print(f"failed sections: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
