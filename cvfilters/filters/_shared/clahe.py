"""OpenCV's CLAHE in two passes: tile histograms counted piece by piece, then any piece interpolated.

``cv2.createCLAHE(clip, (n, n)).apply`` needs the whole plane; a tiled run has pieces of
it. These functions reproduce it bit for bit (``tests/filters/test_clahe_tiles.py``
compares them with OpenCV) from pieces:

- the grid (:func:`grid`): ``n x n`` tiles of ``ceil``-ish size. When the plane's height
  and width are not both multiples of ``n``, OpenCV pads the bottom by ``n - h % n``
  rows and the right by ``n - w % n`` columns (each even when that side divides:
  a whole extra tile's worth), reflecting the plane (``BORDER_REFLECT_101``), and the
  padded pixels count in the last tiles' histograms;
- :func:`tile_counts`: a piece's contribution to every tile's histogram, its pixels
  counted wherever they land in the padded plane (reflected ones included);
- :func:`tables`: each tile's histogram clipped at ``max(int(clip * P / L), 1)``, the
  excess spread evenly and the residual at a stride, then accumulated into a table
  scaled by ``float32((L - 1) / P)`` and rounded (``P`` tile pixels, ``L`` levels);
- :func:`interpolate`: a piece of the plane at its place, each pixel blending the
  tables of its four nearest tiles with OpenCV's float32 weights.
"""

from __future__ import annotations

import numpy as np


def grid(height: int, width: int, tiles: int) -> tuple[int, int, int, int]:
    """``(tile_height, tile_width, pad_bottom, pad_right)`` as OpenCV's CLAHE sizes its tiles."""
    if height % tiles == 0 and width % tiles == 0:
        return height // tiles, width // tiles, 0, 0
    bottom, right = tiles - height % tiles, tiles - width % tiles
    return (height + bottom) // tiles, (width + right) // tiles, bottom, right


def _source(padded: int, size: int) -> np.ndarray:
    """For each index of a padded axis, the index of the plane it shows (reflect 101 beyond the end)."""
    index = np.arange(padded)
    return np.where(index < size, index, 2 * (size - 1) - index)


def tile_counts(piece: np.ndarray, y0: int, x0: int, height: int, width: int, tiles: int,
                levels: int) -> np.ndarray:
    """The (tiles * tiles, levels) int64 histograms of ``piece`` (at ``y0, x0`` in a ``height x width`` plane)."""
    tile_h, tile_w, bottom, right = grid(height, width, tiles)
    src_rows, src_cols = _source(height + bottom, height), _source(width + right, width)
    rows = np.flatnonzero((src_rows >= y0) & (src_rows < y0 + piece.shape[0]))
    cols = np.flatnonzero((src_cols >= x0) & (src_cols < x0 + piece.shape[1]))
    counts = np.zeros((tiles * tiles, levels), np.int64)
    for ty in range(tiles):
        in_rows = rows[(rows >= ty * tile_h) & (rows < (ty + 1) * tile_h)]
        if not len(in_rows):
            continue
        for tx in range(tiles):
            in_cols = cols[(cols >= tx * tile_w) & (cols < (tx + 1) * tile_w)]
            if len(in_cols):
                values = piece[np.ix_(src_rows[in_rows] - y0, src_cols[in_cols] - x0)]
                counts[ty * tiles + tx] += np.bincount(values.ravel(), minlength=levels)
    return counts


def tables(counts: np.ndarray, clip_limit: float, height: int, width: int, tiles: int,
           dtype: np.dtype) -> np.ndarray:
    """Each tile's equalisation table (tiles * tiles, levels) from its histogram, clipped as OpenCV clips."""
    tile_h, tile_w, _, _ = grid(height, width, tiles)
    pixels, levels = tile_h * tile_w, counts.shape[1]
    scale = np.float32(levels - 1) / np.float32(pixels)
    top = np.iinfo(dtype).max
    out = np.empty(counts.shape, dtype)
    for index, hist in enumerate(counts):
        hist = hist.copy()
        if clip_limit > 0:
            limit = max(int(clip_limit * pixels / levels), 1)
            excess = int(np.maximum(hist - limit, 0).sum())
            hist = np.minimum(hist, limit) + excess // levels
            residual = excess % levels
            if residual:
                hist[np.arange(0, levels, max(levels // residual, 1))[:residual]] += 1
        out[index] = np.clip(np.rint(np.cumsum(hist).astype(np.float32) * scale), 0, top)
    return out


def interpolate(piece: np.ndarray, y0: int, x0: int, height: int, width: int, tiles: int,
                table: np.ndarray) -> np.ndarray:
    """``piece`` (at ``y0, x0`` in a ``height x width`` plane) through the bilinear blend of its tiles' tables."""
    tile_h, tile_w, _, _ = grid(height, width, tiles)

    def axis(start: int, count: int, side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        position = np.arange(start, start + count, dtype=np.float32) * (np.float32(1.0) / np.float32(side)) \
            - np.float32(0.5)
        first = np.floor(position).astype(np.int64)
        weight = (position - first.astype(np.float32)).astype(np.float32)
        return np.maximum(first, 0), np.minimum(first + 1, tiles - 1), weight, np.float32(1.0) - weight

    ty1, ty2, ya, ya1 = axis(y0, piece.shape[0], tile_h)
    tx1, tx2, xa, xa1 = axis(x0, piece.shape[1], tile_w)
    values = table.astype(np.float32)
    level = piece.astype(np.intp)

    def at(ty: np.ndarray, tx: np.ndarray) -> np.ndarray:
        return values[ty[:, None] * tiles + tx[None, :], level]

    blend = (at(ty1, tx1) * xa1 + at(ty1, tx2) * xa) * ya1[:, None] + \
        (at(ty2, tx1) * xa1 + at(ty2, tx2) * xa) * ya[:, None]
    return np.clip(np.rint(blend), 0, np.iinfo(piece.dtype).max).astype(piece.dtype)
