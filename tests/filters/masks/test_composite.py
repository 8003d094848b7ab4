"""apply_masked (cvfilters.filters.masks.composite): the documented mix and its messages.

Every result is compared with the docstring's formula ``out = filtered * w + image * (1 - w)``
written in numpy, with ``filtered = 1 - image`` (the ``invert`` filter on float32) and ``w``
a mask written out by hand; float32 throughout, so the mix is exact to 1e-6.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

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
    return w * (1 - img) + (1 - w) * img


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
