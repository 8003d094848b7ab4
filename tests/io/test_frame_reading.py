"""What :func:`read_frames` and :class:`FrameReader` tell about a file before and while reading it:
the refusals and their messages, the frame range, the channel order asked for and ``FramesInfo``.

Files are written by Pillow or tifffile; expected frames are their BGR frames reordered by numpy
slicing, expected sizes and profiles those the files were written with.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from PIL import Image, ImageCms

from cvfilters.core.errors import ImageReadError, ImageTooLargeError, TruncatedImageError
from cvfilters.io import frames as frames_io
from tests import makefiles

NOT_AN_IMAGE = b"these bytes are no image of any format" * 4


def test_bytes_that_are_no_image_are_refused_as_standard_input(tmp_path: Path) -> None:
    """Bytes are named "-" (standard input) or the name given; a path names itself. Catches the name or
    the reason lost, the given name ignored, and a wrong error type."""
    (tmp_path / "notes.gif").write_bytes(NOT_AN_IMAGE)
    cases = [(lambda: frames_io.read_frames(NOT_AN_IMAGE), "-"),
             (lambda: frames_io.FrameReader(NOT_AN_IMAGE, name="upload.gif"), "upload.gif"),
             (lambda: frames_io.read_frames(tmp_path / "notes.gif"), str(tmp_path / "notes.gif"))]
    for opened, name in cases:
        with pytest.raises(ImageReadError) as caught:
            opened()
        assert type(caught.value) is ImageReadError
        assert str(caught.value) == f"{name}: is not an image with frames"


def test_a_reader_on_a_path_that_cannot_be_opened_names_it_and_why(tmp_path: Path) -> None:
    """A FrameReader opened on a path that is gone (read_frames checks first; the file may go in between):
    the path and the system's reason, not a bare OSError or a message without either."""
    missing = tmp_path / "gone.gif"
    with pytest.raises(ImageReadError) as caught:
        frames_io.FrameReader(missing)
    assert str(caught.value) == f"{missing}: cannot be read: No such file or directory"


@pytest.mark.parametrize(("frames", "told"), [((4, None), "--frames 4:"), ((5, 7), "--frames 5:7"),
                                              ((4, 9), "--frames 4:9")])
def test_a_frames_range_at_or_past_the_end_selects_none(tmp_path: Path, frames: tuple[int, int | None],
                                                        told: str) -> None:
    """A range starting at the frame count or past it is refused as the user wrote it (an open end stays
    open), naming the file: starting at the count gave no frames and no error."""
    makefiles.animation(tmp_path / "in.gif", count=4)
    with pytest.raises(TruncatedImageError) as caught:
        frames_io.read_frames(tmp_path / "in.gif", frames=frames)
    assert str(caught.value) == f"{tmp_path / 'in.gif'}: {told} selects none of its 4 frames"


def write_tiff_pages(path: Path, frames: list[np.ndarray]) -> None:
    with tifffile.TiffWriter(path) as tiff:
        for frame in frames:
            tiff.write(np.ascontiguousarray(frame[..., ::-1]), photometric="rgb")


@pytest.mark.parametrize("ext", [".gif", ".png", ".webp", ".tif", ".bmp"])
def test_rgb_channel_order_reads_frames_red_first(tmp_path: Path, ext: str) -> None:
    """``channel_order="rgb"`` gives each frame (a still image's one too) in RGB order, the reverse of the
    default BGR frames: catches the order ignored by read_frames or by the reader."""
    if ext == ".tif":
        frames = makefiles.frames_bgr(3)
        write_tiff_pages(tmp_path / f"in{ext}", frames)
    elif ext == ".bmp":  # a still image
        frames = makefiles.frames_bgr(1)
        Image.fromarray(frames[0][..., ::-1]).save(tmp_path / f"in{ext}")
    else:
        frames = makefiles.animation(tmp_path / f"in{ext}", count=3)
    with frames_io.read_frames(tmp_path / f"in{ext}", channel_order="rgb") as reader:
        got = [frame.image for frame in reader]
    assert len(got) == len(frames)
    for have, want in zip(got, frames, strict=True):
        np.testing.assert_array_equal(have, want[..., ::-1])


def test_frames_info_gives_the_size_profile_and_frames_selected(tmp_path: Path) -> None:
    """``info`` of an APNG carrying an sRGB profile, read from frame 1 to 4 of 5: its size (width,
    height) and the profile as Pillow wrote them, 3 frames selected (a range from frame 0 or to the end too)."""
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    frames = makefiles.frames_bgr(5, (12, 16))
    images = [Image.fromarray(frame[..., ::-1]) for frame in frames]
    images[0].save(tmp_path / "in.png", save_all=True, append_images=images[1:], duration=50, icc_profile=profile)
    for frames_range, selected in [((1, 4), 3), ((0, 2), 2), ((2, None), 3), (None, 5)]:
        with frames_io.read_frames(tmp_path / "in.png", frames=frames_range) as reader:
            info = reader.info
        assert (info.format, info.count, info.size, info.selected) == ("PNG", 5, (16, 12), selected)
        assert info.icc == profile and info.compression is None


def test_probe_refuses_a_file_over_the_pixel_limit_naming_it(tmp_path: Path) -> None:
    """``probe`` of a 16x12 GIF under a limit of 100 pixels: ImageTooLargeError naming the file and its
    size; at 192 pixels its header (4 frames, as Pillow wrote them)."""
    makefiles.animation(tmp_path / "in.gif", count=4)
    with pytest.raises(ImageTooLargeError) as caught:
        frames_io.probe(tmp_path / "in.gif", 100)
    assert str(caught.value).startswith(f"{tmp_path / 'in.gif'}: 16x12 = 192 pixels exceeds the limit of 100 ")
    header = frames_io.probe(tmp_path / "in.gif", 192)
    assert header is not None and (header.format, header.size, header.frames) == ("GIF", (16, 12), 4)


def test_a_damaged_still_image_is_named_in_its_error(tmp_path: Path) -> None:
    """A still PNG cut in its pixel data: its header parses, decoding fails; the error names the file."""
    cv2.imwrite(str(tmp_path / "still.png"), np.random.default_rng(2).integers(0, 256, (64, 64, 3), np.uint8))
    data = (tmp_path / "still.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[:len(data) // 2])
    with pytest.raises(ImageReadError) as caught, frames_io.read_frames(tmp_path / "cut.png") as reader:
        assert reader.info.loop is None  # a still has no loop count
        list(reader)
    assert str(caught.value).startswith(f"{tmp_path / 'cut.png'}: ")
