"""Every registered filter gives the same result on each device backend as on cpu.

Tolerances come from ``PARITY_TOLERANCE`` in conftest (fraction of full scale per
dtype). 4-channel results are compared on visible colour (colour x alpha), since
colour under near-zero alpha is arbitrary after un-premultiplying.
"""

from __future__ import annotations

import numpy as np
import pytest

import cvfilters as cvf

from .conftest import PARITY_TOLERANCE, photo, visible
from .test_registry_contract import NAMES, example_params

CASES = [(np.uint8, 3), (np.uint16, 1), (np.float32, 4)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("dtype", "channels"), CASES, ids=lambda c: str(getattr(c, "__name__", c)))
def test_matches_cpu(device_backend: str, name: str, dtype: type, channels: int) -> None:
    params = example_params(cvf.get_filter(name))
    image = photo(40, 56, channels, dtype)
    expected = cvf.apply(image, name, backend="cpu", **params)
    actual = cvf.apply(image, name, backend=device_backend, **params)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    difference = np.abs(visible(actual) - visible(expected)).max()
    assert difference <= PARITY_TOLERANCE[np.dtype(dtype)] + 1e-9, f"max difference {difference}"
