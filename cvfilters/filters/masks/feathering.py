"""Feathering a mask's edge: GIMP's Gaussian or OpenCV FeatherBlender's distance ramp, on the host or a device."""

from __future__ import annotations

import math

import cv2
import numpy as np

from cvfilters.backends import Backend
from cvfilters.core.types import FeatherMethod, Image
from cvfilters.filters.masks.sources import MaskSource, make_mask, mask_from_array

FEATHER_METHODS = ("gaussian", "distance")
RADIUS_TO_SIGMA = 3.5  # GIMP: sigma = radius / 3.5 ("picked to visually match the old feather")
MAX_FEATHER = 1000.0
# Feather radii above this need allow_large (CLI --allow-large): a Gaussian of sigma r / 3.5 has
# 2 * ceil(3 sigma) + 1 taps per pass, and the device distance ramp runs ceil(r) erosions.
LARGE_FEATHER = 300.0
_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))


def gaussian_sigma(radius: float) -> float:
    """GIMP's feather: ``sigma = radius / 3.5``."""
    return radius / RADIUS_TO_SIGMA


def gaussian_ksize(sigma: float) -> int:
    """The odd kernel side used for a feather of ``sigma``: ``2 * ceil(3 * sigma) + 1``."""
    return 2 * math.ceil(3 * sigma) + 1


def feather_mask(mask: np.ndarray, radius: float, *, method: FeatherMethod = "gaussian") -> np.ndarray:
    """Soften a mask's edge by ``radius`` pixels (see the module docstring for both methods).

    Parameters
    ----------
    mask : numpy.ndarray
        2-D mask (or any array :func:`mask_from_array` takes).
    radius : float
        Feather radius in pixels; 0 returns the mask (binarised for ``distance``).
    method : {"gaussian", "distance"}
        GIMP-style Gaussian (sigma = radius / 3.5) or FeatherBlender's distance ramp
        ``min(1, distanceTransform / radius)``.

    Returns
    -------
    numpy.ndarray
        float32 (height, width) in 0..1.
    """
    if method not in FEATHER_METHODS:
        raise ValueError(f"method must be one of {', '.join(FEATHER_METHODS)}, not {method!r}")
    if not math.isfinite(radius) or radius < 0:
        raise ValueError(f"radius must be a finite number >= 0, not {radius!r}")
    values = mask_from_array(mask)
    if method == "gaussian":
        if radius == 0:
            return values
        sigma = gaussian_sigma(radius)
        k = gaussian_ksize(sigma)
        return cv2.GaussianBlur(values, (k, k), sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)
    binary = (values > 0.5).astype(np.uint8)
    if radius == 0:
        return binary.astype(np.float32)
    distance = cv2.distanceTransform(binary, cv2.DIST_L1, 3)
    return np.minimum(distance * np.float32(1.0 / radius), np.float32(1.0)).astype(np.float32)


def feather_plane(be: Backend, plane: Image, radius: float, method: FeatherMethod) -> Image:
    """:func:`feather_mask` on the device: a float32 one-channel native image of ``be``.

    ``gaussian`` is the backend's Gaussian. ``distance`` uses ``cv2.distanceTransform``
    for host arrays and, on a device, the identity ``min(d, n) = sum_{i<n} erode^i(B)``
    (``B`` the binary mask, erosions by the 3x3 cross with the image border counting as
    inside): ``n = ceil(radius)`` device erosions give the same L1 ramp without a download.
    """
    if method == "gaussian":
        if radius == 0:
            return plane
        sigma = gaussian_sigma(radius)
        k = gaussian_ksize(sigma)
        return be.gaussian(plane, (k, k), sigma, cv2.BORDER_REPLICATE)
    binary = be.threshold(plane, 0.5, 1.0, cv2.THRESH_BINARY)
    if radius == 0:
        return binary
    if isinstance(binary, np.ndarray):
        return feather_mask(binary, radius, method="distance")
    current = be.convert(binary, np.uint8)
    total: Image = binary
    for _ in range(math.ceil(radius) - 1):
        current = be.morphology(current, cv2.MORPH_ERODE, _CROSS, 1, cv2.BORDER_CONSTANT)
        total = be.add_weighted(total, 1.0, be.convert(current, np.float32), 1.0)
    return be.threshold(be.convert(total, np.float32, 1.0 / radius), 1.0, 1.0, cv2.THRESH_TRUNC)


def weight_map(source: MaskSource, width: int, height: int, *, feather: float = 0.0,
               method: FeatherMethod = "gaussian", invert: bool = False) -> np.ndarray:
    """A mask at ``(width, height)``, inverted if asked, then feathered by ``feather`` pixels."""
    mask = make_mask(source, width, height, invert=invert)
    return feather_mask(mask, feather, method=method) if feather > 0 else mask


