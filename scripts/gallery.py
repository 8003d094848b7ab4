"""Render every registered filter with its defaults into one labelled grid: docs/gallery.jpg.

Usage::

    python scripts/gallery.py                      # writes docs/gallery.jpg
    python scripts/gallery.py -o out.jpg --tile 200 --columns 6 --backend opencl

Each filter runs on ``fixtures/astronaut.png`` (resized to ``--work`` pixels on its
longer side, default twice the tile) with its default parameters and every declared
parameter ``example`` (required parameters have one; so do the filters that are
identities at their defaults), is shrunk to a ``--tile`` pixel square and labelled with
its name. Tiles are ordered as ``cvfilters list`` orders filters (category, then name).
A filter that fails gets a red tile with the error and the script exits with 1.

The JPEG carries the filter names in grid order in its comment (COM) segment, after a
first line ``cvfilters-gallery``, so a test can check that every registered filter is
shown: :func:`gallery_names` reads them back.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import cv2
import numpy as np

import cvfilters as cvf
from cvfilters.viz.sheets import contact_sheet, fit, to_display

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = ROOT / "fixtures" / "astronaut.png"
DEFAULT_OUTPUT = ROOT / "docs" / "gallery.jpg"
COMMENT_KEY = "cvfilters-gallery"
QUALITY = 80
ERROR_COLOR = (0, 0, 200)


def example_params(flt: cvf.Filter) -> dict[str, Any]:
    """The parameters the gallery passes: every declared ``example`` (those of required parameters, and
    the values that show filters that are identities at their defaults or need a subject, like a key colour)."""
    return {p.name: p.example for p in flt.params if p.example is not None}


def error_tile(message: str, tile: int) -> np.ndarray:
    """A pink tile with ``message`` wrapped in dark red."""
    canvas = np.full((tile, tile, 3), (200, 200, 255), np.uint8)
    lines, line = [], ""
    for word in message.split():
        if line and len(line) + len(word) + 1 > tile // 7:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    for i, text in enumerate(lines[: tile // 14]):
        cv2.putText(canvas, text, (4, 14 + 13 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.35, ERROR_COLOR, 1, cv2.LINE_AA)
    return canvas


def render_tiles(image: np.ndarray, *, tile: int = 160, backend: str = "cpu",
                 names: list[str] | None = None) -> list[tuple[str, np.ndarray, str | None]]:
    """``(name, tile image, error or None)`` for each filter (all registered ones by default)."""
    chosen = [cvf.get_filter(n) for n in names] if names else cvf.list_filters()
    tiles = []
    with contextlib.chdir(ROOT):  # relative example paths (fixtures/...) resolve from the repository
        for flt in chosen:
            try:
                out = cvf.apply(image, flt, backend=backend, **example_params(flt))
                tiles.append((flt.name, fit(to_display(np.asarray(out)), tile, tile), None))
            except Exception as exc:  # a gallery shows every filter, even a broken one
                message = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
                tiles.append((flt.name, error_tile(message, tile), message))
    return tiles


def build_gallery(image: np.ndarray, *, tile: int = 160, columns: int = 8, backend: str = "cpu",
                  names: list[str] | None = None) -> tuple[np.ndarray, list[str], dict[str, str]]:
    """The grid image, the filter names in grid order and the errors by filter name."""
    tiles = render_tiles(image, tile=tile, backend=backend, names=names)
    grid = contact_sheet([picture for _, picture, _ in tiles], [name for name, _, _ in tiles], columns,
                         colors=[ERROR_COLOR if error else (0, 0, 0) for _, _, error in tiles])
    return grid, [name for name, _, _ in tiles], {name: error for name, _, error in tiles if error}


def write_jpeg(path: Path, grid: np.ndarray, names: list[str], quality: int = QUALITY) -> None:
    """Write the grid as a JPEG, atomically, with the filter names in its comment segment."""
    from PIL import Image

    comment = "\n".join([COMMENT_KEY, *names]).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        Image.fromarray(cv2.cvtColor(grid, cv2.COLOR_BGR2RGB)).save(
            temporary, format="JPEG", quality=quality, optimize=True, progressive=True, comment=comment)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def gallery_names(path: str | Path) -> list[str]:
    """The filter names recorded in a gallery JPEG, in grid order (empty if it has none)."""
    from PIL import Image

    with Image.open(path) as picture:
        lines = picture.info.get("comment", b"").decode(errors="replace").splitlines()
    return [line for line in lines[1:] if line] if lines[:1] == [COMMENT_KEY] else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, help="JPEG to write (docs/gallery.jpg)")
    parser.add_argument("-i", "--input", type=Path, default=DEFAULT_INPUT, help="source image (fixtures/astronaut.png)")
    parser.add_argument("--tile", type=int, default=144, help="tile side in pixels (144)")
    parser.add_argument("--work", type=int, default=0,
                        help="longer side the filters run at, in pixels (default: twice the tile)")
    parser.add_argument("--columns", type=int, default=8, help="tiles per row (8)")
    parser.add_argument("--quality", type=int, default=QUALITY, help=f"JPEG quality ({QUALITY})")
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
    write_jpeg(args.output, grid, names, args.quality)
    for name, error in errors.items():
        print(f"{name}: {error}", file=sys.stderr)
    size_kb = args.output.stat().st_size / 1024
    print(f"{args.output}: {len(names)} filters, {grid.shape[1]} x {grid.shape[0]} px, {size_kb:.0f} KiB")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
