"""Alpha policies against a premultiplied reference written here (scipy for the filter itself)."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

import cvfilters as cvf

SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], float)


def bgra_step() -> np.ndarray:
    """Float32 BGRA: opaque colour on the left, half-transparent in the middle, transparent on the right."""
    y, x = np.mgrid[0:12, 0:18]
    colour = np.dstack([0.2 + 0.03 * x, 0.5 + 0.02 * y, 0.9 - 0.04 * x]).clip(0, 1)
    alpha = np.where(x < 6, 1.0, np.where(x < 12, 0.5, 0.0))
    return np.dstack([colour, alpha]).astype(np.float32)


def test_premultiply_policy_clamps_alpha_and_colour_as_documented() -> None:
    """``a' = clip(K * a)``, ``c' = clip(clip(K * (c a)) / a')`` where a' > 0: a sharpening kernel pushes
    alpha above 1 next to the transparent side and below 0 next to the opaque one."""
    image = bgra_step()
    out = cvf.apply(image, "convolve", kernel=SHARPEN.tolist(), backend="cpu").astype(np.float64)
    alpha = image[..., 3].astype(np.float64)
    premultiplied = [ndimage.correlate(image[..., c] * alpha, SHARPEN, mode="mirror") for c in range(3)]
    raw_alpha = ndimage.correlate(alpha, SHARPEN, mode="mirror")
    assert raw_alpha.max() > 1.2 and raw_alpha.min() < -0.2  # the clamps have work to do
    expected_alpha = raw_alpha.clip(0, 1)
    np.testing.assert_allclose(out[..., 3], expected_alpha, atol=1e-6)
    visible = expected_alpha > 0.05
    for c in range(3):
        expected = (premultiplied[c].clip(0, 1) / np.where(visible, expected_alpha, 1)).clip(0, 1)
        np.testing.assert_allclose(out[..., c][visible], expected[visible], atol=1e-5)


def test_fully_transparent_pixels_stay_finite() -> None:
    """Where alpha is 0 the colour is 0/0: the policy's epsilon keeps it a number (black)."""
    image = bgra_step()
    out = cvf.apply(image, "gaussian_blur", sigma=1.0, backend="cpu")
    assert np.isfinite(out).all()
    transparent = out[..., 3] == 0
    assert transparent.any() and np.all(out[..., :3][transparent] == 0)


def test_straight_colour_is_clamped_where_sharpening_outruns_alpha() -> None:
    """Black opaque pixels next to white ones at alpha 0.6: by hand, at the first white column
    the kernel gives c a = 5 * 0.6 - 3 * 0.6 - 0 = 1.2 (clipped to 1) and a = 3 - 1.8 - 1 = 0.2,
    so the straight colour 1 / 0.2 = 5 is clamped to 1 (full white, alpha 0.2)."""
    image = np.zeros((5, 8, 4), np.float32)
    image[:, :4, 3] = 1.0  # black, opaque
    image[:, 4:, :3], image[:, 4:, 3] = 1.0, 0.6  # white at alpha 0.6
    out = cvf.apply(image, "convolve", kernel=SHARPEN.tolist(), backend="cpu")
    np.testing.assert_allclose(out[2, 4], [1.0, 1.0, 1.0, 0.2], atol=1e-5)


def test_the_all_policy_keeps_every_channel_exact() -> None:
    """A geometric filter (crop, policy ``all``) must give numpy's slice of all four channels, colour kept
    under alpha 0 and no rounding through premultiplication: catches ``all`` treated as ``premultiply``."""
    rng = np.random.default_rng(26)
    image = rng.integers(0, 256, (9, 11, 4), dtype=np.uint8)
    image[:, :3, 3] = 0  # transparent pixels that still carry colour
    image[:, 3:6, 3] = 77
    out = cvf.apply(image, "crop", x=1, y=2, width=7, height=5, backend="cpu")
    np.testing.assert_array_equal(out, image[2:7, 1:8])


def test_the_passthrough_policy_hands_the_filter_three_channels() -> None:
    """A colour filter (quantize, policy ``passthrough``) on BGRA sees a 3-channel image described as one:
    an image of exactly two colours comes back unchanged with k=2 and its alpha untouched. Catches the
    colour given to the filter still described as four channels (or none)."""
    image = np.zeros((6, 8, 4), np.uint8)
    image[:, :4, :3], image[:, 4:, :3] = (10, 200, 30), (250, 40, 120)
    image[..., 3] = np.arange(8, dtype=np.uint8) * 30
    out = cvf.apply(image, "quantize", k=2, backend="cpu")
    np.testing.assert_array_equal(out, image)
