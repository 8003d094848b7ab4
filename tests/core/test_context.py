"""ImageInfo and Context: an image's geometry and type as filters see them, checked on non-square arrays."""

from __future__ import annotations

import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.core.context import Context, ImageInfo


@pytest.mark.parametrize(("shape", "dtype", "channels", "full"), [
    ((5, 7), np.uint8, 1, 255), ((5, 7, 3), np.uint16, 3, 65535), ((5, 7, 4), np.float32, 4, 1.0),
    ((5, 7, 1), np.uint8, 1, 255),
])
def test_info_of_an_array(shape: tuple[int, ...], dtype: type, channels: int, full: float) -> None:
    info = ImageInfo.of(np.zeros(shape, dtype))
    assert (info.height, info.width, info.channels, info.dtype) == (5, 7, channels, np.dtype(dtype))
    assert info.size == (7, 5) and info.pixels == 35 and info.max_value == full


def test_with_changes_only_what_it_is_given() -> None:
    info = ImageInfo(5, 7, 3, np.dtype(np.uint8))
    assert info.with_(channels=1) == ImageInfo(5, 7, 1, np.dtype(np.uint8))
    assert info.with_(height=2, dtype=np.dtype(np.float32)) == ImageInfo(2, 7, 3, np.dtype(np.float32))
    assert info.with_() == info
    ctx = Context(get_backend("cpu"), info)
    assert ctx.with_info(width=9) == Context(ctx.backend, ImageInfo(5, 9, 3, np.dtype(np.uint8)))
