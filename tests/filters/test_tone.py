"""Tone filters (mirror of cvfilters/filters/tone.py): what tests/filters/test_color.py leaves out.

References are independent: scipy's ``PchipInterpolator`` for the tone curve (float64, to
1e-12), the documented formulas in numpy (float64 on the stored float32 values), and the
declarations as ``cvfilters info`` shows them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.interpolate import PchipInterpolator

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.filters.color import point_op_of


def test_channel_param_is_declared_as_the_help_says() -> None:
    # channel_param runs at import (levels, tone_curve); called here, checked against `cvfilters info levels`
    from cvfilters.filters.tone import channel_param

    assert channel_param().describe() == {
        "name": "channel", "type": "choice", "default": "all", "choices": ["all", "b", "g", "r"], "unit": "",
        "required": False,
        "help": "apply to all colour channels or to one (b, g or r); on gray images see `info levels`"}


@pytest.mark.parametrize("points", [
    [[0, 0], [0.4, 0.7], [1, 1]],                 # three points: the inner slope is a harmonic mean
    [[0, 0], [0.8, 0.4], [1, 0]],                 # end slope beyond 3 x the secant: held at 3 x
    [[0, 0], [0.8, 0.4], [1, 0.2]],               # end slope 1.7, between 3 and 4 x the secant 0.5
    [[0, 0.1], [0.3, 0.5], [0.6, 0.5], [1, 1]],   # a flat run between rising ones
    [[0, 0.6], [0.2, 0.6], [0.5, 0.1], [1, 0.1]],  # flat, falling, flat
], ids=["three", "end-held", "end-between", "flat-run", "flat-falling"])
def test_pchip_matches_scipy_without_warnings(points: list[list[float]]) -> None:
    from cvfilters.filters.tone import pchip

    xy = np.asarray(points, dtype=np.float64)
    v = np.concatenate([np.linspace(0, 1, 1001), xy[:, 0]])
    make_table = cvf.get_filter("tone_curve").table
    assert make_table is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a flat run divides by a zero secant: no warning may leak
        curve = pchip(points)
        out = curve(v)
        table = make_table({"points": points, "channel": "all"}, ImageInfo(1, 1, 1, np.dtype(np.uint8)))
    assert table is not None
    expected = PchipInterpolator(xy[:, 0], xy[:, 1])(v)
    np.testing.assert_allclose(out, expected, atol=1e-12)
    reference = np.rint(np.clip(PchipInterpolator(xy[:, 0], xy[:, 1])(np.arange(256) / 255), 0, 1) * 255)
    assert np.abs(table.astype(int) - reference).max() <= 1


def test_brightness_contrast_float_curve_is_the_formula() -> None:
    """``point_op_of(name).evaluate`` (float32 on the host) of ``out = in * contrast + brightness / 255``."""
    values = np.linspace(0, 1, 101, dtype=np.float32).reshape(1, -1)
    op = point_op_of("brightness_contrast")
    assert op is not None
    for brightness, contrast in ((-25.5, 1.2), (40.0, 0.5), (0.0, 2.0)):
        out = op.evaluate(values, {"brightness": brightness, "contrast": contrast})
        expected = np.clip(values.astype(np.float64) * contrast + brightness / 255, 0, 1)
        np.testing.assert_allclose(out, expected, atol=1e-6)


@pytest.mark.parametrize("levels", [6, 10, 100])
def test_posterize_float32_follows_the_formula_on_the_stored_values(levels: int) -> None:
    """``min(floor(in * levels), levels - 1) / (levels - 1)`` on each float32 value as stored: the
    float32 nearest 0.7 is 0.699999988, in bin 6 of 10 (float32 arithmetic rounds 6.99999988 up to 7)."""
    edges = np.array([k / levels for k in range(levels + 1)], dtype=np.float32)
    values = np.concatenate([edges, np.nextafter(edges, np.float32(0)), np.nextafter(edges, np.float32(1))])
    values = np.clip(values, 0, 1).astype(np.float32).reshape(1, -1)
    out = cvf.apply(values, "posterize", levels=levels, backend="cpu")
    exact = values.astype(np.float64) * levels
    expected = np.minimum(np.floor(exact), levels - 1) / (levels - 1)
    np.testing.assert_allclose(out, expected, atol=1e-7)
    if levels == 10:
        assert out[0, 7] == pytest.approx(6 / 9)  # float32(0.7)


@pytest.mark.parametrize(("black", "white"), [(0.5, 0.5), (0.625, 0.25)])
def test_levels_refuses_a_white_point_not_above_the_black_point(black: float, white: float) -> None:
    with pytest.raises(cvf.ParameterError) as caught:
        cvf.get_filter("levels")(np.zeros((2, 2), np.uint8), in_black=black, in_white=white)
    assert str(caught.value) == f"levels: in_white={white:g} must be above in_black={black:g}"
