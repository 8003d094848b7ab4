"""cvfilters.io.animation's frame ranges and single-frame outputs, called directly and read
back by Pillow (written from the issue-26 mutation survivors of io/animation)."""

from __future__ import annotations

import warnings
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cvfilters.core.errors import TruncatedImageError
from cvfilters.io import animation, decoders
from cvfilters.io import images as cio

COLOURS = [(200, 30, 30), (30, 200, 30), (30, 30, 200)]


def gif(frames: int = 3) -> bytes:
    pictures = [Image.new("RGB", (8, 6), COLOURS[i % 3]) for i in range(frames)]
    buffer = BytesIO()
    pictures[0].save(buffer, "GIF", save_all=True, append_images=pictures[1:], duration=[40, 50, 60][:frames], loop=0)
    return buffer.getvalue()


def decoded(data: bytes, frames: tuple[int, int | None] | None) -> animation.Frames:
    header = decoders.parse_header(data)
    assert header is not None
    return animation.decode(data, "in.gif", header, frames)


@pytest.mark.parametrize(("frames", "count", "first"), [
    (None, 3, 0), ((1, None), 2, 1), ((0, 10), 3, 0), ((2, 3), 1, 2), ((1, 2), 1, 1),
])
def test_frame_ranges_select_those_frames(frames, count, first):
    result = decoded(gif(), frames)
    assert len(result.frames) == count and result.total == 3
    red, green, blue = COLOURS[first]
    assert tuple(result.frames[0][3, 3, :3]) == (blue, green, red)  # BGR
    assert result.durations == [40, 50, 60][first : first + count]


@pytest.mark.parametrize(("frames", "shown"), [((3, None), "3:"), ((2, 2), "2:2"), ((5, 7), "5:7")])
def test_an_empty_range_is_one_clear_error(frames, shown):
    with pytest.raises(TruncatedImageError) as caught:
        decoded(gif(), frames)
    assert str(caught.value) == f"in.gif: --frames {shown} selects none of its 3 frames"


def test_one_frame_formats_keep_the_first_and_say_so(tmp_path: Path):
    frames = decoded(gif(), None)
    with pytest.warns(cio.DepthConversionWarning) as caught:
        data = animation.encode(frames, ".jpg", tmp_path / "out.jpg", quality=20)
    messages = [str(w.message) for w in caught]
    assert f"{tmp_path / 'out.jpg'}: .jpg holds one frame; only the first of 3 is written" in messages
    assert all(w.filename == __file__ for w in caught)  # attributed to the caller
    with Image.open(BytesIO(bytes(data))) as second:
        assert second.format == "JPEG" and getattr(second, "n_frames", 1) == 1
        assert np.asarray(second)[3, 3, 0] > 150  # the first frame: red
        assert np.asarray(second.quantization[0]).mean() > 20  # quality 20 reached the encoder
    single = animation.Frames([frames.frames[0]], [40], 0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one frame: nothing to warn about
        animation.encode(single, ".png", "one.png")


def test_frames_written_as_tiff_pages_drop_the_timing_with_a_warning(tmp_path: Path):
    frames = decoded(gif(), None)
    with pytest.warns(cio.DepthConversionWarning, match="TIFF pages have no durations"):
        data = animation.encode(frames, ".tif", tmp_path / "out.tif")
    with Image.open(BytesIO(bytes(data))) as second:
        assert second.n_frames == 3


def test_two_frames_into_a_one_frame_format_warn_too(tmp_path: Path):
    frames = decoded(gif(2), None)
    with pytest.warns(cio.DepthConversionWarning, match="only the first of 2 is written"):
        animation.encode(frames, ".bmp", tmp_path / "out.bmp")


def test_the_single_frame_keeps_the_metadata_and_names_the_output_in_conversions(tmp_path: Path):
    from PIL import ImageCms

    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    frames = animation.Frames([np.full((6, 8, 4), 200, np.uint8)] * 2, [40, 40], 0, 2)
    with pytest.warns(cio.DepthConversionWarning) as caught:
        data = animation.encode(frames, ".jpg", tmp_path / "out.jpg", metadata=cio.Metadata(icc=srgb))
    assert any(str(w.message).startswith(f"{tmp_path / 'out.jpg'}: .jpg cannot hold 4 channels") for w in caught)
    with Image.open(BytesIO(bytes(data))) as second:
        assert second.info.get("icc_profile") == srgb


def test_animated_webp_timing_loop_and_quality(tmp_path: Path):
    frames = [np.full((6, 8, 3), 40 * (i + 1), np.uint8) for i in range(3)]
    data = bytes(animation.encode(animation.Frames(list(frames), [], 3, 3), ".webp", "out.webp"))
    assert b"VP8L" in data  # no quality: lossless
    with Image.open(BytesIO(data)) as second:
        assert second.n_frames == 3 and second.info.get("loop") == 3
        for index in range(3):
            second.seek(index)
            second.load()
            assert second.info["duration"] == animation.DEFAULT_DURATION_MS
    lossy = bytes(animation.encode(animation.Frames(list(frames), [70] * 3, 0, 3), ".webp", "out.webp", quality=50))
    assert b"VP8 " in lossy and b"VP8L" not in lossy


def test_a_conversion_is_warned_once_for_all_frames(tmp_path: Path):
    frames = animation.Frames([np.full((6, 8, 3), 1000 * (i + 1), np.uint16) for i in range(3)], [40] * 3, 0, 3)
    with pytest.warns(cio.DepthConversionWarning) as caught:
        animation.encode(frames, ".gif", tmp_path / "out.gif")
    depth = [w for w in caught if "cannot hold uint16" in str(w.message)]
    assert len(depth) == 1 and str(depth[0].message).startswith(str(tmp_path / "out.gif"))
    assert depth[0].filename == __file__
