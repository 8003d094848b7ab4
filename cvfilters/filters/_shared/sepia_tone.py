"""ImageMagick 6's ``-sepia-tone``, tabulated: the toned colour of each intensity step.

Every step of ``-sepia-tone`` (toning, ``-normalize``, ``-contrast``) depends on a pixel's
intensity alone, so the whole effect is a table of :data:`STEPS` intensities; the image's
only contribution is the normalize range, read from the histogram of its steps.
"""

from __future__ import annotations

import numpy as np

from cvfilters.filters._shared.histograms import percentile_level

REC709_BGR = np.array([0.072186, 0.715158, 0.212656])
"""ImageMagick's intensity: Rec. 709 luma of the encoded values, in BGR order."""
NORMALIZE_LIMITS = (0.0015, 0.9995)
"""The quantiles of the toned image's luma that ``-normalize`` takes to 0 and 1."""
STEPS = 65536
"""Intensity steps of the table (16-bit precision)."""


def toned(intensity: np.ndarray, strength: float) -> np.ndarray:
    """ImageMagick 6's toning of intensities 0..1: (..., 3) BGR, before ``-normalize``."""
    red = np.clip(intensity + 1.0 - strength, 0.0, 1.0)
    green = np.maximum(np.clip(intensity + 1.0 - 7.0 * strength / 6.0, 0.0, 1.0), strength / 7.0)
    blue = np.maximum(np.clip(intensity - strength / 6.0, 0.0, 1.0), strength / 7.0)
    return np.stack([blue, green, red], axis=-1)


def normalize_range(counts: np.ndarray, strength: float) -> tuple[float, float]:
    """``-normalize``'s range: the toned luma at the :data:`NORMALIZE_LIMITS` quantiles of an image
    whose intensity steps have the histogram ``counts`` (toning keeps the order of intensities)."""
    levels = np.array([percentile_level(counts, limit) for limit in NORMALIZE_LIMITS]) / (STEPS - 1)
    low, high = toned(levels, strength) @ REC709_BGR
    return float(low), float(high)


def table(strength: float, low: float, high: float) -> np.ndarray:
    """``-sepia-tone`` of each intensity step 0..1 (:data:`STEPS` x 3, BGR float64 0..1).

    With ``I`` the Rec. 709 luma and ``t = strength``: ``R = I + 1 - t``, ``G = I + 1 - 7t/6``,
    ``B = I - t/6`` (clipped to 0..1; G and B at least ``t/7``); then ``-normalize`` (``low``
    and ``high``, the 0.15 % and 99.95 % quantiles of the toned image's luma, become 0 and 1
    for every channel) and ``-contrast`` (HSB brightness ``V`` moved to
    ``V + (0.5 (sin(pi (V - 0.5)) + 1) - V) / 2``, hue and saturation kept).
    """
    colours = toned(np.linspace(0.0, 1.0, STEPS), strength)
    if high > low:
        colours = np.clip((colours - low) / (high - low), 0.0, 1.0)
    value = colours.max(axis=-1)
    raised = value + 0.5 * (0.5 * (np.sin(np.pi * (value - 0.5)) + 1.0) - value)
    gain = np.divide(raised, value, out=np.zeros_like(value), where=value > 0)
    out: np.ndarray = np.clip(colours * gain[..., None], 0.0, 1.0)
    return out
