"""Cartoon at the recipe's speed: cvfilters' ``cartoon`` against the raw cv2 recipe, interleaved.

Usage: ``python bench/cartoon.py [--size 2mp] [--rounds 9]``. Both run the classic
recipe (PEERS.md: half scale, 7 bilateral passes d=9 sigma 20/7, median 7, mean
adaptive threshold block 9 C 2, outlines multiplied in) on the same 8-bit BGR image on
the cpu backend; the calls alternate (order rotated every round) and the report is the
median of the per-round ratios. Target (issue #17): at most 1.15x.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SIZES, test_image
from ops import CARTOON_MATCHED, raw_cartoon

import cvfilters as cvf

TARGET = 1.15


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=tuple(SIZES), default="2mp")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    image = test_image(*SIZES[args.size]).copy()
    flt = cvf.get_filter("cartoon")
    variants = {"raw cv2": lambda: raw_cartoon(image, image.shape),
                "cvfilters": lambda: cvf.apply(image, flt, backend="cpu", **CARTOON_MATCHED)}
    for run in variants.values():
        run()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in variants}
    ratios = []
    for index in range(args.rounds):
        order = list(variants) if index % 2 == 0 else list(reversed(variants))
        for name in order:
            start = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - start)
        ratios.append(times["cvfilters"][-1] / times["raw cv2"][-1])
    for name, values in times.items():
        print(f"{name:10s} median {statistics.median(values) * 1000:7.1f} ms over {args.rounds} rounds")
    ratio = statistics.median(ratios)
    print(f"cvfilters / raw cv2: {ratio:.3f}x (median of per-round ratios; target <= {TARGET}x): "
          f"{'PASS' if ratio <= TARGET else 'MISS'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
