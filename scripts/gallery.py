"""Render every registered filter with its defaults into one labelled grid image.

Usage::

    python scripts/gallery.py                      # writes docs/gallery.png
    python scripts/gallery.py -o out.png --tile 200 --columns 6 --backend opencl

Each filter runs on ``fixtures/astronaut.png`` (resized to ``--work`` pixels on its
longer side, default twice the tile) with its default parameters and the ``example``
of every required parameter, is shrunk to a ``--tile`` pixel square and labelled with
its name. Tiles are ordered as ``cvfilters list`` orders filters (category, then name).
A filter that fails gets a red tile with the error and the script exits with 1.

The PNG carries the filter names in grid order in a text chunk named
``cvfilters-gallery`` (one name a line), so tests can check that every registered
filter is shown: ``PIL.Image.open(path).text["cvfilters-gallery"]``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np

import cvfilters as cvf

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = ROOT / "fixtures" / "astronaut.png"
DEFAULT_OUTPUT = ROOT / "docs" / "gallery.png"
TEXT_KEY = "cvfilters-gallery"
LABEL_HEIGHT = 18
GAP = 4
BACKGROUND = (255, 255, 255)


def example_params(flt: cvf.Filter) -> dict[str, Any]:
    """The parameters the gallery passes: each required parameter's example."""
    return {p.name: p.example for p in flt.params if p.required}


def displayable(image: np.ndarray) -> np.ndarray:
    """Any filter result as 8-bit BGR: depth scaled to 8 bits, gray expanded, alpha over white."""
    if image.dtype == np.uint16:
        image = ((image.astype(np.uint32) + 128) // 257).astype(np.uint8)
    elif image.dtype != np.uint8:
        image = np.rint(np.clip(image.astype(np.float32), 0.0, 1.0) * 255).astype(np.uint8)
    if image.ndim == 2 or image.shape[2] == 1:
        return cv2.cvtColor(image.reshape(image.shape[:2]), cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        alpha = image[..., 3:].astype(np.float32) / 255
        return np.rint(image[..., :3] * alpha + 255 * (1 - alpha)).astype(np.uint8)
    return image


def fit(image: np.ndarray, tile: int) -> np.ndarray:
    """Shrink (area) or enlarge (nearest) to fit a tile x tile square, centred on the background."""
    height, width = image.shape[:2]
    factor = tile / max(height, width)
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    interpolation = cv2.INTER_AREA if factor < 1 else cv2.INTER_NEAREST
    resized = cv2.resize(image, size, interpolation=interpolation)
    canvas = np.full((tile, tile, 3), BACKGROUND, np.uint8)
    top, left = (tile - size[1]) // 2, (tile - size[0]) // 2
    canvas[top:top + size[1], left:left + size[0]] = resized
    return canvas


def label(text: str, width: int, color: tuple[int, int, int] = (0, 0, 0)) -> np.ndarray:
    """A white strip with ``text`` centred, the font shrunk until the text fits."""
    strip = np.full((LABEL_HEIGHT, width, 3), BACKGROUND, np.uint8)
    font, scale = cv2.FONT_HERSHEY_SIMPLEX, 0.45
    while True:
        (text_w, text_h), _ = cv2.getTextSize(text, font, scale, 1)
        if text_w <= width - 4 or scale < 0.25:
            break
        scale -= 0.05
    origin = (max(2, (width - text_w) // 2), (LABEL_HEIGHT + text_h) // 2)
    cv2.putText(strip, text, origin, font, scale, color, 1, cv2.LINE_AA)
    return strip


def error_tile(message: str, tile: int) -> np.ndarray:
    canvas = np.full((tile, tile, 3), (200, 200, 255), np.uint8)
    words, lines, line = message.split(), [], ""
    for word in words:
        if len(line) + len(word) + 1 > tile // 7:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    for i, text in enumerate(lines[: tile // 14]):
        cv2.putText(canvas, text, (4, 14 + 13 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 160), 1, cv2.LINE_AA)
    return canvas


def render_tiles(image: np.ndarray, *, tile: int = 160, backend: str = "cpu",
                 names: list[str] | None = None) -> list[tuple[str, np.ndarray, str | None]]:
    """``(name, tile image, error or None)`` for each filter (all registered ones by default)."""
    chosen = [cvf.get_filter(n) for n in names] if names else cvf.filters()
    tiles = []
    with contextlib.chdir(ROOT):  # relative example paths (fixtures/...) resolve from the repository
        for flt in chosen:
            try:
                out = cvf.apply(image, flt, backend=backend, **example_params(flt))
                tiles.append((flt.name, fit(displayable(np.asarray(out)), tile), None))
            except Exception as exc:  # a gallery shows every filter, even a broken one
                message = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
                tiles.append((flt.name, error_tile(message, tile), message))
    return tiles


def build_gallery(image: np.ndarray, *, tile: int = 160, columns: int = 8, backend: str = "cpu",
                  names: list[str] | None = None) -> tuple[np.ndarray, list[str], dict[str, str]]:
    """The grid image, the filter names in grid order and the errors by filter name."""
    tiles = render_tiles(image, tile=tile, backend=backend, names=names)
    cell_w, cell_h = tile + GAP, tile + LABEL_HEIGHT + GAP
    rows = -(-len(tiles) // columns)
    grid = np.full((rows * cell_h + GAP, columns * cell_w + GAP, 3), BACKGROUND, np.uint8)
    for i, (name, picture, error) in enumerate(tiles):
        y, x = GAP + (i // columns) * cell_h, GAP + (i % columns) * cell_w
        grid[y:y + tile, x:x + tile] = picture
        grid[y + tile:y + tile + LABEL_HEIGHT, x:x + tile] = label(name, tile, (0, 0, 200) if error else (0, 0, 0))
    return grid, [name for name, _, _ in tiles], {name: error for name, _, error in tiles if error}


def write_png(path: Path, grid: np.ndarray, names: list[str]) -> None:
    """Write the grid as an optimised PNG with the filter names in a text chunk."""
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text(TEXT_KEY, "\n".join(names))
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    Image.fromarray(cv2.cvtColor(grid, cv2.COLOR_BGR2RGB)).save(temporary, format="PNG", pnginfo=info,
                                                                 optimize=True)
    temporary.replace(path)


def gallery_names(path: str | Path) -> list[str]:
    """The filter names recorded in a gallery PNG, in grid order."""
    from PIL import Image

    with Image.open(path) as picture:
        text = picture.text.get(TEXT_KEY, "")  # type: ignore[attr-defined]
    return [line for line in text.splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, help="PNG to write (docs/gallery.png)")
    parser.add_argument("-i", "--input", type=Path, default=DEFAULT_INPUT, help="source image (fixtures/astronaut.png)")
    parser.add_argument("--tile", type=int, default=160, help="tile side in pixels (160)")
    parser.add_argument("--work", type=int, default=0,
                        help="longer side the filters run at, in pixels (default: twice the tile)")
    parser.add_argument("--columns", type=int, default=8, help="tiles per row (8)")
    parser.add_argument("--backend", default="cpu", help="backend to render with (cpu)")
    parser.add_argument("names", nargs="*", help="only these filters (default: every registered filter)")
    args = parser.parse_args(argv)

    source = cv2.imread(str(args.input), cv2.IMREAD_UNCHANGED)
    if source is None:
        print(f"{args.input}: cannot read the image", file=sys.stderr)
        return 2
    work = args.work or 2 * args.tile
    factor = work / max(source.shape[:2])
    size = (max(1, round(source.shape[1] * factor)), max(1, round(source.shape[0] * factor)))
    source = cv2.resize(source, size, interpolation=cv2.INTER_AREA if factor < 1 else cv2.INTER_CUBIC)

    grid, names, errors = build_gallery(source, tile=args.tile, columns=args.columns, backend=args.backend,
                                        names=args.names or None)
    write_png(args.output, grid, names)
    for name, error in errors.items():
        print(f"{name}: {error}", file=sys.stderr)
    print(f"{args.output}: {len(names)} filters, {grid.shape[1]} x {grid.shape[0]} px")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
