"""The APNG reader against Pillow: the same file, written by Pillow, read by both."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from cvfilters.io import apng


def test_durations_and_disposal_match_pillows_reading(tmp_path: Path) -> None:
    red = Image.new("RGBA", (6, 4), (255, 0, 0, 255))
    dot = Image.new("RGBA", (6, 4), (0, 0, 0, 0))
    dot.putpixel((2, 1), (0, 0, 255, 255))
    path = tmp_path / "anim.png"
    # 40 s: a delay numerator over 32767 (unsigned in the fcTL chunk); frame 1 disposed to the background
    red.save(path, save_all=True, append_images=[dot], duration=[40_001, 100], disposal=[1, 0], loop=0)
    with path.open("rb") as file:
        ours = list(apng.frames(file))
    assert [duration for _, duration in ours] == [40_001, 100]
    with Image.open(path) as reference:
        for index, (frame, _) in enumerate(ours):
            reference.seek(index)
            expected = cv2.cvtColor(np.asarray(reference.convert("RGBA")), cv2.COLOR_RGBA2BGRA)
            assert frame.shape == expected.shape and np.array_equal(frame, expected), index
    assert ours[1][0][0, 0, 3] == 0  # the red frame was cleared, not kept under the dot
