"""Feathering and vignettes: soft, position-dependent masks."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import Context
from ..params import Param
from ..registry import register


def vignette_factor(width: int, height: int, center: tuple[float, float], radius: float,
                    intensity: float) -> np.ndarray:
    """The (height, width) float32 factor of :func:`vignette`, evaluated at pixel centres."""
    half_diagonal = 0.5 * np.hypot(width, height)
    x = (np.arange(width, dtype=np.float32) + 0.5 - center[0] * width) / (radius * half_diagonal)
    y = (np.arange(height, dtype=np.float32) + 0.5 - center[1] * height) / (radius * half_diagonal)
    r2 = y[:, None] ** 2 + x[None, :] ** 2
    return np.clip(1.0 - 0.5 * intensity * r2, 0.0, 1.0).astype(np.float32)


@register(
    category="feather",
    summary="Darken towards the corners with a radial falloff.",
    params=[
        Param("center", "point", (0.5, 0.5), min=0.0, max=1.0, unit="fraction of width, height",
              help="centre of the vignette; [0.5,0.5] is the image centre"),
        Param("radius", "float", 1.0, min=0.01, max=10.0, unit="fraction of half-diagonal",
              help="distance at which intensity=2 reaches black; 1 = the corners"),
        Param("intensity", "float", 1.0, min=0.0, max=2.0, help="strength; 0 leaves the image unchanged"),
    ],
)
def vignette(ctx: Context, img: Any, *, center: tuple[float, float], radius: float, intensity: float) -> Any:
    """``out = in * clip(1 - intensity / 2 * (r / R)^2, 0, 1)``.

    ``r`` is the distance of a pixel centre from ``center``, ``R = radius * half
    diagonal``. With the defaults the corners keep half their brightness. The factor is
    built once per size and parameters and kept on the device; alpha is kept.
    """
    spec = ctx.spec
    key = ("vignette", spec.size, spec.channels, center, radius, intensity)

    def mask() -> np.ndarray:
        factor = vignette_factor(spec.width, spec.height, center, radius, intensity)
        return factor if spec.channels == 1 else np.repeat(factor[:, :, None], spec.channels, axis=2)

    return ctx.be.multiply(img, ctx.be.cached(key, mask), dtype=spec.dtype)
