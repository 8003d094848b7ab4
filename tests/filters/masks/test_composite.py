"""apply_masked (cvfilters.filters.masks.composite): the documented mix and its messages.

Every result is compared with the docstring's formula ``out = filtered * w + image * (1 - w)``
written in numpy, with ``filtered = 1 - image`` (the ``invert`` filter on float32) and ``w``
a mask written out by hand; float32 throughout, so the mix is exact to 1e-6.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters import masks

HARD = np.array([[0, 0, 1, 1, 1, 0],
                 [0, 1, 1, 1, 1, 0],
                 [0, 0, 1, 1, 0, 0],
                 [0, 0, 0, 1, 0, 0]], bool)
SOFT = np.array([[0.0, 0.25, 0.5, 0.75, 1.0, 1.0]] * 4, np.float32)


def image(channels: int = 3) -> np.ndarray:
    shape = (4, 6) if channels == 1 else (4, 6, channels)
    return np.random.default_rng(7).random(shape).astype(np.float32)


def mixed(img: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The documented mix with the inverted image as the filtered one."""
    w = w.astype(np.float32)
    if img.ndim == 3:
        w = w[..., None]
    return np.asarray(w * (1 - img) + (1 - w) * img)


def test_defaults_mix_through_the_hard_mask() -> None:
    """No feather by default (a hard edge stays hard) and the auto backend."""
    img = image()
    out = masks.apply_masked(img, "invert", HARD)
    assert out.dtype == np.float32 and out.shape == img.shape
    np.testing.assert_allclose(out, mixed(img, HARD), atol=1e-6)


@pytest.mark.parametrize("channels", [1, 3])
def test_soft_mask_is_the_weight(channels: int) -> None:
    img = image(channels)
    np.testing.assert_allclose(masks.apply_masked(img, "invert", SOFT), mixed(img, SOFT), atol=1e-6)


def test_invert_filters_outside() -> None:
    img = image()
    out = masks.apply_masked(img, "invert", HARD, invert=True)
    np.testing.assert_allclose(out, mixed(img, ~HARD), atol=1e-6)


@pytest.mark.parametrize("pipeline", [Pipeline.parse("invert"), ["invert"]], ids=["Pipeline", "list"])
def test_pipeline_objects_and_sequences(pipeline: object) -> None:
    img = image()
    np.testing.assert_allclose(masks.apply_masked(img, pipeline, HARD), mixed(img, HARD), atol=1e-6)


def test_shape_text_mask() -> None:
    """``rect:0,0,0.5,1`` is the left half: columns 0..2 of 6."""
    img = image()
    left = np.zeros((4, 6), bool)
    left[:, :3] = True
    np.testing.assert_allclose(masks.apply_masked(img, "invert", "rect:0,0,0.5,1"), mixed(img, left), atol=1e-6)


def test_messages() -> None:
    img = image()
    with pytest.raises(ParameterError, match=r"^apply_masked: feather_method='box' is not one of gaussian, "
                                             r"distance$") as info:
        masks.apply_masked(img, "invert", HARD, feather_method="box")  # type: ignore[arg-type]
    assert (info.value.filter_name, info.value.param) == ("apply_masked", "feather_method")
    with pytest.raises(ParameterError, match=r"^apply_masked: feather=-1 is outside \[0, 1000\]$"):
        masks.apply_masked(img, "invert", HARD, feather=-1)
    message = "apply_masked: mask='ellipse:0.5': ellipse takes 4 numbers (ellipse:cx,cy,rx,ry), not 1"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$") as info:
        masks.apply_masked(img, "invert", "ellipse:0.5")
    assert (info.value.filter_name, info.value.param) == ("apply_masked", "mask")


def test_bgra_mixes_premultiplied_colour_and_alpha() -> None:
    """4 channels: ``w`` mixes colour * alpha and alpha, then colour is divided by the mixed alpha."""
    rng = np.random.default_rng(3)
    img = rng.random((4, 6, 4)).astype(np.float32)
    img[..., 3] = 0.2 + 0.8 * rng.random((4, 6))
    blurred = cvf.apply(img, "gaussian_blur:sigma=2", backend="cpu")  # changes alpha too
    mask = np.ascontiguousarray(SOFT[:, ::-1])  # a mask no other test uses: the weights are cached per mask
    out = masks.apply_masked(img, "gaussian_blur:sigma=2", mask)
    w = mask[..., None]
    alpha = w * blurred[..., 3:] + (1 - w) * img[..., 3:]
    colour = (w * blurred[..., :3] * blurred[..., 3:] + (1 - w) * img[..., :3] * img[..., 3:]) / alpha
    assert out.shape == img.shape and out.dtype == np.float32
    np.testing.assert_allclose(out[..., 3:], alpha, atol=1e-6)
    np.testing.assert_allclose(out[..., :3], np.clip(colour, 0, 1), atol=1e-5)


def test_uint8_mix_rounds() -> None:
    img = np.arange(72, dtype=np.uint8).reshape(4, 6, 3) * 3
    out = masks.apply_masked(img, "invert", SOFT)
    w = SOFT[..., None].astype(np.float64)
    assert out.dtype == np.uint8
    assert np.abs(out - np.rint(w * (255.0 - img) + (1 - w) * img)).max() <= 1


def test_a_pipeline_that_changes_the_spec_is_refused() -> None:
    message = ("masked: filter changes the image from 6x4x3 float32 to 3x2x3 float32; a masked pipeline "
               "must keep size, channels and dtype")
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        masks.apply_masked(image(), "resize:width=3,height=2", HARD)
