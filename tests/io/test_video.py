"""Videos as first-class outputs: any size, animations in and out, real codecs, checked writes.

Clips are made by OpenCV's MJPG writer (independent of the ffmpeg path under test); results are
read back by OpenCV's VideoCapture and the codec named by ffmpeg's own probe.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

import cvfilters as cvf
from cvfilters.core.errors import ImageReadError, ImageWriteError
from cvfilters.io import formats, video
from cvfilters.io.video import ffmpeg_binary
from tests import cli_runner, makefiles

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(ffmpeg_binary() is None, reason="no ffmpeg binary (install the video extra)")


def apply(*args: object, shell_prefix: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cvfilters", "apply", *map(str, args)]
    if shell_prefix:
        return subprocess.run(["bash", "-c", f'{shell_prefix}; exec "$@"', "bash", *command], capture_output=True,
                              text=True, cwd=ROOT, timeout=120)
    return cli_runner.run_cli("apply", *args, cwd=ROOT)


def smooth_frame(index: int, size: tuple[int, int] = (96, 64)) -> np.ndarray:
    y, x = np.mgrid[0 : size[1], 0 : size[0]]
    return np.dstack([(x * 2 + index * 8) % 256, (y * 3) % 256, ((x + y) + index * 4) % 256]).astype(np.uint8)


def make_clip(path: Path, count: int = 8, fps: float = 10.0) -> list[np.ndarray]:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (96, 64))
    frames = [smooth_frame(i) for i in range(count)]
    for frame in frames:
        writer.write(frame)
    writer.release()
    return frames


def codec_of(path: Path) -> str:
    probe = subprocess.run([ffmpeg_binary() or "ffmpeg", "-hide_banner", "-i", str(path)], capture_output=True,
                           text=True)
    line = next(line for line in probe.stderr.splitlines() if "Video:" in line)
    return line.split("Video:")[1].split()[0]


def test_a_size_changing_pipeline_runs_on_a_video(tmp_path: Path) -> None:
    make_clip(tmp_path / "clip.avi")
    proc = apply(tmp_path / "clip.avi", "-o", tmp_path / "small.mp4", "-f", "resize:width=48")
    assert proc.returncode == 0, proc.stderr
    frames, fps = makefiles.video_frames(tmp_path / "small.mp4")
    assert len(frames) == 8 and frames[0].shape == (32, 48, 3) and fps == pytest.approx(10.0)


@pytest.mark.parametrize(("ext", "codec"), [(".mp4", "h264"), (".mkv", "h264"), (".webm", "vp9")])
def test_containers_get_modern_codecs_and_quality_is_crf(tmp_path: Path, ext: str, codec: str) -> None:
    source = make_clip(tmp_path / "clip.avi")
    sizes = []
    for quality in (20, 95):
        proc = apply(tmp_path / "clip.avi", "-o", tmp_path / f"q{quality}{ext}", "-f", "invert",
                     "--quality", quality)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        assert codec_of(tmp_path / f"q{quality}{ext}") == codec
        sizes.append((tmp_path / f"q{quality}{ext}").stat().st_size)
    assert sizes[0] < sizes[1]  # --quality reaches the encoder
    frames, _ = makefiles.video_frames(tmp_path / f"q95{ext}")
    assert len(frames) == len(source)
    error = np.abs(frames[3].astype(int) - (255 - source[3].astype(int))).mean()
    assert error < 6  # MJPG source, then the codec at q95


def test_an_animation_becomes_a_video_and_back(tmp_path: Path) -> None:
    images = [Image.fromarray(smooth_frame(i)[..., ::-1]) for i in range(5)]
    images[0].save(tmp_path / "anim.webp", save_all=True, append_images=images[1:], duration=50, lossless=True)
    proc = apply(tmp_path / "anim.webp", "-o", tmp_path / "anim.mp4", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    frames, fps = makefiles.video_frames(tmp_path / "anim.mp4")
    assert len(frames) == 5 and fps == pytest.approx(20.0)  # 50 ms a frame
    back = apply(tmp_path / "anim.mp4", "-o", tmp_path / "again.gif", "-f", "invert")
    assert back.returncode == 0, back.stderr
    with Image.open(tmp_path / "again.gif") as gif:
        assert gif.n_frames == 5 and gif.info.get("duration") == 50


def test_a_failed_write_leaves_the_existing_output_and_says_so(tmp_path: Path) -> None:
    make_clip(tmp_path / "clip.avi", count=30)
    good = apply(tmp_path / "clip.avi", "-o", tmp_path / "good.mp4", "-f", "invert")
    assert good.returncode == 0, good.stderr
    before = (tmp_path / "good.mp4").read_bytes()
    # files over 8 KiB fail: a full disk; no bytecode written under the limit (it cut the package's .pyc
    # files at 8 KiB, and every later import of them failed: "marshal data too short")
    failed = apply(tmp_path / "clip.avi", "-o", tmp_path / "good.mp4", "-f", "invert", "--quality", "100",
                   shell_prefix="export PYTHONDONTWRITEBYTECODE=1; ulimit -f 8")
    errors = [line for line in failed.stderr.splitlines() if line.strip()]
    assert failed.returncode == 1 and len(errors) == 1 and "good.mp4" in errors[0], failed.stderr
    assert (tmp_path / "good.mp4").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.avi", "good.mp4"]


def test_alpha_into_a_container_without_it_is_dropped_with_a_warning(tmp_path: Path) -> None:
    images = [Image.fromarray(np.dstack([smooth_frame(i)[..., ::-1], np.full((64, 96), 128, np.uint8)]))
              for i in range(3)]
    images[0].save(tmp_path / "alpha.png", save_all=True, append_images=images[1:], duration=100)
    proc = apply(tmp_path / "alpha.png", "-o", tmp_path / "alpha.mp4", "-f", "invert")
    warnings = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 0 and len(warnings) == 1 and "alpha" in warnings[0], proc.stderr
    kept = apply(tmp_path / "alpha.png", "-o", tmp_path / "alpha.webm", "-f", "invert")
    assert kept.returncode == 0 and not kept.stderr, kept.stderr
    assert "yuva420p" in subprocess.run([ffmpeg_binary() or "ffmpeg", "-hide_banner", "-i",
                                         str(tmp_path / "alpha.webm")], capture_output=True, text=True).stderr \
        or "alpha_mode" in subprocess.run([ffmpeg_binary() or "ffmpeg", "-hide_banner", "-i",
                                           str(tmp_path / "alpha.webm")], capture_output=True, text=True).stderr


# ---------------------------------------------------------------- in this process: readability, OpenCV's fallback
def ffmpeg_frames(path: Path) -> list[np.ndarray]:
    """Every frame as ffmpeg decodes it (imageio-ffmpeg: a reader apart from OpenCV's), BGR."""
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    width, height = meta["size"]
    return [np.frombuffer(raw, np.uint8).reshape(height, width, 3)[..., ::-1] for raw in reader]


def test_check_readable_opens_a_video_and_names_what_is_not_one(tmp_path: Path) -> None:
    make_clip(tmp_path / "clip.avi", count=2)
    video.check_readable(tmp_path / "clip.avi")  # no error
    (tmp_path / "notes.avi").write_text("not a video\n")
    with pytest.raises(ImageReadError) as raised:
        video.check_readable(tmp_path / "notes.avi")
    assert str(raised.value) == f"{tmp_path / 'notes.avi'}: cannot be opened as a video"


@pytest.fixture()
def no_ffmpeg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As without the video extra and no ffmpeg on PATH (in ``tmp_path``: a stray file would land there)."""
    monkeypatch.setattr(video, "ffmpeg_binary", lambda: None)
    monkeypatch.chdir(tmp_path)


@pytest.mark.usefixtures("no_ffmpeg")
def test_without_ffmpeg_opencv_writes_the_video_and_a_warning_says_so(tmp_path: Path) -> None:
    frames = [smooth_frame(i) for i in range(6)]
    with pytest.warns(video.CodecFallbackWarning) as caught:
        assert video.write_video(tmp_path / "out.avi", frames, 12.0) == 6
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'out.avi'}: ffmpeg not found; written with OpenCV's MJPG codec instead of mjpeg "
        '(pip install "cvfilters[video]")']
    assert caught[0].filename == __file__  # the caller's line
    decoded = ffmpeg_frames(tmp_path / "out.avi")
    assert len(decoded) == 6 and codec_of(tmp_path / "out.avi") == "mjpeg"
    for got, want in zip(decoded, frames, strict=True):
        assert np.abs(got.astype(int) - want.astype(int)).mean() < 4  # MJPG at OpenCV's default quality
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.avi"]


@pytest.mark.usefixtures("no_ffmpeg")
def test_without_ffmpeg_alpha_is_dropped_and_the_colours_kept(tmp_path: Path) -> None:
    frames = [np.dstack([smooth_frame(i), np.full((64, 96), 9, np.uint8)]) for i in range(3)]
    with pytest.warns(UserWarning):
        assert video.write_video(tmp_path / "out.avi", frames, 10.0) == 3
    decoded = ffmpeg_frames(tmp_path / "out.avi")
    assert len(decoded) == 3 and np.abs(decoded[1].astype(int) - frames[1][..., :3].astype(int)).mean() < 4


@pytest.mark.usefixtures("no_ffmpeg")
def test_without_ffmpeg_webm_cannot_be_written_and_says_why(tmp_path: Path) -> None:
    with pytest.raises(ImageWriteError) as raised:
        video.write_video(tmp_path / "out.webm", [smooth_frame(0)], 10.0)
    assert str(raised.value) == (f"{tmp_path / 'out.webm'}: cannot be written: .webm needs ffmpeg "
                                 '(pip install "cvfilters[video]")')
    assert list(tmp_path.iterdir()) == []


@pytest.mark.usefixtures("no_ffmpeg")
def test_without_ffmpeg_a_codec_opencv_lacks_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    avi = formats.video_format(".avi")
    assert avi is not None
    record = dataclasses.replace(avi, fallback_fourcc="ZZZZ")
    monkeypatch.setattr(formats, "video_format", lambda suffix: record)
    with pytest.raises(ImageWriteError) as raised, pytest.warns(video.CodecFallbackWarning):
        video.write_video(tmp_path / "out.avi", [smooth_frame(0)], 10.0)
    assert str(raised.value) == f"{tmp_path / 'out.avi'}: cannot be written: OpenCV has no ZZZZ encoder"
    assert list(tmp_path.iterdir()) == []


class ShortWriter:
    """OpenCV's writer losing frames: the last one (``keep`` -1), or all and the file (``keep`` 0)."""

    keep = 0
    real = cv2.VideoWriter
    fourcc = staticmethod(cv2.VideoWriter.fourcc)

    def __init__(self, *args: object) -> None:
        self.writer, self.path = self.real(*args), Path(str(args[0]))
        self.written: list[np.ndarray] = []

    def isOpened(self) -> bool:  # OpenCV's name
        return bool(self.writer.isOpened())

    def write(self, image: np.ndarray) -> None:
        self.written.append(image)

    def release(self) -> None:
        for image in self.written[: len(self.written) + self.keep] if self.keep else []:
            self.writer.write(image)
        self.writer.release()
        if not self.keep:
            self.path.write_bytes(b"")


@pytest.mark.usefixtures("no_ffmpeg")
@pytest.mark.parametrize(("keep", "wrote"), [(-1, 4), (0, 0)])
def test_without_ffmpeg_frames_opencv_did_not_write_are_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 keep: int, wrote: int) -> None:
    (tmp_path / "out.avi").write_bytes(b"before")
    monkeypatch.setattr(cv2, "VideoWriter", type("Short", (ShortWriter,), {"keep": keep}))
    with pytest.raises(ImageWriteError) as raised, pytest.warns(video.CodecFallbackWarning):
        video.write_video(tmp_path / "out.avi", [smooth_frame(i) for i in range(5)], 10.0)
    assert str(raised.value) == f"{tmp_path / 'out.avi'}: cannot be written: OpenCV's writer wrote {wrote} of 5 frames"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.avi"]
    assert (tmp_path / "out.avi").read_bytes() == b"before"


@pytest.mark.usefixtures("no_ffmpeg")
def test_without_ffmpeg_a_video_loses_its_audio_with_a_warning(tmp_path: Path) -> None:
    make_clip(tmp_path / "clip.avi", count=4)
    with pytest.warns(UserWarning) as caught:
        result = video.process_video(tmp_path / "clip.avi", tmp_path / "out.avi", cvf.Pipeline.parse("invert"),
                                     backend="cpu")
    assert (result.frames, result.audio) == (4, False) and result.fps == pytest.approx(10.0)
    dropped = [w for w in caught if w.category is video.AudioDroppedWarning]
    assert [str(w.message) for w in dropped] == [
        f"{tmp_path / 'clip.avi'}: audio track (if any) dropped: install ffmpeg or `pip install \"cvfilters[video]\"`"]
    assert dropped[0].filename == __file__
    assert len(ffmpeg_frames(tmp_path / "out.avi")) == 4
