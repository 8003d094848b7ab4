"""The parameters filter families share, as ``cvfilters info`` shows them, and the wrap-around border."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.core.context import Context, ImageInfo
from cvfilters.filters._shared.common import border_param, center_param, color_channels, with_border

PATTERNS = {"reflect101": "gfedcb|abcdefgh|gfedcba",
            "replicate": "aaaaaa|abcdefgh|hhhhhhh, Core Image's clamp-to-extent",
            "reflect": "fedcba|abcdefgh|hgfedcb", "wrap": "cdefgh|abcdefgh|abcdefg",
            "constant": "000000|abcdefgh|0000000"}


def test_center_is_declared_as_info_shows_it() -> None:
    assert center_param().describe() == {
        "name": "center", "type": "point", "default": [0.5, 0.5], "min": 0.0, "max": 1.0, "required": False,
        "unit": "fraction of width, height", "help": "centre of the effect; [0.5,0.5] is the image centre"}
    assert center_param("where the swirl turns").describe()["help"] == "where the swirl turns"


@pytest.mark.parametrize("default", [None, *PATTERNS])
def test_border_help_marks_its_one_default(default: str | None) -> None:
    described = (border_param() if default is None else border_param(default)).describe()
    default = default or "reflect101"
    expected = ", ".join(f"{name} ({pattern}{', default' if name == default else ''})"
                         for name, pattern in PATTERNS.items())
    assert described == {"name": "border", "type": "choice", "default": default, "choices": list(PATTERNS),
                         "required": False, "unit": "", "help": f"edge handling: {expected}"}


@pytest.mark.parametrize(("channels", "colour"), [(1, 1), (3, 3), (4, 3)])
def test_colour_channels_leave_alpha_out(channels: int, colour: int) -> None:
    assert color_channels(ImageInfo(4, 4, channels, np.dtype(np.uint8))) == colour


@pytest.mark.parametrize("border", ["wrap", "replicate"])
def test_with_border_blurs_as_numpy_padding_says(border: str) -> None:
    image = np.random.default_rng(3).integers(0, 255, (9, 11), np.uint8)
    ctx = Context(get_backend("cpu"), ImageInfo(9, 11, 1, np.dtype(np.uint8)))
    out = with_border(ctx, image, (2, 1), border, lambda img, cv_border: cv2.blur(img, (5, 3), borderType=cv_border))
    mode = {"wrap": "wrap", "replicate": "edge"}[border]
    padded = np.pad(image.astype(np.float64), ((1, 1), (2, 2)), mode=mode)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 5))
    reference = np.rint(windows.mean(axis=(2, 3)))
    assert out.shape == image.shape
    assert np.abs(out.astype(np.float64) - reference).max() <= 1  # cv2.blur rounds its 8-bit sums
