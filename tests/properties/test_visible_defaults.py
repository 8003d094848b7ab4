"""Every filter visibly changes a photo at its defaults; the few identities by nature say so.

The rule (issue #17): on ``fixtures/astronaut.png`` or ``fixtures/chelsea.jpg`` (256 px
wide), a filter run with its defaults (and the examples of required parameters) changes
the mean pixel by at least 1% of full scale, or changes the image's size or channels.
Filters that are identities by nature at their defaults declare ``identity`` (shown by
``cvfilters info``) and their examples must show the effect instead. Also here: the
fixes of the effects that looked wrong at their defaults (sepia on gray, hue on gray,
emboss, colour sketch, vignette).
"""

from __future__ import annotations

import warnings
from typing import Any

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters import color as color_module
from tests.conftest import DTYPES, FIXTURES, full_scale, photo, to_dtype

VISIBLE = 0.01  # mean |change| as a fraction of full scale
#: Filters that leave an image unchanged at their defaults by nature (no region, no matrix given).
IDENTITY_BY_NATURE = {"color_matrix", "crop", "pad"}


def _fixture(name: str) -> np.ndarray:
    image = cv2.imread(str(FIXTURES / name))
    return cv2.resize(image, (256, round(256 * image.shape[0] / image.shape[1])), interpolation=cv2.INTER_AREA)


PHOTOS = [_fixture("astronaut.png"), _fixture("chelsea.jpg")]


def required_examples(flt: cvf.Filter) -> dict[str, Any]:
    return {p.name: p.example for p in flt.params if p.required}


def all_examples(flt: cvf.Filter) -> dict[str, Any]:
    return {p.name: p.example for p in flt.params if p.example is not None}


def change(image: np.ndarray, out: np.ndarray) -> float:
    """Mean |out - image| as a fraction of full scale; 1 when the size or channels changed."""
    if out.shape != image.shape:
        return 1.0
    return float(np.abs(out.astype(np.float64) - image).mean() / full_scale(image.dtype))


def largest_change(flt: cvf.Filter, params: dict[str, Any]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return max(change(image, cvf.apply(image, flt, backend="cpu", **params)) for image in PHOTOS)


def test_identity_by_nature_list_is_explicit() -> None:
    assert {f.name for f in cvf.list_filters() if f.identity} == IDENTITY_BY_NATURE
    for name in IDENTITY_BY_NATURE:
        assert "identity" in cvf.get_filter(name).info()


@pytest.mark.parametrize("name", [f.name for f in cvf.list_filters()])
def test_defaults_visibly_change_a_photo(name: str) -> None:
    flt = cvf.get_filter(name)
    if flt.identity:
        assert largest_change(flt, required_examples(flt)) == 0.0, f"{name} is declared an identity at its defaults"
        assert largest_change(flt, all_examples(flt)) >= VISIBLE, f"{name}'s examples must show the effect"
    else:
        assert largest_change(flt, required_examples(flt)) >= VISIBLE, f"{name} does not show at its defaults"


@pytest.mark.parametrize(("name", "identity"), [
    ("hue_shift", {"degrees": 0.0}), ("exposure", {"ev": 0.0}), ("gamma", {"gamma": 1.0}),
    ("saturation", {"amount": 1.0}), ("brightness_contrast", {"brightness": 0.0, "contrast": 1.0}),
    ("levels", {"in_black": 0.0, "in_white": 1.0}), ("tone_curve", {"points": [[0, 0], [1, 1]]}),
    ("sepia", {"intensity": 0.0}), ("vignette", {"intensity": 0.0}),
])
def test_identity_value_stays_reachable(name: str, identity: dict[str, Any]) -> None:
    image = PHOTOS[0]
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu", **identity), image)


# ---------------------------------------------------------------- sepia and hue on gray
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_sepia_tones_gray_into_brown(backend: str, dtype: type) -> None:
    gray = to_dtype(np.tile(np.linspace(0, 255, 64).astype(np.uint8), (8, 1)), dtype)
    out = cvf.apply(gray, "sepia", backend=backend)
    assert out.shape == (8, 64, 3) and out.dtype == gray.dtype
    b, g, r = (out[:, 16:48].reshape(-1, 3).astype(np.float64) / full_scale(dtype)).mean(axis=0).tolist()
    assert r > g + 0.1 > b + 0.2  # brown mid-tones, as ImageMagick's -sepia-tone


def test_sepia_on_gray_in_a_fused_chain_declares_three_channels() -> None:
    gray = photo(12, 16, 1, np.uint8)
    pipe = Pipeline.parse("saturation:amount=1.2 | sepia | hue_shift:degrees=10")
    fused, unfused = pipe(gray, backend="cpu"), Pipeline.parse(pipe.to_spec(), fuse=False)(gray, backend="cpu")
    assert fused.shape == unfused.shape == (12, 16, 3)
    np.testing.assert_allclose(fused.astype(int), unfused.astype(int), atol=1)


def test_hue_and_saturation_on_gray_warn_once_and_return_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(color_module, "_WARNED", set())
    gray = photo(8, 8, 1, np.uint8)
    with pytest.warns(UserWarning, match="hue_shift: a gray"):
        np.testing.assert_array_equal(cvf.apply(gray, "hue_shift", backend="cpu"), gray)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cvf.apply(gray, "hue_shift", backend="cpu")  # once per process
    with pytest.warns(UserWarning, match="saturation: a gray"):
        cvf.apply(gray, "saturation", backend="cpu")


# ---------------------------------------------------------------- emboss, sketch, vignette
def test_emboss_is_a_grey_relief_unless_colour_is_asked_for() -> None:
    image = photo(24, 32, 3, np.uint8)
    grey = cvf.apply(image, "emboss", backend="cpu")
    assert np.array_equal(grey[..., 0], grey[..., 1]) and np.array_equal(grey[..., 1], grey[..., 2])
    colour = cvf.apply(image, "emboss", color=True, backend="cpu")
    assert not np.array_equal(colour[..., 0], colour[..., 2])
    with_alpha = cvf.apply(photo(24, 32, 4, np.uint8), "emboss", backend="cpu")
    assert with_alpha.shape == (24, 32, 4)
    assert np.array_equal(with_alpha[..., 0], with_alpha[..., 2])


def test_colour_sketch_default_is_coloured_pencil_on_white_paper() -> None:
    image = PHOTOS[1]
    drawn = cvf.apply(image, "sketch", mode="color", backend="cpu").astype(np.float64)
    _, pencil = cv2.pencilSketch(image, sigma_s=60.0, sigma_r=0.07, shade_factor=0.02)  # the old, dark brown look
    assert drawn.mean() > pencil.mean() + 60 and drawn.mean() > 170  # light paper
    saturation = drawn.max(axis=2) - drawn.min(axis=2)
    assert saturation.mean() > 10  # the strokes keep the photo's colours
    darker = cvf.apply(image, "sketch", mode="color", strength=3.0, backend="cpu").astype(np.float64)
    assert darker.mean() < drawn.mean() - 5


def test_vignette_sweep_is_visible_across_its_range() -> None:
    image = np.full((60, 80, 3), 200, np.uint8)
    means = [cvf.apply(image, "vignette", intensity=i, backend="cpu").mean() / 200 for i in (0, 0.5, 1, 1.5, 2)]
    assert means[0] == 1.0
    assert all(a - b > 0.08 for a, b in zip(means, means[1:], strict=False))  # each half step darkens 8%+
    corner = cvf.apply(image, "vignette", backend="cpu")[0, 0, 0]
    r2 = (39.5**2 + 29.5**2) / 50.0**2  # the corner pixel's centre, in half-diagonals
    assert abs(int(corner) - 200 * (1 - 0.75 * r2)) <= 1  # about a quarter kept at the corners
