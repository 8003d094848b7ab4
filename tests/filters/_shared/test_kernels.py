"""The kernel builders called directly, against kernels written out here or taken from cv2.

Motion-blur lines are drawn by hand where the weights are simple (a box, a diagonal of three
cells) and otherwise by another method: each cell's distance to a densely sampled segment
(20001 points), ``max(0, 1 - d)``, trimmed to the smallest block centred on the anchor that
holds every non-zero cell, then normalised (within 1e-5: the sampling's error). Gaussians come
from ``cv2.getGaussianKernel``, Sobel taps from ``cv2.getDerivKernels`` (within 1e-12).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from cvfilters.filters._shared import kernels
from cvfilters.filters._shared.kernels import _trim, emboss_kernel, gaussian_kernel, line_kernel

ROOT2 = math.sqrt(2.0)


def sampled_line(length: float, angle: float) -> np.ndarray:
    """The documented line kernel built from distances to 20001 points along the segment."""
    half = max(length - 1.0, 0.0) / 2.0
    reach = math.ceil(half) + 2
    t = np.linspace(-half, half, 20001)
    px, py = t * math.cos(math.radians(angle)), -t * math.sin(math.radians(angle))  # rows grow downwards
    cells = np.zeros((2 * reach + 1, 2 * reach + 1))
    for row in range(2 * reach + 1):
        for col in range(2 * reach + 1):
            cells[row, col] = max(0.0, 1.0 - np.hypot(px - (col - reach), py - (row - reach)).min())
    cells[cells < 1e-9] = 0.0  # cos(90 deg) is 6e-17, not 0
    rows, cols = np.nonzero(cells)
    rr, cr = np.abs(rows - reach).max(), np.abs(cols - reach).max()
    block = cells[reach - rr : reach + rr + 1, reach - cr : reach + cr + 1]
    normalised: np.ndarray = block / block.sum()
    return normalised


def assert_kernel(actual: np.ndarray, expected: np.ndarray, atol: float = 1e-12) -> None:
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=atol)


# ----------------------------------------------------------------------------- line_kernel
@pytest.mark.parametrize(("length", "angle", "expected"), [
    (5.0, 0.0, [[0.2] * 5]),
    (5.0, 180.0, [[0.2] * 5]),
    (3.0, 90.0, [[1 / 3], [1 / 3], [1 / 3]]),
    (3.0, -90.0, [[1 / 3], [1 / 3], [1 / 3]]),
    (4.0, 0.0, [[0.125, 0.25, 0.25, 0.25, 0.125]]),  # ends half a pixel past the outer centres
    (2.0, 90.0, [[0.25], [0.5], [0.25]]),
    (1.0, 33.0, [[1.0]]),  # a point
    (0.5, 0.0, [[1.0]]),  # shorter than one pixel: still a point
])
def test_axis_lines_and_points_written_out(length: float, angle: float, expected: list[list[float]]) -> None:
    assert_kernel(line_kernel(length, angle), np.array(expected))


def test_a_diagonal_of_three_cells_written_out() -> None:
    # 45 degrees counter-clockwise on screen: up and to the right. The end cells lie sqrt(2) - 1
    # from the segment's ends, their four neighbours on the axes sqrt(2) / 2 from it.
    end, side = 2.0 - ROOT2, 1.0 - ROOT2 / 2
    up_right = np.array([[0.0, side, end], [side, 1.0, side], [end, side, 0.0]]) / (9.0 - 4.0 * ROOT2)
    assert_kernel(line_kernel(3.0, 45.0), up_right)
    assert_kernel(line_kernel(3.0, -45.0), up_right[:, ::-1])
    assert_kernel(line_kernel(3.0, 135.0), up_right[:, ::-1])


@pytest.mark.parametrize(("length", "angle"), [(12.5, 30.0), (11.0, -60.0), (7.0, 45.0), (16.0, 100.0),
                                               (6.0, 135.0), (2.5, 10.0), (9.0, 180.0), (5.0, 90.0)])
def test_line_kernel_matches_a_sampled_segment(length: float, angle: float) -> None:
    kernel = line_kernel(length, angle)
    assert_kernel(kernel, sampled_line(length, angle), atol=1e-5)
    assert kernel.sum() == pytest.approx(1.0, abs=1e-12) and kernel.min() >= 0.0
    np.testing.assert_array_equal(kernel, kernel[::-1, ::-1])  # symmetric about the anchor


# ----------------------------------------------------------------------------- _trim
def test_trim_drops_zero_outer_pairs_only() -> None:
    block = np.zeros((7, 5))
    block[2:5, 2] = 1.0
    assert_kernel(_trim(block), np.ones((3, 1)))
    assert_kernel(_trim(block.T), np.ones((1, 3)))
    # one zero outer row (or column) without its opposite stays: the centre must not move
    lopsided = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    assert_kernel(_trim(lopsided), lopsided)
    assert_kernel(_trim(lopsided.T), lopsided.T)
    # nothing to keep: the centre cell remains
    assert_kernel(_trim(np.zeros((5, 3))), np.zeros((1, 1)))


# ----------------------------------------------------------------------------- other builders
@pytest.mark.parametrize(("sigma", "ksize"), [(1.0, 3), (1.5, 7), (0.8, 5), (4.0, 25)])
def test_gaussian_kernel_is_cv2s_outer_product(sigma: float, ksize: int) -> None:
    taps = cv2.getGaussianKernel(ksize, sigma, cv2.CV_64F)
    assert_kernel(gaussian_kernel(sigma, ksize), taps @ taps.T)


def test_emboss_kernels_written_out() -> None:
    half = 1.0 / ROOT2
    assert_kernel(emboss_kernel(135.0), np.array([[-1.0, -0.5, 0.0], [-0.5, 0.0, 0.5], [0.0, 0.5, 1.0]]))
    # light from +x: right-facing slopes (brighter to the left) turn bright
    assert_kernel(emboss_kernel(0.0), np.array([[half, 0.0, -half]] * 3))
    # light from above (90 degrees counter-clockwise from +x, rows growing downwards)
    assert_kernel(emboss_kernel(90.0), np.array([[-half] * 3, [0.0] * 3, [half] * 3]))


@pytest.mark.parametrize(("dx", "dy", "ksize"), [(1, 0, 3), (0, 1, 5), (2, 1, 5), (1, 0, 1), (0, 2, 1)])
def test_derivative_kernel_is_cv2s(dx: int, dy: int, ksize: int) -> None:
    kx, ky = cv2.getDerivKernels(dx, dy, ksize, ktype=cv2.CV_64F)
    assert_kernel(kernels.derivative_kernel(dx, dy, ksize), ky @ kx.T)


def test_named_kernels_and_laplacians() -> None:
    assert_kernel(kernels.kernel("prewitt_y"), np.array([[-1.0, -1.0, -1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
    assert_kernel(kernels.laplacian_kernel(1), np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]))
    assert_kernel(kernels.laplacian_kernel(3), np.array([[2.0, 0.0, 2.0], [0.0, -8.0, 0.0], [2.0, 0.0, 2.0]]))
    assert_kernel(kernels.binomial(5), np.array([1.0, 4.0, 6.0, 4.0, 1.0]))
