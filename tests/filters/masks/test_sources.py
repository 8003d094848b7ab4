"""mask_from_array called directly: the array forms a mask takes, against numpy written out.

Values are fractions of the dtype's full scale (255, 65535, 1.0 for floats), clipped to 0..1;
colour masks give their BT.601 luma ``0.114 B + 0.587 G + 0.299 R``, BGRA their alpha unless
it is opaque everywhere. A mask of another size is stretched: shrinking both sides averages
the area each output pixel covers, anything else interpolates linearly between pixel centres
(both written out below as matrices applied to the rows and the columns). float32 results
within 1e-6, resized ones within 1e-5.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from cvfilters.filters.masks.sources import mask_from_array

LUMA = np.array([0.114, 0.587, 0.299])  # BT.601 in BGR order
RNG = np.random.default_rng(26)
SOFT = RNG.random((8, 12)).astype(np.float32)


def assert_mask(actual: np.ndarray, expected: np.ndarray, atol: float = 1e-6) -> None:
    assert actual.dtype == np.float32 and actual.shape == expected.shape, (actual.dtype, actual.shape)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=atol)


def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """Output pixel i averages input [i s, (i + 1) s), s = n_in / n_out, each pixel by its overlap."""
    scale = n_in / n_out
    weights = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo, hi = i * scale, (i + 1) * scale
        for j in range(n_in):
            weights[i, j] = max(0.0, min(hi, j + 1) - max(lo, j)) / scale
    return weights


def linear_weights(n_in: int, n_out: int) -> np.ndarray:
    """Output pixel i at input ``(i + 0.5) s - 0.5`` (pixel centres), clamped to the edge pixels."""
    scale = n_in / n_out
    weights = np.zeros((n_out, n_in))
    for i in range(n_out):
        x = min(max((i + 0.5) * scale - 0.5, 0.0), n_in - 1.0)
        j = int(np.floor(x))
        frac = x - j
        weights[i, j] += 1 - frac
        weights[i, min(j + 1, n_in - 1)] += frac
    return weights


def test_one_channel_arrays_are_fractions_of_full_scale() -> None:
    assert_mask(mask_from_array(np.array([[True, False, True]])), np.array([[1.0, 0.0, 1.0]]))
    plane = np.array([[0, 51, 255], [102, 204, 1]], np.uint8)
    assert_mask(mask_from_array(plane[:, :, None]), plane / 255)  # H x W x 1
    assert_mask(mask_from_array(plane.astype(np.uint16) * 257), plane / 255)
    assert_mask(mask_from_array(np.array([[200]], np.uint8)), np.array([[200 / 255]]))  # one pixel


def test_float_values_are_clipped_to_the_unit_range() -> None:
    values = np.array([[-0.5, 0.25, 1.5], [1.0, 0.0, 2.0]], np.float32)
    assert_mask(mask_from_array(values), np.clip(values, 0, 1))


def test_an_object_array_of_numbers_is_taken_as_fractions() -> None:
    values = np.array([[Fraction(1, 2), 1], [0, Fraction(1, 4)]], dtype=object)
    assert_mask(mask_from_array(values), np.array([[0.5, 1.0], [0.0, 0.25]]))


def test_colour_masks_give_luma_or_alpha() -> None:
    bgr = (RNG.random((5, 6, 3)) * 255).astype(np.uint8)
    luma = bgr.astype(np.float64) @ LUMA / 255
    assert_mask(mask_from_array(bgr), luma)
    alpha = (RNG.random((5, 6)) * 255).astype(np.uint8)
    assert_mask(mask_from_array(np.dstack([bgr, alpha])), alpha / 255)
    assert_mask(mask_from_array(np.dstack([bgr, np.full((5, 6), 255, np.uint8)])), luma)  # opaque: luma


@pytest.mark.parametrize("shape", [(4, 5, 2), (5,), (2, 3, 4, 3), (0, 5), (3, 0, 3), (4, 5, 5)])
def test_other_shapes_are_refused_naming_the_shape(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=rf"^a mask must be H x W, H x W x 3 or H x W x 4, not shape {shape}$"
                       .replace("(", r"\(").replace(")", r"\)")):
        mask_from_array(np.zeros(shape, np.uint8))


def test_the_same_size_is_kept() -> None:
    assert_mask(mask_from_array(SOFT, (12, 8)), SOFT)


@pytest.mark.parametrize("size", [(5, 3), (12, 3), (6, 8)])
def test_shrinking_both_sides_averages_areas(size: tuple[int, int]) -> None:
    expected = area_weights(8, size[1]) @ SOFT.astype(np.float64) @ area_weights(12, size[0]).T
    assert_mask(mask_from_array(SOFT, size), expected, atol=1e-5)


@pytest.mark.parametrize("size", [(17, 11), (16, 6), (5, 11), (12, 12)])
def test_growing_a_side_interpolates_linearly(size: tuple[int, int]) -> None:
    expected = linear_weights(8, size[1]) @ SOFT.astype(np.float64) @ linear_weights(12, size[0]).T
    assert_mask(mask_from_array(SOFT, size), expected, atol=1e-5)
