"""Overhead of ``cvf.apply`` over the raw cv2 call it wraps, on the cpu backend.

Usage: ``python bench/overhead.py [--size 2mp|24mp] [--repeat N]``. Prints a Markdown
table of medians (ms) and ratios; calls are interleaved so machine noise hits both sides.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import cv2
import numpy as np

import cvfilters as cvf
from cvfilters.filters.feather import vignette_factor

SIZES = {"2mp": (1080, 1920), "24mp": (4000, 6000)}
SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)


def test_image(height: int, width: int) -> np.ndarray:
    """A scikit-image photo tiled over the canvas with light noise (as in PEERS.md)."""
    from skimage import data

    tile = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)
    reps = (-(-height // tile.shape[0]), -(-width // tile.shape[1]), 1)
    canvas = np.tile(tile, reps)[:height, :width]
    noise = np.random.default_rng(0).integers(-4, 5, canvas.shape)
    return np.clip(canvas.astype(np.int16) + noise, 0, 255).astype(np.uint8)


def cases(img: np.ndarray) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    vignette = vignette_factor(img.shape[1], img.shape[0], (0.5, 0.5), 1.0, 1.0)
    mask3 = np.repeat(vignette[:, :, None], 3, axis=2)
    return {
        "gaussian_blur sigma=3": (lambda: cv2.GaussianBlur(img, (0, 0), 3),
                                  lambda: cvf.apply(img, "gaussian_blur", sigma=3, backend="cpu")),
        "box_blur 5": (lambda: cv2.blur(img, (5, 5)), lambda: cvf.apply(img, "box_blur", size=5, backend="cpu")),
        "convolve 3x3": (lambda: cv2.filter2D(img, -1, SHARPEN),
                         lambda: cvf.apply(img, "convolve", kernel=SHARPEN, backend="cpu")),
        "sobel dx": (lambda: cv2.convertScaleAbs(cv2.Sobel(img, cv2.CV_32F, 1, 0)),
                     lambda: cvf.apply(img, "sobel", backend="cpu")),
        "invert": (lambda: cv2.bitwise_not(img), lambda: cvf.apply(img, "invert", backend="cpu")),
        "flip": (lambda: cv2.flip(img, 1), lambda: cvf.apply(img, "flip", backend="cpu")),
        "pixellate 16": (lambda: cv2.resize(cv2.resize(img, (img.shape[1] // 16, img.shape[0] // 16),
                                                       interpolation=cv2.INTER_AREA),
                                            (img.shape[1], img.shape[0]), interpolation=cv2.INTER_NEAREST),
                         lambda: cvf.apply(img, "pixellate", size=16, backend="cpu")),
        "vignette": (lambda: cv2.multiply(img, mask3, dtype=cv2.CV_8U),
                     lambda: cvf.apply(img, "vignette", backend="cpu")),
    }


def median_ms(fn: Callable[[], object], samples: list[float]) -> None:
    start = time.perf_counter()
    fn()
    samples.append((time.perf_counter() - start) * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default="2mp")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    img = test_image(*SIZES[args.size])
    print(f"{args.size} BGR uint8, cv2 {cv2.__version__}, {cv2.getNumThreads()} threads, median of {args.repeat}\n")
    print("| filter | raw cv2 (ms) | cvf.apply (ms) | ratio |\n|---|---|---|---|")
    for name, (raw, ours) in cases(img).items():
        raw(), ours()  # warm-up: first-call allocations and caches
        raw_t: list[float] = []
        our_t: list[float] = []
        for _ in range(args.repeat):
            median_ms(raw, raw_t)
            median_ms(ours, our_t)
        r, o = statistics.median(raw_t), statistics.median(our_t)
        print(f"| {name} | {r:.2f} | {o:.2f} | {o / r:.2f} |")


if __name__ == "__main__":
    main()
