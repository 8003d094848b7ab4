"""Warps: geometric transforms."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..params import Param
from ..registry import register

_FLIP_CODES = {"horizontal": 1, "vertical": 0, "both": -1}


@register(
    category="warp",
    summary="Mirror the image horizontally, vertically or both.",
    params=[Param("axis", "choice", "horizontal", choices=tuple(_FLIP_CODES),
                  help="horizontal mirrors left-right, vertical top-bottom, both rotates by 180 degrees")],
    alpha="all",
)
def flip(ctx: Context, img: Any, *, axis: str) -> Any:
    """Exact mirror (``cv2.flip``); every channel, alpha included, moves with the pixels."""
    return ctx.be.flip(img, _FLIP_CODES[axis])
