"""Render one picture of each feather-family effect into ``docs/feather.png`` (for docs/filters.md).

Usage: ``python scripts/feather_examples.py [--out PATH] [--backend cpu|opencl|cuda|auto]``.

Each tile is the astronaut fixture run through one spec (the CLI syntax, printed under
the tile); results with alpha are shown over a checkerboard.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

import cvfilters as cvf

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
TILE = 176
CAPTION = 30
COLUMNS = 4

EXAMPLES: list[tuple[str, str]] = [
    ("original", ""),
    ("edges to white", "feather:radius=36,shape=ellipse,falloff=smoothstep"),
    ("edges to transparent", "feather:radius=28,fill=transparent"),
    ("radial to black", "feather:mode=radial,inner=0.35,outer=0.95,falloff=smoothstep,color=[0,0,0]"),
    ("brighten (PS feather)", "feather:mode=brighten,size=0.8"),
    ("masked face", "masked:mask=@fixtures/astronaut-face.png,feather=10,filter='pixellate:size=8'"),
    ("masked background", "masked:mask='ellipse:0.45,0.45,0.3,0.5',invert=true,feather=24,"
                          "filter='gaussian_blur:sigma=5 | grayscale'"),
    ("blend soft_light", "blend:color=[0.1,0.5,1.0],mode=soft_light,opacity=0.9,mask='rect:0,0,1,0.5',"
                         "feather=40"),
    ("blend screen badge", "blend:source=@fixtures/badge-rgba.png,mode=screen,opacity=0.8"),
    ("vignette", "vignette"),
    ("CIVignetteEffect", "vignette_effect:radius=0.3,falloff=0.7"),
    ("GPUImage vignette", "vignette_effect:style=gpuimage,color=[0.3,0.1,0.4],start=0.25,end=0.7"),
]


def checkerboard(height: int, width: int, cell: int = 8) -> np.ndarray:
    yy, xx = np.mgrid[0:height, 0:width]
    light = ((yy // cell + xx // cell) % 2).astype(np.float32)
    return np.dstack([0.6 + 0.3 * light] * 3)


def flatten(image: np.ndarray) -> np.ndarray:
    """BGR uint8 for display: alpha composited over a checkerboard."""
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 3:
        return image
    colour = image[..., :3].astype(np.float32) / 255
    alpha = image[..., 3:].astype(np.float32) / 255
    shown = colour * alpha + checkerboard(*image.shape[:2]) * (1 - alpha)
    return np.clip(shown * 255 + 0.5, 0, 255).astype(np.uint8)


def tile(image: np.ndarray, title: str) -> np.ndarray:
    body = cv2.resize(flatten(image), (TILE, TILE), interpolation=cv2.INTER_AREA)
    caption = np.full((CAPTION, TILE, 3), 255, np.uint8)
    cv2.putText(caption, title, (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (30, 30, 30), 1, cv2.LINE_AA)
    return np.vstack([body, caption])


def render(backend: str = "cpu") -> np.ndarray:
    image = cvf.read(FIXTURES / "astronaut.png")
    tiles = []
    for title, spec in EXAMPLES:
        out = cvf.Pipeline.parse(spec, base_dir=ROOT)(image, backend=backend) if spec else image
        tiles.append(tile(out, title))
    while len(tiles) % COLUMNS:
        tiles.append(np.full_like(tiles[0], 255))
    rows = [np.hstack(tiles[i : i + COLUMNS]) for i in range(0, len(tiles), COLUMNS)]
    return np.vstack(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "feather.png")
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args(argv)
    sheet = render(args.backend)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cvf.write(args.out, sheet, overwrite=True)
    for title, spec in EXAMPLES:
        print(f"{title:22s} {spec or '-'}")
    print(f"wrote {args.out} ({sheet.shape[1]}x{sheet.shape[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
