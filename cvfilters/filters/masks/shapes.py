"""Shape specs (``rect:``, ``ellipse:``, ``circle:``, ``polygon:``): parsing and rendering at a size.

See :mod:`cvfilters.filters.masks` for the language and the geometry convention.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvfilters.engine.sampling import center_coords

SHAPE_ARITY: dict[str, int | None] = {"rect": 4, "ellipse": 4, "circle": 3, "polygon": None}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(px)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Shape:
    """A parsed shape text: ``kind`` and ``(number, in_pixels)`` values."""

    kind: str
    values: tuple[tuple[float, bool], ...]

    def to_text(self) -> str:
        """The canonical spec string (parsed back to an equal Shape)."""
        return f"{self.kind}:" + ",".join(_format_number(v) + ("px" if px else "") for v, px in self.values)

    def _resolve(self, width: int, height: int) -> list[float]:
        sizes = {"rect": (width, height, width, height), "ellipse": (width, height, width, height),
                 "circle": (width, height, min(width, height))}.get(self.kind)
        if sizes is None:  # polygon: x, y alternate
            sizes = tuple(width if i % 2 == 0 else height for i in range(len(self.values)))
        return [v if px else v * size for (v, px), size in zip(self.values, sizes, strict=True)]

    def render(self, width: int, height: int) -> np.ndarray:
        """The (height, width) float32 0/1 mask: 1 where a pixel centre is inside."""
        values = self._resolve(width, height)
        x, y = center_coords(width, height)
        if self.kind == "rect":
            x0, y0, w, h = values
            inside = (x >= x0) & (x < x0 + w) & (y >= y0) & (y < y0 + h)
        elif self.kind in ("ellipse", "circle"):
            cx, cy, rx, ry = values if self.kind == "ellipse" else (*values, values[2])
            if rx <= 0 or ry <= 0:
                return np.zeros((height, width), np.float32)
            inside = ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1.0
        else:
            return _polygon(np.asarray(values, np.float64).reshape(-1, 2), width, height)
        return inside.astype(np.float32)


def _polygon(points: np.ndarray, width: int, height: int) -> np.ndarray:
    """Even-odd scanline fill: 1 where a pixel centre is inside the polygon."""
    mask = np.zeros((height, width), np.float32)
    x0, y0 = points[:, 0], points[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    centres = np.arange(width, dtype=np.float64) + 0.5
    for row in range(height):
        yc = row + 0.5
        crossing = (y0 <= yc) != (y1 <= yc)  # edges that cross this row's centre line (half-open)
        if not crossing.any():
            continue
        xa, ya, xb, yb = x0[crossing], y0[crossing], x1[crossing], y1[crossing]
        xs = np.sort(xa + (yc - ya) * (xb - xa) / (yb - ya))
        mask[row] = np.searchsorted(xs, centres, side="right") % 2
    return mask


def is_shape_text(text: Any) -> bool:
    """True for a string that names a shape (``rect:``, ``ellipse:``, ``circle:``, ``polygon:``)."""
    if not isinstance(text, str) or ":" not in text:
        return False
    return text.split(":", 1)[0].strip().lower() in SHAPE_ARITY


def parse_shape(text: str) -> Shape:
    """Parse a shape text such as ``ellipse:0.5,0.4,0.2,60px``.

    Raises
    ------
    ValueError
        Naming what is wrong and the allowed form.
    """
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in SHAPE_ARITY:
        raise ValueError(f"unknown shape {kind!r} (use rect, ellipse, circle or polygon)")
    items = rest.split(",")
    values = []
    for item in items:
        match = _NUMBER.match(item)
        if not match:
            raise ValueError(f"{kind}: {item.strip()!r} is not a number (fraction, or pixels with 'px')")
        number = float(match.group(1))
        if not math.isfinite(number):
            raise ValueError(f"{kind}: {item.strip()!r} is not finite")
        values.append((number, bool(match.group(2))))
    arity = SHAPE_ARITY[kind]
    forms = {"rect": "rect:x,y,w,h", "ellipse": "ellipse:cx,cy,rx,ry", "circle": "circle:cx,cy,r",
             "polygon": "polygon:x1,y1,x2,y2,x3,y3,..."}
    if arity is not None and len(values) != arity:
        raise ValueError(f"{kind} takes {arity} numbers ({forms[kind]}), not {len(values)}")
    if arity is None and (len(values) < 6 or len(values) % 2):
        raise ValueError(f"polygon takes 3 or more x,y pairs ({forms[kind]}), not {len(values)} numbers")
    sizes = {"rect": (2, 3), "ellipse": (2, 3), "circle": (2,)}.get(kind, ())
    if any(values[i][0] < 0 for i in sizes):
        raise ValueError(f"{kind}: sizes must not be negative ({forms[kind]})")
    return Shape(kind, tuple(values))


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


