"""Linear light around a run of steps: decode, encode and run_linear with a square-law transfer written here.

The transfer (decode x -> x^2, encode y -> sqrt(y), odd outside 0..1) is this test's own, so every
expected value is a number worked out by hand.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.transfer import Transfer
from cvfilters.registry.light import decode, encode, run_linear

SQUARE = Transfer("square", lambda x: (np.sign(x) * x * x).astype(np.float32),
                  lambda y: (np.sign(y) * np.sqrt(np.abs(y))).astype(np.float32))


def ctx(channels: int, dtype: type = np.uint8) -> Context:
    return Context(get_backend("cpu"), ImageInfo(1, 2, channels, np.dtype(dtype)))


def test_decode_squares_colour_and_scales_alpha() -> None:
    gray = decode(ctx(1), np.array([[51, 255]], np.uint8), SQUARE)
    assert gray.dtype == np.float32 and np.allclose(gray, [[0.04, 1.0]], atol=1e-6)
    bgra = decode(ctx(4), np.array([[[51, 102, 255, 51], [0, 0, 0, 255]]], np.uint8), SQUARE)
    assert bgra.dtype == np.float32
    assert np.allclose(bgra, [[[0.04, 0.16, 1.0, 0.2], [0, 0, 0, 1.0]]], atol=1e-6)  # alpha 51/255, not squared
    wide = decode(ctx(3, np.uint16), np.array([[[65535, 0, 13107]] * 2], np.uint16), SQUARE)
    assert np.allclose(wide, [[[1.0, 0.0, 0.04]] * 2], atol=1e-6)


@pytest.mark.parametrize(("dtype", "top"), [(np.uint8, 255), (np.uint16, 65535)])
def test_encode_roots_rounds_and_saturates(dtype: type, top: int) -> None:
    gray = np.array([[0.25, 4.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN must not reach the integer cast
        out = encode(ctx(1, dtype), gray, np.dtype(dtype), SQUARE)
    assert out.dtype == dtype and out.tolist() == [[round(0.5 * top), top, 0]]
    low = encode(ctx(1, dtype), np.array([[0.0, -0.25, 1e-6]]), np.dtype(dtype), SQUARE)
    assert low.tolist() == [[0, 0, round(0.001 * top)]]


def test_encode_keeps_alpha_linear_and_float32_unscaled() -> None:
    bgra = np.array([[[0.25, 0.0, 1.0, 0.25], [0.04, 0.16, 0.36, 1.0]]], np.float64)
    out = encode(ctx(4, np.float32), bgra, np.dtype(np.float32), SQUARE)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[[0.5, 0.0, 1.0, 0.25], [0.2, 0.4, 0.6, 1.0]]], atol=1e-6)
    as8 = encode(ctx(4), bgra, np.dtype(np.uint8), SQUARE)
    assert as8.tolist() == [[[128, 0, 255, 64], [51, 102, 153, 255]]]


def test_run_linear_hands_the_body_float32_and_returns_the_input_type() -> None:
    seen: list[tuple[np.dtype, np.dtype]] = []

    def body(inner: Context, image: np.ndarray) -> tuple[np.ndarray, ImageInfo]:
        seen.append((inner.info.dtype, image.dtype))
        return image.mean(axis=1, keepdims=True), inner.info.with_(width=1)  # averages light, as a blur would

    out, spec = run_linear(ctx(1), np.array([[0, 255]], np.uint8), SQUARE, body)
    assert seen == [(np.dtype(np.float32), np.dtype(np.float32))]
    assert out.tolist() == [[180]]  # sqrt((0 + 1) / 2) x 255 = 180.3, not the encoded mean 128
    assert spec == ImageInfo(1, 1, 1, np.dtype(np.uint8))
