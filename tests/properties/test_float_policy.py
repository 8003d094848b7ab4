"""One float policy for values outside 0..1, the same for every filter (issue #27).

A filter declared ``unbounded`` (every ``linear`` one: it mixes light, as blurs, warps and
sharpening do; and linear or order-statistic operators: derivatives, morphology, medians)
keeps float values outside 0..1, as scene-linear HDR data needs; every other filter is
defined on 0..1, says so in ``info`` and gets its float input clamped to 0..1. Checked over
the whole registry: a clamping filter gives on an out-of-range image what it gives on the
clamped image (numpy's clip is the reference); a keeping filter gives something else, and a
linear one still shows light above 1 on a flat image at 2.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from tests.properties.test_visible_defaults import required_examples

RNG = np.random.default_rng(27)
HDR = (RNG.random((48, 64, 3)) * 3.0 - 0.5).astype(np.float32)  # -0.5 .. 2.5
NAMES = [flt.name for flt in cvf.list_filters()]


def _run(flt: cvf.Filter, image: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cvf.apply(image, flt, backend="cpu", **params)


@pytest.mark.parametrize("name", NAMES)
def test_every_filter_follows_the_float_policy(name: str) -> None:
    flt = cvf.get_filter(name)
    params = required_examples(flt)
    info = flt.info()
    assert info["linear"] is flt.linear
    assert flt.unbounded or not flt.linear, f"{name} mixes light but clamps it"
    if flt.unbounded:
        assert info["float_range"].startswith("kept")
        if flt.linear:
            out = _run(flt, np.full((48, 64, 3), 2.0, np.float32), params)
            assert out.max() > 1.5, f"{name} lost light above 1 (max {out.max()})"
        out, clamped = _run(flt, HDR, params), _run(flt, np.clip(HDR, 0.0, 1.0), params)
        assert not np.allclose(out, clamped, atol=1e-3), f"{name} clamps although declared unbounded"
    else:
        assert info["float_range"].startswith("clamped")
        out = _run(flt, HDR, params)
        reference = _run(flt, np.clip(HDR, 0.0, 1.0), params)
        np.testing.assert_allclose(out, reference, atol=1e-5)


def test_invert_and_exposure_clamp_and_blur_keeps() -> None:
    """The three cases the issue found inconsistent: invert of 3.0, blur of 3.0, exposure of -0.5."""
    flat = np.full((8, 8, 3), 3.0, np.float32)
    assert np.allclose(cvf.apply(flat, "invert"), 0.0)  # 1 - clip(3) = 0, not -2
    assert np.allclose(cvf.apply(flat, "gaussian_blur"), 3.0, atol=1e-5)
    dark = np.full((8, 8, 3), -0.5, np.float32)
    assert np.allclose(cvf.apply(dark, "gaussian_blur"), -0.5, atol=1e-5)
    assert cvf.apply(dark, "exposure:ev=1").min() >= 0.0
