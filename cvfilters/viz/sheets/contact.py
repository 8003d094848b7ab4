"""Contact sheets: equally sized 8-bit tiles in a labelled grid."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from cvfilters.viz.sheets.display import WHITE

LABEL_HEIGHT = 18
GAP = 4


def label_strip(text: str, width: int, color: tuple[int, int, int] = (0, 0, 0),
                height: int = LABEL_HEIGHT) -> np.ndarray:
    """A white 8-bit BGR strip with ``text`` centred, the font shrunk (to a limit) until it fits.

    Parameters
    ----------
    text : str
        ASCII text (OpenCV's Hershey fonts have no other glyphs).
    width, height : int
        Strip size in pixels.
    color : tuple of int
        BGR text colour.
    """
    strip = np.full((height, width, 3), WHITE, np.uint8)
    font, scale = cv2.FONT_HERSHEY_SIMPLEX, 0.45 * height / LABEL_HEIGHT
    (text_w, text_h), _ = cv2.getTextSize(text, font, scale, 1)
    while text_w > width - 4 and scale > 0.3:
        scale -= 0.05
        (text_w, text_h), _ = cv2.getTextSize(text, font, scale, 1)
    origin = (max(2, (width - text_w) // 2), (height + text_h) // 2)
    cv2.putText(strip, text, origin, font, scale, color, 1, cv2.LINE_AA)
    return strip


def contact_sheet(tiles: Sequence[np.ndarray], labels: Sequence[str], columns: int, *, title: str | None = None,
                  colors: Sequence[tuple[int, int, int]] | None = None) -> np.ndarray:
    """Lay tiles out in a grid, each with a label strip below it, row by row.

    Parameters
    ----------
    tiles : sequence of numpy.ndarray
        8-bit BGR images of one size (see :func:`to_display` and :func:`fit`).
    labels : sequence of str
        One per tile.
    columns : int
        Tiles per row.
    title : str, optional
        A strip across the top.
    colors : sequence of BGR tuples, optional
        Label colours (default black).

    Returns
    -------
    numpy.ndarray
        The 8-bit BGR sheet on white, ``GAP`` pixels between and around the cells.
    """
    if not tiles or len(tiles) != len(labels):
        raise ValueError(f"a contact sheet needs tiles and as many labels ({len(tiles)} tiles, {len(labels)} labels)")
    tile_h, tile_w = tiles[0].shape[:2]
    columns = max(1, min(columns, len(tiles)))
    cell_w, cell_h = tile_w + GAP, tile_h + LABEL_HEIGHT + GAP
    top = LABEL_HEIGHT + GAP if title else 0
    rows = -(-len(tiles) // columns)
    sheet = np.full((top + rows * cell_h + GAP, columns * cell_w + GAP, 3), WHITE, np.uint8)
    if title:
        sheet[GAP:GAP + LABEL_HEIGHT, GAP:-GAP] = label_strip(title, sheet.shape[1] - 2 * GAP)
    for i, (tile, text) in enumerate(zip(tiles, labels, strict=True)):
        y, x = top + GAP + (i // columns) * cell_h, GAP + (i % columns) * cell_w
        sheet[y:y + tile_h, x:x + tile_w] = tile
        color = colors[i] if colors else (0, 0, 0)
        sheet[y + tile_h:y + tile_h + LABEL_HEIGHT, x:x + tile_w] = label_strip(text, tile_w, color)
    return sheet


