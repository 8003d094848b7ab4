"""The pixel facts of cvfilters.core.pixels, against hand-checked values and numpy formulas."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.core.pixels import (
    from_unit_float,
    is_gray,
    split_color,
    to_float32_same_units,
    to_unit_float,
    unpremultiply,
)


def _ctx(dtype: type) -> Any:
    """A context on the cpu backend for an image of ``dtype`` (what the helpers read of one)."""
    top = float(np.iinfo(dtype).max) if np.dtype(dtype).kind == "u" else 1.0
    return SimpleNamespace(backend=get_backend("cpu"), info=SimpleNamespace(dtype=np.dtype(dtype), max_value=top))


@pytest.mark.parametrize("channels", [3, 4])
def test_is_gray_needs_every_colour_channel_equal(channels: int) -> None:
    gray = np.repeat(np.arange(12, dtype=np.uint8).reshape(3, 4, 1), channels, axis=2)
    assert is_gray(gray)
    for differs in range(3):  # B, G or R alone differing in one pixel
        image = gray.copy()
        image[1, 2, differs] += 1
        assert not is_gray(image), differs
    if channels == 4:
        gray[..., 3] = 7  # alpha is not a colour channel
        assert is_gray(gray)


def test_is_gray_is_false_for_other_layouts() -> None:
    assert not is_gray(np.zeros((2, 2), np.uint8))
    assert not is_gray(np.zeros((2, 2, 1), np.uint8))
    assert not is_gray(np.zeros((2, 2, 2), np.uint8))
    assert not is_gray(np.zeros((2, 2, 5), np.uint8))


@pytest.mark.parametrize(("color", "channels", "bgra", "expected"), [
    ((0.25,), 3, False, ((0.25, 0.25, 0.25), 1.0)),  # one value: every colour channel, opaque
    ((0.25,), 3, True, ((0.25, 0.25, 0.25), 0.25)),  # ... and alpha too where the colour is BGRA
    ((0.5, 0.2), 3, True, ((0.5, 0.5, 0.5), 0.2)),  # gray and alpha
    ((0.1, 0.2, 0.3), 3, True, ((0.3, 0.2, 0.1), 1.0)),  # RGB in, BGR out, opaque
    ((0.1, 0.2, 0.3, 0.4), 3, False, ((0.3, 0.2, 0.1), 0.4)),  # RGBA
    ((1.0, 0.0, 0.0), 1, False, ((0.299,), 1.0)),  # one channel: BT.601 luma of pure red
])
def test_split_color_as_documented(color: tuple[float, ...], channels: int, bgra: bool,
                                   expected: tuple[tuple[float, ...], float]) -> None:
    values, alpha = split_color(color, channels, bgra=bgra)
    assert values == pytest.approx(expected[0], abs=1e-12) and alpha == pytest.approx(expected[1], abs=1e-12)


@pytest.mark.parametrize(("dtype", "top"), [(np.uint8, 255), (np.uint16, 65535), (np.float32, 1.0)])
def test_unit_float_round_trip_scales_by_full_scale(dtype: type, top: float) -> None:
    image = (np.array([[0, 1, 2], [3, 4, 5]]) * top / 5).astype(dtype)
    unit = to_unit_float(_ctx(dtype), image)
    assert unit.dtype == np.float32
    np.testing.assert_allclose(unit, image.astype(np.float64) / top, rtol=1e-6)
    back = from_unit_float(_ctx(dtype), unit)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, image)


def test_from_unit_float_rounds_and_saturates_integers() -> None:
    unit = np.array([[-0.5, 0.5 / 255 * 1.2, 100 / 255, 2.0]], np.float32)
    np.testing.assert_array_equal(from_unit_float(_ctx(np.uint8), unit), [[0, 1, 100, 255]])


def test_to_float32_same_units_keeps_the_values() -> None:
    image = np.array([[0, 7, 255]], np.uint8)
    out = to_float32_same_units(_ctx(np.uint8), image)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[0.0, 7.0, 255.0]])
    floats = np.array([[0.25, 2.0]], np.float32)  # float32 is returned as it is
    assert to_float32_same_units(_ctx(np.float32), floats) is floats


def test_unpremultiply_clips_alpha_and_colour_to_one_and_divides_zero_alpha_to_zero() -> None:
    """colour / alpha per pixel, with alpha and the result clipped to 0..1 (a filter may overshoot both)."""
    be = get_backend("cpu")
    color = np.array([[[0.3, 0.3, 0.3], [0.6, 0.6, 0.6], [0.8, 0.8, 0.8], [0.0, 0.0, 0.0]]], np.float32)
    alpha = np.array([[0.5, 1.5, 0.5, 0.0]], np.float32)
    out = unpremultiply(be, color, alpha, SimpleNamespace(dtype=np.dtype(np.float32), max_value=1.0))
    # 0.3 / 0.5; 0.6 / min(1.5, 1); 0.8 / 0.5 = 1.6 clipped to 1; 0 / 0 is 0, not NaN
    np.testing.assert_allclose(out[..., 0], [[0.6, 0.6, 1.0, 0.0]], atol=1e-6)
    np.testing.assert_allclose(out[..., 3], [[0.5, 1.0, 0.5, 0.0]], atol=1e-6)
