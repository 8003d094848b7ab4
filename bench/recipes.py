"""Every filter against its recipe: the shortest hand-written cv2/numpy code giving the same output.

Usage: ``python bench/recipes.py [--quick] [--rounds 7] [--only NAME,...]``. Each filter with a
recipe here runs at its defaults on a BGR uint8 photo (the PEERS.md test image with light
noise) at 2 MP and 24 MP (``--quick``: 0.5 MP and 2 MP, for CI-size runs), in-process with
``Pipeline.run(image, backend="cpu")``, OpenCV's threads as configured. Per size the filter
and its recipe run interleaved (order swapped every round) and the medians are compared.
The recipe's output is checked against the filter's first: at most 1 level apart anywhere,
or the row says RECIPE DIFFERS (a wrong recipe is a bench bug, not a speed result).

Targets: filter / recipe <= 1.15 at 24 MP and <= 1.25 at 2 MP (at 0.5 MP with ``--quick``
the 2 MP target is applied). Filters without a recipe are listed at the end: the table
covers what is listed, not the registry.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import test_image

import cvfilters as cvf

Image = np.ndarray
TARGETS = {"small": 1.25, "large": 1.15}
SIZES = {"full": {"small": (1200, 1600), "large": (4000, 6000)},  # 1.9 MP and 24 MP
         "quick": {"small": (600, 800), "large": (1200, 1600)}}


def _lut(table: Callable[[np.ndarray], np.ndarray]) -> Callable[[Image], Image]:
    values = np.clip(np.rint(table(np.arange(256, dtype=np.float64))), 0, 255).astype(np.uint8)
    return lambda img: cv2.LUT(img, values)


def _ycrcb(op: Callable[[Image], Image]) -> Callable[[Image], Image]:
    def run(img: Image) -> Image:
        y, cr, cb = cv2.split(cv2.cvtColor(img, cv2.COLOR_BGR2YCrCb))
        return cv2.cvtColor(cv2.merge([op(y), cr, cb]), cv2.COLOR_YCrCb2BGR)
    return run


def _unsharp(img: Image) -> Image:
    return cv2.addWeighted(img, 2.0, cv2.GaussianBlur(img, (0, 0), 2.0), -1.0, 0.0)


def _high_pass(img32: Image) -> Image:
    # float: the uint8 GaussianBlur's fixed-point rounding is 2 levels off; 19 taps: OpenCV's size for uint8
    return cv2.addWeighted(img32, 1.0, cv2.GaussianBlur(img32, (19, 19), 3.0), -1.0, 127.5, dtype=cv2.CV_8U)


def _morph(op: int, size: int) -> Callable[[Image], Image]:
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
    return lambda img: cv2.morphologyEx(img, op, kernel)


def _sepia_tone(img: Image) -> Image:
    """ImageMagick 6's ``-sepia-tone 80%`` per pixel in float64 (tone, -normalize, -contrast)."""
    bgr, luma = img / 255.0, np.array([0.072186, 0.715158, 0.212656])
    level, t = bgr @ luma, 0.8
    toned = np.stack([np.maximum(np.clip(level - t / 6, 0, 1), t / 7),
                      np.maximum(np.clip(level + 1 - 7 * t / 6, 0, 1), t / 7), np.clip(level + 1 - t, 0, 1)], axis=-1)
    low, high = np.quantile(toned @ luma, (0.0015, 0.9995))
    toned = np.clip((toned - low) / (high - low), 0, 1)
    value = toned.max(axis=-1)
    raised = value + 0.5 * (0.5 * (np.sin(np.pi * (value - 0.5)) + 1) - value)
    gain = np.divide(raised, value, out=np.zeros_like(value), where=value > 0)
    return np.rint(np.clip(toned * gain[..., None], 0, 1) * 255).astype(np.uint8)


_SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
_CLAHE = cv2.createCLAHE(2.0, (8, 8))

# spec -> recipe. The shortest code a person would write for the same pixels.
RECIPES: dict[str, Callable[[Image], Image]] = {
    "invert": cv2.bitwise_not,
    "gaussian_blur": lambda img: cv2.GaussianBlur(img, (0, 0), 2.0),
    "gaussian_blur:sigma=8": lambda img: cv2.GaussianBlur(img, (0, 0), 8.0),
    "box_blur": lambda img: cv2.blur(img, (5, 5)),
    "median_blur": lambda img: cv2.medianBlur(img, 5),
    "bilateral": lambda img: cv2.bilateralFilter(img, 9, 0.3 * 255, 5.0),
    "unsharp_mask": _unsharp,
    "sharpen": lambda img: cv2.filter2D(img, -1, _SHARPEN),
    "high_pass": lambda img: _high_pass(img.astype(np.float32)),
    "grayscale": lambda img: cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR),
    "sepia": _sepia_tone,
    "equalize": _ycrcb(cv2.equalizeHist),
    "equalize:space=per_channel": lambda img: cv2.merge([cv2.equalizeHist(c) for c in cv2.split(img)]),
    "clahe": _ycrcb(_CLAHE.apply),
    "flip": lambda img: cv2.flip(img, 1),
    "erode": lambda img: cv2.erode(img, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))),
    "dilate": lambda img: cv2.dilate(img, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))),
    "open": _morph(cv2.MORPH_OPEN, 5),
    "close": _morph(cv2.MORPH_CLOSE, 5),
    "morph_gradient": _morph(cv2.MORPH_GRADIENT, 3),
    "top_hat": _morph(cv2.MORPH_TOPHAT, 15),
    "black_hat": _morph(cv2.MORPH_BLACKHAT, 15),
    "laplacian": lambda img: cv2.convertScaleAbs(cv2.Laplacian(img, cv2.CV_16S, ksize=1), alpha=2.0),
    "resize": lambda img: cv2.resize(img, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA),
    "normalize": lambda img: cv2.normalize(img, None, 0, 255, cv2.NORM_MINMAX),
    "exposure": lambda img: cv2.convertScaleAbs(img, alpha=2 ** 0.5),
    "brightness_contrast": _lut(lambda v: v * 1.2 - 25.5),
    "gamma": _lut(lambda v: 255 * (v / 255) ** (3 / 4)),
    "posterize": _lut(lambda v: np.floor(v / 256 * 4) * 255 / 3),
    "solarize": _lut(lambda v: np.where(v > 127.5, 255 - v, v)),
    "threshold": _lut(lambda v: np.where(v > 127.5, 255, 0)),
}


def interleaved(a: Callable[[], object], b: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Median seconds of ``a`` and ``b`` over ``rounds`` rounds, the order swapped every round."""
    times: tuple[list[float], list[float]] = ([], [])
    for round_ in range(rounds):
        pair = [(0, a), (1, b)] if round_ % 2 == 0 else [(1, b), (0, a)]
        for index, call in pair:
            start = time.perf_counter()
            call()
            times[index].append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def measure(spec: str, image: Image, rounds: int) -> tuple[float, float, int]:
    """Seconds of the filter and of its recipe, and their largest difference in levels."""
    pipe, recipe = cvf.Pipeline.parse([spec]), RECIPES[spec]
    ours, theirs = pipe.run(image, backend="cpu")[0], recipe(image)  # also the warm-up of both
    differ = int(np.abs(ours.astype(np.int16) - theirs.astype(np.int16)).max()) if ours.shape == theirs.shape \
        else 256
    fast, slow = interleaved(lambda: pipe.run(image, backend="cpu"), lambda: recipe(image), rounds)
    return fast, slow, differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.5 MP and 2 MP instead of 2 MP and 24 MP")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated specs")
    args = parser.parse_args()
    sizes = SIZES["quick" if args.quick else "full"]
    specs = [s for s in RECIPES if not args.only or s in args.only.split(",")]
    images = {label: test_image(*shape) for label, shape in sizes.items()}
    print(f"filters vs their recipes; BGR uint8; medians of {args.rounds} interleaved rounds; "
          f"{os.cpu_count()} cores, OpenCV {cv2.__version__} at {cv2.getNumThreads()} threads; "
          f"load {os.getloadavg()[0]:.1f}\n")
    heads = [f"{label} {h}x{w} ({h * w / 1e6:.1f} MP)" for label, (h, w) in sizes.items()]
    print(f"| filter | {heads[0]}: ms (recipe ms) | ratio | <= {TARGETS['small']} | "
          f"{heads[1]}: ms (recipe ms) | ratio | <= {TARGETS['large']} |")
    print("|---|---|---|---|---|---|---|")
    misses: list[str] = []
    for spec in specs:
        cells = []
        for label, image in images.items():
            ours, recipe, differ = measure(spec, image, args.rounds)
            ratio = ours / recipe
            if differ > 1:
                verdict = f"RECIPE DIFFERS ({differ} levels)"
            else:
                verdict = "PASS" if ratio <= TARGETS[label] else "MISS"
            if verdict != "PASS":
                misses.append(f"{spec} ({label})")
            cells += [f"{ours * 1e3:.1f} ({recipe * 1e3:.1f})", f"{ratio:.2f}", verdict]
        print(f"| `{spec}` | " + " | ".join(cells) + " |", flush=True)
    covered = {spec.split(":")[0] for spec in RECIPES}
    without = sorted(f.name for f in cvf.list_filters() if f.name not in covered)
    print(f"\n{len(specs)} rows; misses: {', '.join(misses) or 'none'}")
    print(f"filters without a recipe here ({len(without)}): {', '.join(without)}")


if __name__ == "__main__":
    main()
