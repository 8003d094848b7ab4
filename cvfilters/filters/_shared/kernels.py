"""The kernel library: built-in kernels as data (:data:`KERNELS`) and builders of parametric families.

Correlation kernels, applied as written with the anchor at the centre; they run through
:func:`cvfilters.filters._shared.correlation.correlate`.
"""

from __future__ import annotations

import math

import numpy as np

KernelData = tuple[tuple[float, ...], ...]

# Correlation kernels (applied as written, anchor at the centre), rows top to bottom.
KERNELS: dict[str, KernelData] = {
    "identity": ((1.0,),),
    # x derivatives (right minus left); the y kernels are their transposes.
    "prewitt_x": ((-1.0, 0.0, 1.0), (-1.0, 0.0, 1.0), (-1.0, 0.0, 1.0)),
    "scharr_x": ((-3.0, 0.0, 3.0), (-10.0, 0.0, 10.0), (-3.0, 0.0, 3.0)),
    # 4-neighbour Laplacian: cv2.Laplacian's ksize=1 aperture.
    "laplacian": ((0.0, 1.0, 0.0), (1.0, -4.0, 1.0), (0.0, 1.0, 0.0)),
    # Relief lit from the top-left (EMBOSS_LIGHT degrees): GPUImage's emboss kernel
    # [[-2,-1,0],[-1,1,1],[0,1,2]] without its identity centre, halved.
    "emboss": ((-1.0, -0.5, 0.0), (-0.5, 0.0, 0.5), (0.0, 0.5, 1.0)),
}
EMBOSS_LIGHT = 135.0  # direction of the light in KERNELS["emboss"], degrees counter-clockwise from +x


def kernel(name: str) -> np.ndarray:
    """A built-in kernel from :data:`KERNELS` as a float64 array (``_y`` names give the transpose)."""
    if name.endswith("_y"):
        return kernel(name[:-2] + "_x").T
    return np.asarray(KERNELS[name], dtype=np.float64)


def binomial(n: int) -> np.ndarray:
    """The ``n`` binomial coefficients ``[1, n-1, ..., 1]`` (Sobel's smoothing taps)."""
    taps = np.ones(1)
    for _ in range(n - 1):
        taps = np.convolve(taps, [1.0, 1.0])
    return taps


def derivative_taps(order: int, ksize: int) -> np.ndarray:
    """1-D Sobel taps of a derivative ``order`` for aperture ``ksize`` (``cv2.getDerivKernels``).

    Binomial smoothing of length ``ksize - order`` differenced ``order`` times with
    ``[-1, 1]``; ``ksize=1`` means no smoothing: ``[1]``, ``[-1, 0, 1]``, ``[1, -2, 1]``.
    """
    if ksize == 1:
        if order == 0:
            return np.ones(1)
        ksize = 3
    taps = binomial(ksize - order)
    for _ in range(order):
        taps = np.convolve(taps, [-1.0, 1.0])
    return taps


def derivative_kernel(dx: int, dy: int, ksize: int) -> np.ndarray:
    """The 2-D Sobel kernel of ``cv2.Sobel(dx, dy, ksize)`` as a correlation kernel."""
    return np.outer(derivative_taps(dy, ksize), derivative_taps(dx, ksize))


def laplacian_kernel(ksize: int) -> np.ndarray:
    """``cv2.Laplacian``'s kernel: the 4-neighbour one for ksize=1, else d2/dx2 + d2/dy2 of Sobel."""
    if ksize == 1:
        return kernel("laplacian")
    return derivative_kernel(2, 0, ksize) + derivative_kernel(0, 2, ksize)


def gaussian_kernel(sigma: float, ksize: int) -> np.ndarray:
    """A normalised 2-D Gaussian (outer product of 1-D taps ``exp(-x^2 / 2 sigma^2)``)."""
    x = np.arange(ksize, dtype=np.float64) - ksize // 2
    taps = np.exp(-0.5 * (x / sigma) ** 2)
    taps /= taps.sum()
    return np.outer(taps, taps)


def emboss_kernel(angle: float) -> np.ndarray:
    """``KERNELS["emboss"]`` rotated so the light comes from ``angle`` degrees.

    The table's kernel is linear in the neighbour offset, ``k(dx, dy) = gx dx + gy dy``
    (a derivative across the light direction); its gradient ``(gx, gy)`` is turned by
    ``angle - EMBOSS_LIGHT`` (counter-clockwise as seen on screen, rows growing
    downwards). The result is ``k(dx, dy) = (dy sin(angle) - dx cos(angle)) / sqrt(2)``:
    slopes that face the light turn bright.
    """
    base = kernel("emboss")
    dy, dx = np.mgrid[-1:2, -1:2].astype(np.float64)
    gx, gy = (base * dx).sum() / (dx * dx).sum(), (base * dy).sum() / (dy * dy).sum()
    phi = math.radians(angle - EMBOSS_LIGHT)
    turned_x = gx * math.cos(phi) + gy * math.sin(phi)
    turned_y = gy * math.cos(phi) - gx * math.sin(phi)
    return turned_x * dx + turned_y * dy


def line_kernel(length: float, angle: float) -> np.ndarray:
    """A normalised anti-aliased line through the kernel's centre (motion blur).

    The segment has ``length - 1`` px between its end points (so a horizontal line of odd
    integer length covers exactly ``length`` pixel centres) and points ``angle`` degrees
    counter-clockwise from +x. Each cell weighs ``max(0, 1 - d)``, ``d`` the distance of
    its centre from the segment, then the kernel is divided by its sum; all-zero outer
    rows and columns are trimmed.
    """
    half = max(length - 1.0, 0.0) / 2.0
    reach = math.ceil(half) + 1
    y, x = np.mgrid[-reach : reach + 1, -reach : reach + 1].astype(np.float64)
    theta = math.radians(angle)
    ux, uy = math.cos(theta), -math.sin(theta)  # image rows grow downwards
    along = np.clip(x * ux + y * uy, -half, half)
    distance = np.hypot(x - along * ux, y - along * uy)
    weights = np.clip(1.0 - distance, 0.0, None)
    weights[np.abs(weights) < 1e-12] = 0.0
    return _trim(weights / weights.sum())


def _trim(matrix: np.ndarray) -> np.ndarray:
    """Drop all-zero outer rows and columns in pairs, keeping the centre where it is."""
    rows, cols = matrix.shape
    while rows > 1 and not matrix[0].any() and not matrix[-1].any():
        matrix, rows = matrix[1:-1], rows - 2
    while cols > 1 and not matrix[:, 0].any() and not matrix[:, -1].any():
        matrix, cols = matrix[:, 1:-1], cols - 2
    return matrix


