"""``cvfilters.apply`` hands every choice on: backend, linear light (the checkerboard's 188 against 128)."""

from __future__ import annotations

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import UsageError

# A one-pixel black and white checkerboard: blurred, it is half the light (sRGB 188), or 128 on the codes.
CHECKER = (np.indices((32, 32)).sum(axis=0) % 2 * 255).astype(np.uint8)


@pytest.mark.parametrize(("linear", "middle"), [(True, 188), (False, 128), (None, 128)])
def test_linear_light_is_handed_on(linear: bool | None, middle: int) -> None:
    out = cvf.apply(CHECKER, "gaussian_blur", sigma=4, linear=linear)
    assert abs(int(out[16, 16]) - middle) <= 1


def test_the_backend_is_handed_on() -> None:
    with pytest.raises(UsageError, match="no-such-backend"):
        cvf.apply(CHECKER, "invert", backend="no-such-backend")
