"""int16 through every registered filter: the documented mapping onto float32 0..1 and back.

The mapping is checked against its formula; each filter must keep the int16 dtype, give the
shape it gives for float32, and pass alpha through exactly where it declares ``passthrough`` (the round trip of
every int16 value through float32 is exact, checked below).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.depths import float32_to_int16, int16_to_float32
from tests.conftest import CHANNELS, photo

FILTERS = cvf.list_filters()


def example_params(flt: cvf.Filter) -> dict[str, Any]:
    return {p.name: p.example for p in flt.params if p.required}


def int16_photo(channels: int) -> np.ndarray:
    return (photo(24, 32, channels, np.uint16).astype(np.int32) - 32768).astype(np.int16)


def test_mapping_is_the_documented_formula_and_round_trips_every_value() -> None:
    every = np.arange(-32768, 32768, dtype=np.int16)
    unit = int16_to_float32(every)
    np.testing.assert_allclose(unit, (every.astype(np.float64) + 32768) / 65535, rtol=0, atol=1e-7)
    assert unit[0] == 0.0 and unit[-1] == 1.0
    np.testing.assert_array_equal(float32_to_int16(unit), every)
    np.testing.assert_array_equal(float32_to_int16(np.array([-0.5, 1.5, np.nan], np.float32)), [-32768, 32767, -32768])


def test_invert_of_int16_is_minus_one_minus_v() -> None:
    image = np.array([[-32768, -1, 0, 1234, 32767]], np.int16)
    np.testing.assert_array_equal(cvf.apply(image, "invert"), -1 - image.astype(np.int32))


@pytest.mark.parametrize("name", [f.name for f in FILTERS])
@pytest.mark.parametrize("channels", CHANNELS)
def test_every_filter_keeps_int16_and_alpha(name: str, channels: int) -> None:
    flt = cvf.get_filter(name)
    image = int16_photo(channels)
    out = cvf.apply(image, name, backend="cpu", **example_params(flt))
    assert out.dtype == np.int16
    assert out.shape == cvf.apply(int16_to_float32(image), name, backend="cpu", **example_params(flt)).shape
    if channels == 4 and flt.alpha == "passthrough":
        np.testing.assert_array_equal(out[..., 3], image[..., 3])
