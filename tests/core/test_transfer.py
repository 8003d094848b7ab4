"""Transfer functions: the sRGB curve at its thresholds, tabulated curves, and what a run's ``linear`` takes.

References: IEC 61966-2-1's two sRGB segments written out here in float64 numpy, and a
three-sample table (0, 0), (0.5, 0.25), (1, 1) whose every value is worked out by hand:
linear interpolation inside 0..1, and beyond 1 the power law through linear(0.5) = 0.25,
that is ``x ** 2``.
"""

from __future__ import annotations

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.transfer import SRGB, Transfer, resolve_linear, tabulated

# IEC 61966-2-1 thresholds, as float32 values (what a float image holds)
DECODE_KNEE = np.float32(0.04045)
ENCODE_KNEE = np.float32(0.0031308)


def test_srgb_thresholds_belong_to_the_linear_segment() -> None:
    """IEC 61966-2-1 takes C <= 0.04045 (and L <= 0.0031308) on the straight segment.

    The two segments differ there by 7 float32 steps; one float32 division or
    multiplication is within 1 step of the float64 formula, so 2 steps is the tolerance.
    """
    codes = np.array([np.nextafter(DECODE_KNEE, np.float32(0)), DECODE_KNEE], np.float32)
    np.testing.assert_array_max_ulp(SRGB.decode(codes), (codes.astype(np.float64) / 12.92).astype(np.float32), 2)
    light = np.array([np.nextafter(ENCODE_KNEE, np.float32(0)), ENCODE_KNEE], np.float32)
    np.testing.assert_array_max_ulp(SRGB.encode(light), (light.astype(np.float64) * 12.92).astype(np.float32), 2)
    above = np.nextafter(DECODE_KNEE, np.float32(1))
    curve = ((float(above) + 0.055) / 1.055) ** 2.4
    np.testing.assert_allclose(SRGB.decode(np.array([above], np.float32)), [curve], rtol=1e-6)


@pytest.mark.parametrize("curve", [SRGB.decode, SRGB.encode])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_srgb_curves_return_float32(curve: object, dtype: type) -> None:
    out = curve(np.linspace(-1.0, 2.0, 7, dtype=dtype))  # type: ignore[operator]
    assert out.dtype == np.float32


def test_linear_runs_keep_a_float32_image_float32() -> None:
    image = np.linspace(0.0, 1.5, 48, dtype=np.float32).reshape(4, 4, 3)
    for channels in (image, image[..., 0]):
        out = cvf.apply(channels, "resize:scale=1", backend="cpu", linear=True)
        assert out.dtype == np.float32 and out.shape == channels.shape
        np.testing.assert_allclose(out, channels, atol=1e-5)


def square_table() -> Transfer:
    """The hand-worked table, built in each test (one built at import would escape a mutation run's mutants)."""
    return tabulated("square by hand", np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.25, 1.0]))


def test_a_table_is_interpolated_linearly_inside_0_1() -> None:
    table = square_table()
    codes = np.array([0.0, 0.25, 0.5, 0.75, 1.0, -0.25], np.float32)
    decoded = table.decode(codes)
    assert decoded.dtype == np.float32
    np.testing.assert_allclose(decoded, [0.0, 0.125, 0.25, 0.625, 1.0, -0.125], atol=1e-7)
    light = np.array([0.0, 0.125, 0.25, 0.625, 1.0, -0.125], np.float32)
    encoded = table.encode(light)
    assert encoded.dtype == np.float32
    np.testing.assert_allclose(encoded, [0.0, 0.25, 0.5, 0.75, 1.0, -0.25], atol=1e-7)


def test_a_table_continues_beyond_1_as_the_power_law_through_its_middle() -> None:
    """linear(0.5) = 0.25 = 0.5 ** 2: beyond 1 decode is x ** 2 and encode sqrt(x), odd below 0."""
    table = square_table()
    codes = np.array([1.5, 2.0, 3.0, -3.0], np.float32)
    decoded = table.decode(codes)
    assert decoded.dtype == np.float32
    np.testing.assert_allclose(decoded, [2.25, 4.0, 9.0, -9.0], rtol=1e-6)
    light = np.array([1.5, 2.25, 9.0, -9.0], np.float32)
    encoded = table.encode(light)
    assert encoded.dtype == np.float32
    np.testing.assert_allclose(encoded, [np.sqrt(1.5), 1.5, 3.0, -3.0], rtol=1e-6)


def test_a_table_keeps_its_name() -> None:
    assert square_table().name == "square by hand"
    assert tabulated("Display P3", np.array([0.0, 1.0]), np.array([0.0, 1.0])).name == "Display P3"


def test_resolve_linear_takes_a_bool_a_transfer_or_the_default() -> None:
    assert resolve_linear(True) is SRGB and resolve_linear(False) is None
    table = square_table()
    assert resolve_linear(table) is table
    before = bool(cvf.get_defaults()["linear"])
    try:
        cvf.set_defaults(linear=True)
        assert resolve_linear(None) is SRGB
        cvf.set_defaults(linear=False)
        assert resolve_linear(None) is None
    finally:
        cvf.set_defaults(linear=before)


@pytest.mark.parametrize("value", ["yes", 1, Transfer])
def test_resolve_linear_refuses_anything_else_by_name(value: object) -> None:
    with pytest.raises(ValueError) as info:
        resolve_linear(value)  # type: ignore[arg-type]
    assert str(info.value) == f"linear={value!r} must be True, False or a Transfer"
    with pytest.raises(ValueError, match="must be True, False or a Transfer"):
        cvf.apply(np.zeros((4, 4, 3), np.uint8), "gaussian_blur", backend="cpu", linear=value)  # type: ignore[call-overload]
