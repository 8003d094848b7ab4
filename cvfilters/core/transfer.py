"""Transfer functions: encoded (gamma) values to linear light and back.

Filters that mix light (blurs, resizing, sharpening, warps) give physically right
results on linear values: a blurred black and white checkerboard is 50 % light, which
sRGB encodes as 188, not 128. :class:`Transfer` maps float32 values between the two;
:data:`SRGB` is the IEC 61966-2-1 curve, and :func:`tabulated` builds one from samples
of any monotonic curve (a colour profile's, sampled through LittleCMS by
:mod:`cvfilters.io.colour`).

Values outside 0..1 (float HDR images) are kept: both directions are odd functions
(``f(-x) = -f(x)``, the extended-range convention of scRGB and Apple's extended sRGB),
and above 1 a curve continues as the power law through its value at 0.5 and 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cvfilters.core.defaults import get_defaults

Curve = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Transfer:
    """A transfer function: ``decode`` (encoded -> linear) and ``encode`` (linear -> encoded) on float32 arrays."""

    name: str
    decode: Curve
    encode: Curve


def _srgb_decode(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    linear = np.where(a <= 0.04045, a / 12.92, ((a + 0.055) / 1.055) ** 2.4)
    return (np.sign(x) * linear).astype(np.float32)


def _srgb_encode(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    encoded = np.where(a <= 0.0031308, a * 12.92, 1.055 * a ** (1 / 2.4) - 0.055)
    return (np.sign(x) * encoded).astype(np.float32)


SRGB = Transfer("sRGB", _srgb_decode, _srgb_encode)
"""The sRGB transfer function (IEC 61966-2-1), extended to values outside 0..1 as an odd function."""


def tabulated(name: str, encoded: np.ndarray, linear: np.ndarray) -> Transfer:
    """A transfer from samples of a monotonic curve through (0, 0) and (1, 1).

    Parameters
    ----------
    name : str
        What the curve is (the profile's description).
    encoded, linear : numpy.ndarray
        Increasing samples on 0..1: ``linear[i]`` is the light of ``encoded[i]``.
        Between samples the curve is interpolated linearly; beyond 1 it continues as
        the power law ``x ** g`` with ``g = log(linear(0.5)) / log(0.5)``.
    """
    enc = np.asarray(encoded, np.float64)
    lin = np.asarray(linear, np.float64)
    gamma = float(np.log(np.interp(0.5, enc, lin)) / np.log(0.5))

    def decode(x: np.ndarray) -> np.ndarray:
        a = np.abs(x).astype(np.float64)
        out = np.where(a <= 1.0, np.interp(np.minimum(a, 1.0), enc, lin), a ** gamma)
        return (np.sign(x) * out).astype(np.float32)

    def encode(x: np.ndarray) -> np.ndarray:
        a = np.abs(x).astype(np.float64)
        out = np.where(a <= 1.0, np.interp(np.minimum(a, 1.0), lin, enc), a ** (1 / gamma))
        return (np.sign(x) * out).astype(np.float32)

    return Transfer(name, decode, encode)


def resolve_linear(value: bool | Transfer | None) -> Transfer | None:
    """A run's linear-light request: a :class:`Transfer`, ``True`` (:data:`SRGB`), ``False``
    (none), or None (the process default, ``cvfilters.set_defaults(linear=...)``)."""
    if value is None:
        value = bool(get_defaults()["linear"])
    if isinstance(value, Transfer):
        return value
    if not isinstance(value, bool):
        raise ValueError(f"linear={value!r} must be True, False or a Transfer")
    return SRGB if value else None
