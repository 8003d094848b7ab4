"""Every registered filter gives the same result on each device backend as on cpu.

Tolerances come from ``PARITY_TOLERANCE`` in conftest (fraction of full scale per
dtype), widened per primitive where OpenCV's own device tests allow more
(``DEVICE_TOLERANCE``). 4-channel results are compared on visible colour (colour x
alpha), since colour under near-zero alpha is arbitrary after un-premultiplying.
Each filter runs at parameters where it changes the image (``PARITY_PARAMS`` for
filters whose defaults are the identity; checked on cpu by
``test_parity_parameters_change_the_image``): an identity passes any parity test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from tests.conftest import DEVICE_TOLERANCE, PARITY_TOLERANCE, photo, visible
from tests.properties.test_registry_contract import NAMES, example_params

CASES = [(np.uint8, 3), (np.uint16, 1), (np.float32, 4)]

PARITY_PARAMS: dict[str, dict[str, Any]] = {
    "brightness_contrast": {"brightness": 0.1, "contrast": 1.3},
    "color_matrix": {"matrix": [[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.0, 0.3, 0.8]]},
    "exposure": {"ev": 0.7},
    "gamma": {"gamma": 1.8},
    "hue_shift": {"degrees": 40.0},
    "levels": {"in_black": 0.1, "in_white": 0.85, "gamma": 1.3, "out_black": 0.05, "out_white": 0.95},
    "saturation": {"amount": 1.6},
    "tone_curve": {"points": [[0, 0], [0.3, 0.2], [0.7, 0.85], [1, 1]]},
    "crop": {"x": 5, "y": 3, "width": 30, "height": 20},
    "pad": {"top": 3, "bottom": 2, "left": 4, "right": 1, "border": "reflect101"},
}
# Colour-only filters: on a gray image they have nothing to change.
GRAY_IDENTITIES = {"grayscale", "hue_shift", "saturation", "vibrance", "white_balance"}


def parity_params(name: str) -> dict[str, Any]:
    return {**example_params(cvf.get_filter(name)), **PARITY_PARAMS.get(name, {})}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("dtype", "channels"), CASES, ids=lambda c: str(getattr(c, "__name__", c)))
def test_parity_parameters_change_the_image(name: str, dtype: type, channels: int) -> None:
    image = photo(40, 56, channels, dtype)
    out = cvf.apply(image, name, backend="cpu", **parity_params(name))
    if channels == 1 and name in GRAY_IDENTITIES:
        pytest.skip(f"{name} has no colour to change on a gray image")
    assert out.shape != image.shape or not np.array_equal(out, image), \
        f"{name} is an identity at {parity_params(name)}: add non-identity values to PARITY_PARAMS"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("dtype", "channels"), CASES, ids=lambda c: str(getattr(c, "__name__", c)))
def test_matches_cpu(device_backend: str, name: str, dtype: type, channels: int) -> None:
    params = parity_params(name)
    image = photo(40, 56, channels, dtype)
    expected = cvf.apply(image, name, backend="cpu", **params)
    actual = cvf.apply(image, name, backend=device_backend, **params)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    difference = np.abs(visible(actual) - visible(expected)).max()
    limit = DEVICE_TOLERANCE.get((device_backend, name), {}).get(np.dtype(dtype), PARITY_TOLERANCE[np.dtype(dtype)])
    assert difference <= limit + 1e-9, f"max difference {difference} (tolerance {limit})"
