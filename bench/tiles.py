"""Peak memory and time of the issue-22 chains on a 24 MP image: whole-image pipeline vs tiles.

Usage: ``nice python bench/tiles.py [--size 6000x4000] [--repeat 1] [--tile 1024]``.

Each (chain, variant) runs in a fresh process, as ``bench/memory.py`` measures: the
worker runs the variant once on a small image (library initialisation), resets the peak
mark (``/proc/self/clear_refs``), takes the resident size as the baseline, loads the
decoded image from a ``.npy`` file (one allocation of exactly the image), runs the chain
and reads ``VmHWM``. The peak beyond the baseline counts the input, the output and every
intermediate. Variants:

- ``whole``: ``pipeline(image, backend="cpu")``, every step on the whole image;
- ``tiles``: ``cvfilters.process_tiled(image, pipeline, tile_size=T)``, one thread;
- ``tiles2``: the same with ``workers=2`` (OpenCV at one thread per tile).

Target of the issue: peak <= input + output + 150 MB. Prints a Markdown table; machine
noise is high on a shared machine (timings are single runs unless ``--repeat``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

CHAINS = {
    "colour": "brightness_contrast | gamma | saturation | levels",
    "blur": "gaussian_blur:sigma=3 | sepia | vignette | unsharp_mask",
    "rotate": "rotate:angle=10 | swirl | vignette | sharpen",
}
VARIANTS = ("whole", "tiles", "tiles2")
MB = 1e6


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _run(variant: str, chain: str, image: np.ndarray, tile: int) -> np.ndarray:
    import cvfilters as cvf

    pipe = cvf.Pipeline.parse(chain)
    if variant == "whole":
        return pipe(image, backend="cpu")
    return cvf.process_tiled(image, pipe, tile_size=tile, workers=2 if variant == "tiles2" else 1)


def worker(variant: str, chain: str, path: str, tile: int) -> dict[str, Any]:
    """Measure one variant in this process (see the module notes)."""
    _run(variant, chain, np.full((64, 64, 3), 128, np.uint8), tile)
    Path("/proc/self/clear_refs").write_text("5")
    baseline = _status("VmRSS")
    image = np.load(path)
    start = time.perf_counter()
    out = _run(variant, chain, image, tile)
    seconds = time.perf_counter() - start
    return {"peak": _status("VmHWM") - baseline, "seconds": seconds, "input": image.nbytes, "output": out.nbytes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="6000x4000", help="WIDTHxHEIGHT of the test image")
    parser.add_argument("--tile", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    from common import test_image

    width, height = (int(v) for v in args.size.split("x"))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "image.npy")
        np.save(path, test_image(height, width))
        for name, chain in CHAINS.items():
            for variant in VARIANTS:
                runs = []
                for _ in range(args.repeat):  # interleaving across chains is not needed: each run is its own process
                    done = subprocess.run([sys.executable, __file__, "--worker", variant, chain, path, str(args.tile)],
                                          capture_output=True, text=True, check=True)
                    runs.append(json.loads(done.stdout))
                peak = statistics.median(r["peak"] for r in runs)
                seconds = statistics.median(r["seconds"] for r in runs)
                io = runs[0]["input"] + runs[0]["output"]
                rows.append({"chain": name, "spec": chain, "variant": variant, "peak_mb": peak / MB,
                             "seconds": seconds, "io_mb": io / MB, "over_io_mb": (peak - io) / MB})
                print(f"{name:7} {variant:7} peak {peak / MB:8.0f} MB  (input+output {io / MB:.0f} MB, "
                      f"beyond {(peak - io) / MB:6.0f} MB)  {seconds:6.2f} s", file=sys.stderr)
    print(f"\n{width} x {height} RGB uint8, tile {args.tile}, median of {args.repeat} run(s) each\n")
    print("| chain | variant | peak RSS | beyond input + output | target (<= +150 MB) | time |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        verdict = "PASS" if row["over_io_mb"] <= 150 else "**MISS**"
        spec = row['spec'].replace('|', '\\|')
        print(f"| `{spec}` | {row['variant']} | {row['peak_mb']:.0f} MB | {row['over_io_mb']:+.0f} MB | "
              f"{verdict} | {row['seconds']:.2f} s |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))))
    else:
        main()
