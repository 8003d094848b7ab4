"""Before/after comparisons (cvfilters.viz.sheets.compare): the layouts built by hand with numpy.

side: both whole, centred on a white canvas (transparent with alpha), before on the left, a gap
of max(2, widest // 100) columns; split: the left half of before and the right half of after,
a gray line of max(2, width // 400) columns centred on the middle.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from cvfilters.core.errors import OutputExistsError
from cvfilters.viz.sheets.compare import before_after, write_before_after


def _flat(height: int, width: int, value: float, channels: int = 3, dtype: type = np.uint8) -> np.ndarray:
    return np.full((height, width, channels), value, dtype)


@pytest.mark.parametrize(("width", "gap"), [(5, 2), (300, 3)])
def test_side_by_side_centres_both_with_a_gap(width: int, gap: int) -> None:
    before, after = _flat(3, width, 10), _flat(5, 4, 200)
    expected = _flat(5, width + gap + 4, 255)
    expected[1:4, :width] = 10  # centred in height
    expected[:, width + gap:] = 200
    np.testing.assert_array_equal(before_after(before, after, label=False), expected)


@pytest.mark.parametrize(("width", "line"), [(10, 2), (1200, 3)])
def test_split_joins_halves_at_a_gray_line(width: int, line: int) -> None:
    before, after = _flat(2, width - 4, 10), _flat(2, width, 200)  # before narrower: centred, white beside it
    expected = _flat(2, width, 255)
    expected[:, 2:width - 2] = 10
    middle = width // 2
    expected[:, middle:] = 200
    expected[:, middle - line // 2:middle - line // 2 + line] = 127  # half of 255, stored as uint8
    np.testing.assert_array_equal(before_after(before, after, mode="split", label=False), expected)


def test_alpha_makes_a_transparent_canvas_and_an_opaque_line() -> None:
    before, after = _flat(2, 4, 10, channels=4), _flat(4, 4, 200, channels=3)
    out = before_after(before, after, label=False)
    assert out.shape == (4, 10, 4)
    np.testing.assert_array_equal(out[0, :4], 0)  # padding above before: transparent black
    np.testing.assert_array_equal(out[1:3, :4], 10)
    np.testing.assert_array_equal(out[:, 4:6], 0)  # the gap
    np.testing.assert_array_equal(out[:, 6:], [[[200, 200, 200, 255]] * 4] * 4)  # BGR made opaque BGRA
    split = before_after(_flat(2, 8, 10, channels=4), _flat(2, 8, 200, channels=4), mode="split", label=False)
    np.testing.assert_array_equal(split[:, 3:5], [[[127, 127, 127, 255]] * 2] * 2)


@pytest.mark.parametrize(("dtype", "white", "gray"), [(np.uint16, 65535, 32767), (np.float32, 1.0, 0.5)])
def test_canvas_and_line_follow_the_depth(dtype: type, white: float, gray: float) -> None:
    out = before_after(_flat(1, 4, 0, dtype=dtype), _flat(3, 4, 0, dtype=dtype), label=False)
    assert out.dtype == dtype and out[0, 0, 0] == white and out[1, 0, 0] == 0
    split = before_after(_flat(1, 4, 0, dtype=dtype), _flat(1, 4, 0, dtype=dtype), mode="split", label=False)
    assert split[0, 1, 0] == gray and split[0, 0, 0] == 0


def test_captions_sit_in_the_top_corners_of_each_image() -> None:
    before, after = _flat(60, 200, 100), _flat(60, 200, 100)
    side = before_after(before, after)
    gap = 2
    assert (side[1, 0] == 0).all() and (side[1, 200 + gap] == 0).all()  # black boxes start at each corner
    assert (side[1, 199] == 100).all() and (side[1, 200] == 255).all()  # the gap stays white
    assert (side[:20, :60] == 255).any() and (side[:20, 202:262] == 255).any()  # white text in each box
    split = before_after(before, after, mode="split")
    assert (split[1, 0] == 0).all() and (split[1, 199] == 0).all()  # "after" ends at the right edge
    assert (split[1, 100] == 127).all()  # the line between the boxes


def test_write_before_after_reads_files_and_writes_with_its_defaults(tmp_path: Path) -> None:
    before, after = _flat(60, 200, 100), _flat(60, 200, 30)
    cv2.imwrite(str(tmp_path / "b.png"), before)
    target = tmp_path / "cmp.png"
    write_before_after(target, tmp_path / "b.png", after)  # side, labelled, overwriting
    np.testing.assert_array_equal(cv2.imread(str(target)), before_after(before, after))
    write_before_after(target, before, after, label=False)  # the file exists: replaced by default
    np.testing.assert_array_equal(cv2.imread(str(target)), before_after(before, after, label=False))
    with pytest.raises(OutputExistsError):
        write_before_after(target, before, after, overwrite=False)
    noisy = np.random.default_rng(0).integers(0, 256, (60, 200, 3), np.uint8)
    sizes = []
    for quality in (10, 95):
        path = write_before_after(tmp_path / f"q{quality}.jpg", noisy, noisy, quality=quality)
        sizes.append(path.stat().st_size)
    assert sizes[0] < sizes[1] / 2  # the quality reaches the encoder
