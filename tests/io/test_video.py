"""Videos as first-class outputs: any size, animations in and out, real codecs, checked writes.

Clips are made by OpenCV's MJPG writer (independent of the ffmpeg path under test); results are
read back by OpenCV's VideoCapture and the codec named by ffmpeg's own probe.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

import cvfilters as cvf
from cvfilters.core.errors import ImageReadError, ImageWriteError, OutputExistsError, UsageError
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


# ---------------------------------------------------------------- reading and processing, in this process
def level_clip(path: Path, levels: list[int], fps: float = 10.0) -> None:
    """A clip of flat grey frames (one level each) from OpenCV's MJPG writer: frames told apart by level."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (32, 16))
    for level in levels:
        writer.write(np.full((16, 32, 3), level, np.uint8))
    writer.release()


def levels_of(path: Path) -> list[int]:
    """The mean level of every frame OpenCV decodes from ``path``, rounded."""
    return [round(float(frame.mean())) for frame in makefiles.video_frames(path)[0]]


LEVELS = [20, 50, 80, 110, 140, 170, 200, 230]  # 30 apart: MJPG and H.264 keep flat frames within 2


@pytest.mark.parametrize(("frames", "kept"), [((2, 5), LEVELS[2:5]), ((7, None), LEVELS[7:])])
def test_a_frame_range_of_a_video_is_filtered_with_progress(tmp_path: Path, frames: tuple[int, int | None],
                                                            kept: list[int]) -> None:
    """Catches the range dropped or miscounted, the default backend broken, progress miscounted."""
    level_clip(tmp_path / "clip.avi", LEVELS)
    calls: list[tuple[int, int]] = []
    result = video.process_video(tmp_path / "clip.avi", tmp_path / "out.mkv", cvf.Pipeline.parse("invert"),
                                 frames=frames, progress=lambda done, total: calls.append((done, total)))
    assert result == video.VideoResult(len(kept), 10.0, False)  # no audio track in the clip
    assert calls == [(i + 1, len(kept)) for i in range(len(kept))]
    assert levels_of(tmp_path / "out.mkv") == pytest.approx([255 - level for level in kept], abs=2)


def test_a_frame_range_of_an_animation_becomes_a_video_with_progress(tmp_path: Path) -> None:
    """Catches the range not passed to the animation reader and the total given to ``progress`` as 0."""
    source = makefiles.animation(tmp_path / "anim.webp", count=6, durations=[50] * 6)
    calls: list[tuple[int, int]] = []
    result = video.process_video(tmp_path / "anim.webp", tmp_path / "out.avi", cvf.Pipeline.parse("invert"),
                                 backend="cpu", frames=(1, 4), progress=lambda done, total: calls.append((done, total)))
    assert result == video.VideoResult(3, 20.0, False)  # 50 ms a frame
    assert calls == [(1, 3), (2, 3), (3, 3)]
    decoded, fps = makefiles.video_frames(tmp_path / "out.avi")
    assert fps == pytest.approx(20.0) and len(decoded) == 3
    for got, want in zip(decoded, source[1:4], strict=True):
        assert np.abs(got.astype(int) - (255 - want.astype(int))).mean() < 6  # MJPEG of sharp colour edges


def test_tiff_pages_become_a_video_at_the_default_frame_rate(tmp_path: Path) -> None:
    """TIFF pages carry no duration: 25 fps. Catches 1000 / None for a page without one."""
    import tifffile

    pages = [np.full((16, 32, 3), level, np.uint8) for level in LEVELS[:3]]
    tifffile.imwrite(tmp_path / "pages.tif", np.stack([page[..., ::-1] for page in pages]), photometric="rgb")
    result = video.process_video(tmp_path / "pages.tif", tmp_path / "out.avi", cvf.Pipeline.parse("invert"),
                                 backend="cpu")
    assert result == video.VideoResult(3, 25.0, False)
    assert levels_of(tmp_path / "out.avi") == pytest.approx([255 - level for level in LEVELS[:3]], abs=2)
    assert makefiles.video_frames(tmp_path / "out.avi")[1] == pytest.approx(25.0)


def test_a_video_becomes_an_animation_with_its_frame_durations_and_range(tmp_path: Path) -> None:
    """3 fps: 333 ms a frame (Pillow reads the WebP). Catches a rounded-up duration and the range dropped."""
    level_clip(tmp_path / "clip.avi", LEVELS[:5], fps=3.0)
    calls: list[tuple[int, int]] = []
    result = video.process_video(tmp_path / "clip.avi", tmp_path / "out.webp", cvf.Pipeline.parse("invert"),
                                 backend="cpu", frames=(1, 4), progress=lambda done, total: calls.append((done, total)))
    assert (result.frames, result.audio) == (3, False) and calls == [(1, 3), (2, 3), (3, 3)]
    durations, levels = [], []
    with Image.open(tmp_path / "out.webp") as webp:
        for index in range(webp.n_frames):
            webp.seek(index)
            webp.load()
            durations.append(webp.info["duration"])
            levels.append(round(float(np.asarray(webp.convert("L")).mean())))
    assert durations == [333, 333, 333]
    assert levels == pytest.approx([255 - level for level in LEVELS[1:4]], abs=2)


def test_quality_reaches_an_animation_output(tmp_path: Path) -> None:
    """Catches ``quality`` not passed on to the WebP encoder (both files then the same)."""
    make_clip(tmp_path / "clip.avi", count=3)
    sizes = []
    for quality in (5, 100):
        video.process_video(tmp_path / "clip.avi", tmp_path / f"q{quality}.webp", cvf.Pipeline.parse("invert"),
                            backend="cpu", quality=quality)
        sizes.append((tmp_path / f"q{quality}.webp").stat().st_size)
    assert sizes[0] < sizes[1]


@pytest.mark.parametrize("name", ["out.gif", "out.avi"])
def test_an_existing_output_is_replaced_only_with_overwrite(tmp_path: Path, name: str) -> None:
    """Catches the default or the check inverted, and an animation writer told not to overwrite."""
    level_clip(tmp_path / "clip.avi", LEVELS[:2])
    (tmp_path / name).write_bytes(b"before")
    with pytest.raises(OutputExistsError) as raised:
        video.process_video(tmp_path / "clip.avi", tmp_path / name, cvf.Pipeline.parse("invert"), backend="cpu")
    assert str(raised.value) == f"{tmp_path / name}: exists already (pass --overwrite to replace it)"
    assert (tmp_path / name).read_bytes() == b"before"
    result = video.process_video(tmp_path / "clip.avi", tmp_path / name, cvf.Pipeline.parse("invert"),
                                 backend="cpu", overwrite=True)
    assert result.frames == 2 and levels_of(tmp_path / name) == pytest.approx([235, 205], abs=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["clip.avi", name])


def test_the_backend_asked_for_is_the_one_used(tmp_path: Path) -> None:
    """An unknown backend is refused, nothing written. Catches the backend not passed to the pipeline."""
    level_clip(tmp_path / "clip.avi", LEVELS[:2])
    with pytest.raises(UsageError) as raised:
        video.process_video(tmp_path / "clip.avi", tmp_path / "out.avi", cvf.Pipeline.parse("invert"),
                            backend="nonsense")
    assert str(raised.value) == "unknown backend 'nonsense'; choose one of auto, cpu, opencl, cuda"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.avi"]


def test_a_file_that_is_no_video_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / "notes.avi").write_text("not a video\n")
    with pytest.raises(ImageReadError) as raised:
        video.process_video(tmp_path / "notes.avi", tmp_path / "out.avi", cvf.Pipeline.parse("invert"))
    assert str(raised.value) == f"{tmp_path / 'notes.avi'}: cannot be opened as a video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.avi"]


@pytest.mark.parametrize("name", ["out.avi", "out.gif"])
def test_a_range_past_the_end_of_a_video_is_a_read_error_naming_it(tmp_path: Path, name: str) -> None:
    """8 frames, 10: onwards: none. Catches an empty range counted as 1 and the output blamed (it was:
    "out.avi: cannot be written: no frames")."""
    level_clip(tmp_path / "clip.avi", LEVELS)
    reader = video.VideoReader(tmp_path / "clip.avi", (10, None))
    assert reader.count == 0 and list(reader) == []
    reader.close()
    with pytest.raises(ImageReadError) as raised:
        video.process_video(tmp_path / "clip.avi", tmp_path / name, cvf.Pipeline.parse("invert"), frames=(10, None))
    assert str(raised.value) == f"{tmp_path / 'clip.avi'}: no frames could be read from the video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.avi"]


@pytest.mark.parametrize("shape", [(16, 32), (16, 32, 1)])
def test_grey_frames_are_written_as_grey_video(tmp_path: Path, shape: tuple[int, ...],
                                              recwarn: pytest.WarningsRecorder) -> None:
    """Catches one-channel frames (2-D or H x W x 1) not expanded to BGR before ffmpeg's bgr24 pipe, or
    expanded to BGRA (then a warning about an alpha channel the frames never had)."""
    frames = [np.full(shape, level, np.uint8) for level in LEVELS[:3]]
    assert video.write_video(tmp_path / "out.avi", frames, 10.0) == 3
    assert [str(w.message) for w in recwarn] == []
    decoded, _ = makefiles.video_frames(tmp_path / "out.avi")
    assert [frame.shape for frame in decoded] == [(16, 32, 3)] * 3
    assert levels_of(tmp_path / "out.avi") == pytest.approx(LEVELS[:3], abs=2)
    assert max(int(np.ptp(frame.astype(int), axis=2).max()) for frame in decoded) <= 2  # grey: B = G = R


def test_alpha_dropped_from_a_video_is_said_once_and_the_colours_kept(tmp_path: Path) -> None:
    """Catches alpha passed on into ffmpeg's bgr24 pipe (4 bytes a pixel) and a lost warning text."""
    frames = [np.dstack([np.full((16, 32, 3), level, np.uint8), np.full((16, 32), 9, np.uint8)])
              for level in LEVELS[:3]]
    with pytest.warns(UserWarning) as caught:
        assert video.write_video(tmp_path / "out.avi", frames, 10.0) == 3
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'out.avi'}: .avi holds no alpha channel; it is dropped (.webm keeps it)"]
    assert levels_of(tmp_path / "out.avi") == pytest.approx(LEVELS[:3], abs=2)


def test_sixteen_bit_frames_are_scaled_to_eight_with_one_warning(tmp_path: Path) -> None:
    """65535 is 255: catches the depth conversion losing the target's name (the warning's first word)."""
    frames = [np.full((16, 32, 3), level * 257, np.uint16) for level in LEVELS[:3]]
    with pytest.warns(UserWarning) as caught:
        assert video.write_video(tmp_path / "out.avi", frames, 10.0) == 3
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'out.avi'}: .avi cannot hold uint16; stored as uint8 (0..65535 scaled to 0..255)"]
    assert levels_of(tmp_path / "out.avi") == pytest.approx(LEVELS[:3], abs=2)


def test_write_video_names_an_unknown_container_and_refuses_to_overwrite(tmp_path: Path) -> None:
    with pytest.raises(ImageWriteError) as raised:
        video.write_video(tmp_path / "out.xyz", [smooth_frame(0)], 10.0)
    assert str(raised.value) == f"{tmp_path / 'out.xyz'}: cannot be written: no video container for '.xyz'"
    assert video.write_video(tmp_path / "new.avi", [smooth_frame(0)], 10.0, overwrite=False) == 1
    (tmp_path / "old.avi").write_bytes(b"before")
    with pytest.raises(OutputExistsError) as exists:
        video.write_video(tmp_path / "old.avi", [smooth_frame(0)], 10.0, overwrite=False)
    assert str(exists.value) == f"{tmp_path / 'old.avi'}: exists already (pass --overwrite to replace it)"
    assert (tmp_path / "old.avi").read_bytes() == b"before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.avi", "old.avi"]


def test_quality_runs_from_x264s_coarsest_to_lossless(tmp_path: Path) -> None:
    """x264 records its rate control in the stream: quality 1 is CRF 51, 100 lossless (QP 0), none CRF 23.

    Catches the quality scale off by one step at either end."""
    settings = {}
    for quality in (1, 100, None):
        video.write_video(tmp_path / f"q{quality}.mp4", [smooth_frame(0)], 10.0, quality=quality)
        data = (tmp_path / f"q{quality}.mp4").read_bytes()
        found = re.search(rb"rc=(\w+) mbtree=\d (crf|qp)=([\d.]+)", data)
        assert found is not None
        settings[quality] = b" ".join(found.groups()).decode()
    assert settings == {1: "crf crf 51.0", 100: "cqp qp 0", None: "crf crf 23.0"}


def test_the_audio_of_a_frame_range_starts_with_its_first_frame(tmp_path: Path) -> None:
    """2 s at 10 fps, silent for 1 s then a tone (ffmpeg writes it); frames 10: keep the tone from their start.

    Catches the audio offset (frame 10 at 10 fps: 1 s) computed wrongly and the audio result lost."""
    ffmpeg = ffmpeg_binary() or "ffmpeg"
    subprocess.run([ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc=size=32x16:rate=10:duration=2", "-f",
                    "lavfi", "-i", "aevalsrc='if(gte(t,1),0.5*sin(2*PI*440*t),0)':s=8000:d=2", "-c:v", "mjpeg",
                    "-c:a", "pcm_s16le", str(tmp_path / "clip.mkv")], check=True)
    result = video.process_video(tmp_path / "clip.mkv", tmp_path / "out.mkv", cvf.Pipeline.parse("invert"),
                                 frames=(10, None))
    assert result == video.VideoResult(10, 10.0, True)
    raw = subprocess.run([ffmpeg, "-v", "error", "-i", str(tmp_path / "out.mkv"), "-map", "0:a", "-f", "s16le", "-"],
                         capture_output=True, check=True).stdout
    audio = np.abs(np.frombuffer(raw, np.int16).astype(int))
    assert len(audio) > 7000 and audio[:800].max() > 15000  # about 1 s of tone (0.5 of full scale) from the start
