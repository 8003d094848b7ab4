"""Render the before/after crops of issue #27's effects into ``docs/colour-effects.png`` (for docs/colour.md).

Usage: ``python scripts/colour_examples.py [--out PATH]``.

One row per effect: the input, the old default, the new default and a reference (a peer
tool's output where one is installed: ImageMagick's ``convert``). Results with alpha are
shown over a checkerboard. Crops come from scikit-image's sample photos (coffee, cat,
astronaut), which the test extras install.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from skimage import data

import cvfilters as cvf
from cvfilters.viz.sheets import contact_sheet, fit

ROOT = Path(__file__).resolve().parent.parent
TILE = 200
CLASSIC_SEPIA = [[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]]  # the old matrix, RGB rows


def checkerboard(height: int, width: int, cell: int = 8) -> np.ndarray:
    yy, xx = np.mgrid[0:height, 0:width]
    return np.dstack([0.6 + 0.3 * ((yy // cell + xx // cell) % 2).astype(np.float32)] * 3)


def shown(image: np.ndarray) -> np.ndarray:
    """8-bit BGR: gray repeated, alpha composited over a checkerboard, fitted to a tile."""
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        alpha = image[..., 3:].astype(np.float32) / 255
        flat = image[..., :3].astype(np.float32) / 255 * alpha + checkerboard(*image.shape[:2]) * (1 - alpha)
        image = np.clip(flat * 255 + 0.5, 0, 255).astype(np.uint8)
    return fit(image, TILE, TILE)


def imagemagick(image: np.ndarray, *args: str) -> np.ndarray | None:
    """``convert IN ARGS OUT`` on a PNG of ``image`` (None without ImageMagick)."""
    if shutil.which("convert") is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "in.png", Path(folder) / "out.png"
        cv2.imwrite(str(source), image)
        subprocess.run(["convert", str(source), *args, str(target)], check=True)
        return cv2.imread(str(target), cv2.IMREAD_UNCHANGED)


def rows() -> list[tuple[str, np.ndarray, list[tuple[str, Callable[[np.ndarray], np.ndarray | None]]]]]:
    coffee = np.ascontiguousarray(data.coffee()[..., ::-1])[10:210, 170:370]
    cat = np.ascontiguousarray(data.chelsea()[..., ::-1])[40:260, 100:320]
    page = np.full((240, 240, 3), 255, np.uint8)
    page[20:220, 20:220] = cv2.resize(cat, (200, 200), interpolation=cv2.INTER_AREA)
    checker = np.dstack([(np.indices((64, 64)).sum(0) % 2 * 255).astype(np.uint8)] * 3)
    stripes = np.zeros((120, 120, 3), np.uint8)
    stripes[:, ::4] = (255, 255, 255)
    stripes[40:80, 40:80] = (0, 0, 255)
    return [
        ("chroma_key white", page, [
            ("old: chroma distance", lambda im: cvf.apply(im, "chroma_key:color=white,distance=chroma")),
            ("new: auto (Lab)", lambda im: cvf.apply(im, "chroma_key:color=white")),
            ("IM -fuzz 15% -transparent", lambda im: imagemagick(im, "-fuzz", "15%", "-transparent", "white")),
        ]),
        ("white_balance", coffee, [
            ("old: grayworld", lambda im: cvf.apply(im, "white_balance:method=grayworld")),
            ("new: simple", lambda im: cvf.apply(im, "white_balance")),
            ("learning", lambda im: cvf.apply(im, "white_balance:method=learning")),
        ]),
        ("sepia", cat, [
            ("old: classic matrix", lambda im: cvf.apply(im, "color_matrix", matrix=CLASSIC_SEPIA)),
            ("new: strength 0.8", lambda im: cvf.apply(im, "sepia")),
            ("IM -sepia-tone 80%", lambda im: imagemagick(im, "-sepia-tone", "80%")),
        ]),
        ("toon", cat, [
            ("old: GPUImage", lambda im: cvf.apply(im, "toon:smoothing=0,threshold=0.2")),
            ("new: smoothing 2", lambda im: cvf.apply(im, "toon")),
            ("smooth_toon", lambda im: cvf.apply(im, "smooth_toon")),
        ]),
        ("sketch color", cat, [
            ("old: cv2.pencilSketch", lambda im: cv2.pencilSketch(im, sigma_s=60, sigma_r=0.07, shade_factor=0.02)[1]),
            ("new: coloured pencil", lambda im: cvf.apply(im, "sketch:mode=color")),
            ("gray sketch", lambda im: cvf.apply(im, "sketch")),
        ]),
        ("blur, 1px checker", checker, [
            ("gamma-encoded: 128", lambda im: cvf.apply(im, "gaussian_blur:sigma=3")),
            ("--linear: 188", lambda im: cvf.apply(im, "gaussian_blur:sigma=3", linear=True)),
            ("resize 1/4 --linear", lambda im: cvf.apply(im, "resize:scale=0.25", linear=True)),
        ]),
        ("resize, thin lines", stripes, [
            ("resize 1/3", lambda im: cvf.apply(im, "resize:scale=0.34")),
            ("resize 1/3 --linear", lambda im: cvf.apply(im, "resize:scale=0.34", linear=True)),
            ("blur --linear", lambda im: cvf.apply(im, "gaussian_blur:sigma=2", linear=True)),
        ]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "colour-effects.png")
    args = parser.parse_args(argv)
    tiles, labels = [], []
    for name, image, results in rows():
        tiles.append(shown(image))
        labels.append(f"{name}: input")
        for label, run in results:
            out = run(image)
            tiles.append(shown(out) if out is not None else np.full((TILE, TILE, 3), 255, np.uint8))
            labels.append(label if out is not None else f"{label} (not installed)")
    sheet = contact_sheet(tiles, labels, columns=4)
    cv2.imwrite(str(args.out), sheet, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(f"{args.out}: {len(tiles)} tiles, {sheet.shape[1]} x {sheet.shape[0]} px")
    return 0


if __name__ == "__main__":
    sys.exit(main())
