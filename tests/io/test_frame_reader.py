"""The frame reader's options over animations and still images: channel order, damage in a still image.

tests/io/test_frames.py holds the formats' frames and pages; here, what ``read_frames`` promises whatever the
format: ``channel_order="rgb"`` reverses every frame's colour (Pillow's RGB frames the reference), and a still
image is one frame, decoded as by OpenCV, with a damaged one named in its error.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageSequence

from cvfilters.core.defaults import ChannelOrder
from cvfilters.core.errors import ImageReadError
from cvfilters.io import frames as frames_io
from tests import makefiles


@pytest.mark.parametrize("name", ["in.gif", "in.png"])
def test_rgb_channel_order_gives_every_frame_as_pillow_reads_it(tmp_path: Path, name: str) -> None:
    """An animation read with ``channel_order="rgb"``: each frame equals Pillow's RGB frame (exactly, the
    frames are lossless); with the default, BGR. Catches the order applied to no frame or to the wrong one."""
    makefiles.animation(tmp_path / name, count=3)
    with Image.open(tmp_path / name) as image:
        want = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(image)]
    with frames_io.read_frames(tmp_path / name, channel_order="rgb") as reader:
        rgb = [frame.image for frame in reader]
    with frames_io.read_frames(tmp_path / name) as reader:
        bgr = [frame.image for frame in reader]
    assert len(rgb) == len(bgr) == len(want) == 3
    for got_rgb, got_bgr, pillows in zip(rgb, bgr, want, strict=True):
        np.testing.assert_array_equal(got_rgb, pillows)
        np.testing.assert_array_equal(got_bgr, pillows[..., ::-1])


def test_a_still_image_is_one_frame_in_either_order(tmp_path: Path) -> None:
    """A still PNG read as frames: one frame, OpenCV's decoding, reversed for ``rgb``."""
    image = makefiles.frames_bgr(1)[0]
    cv2.imwrite(str(tmp_path / "still.png"), image)
    orders: list[tuple[ChannelOrder, np.ndarray]] = [("bgr", image), ("rgb", image[..., ::-1])]
    for order, want in orders:
        with frames_io.read_frames(tmp_path / "still.png", channel_order=order) as reader:
            got = [frame.image for frame in reader]
        assert len(got) == 1
        np.testing.assert_array_equal(got[0], want)


def test_a_damaged_still_image_is_named_in_its_error(tmp_path: Path) -> None:
    """A still PNG cut in its pixel data: its header parses, decoding fails; the error names the file."""
    cv2.imwrite(str(tmp_path / "still.png"), np.random.default_rng(2).integers(0, 256, (64, 64, 3), np.uint8))
    data = (tmp_path / "still.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[:len(data) // 2])
    with pytest.raises(ImageReadError) as caught, frames_io.read_frames(tmp_path / "cut.png") as reader:
        list(reader)
    assert str(caught.value).startswith(f"{tmp_path / 'cut.png'}: ")
