"""Animations and multi-page TIFFs keep every frame, its duration and the loop count.

Files are written by Pillow (an encoder independent of OpenCV's) with distinct flat-colour
frames and distinct durations; results are read back by Pillow too, so a frame that was
dropped, repeated, reordered or left unfiltered shows, and so does a lost duration or loop.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageSequence

from cvfilters.core.errors import ImageTooLargeError
from cvfilters.io import decoders, frames as frames_io
from cvfilters.io import images as cio
from tests import makefiles

ROOT = Path(__file__).resolve().parents[2]
DURATIONS = [100, 200, 300, 400]


def apply(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cvfilters", "apply", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def pillow_frames(path: Path) -> tuple[list[np.ndarray], list[int], int | None]:
    """BGR frames, per-frame durations (ms) and the loop as Pillow reads them."""
    with Image.open(path) as image:
        frames, durations = [], []
        for frame in ImageSequence.Iterator(image):
            frames.append(np.asarray(frame.convert("RGB"))[..., ::-1].copy())
            durations.append(int(frame.info.get("duration", 0)))
        return frames, durations, image.info.get("loop")


@pytest.mark.parametrize("ext", [".gif", ".webp", ".png"], ids=["gif", "webp", "apng"])
def test_every_frame_is_filtered_and_timing_kept(tmp_path: Path, ext: str) -> None:
    frames = makefiles.animation(tmp_path / f"in{ext}", durations=DURATIONS, loop=3)
    proc = apply(tmp_path / f"in{ext}", "-o", tmp_path / f"out{ext}", "-f", "invert", "--lossless")
    assert proc.returncode == 0, proc.stderr
    got, durations, loop = pillow_frames(tmp_path / f"out{ext}")
    assert len(got) == len(frames)
    for want, have in zip(frames, got, strict=True):  # a few flat colours: exact in every format, GIF too
        np.testing.assert_array_equal(have, 255 - want)
    assert [have.mean() for have in got] != [got[0].mean()] * len(got)  # frames stay distinct
    if ext != ".webp":  # Pillow reports no per-frame WebP durations; OpenCV's reader checks them below
        assert durations == DURATIONS
    assert loop == 3
    ok, decoded = cv2.imreadanimation(str(tmp_path / f"out{ext}"))
    assert ok and [int(d) for d in decoded.durations] == DURATIONS


def test_animated_avif_keeps_every_frame_and_duration(tmp_path: Path) -> None:
    frames = makefiles.frames_bgr(3, (32, 32))
    images = [Image.fromarray(f[..., ::-1]) for f in frames]
    images[0].save(tmp_path / "in.avif", save_all=True, append_images=images[1:], duration=[70, 80, 90], quality=100)
    proc = apply(tmp_path / "in.avif", "-o", tmp_path / "out.avif", "-f", "invert", "--quality", "100")
    assert proc.returncode == 0, proc.stderr
    ok, decoded = cv2.imreadanimation(str(tmp_path / "out.avif"))
    assert ok and [int(d) for d in decoded.durations] == [70, 80, 90]
    for want, have in zip(frames, decoded.frames, strict=True):  # lossy both ways: means per frame
        assert np.abs(have[..., :3].astype(int) - (255 - want)).mean() < 12


def test_frames_option_selects_a_range(tmp_path: Path) -> None:
    frames = makefiles.animation(tmp_path / "in.png", count=5, durations=[10, 20, 30, 40, 50])
    proc = apply(tmp_path / "in.png", "-o", tmp_path / "out.png", "-f", "invert", "--frames", "1:4")
    assert proc.returncode == 0, proc.stderr
    got, durations, _ = pillow_frames(tmp_path / "out.png")
    assert durations == [20, 30, 40]
    for want, have in zip(frames[1:4], got, strict=True):
        np.testing.assert_array_equal(have, 255 - want)
    past_the_end = apply(tmp_path / "in.png", "-o", tmp_path / "none.png", "-f", "invert", "--frames", "7:9")
    errors = [line for line in past_the_end.stderr.splitlines() if line.strip()]
    assert past_the_end.returncode == 1 and len(errors) == 1 and "selects none of its 5 frames" in errors[0]
    assert not (tmp_path / "none.png").exists()


@pytest.mark.parametrize("ext", [".jpg", ".bmp"])
def test_an_animation_into_a_still_format_keeps_the_first_frame_with_one_warning(tmp_path: Path, ext: str) -> None:
    frames = makefiles.animation(tmp_path / "in.gif")
    proc = apply(tmp_path / "in.gif", "-o", tmp_path / f"out{ext}", "-f", "invert")
    warnings = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 0
    assert len(warnings) == 1 and "only the first of 4" in warnings[0] and f"out{ext}" in warnings[0], warnings
    still = cv2.imread(str(tmp_path / f"out{ext}"))
    error = np.abs(still.astype(int) - (255 - frames[0]))
    assert (error.mean() <= 8 and np.median(error) <= 2) if ext == ".jpg" else error.max() == 0


def test_multi_page_tiff_keeps_its_pages_and_depth(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    pages = [rng.integers(0, 65536, (6, 8), dtype=np.uint16) for _ in range(3)]
    Image.fromarray(pages[0]).save(tmp_path / "in.tif", save_all=True,
                                   append_images=[Image.fromarray(p) for p in pages[1:]])
    proc = apply(tmp_path / "in.tif", "-o", tmp_path / "out.tif", "-f", "invert")
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    with Image.open(tmp_path / "out.tif") as out:
        got = [np.asarray(page).astype(np.uint16) for page in ImageSequence.Iterator(out)]
    assert len(got) == 3
    for want, have in zip(pages, got, strict=True):
        np.testing.assert_array_equal(have, 65535 - want)


def test_timed_frames_into_tiff_pages_warn_that_durations_go(tmp_path: Path) -> None:
    frames = makefiles.animation(tmp_path / "in.webp")
    proc = apply(tmp_path / "in.webp", "-o", tmp_path / "out.tif", "-f", "invert")
    assert proc.returncode == 0 and "durations" in proc.stderr and "TIFF pages" in proc.stderr
    ok, pages = cv2.imreadmulti(str(tmp_path / "out.tif"), flags=cv2.IMREAD_UNCHANGED)
    assert ok and len(pages) == len(frames)
    np.testing.assert_array_equal(pages[2], 255 - frames[2])


def test_gif_frames_have_alpha_only_where_the_file_has_transparency(tmp_path: Path) -> None:
    makefiles.animation(tmp_path / "in.gif")
    data = (tmp_path / "in.gif").read_bytes()
    header = decoders.parse_header(data)
    assert header is not None and frames_io.is_multiframe(header)
    with frames_io.read_frames(data) as reader:
        got = [frame.image for frame in reader]
    assert reader.info.count == 4 and len(got) == 4 and all(frame.shape[2] == 3 for frame in got)


def test_the_pixel_limit_applies_to_each_frame_and_refuses_fast(tmp_path: Path) -> None:
    makefiles.animation(tmp_path / "in.gif", count=4)  # 4 frames of 12 x 16 = 192 pixels each
    with pytest.raises(ImageTooLargeError, match="16x12 = 192 pixels exceeds the limit of 191"):
        frames_io.read_frames(tmp_path / "in.gif", max_pixels=191)
    with frames_io.read_frames(tmp_path / "in.gif", max_pixels=192) as reader:  # frames stream: not 4 x 192
        assert sum(1 for _ in reader) == 4


def test_a_still_gif_and_png_are_not_animations(tmp_path: Path) -> None:
    frame = makefiles.frames_bgr(1)[0]
    Image.fromarray(frame[..., ::-1]).save(tmp_path / "still.gif")
    cv2.imwrite(str(tmp_path / "still.png"), frame)
    for name in ("still.gif", "still.png"):
        assert not frames_io.is_multiframe(decoders.parse_header((tmp_path / name).read_bytes()))
