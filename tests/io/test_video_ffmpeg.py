"""Videos written by ffmpeg, checked from the outside: the stream ffmpeg reports, the frames it decodes, audio.

The documented settings (docs/formats.md, "Video": CRF or q:v per ``--quality``, the pixel formats) are
checked against reference files the test encodes itself with ffmpeg and those settings; sources with
sound come from ffmpeg's ``testsrc`` and ``sine``. Failures of ffmpeg are played by a small script on
PATH (the video extra not installed), as ffmpeg fails: a message on stderr, an exit status.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import ImageWriteError
from cvfilters.io import video
from cvfilters.io.video import ffmpeg_binary

FFMPEG = ffmpeg_binary()
pytestmark = [pytest.mark.skipif(FFMPEG is None, reason="no ffmpeg binary (install the video extra)"),
              pytest.mark.skipif(sys.platform == "win32", reason="stand-in ffmpeg scripts are POSIX shell")]


def ffmpeg(*args: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(FFMPEG), "-v", "error", "-y", *map(str, args)], capture_output=True, check=True)


def noisy_frames(count: int, width: int, height: int, channels: int = 3) -> list[np.ndarray]:
    """Smooth gradients with some noise: every codec setting changes what comes back."""
    rng = np.random.default_rng(width * 100 + height)
    y, x = np.mgrid[0:height, 0:width]
    out = []
    for i in range(count):
        planes = [(x * 4 + i * 9) % 256, (y * 5 + i * 3) % 256, (x + y * 2) % 256, (x * 3 + y + i * 40) % 256]
        smooth = np.dstack(planes[:channels]).astype(int)
        out.append(np.clip(smooth + rng.integers(-20, 21, smooth.shape), 0, 255).astype(np.uint8))
    return out


def stream_facts(path: Path) -> dict[str, object]:
    """What ffmpeg's own probe (``ffmpeg -i``) says of a file: video codec, pixel format, size, rate, audio."""
    probe = subprocess.run([str(FFMPEG), "-hide_banner", "-i", str(path)], capture_output=True, text=True).stderr
    line = next(line for line in probe.splitlines() if "Video:" in line)
    found = re.search(r"Video: (\w+)[^,]*, (\w+)", line)
    size = re.search(r", (\d+)x(\d+)[ ,]", line)
    rate = re.search(r", ([\d.]+) fps", line)
    audio = re.search(r"Audio: (\w+)", probe)
    assert found and size and rate, probe
    return {"codec": found[1], "pix_fmt": found[2], "size": (int(size[1]), int(size[2])), "fps": float(rate[1]),
            "alpha": "alpha_mode" in probe, "audio": audio[1] if audio else None}


def decoded(path: Path, width: int, height: int) -> np.ndarray:
    """Every frame as ffmpeg decodes it, BGRA (WebM through libvpx, which decodes the alpha plane)."""
    decoder = ["-c:v", "libvpx-vp9"] if path.suffix == ".webm" else []
    raw = ffmpeg(*decoder, "-i", path, "-f", "rawvideo", "-pix_fmt", "bgra", "-").stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 4)


def reference(path: Path, frames: list[np.ndarray], encoder: list[str]) -> None:
    """The frames encoded by ffmpeg run here with the documented settings."""
    height, width, channels = frames[0].shape
    layout = "bgra" if channels == 4 else "bgr24"
    subprocess.run([str(FFMPEG), "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", layout,
                    "-s", f"{width}x{height}", "-r", "10", "-i", "-", *encoder, str(path)],
                   input=b"".join(f.tobytes() for f in frames), check=True)


# docs/formats.md: H.264 yuv420p, CRF 51 (quality 1) .. 0 (100), default 23; VP9 constant quality, CRF 63 .. 0,
# default 31, alpha kept as yuva420p; Motion JPEG q:v 31 .. 2, default 3 (full-range 4:2:0, as MJPEG players expect)
DOCUMENTED = [
    (".mp4", 3, None, ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "23"]),
    (".mp4", 3, 100, ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "0"]),
    (".mp4", 3, 1, ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "51"]),
    (".mkv", 3, None, ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "23"]),
    (".webm", 3, None, ["-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p", "-crf", "31", "-b:v", "0"]),
    (".webm", 3, 100, ["-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p", "-crf", "0", "-b:v", "0"]),
    (".webm", 3, 1, ["-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p", "-crf", "63", "-b:v", "0"]),
    (".webm", 4, None, ["-c:v", "libvpx-vp9", "-pix_fmt", "yuva420p", "-crf", "31", "-b:v", "0"]),
    (".avi", 3, None, ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p", "-q:v", "3"]),
    (".avi", 3, 100, ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p", "-q:v", "2"]),
    (".avi", 3, 1, ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p", "-q:v", "31"]),
]


@pytest.mark.parametrize(("ext", "channels", "quality", "encoder"), DOCUMENTED)
def test_each_container_is_encoded_with_its_documented_settings(tmp_path: Path, ext: str, channels: int,
                                                                 quality: int | None, encoder: list[str]) -> None:
    """A wrong codec branch, quality mapping, default, pixel format or input layout changes the frames decoded."""
    frames = noisy_frames(3, 64, 40, channels)  # 64 and 40: even, and not multiples of 3
    assert video.write_video(tmp_path / f"out{ext}", frames, 10.0, quality=quality) == 3
    reference(tmp_path / f"ref{ext}", frames, encoder)
    facts = stream_facts(tmp_path / f"out{ext}")
    assert facts == stream_facts(tmp_path / f"ref{ext}")
    assert facts["size"] == (64, 40) and facts["fps"] == 10.0 and facts["alpha"] == (channels == 4)
    ours, theirs = decoded(tmp_path / f"out{ext}", 64, 40), decoded(tmp_path / f"ref{ext}", 64, 40)
    assert ours.shape == (3, 40, 64, 4)
    np.testing.assert_array_equal(ours, theirs)  # the same encoder and settings: the same pixels, to the bit
    if quality != 1:  # and close to what went in (lossy: 4:2:0 chroma, quantised)
        assert np.abs(ours[..., :channels].astype(int) - np.stack(frames)).mean() < 12


@pytest.mark.parametrize(("width", "height"), [(33, 20), (32, 21)])
def test_odd_sized_frames_are_written_with_full_chroma(tmp_path: Path, width: int, height: int) -> None:
    """4:2:0 cannot hold an odd width or height (x264 refuses it): such frames go out as yuv444p, complete."""
    frames = noisy_frames(2, width, height)
    assert video.write_video(tmp_path / "odd.mp4", frames, 10.0, quality=100) == 2
    facts = stream_facts(tmp_path / "odd.mp4")
    assert (facts["codec"], facts["pix_fmt"], facts["size"]) == ("h264", "yuv444p", (width, height))
    back = decoded(tmp_path / "odd.mp4", width, height)[..., :3].astype(int)
    assert back.shape[0] == 2 and np.abs(back - np.stack(frames)).max() <= 3  # lossless, but for YUV rounding


# ---------------------------------------------------------------- audio
def sound_clip(path: Path, audio: bool = True) -> None:
    """One second of ffmpeg's test pattern (10 frames of 64x48, Motion JPEG), with a 440 Hz tone or silent."""
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000", "-c:a", "pcm_s16le"] if audio else []
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48:rate=10", *tone, "-t", "1", "-c:v", "mjpeg", "-q:v", "3", path)


def samples(path: Path) -> np.ndarray:
    return np.frombuffer(ffmpeg("-i", path, "-map", "0:a", "-f", "s16le", "-").stdout, np.int16)


def test_a_videos_audio_track_is_copied_into_the_output(tmp_path: Path) -> None:
    """The sound is there afterwards, the same samples, and the remuxed file replaced the output (no stray file)."""
    sound_clip(tmp_path / "clip.avi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = video.process_video(tmp_path / "clip.avi", tmp_path / "out.mkv", cvf.Pipeline.parse("invert"),
                                     backend="cpu")
    assert (result.frames, result.audio) == (10, True)
    facts = stream_facts(tmp_path / "out.mkv")
    assert (facts["codec"], facts["audio"], facts["size"]) == ("h264", "pcm_s16le", (64, 48))
    source, kept = samples(tmp_path / "clip.avi"), samples(tmp_path / "out.mkv")
    assert len(kept) >= 7200 and np.array_equal(kept, source[: len(kept)])  # copied, not re-encoded; ~1 s
    assert len(decoded(tmp_path / "out.mkv", 64, 48)) == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.avi", "out.mkv"]


def test_a_silent_video_reports_no_audio(tmp_path: Path) -> None:
    """Without a sound track the result says so and the output has no audio stream."""
    sound_clip(tmp_path / "clip.avi", audio=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = video.process_video(tmp_path / "clip.avi", tmp_path / "out.mp4", cvf.Pipeline.parse("invert"),
                                     backend="cpu")
    assert (result.frames, result.audio) == (10, False)
    assert stream_facts(tmp_path / "out.mp4")["audio"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.avi", "out.mp4"]


# ---------------------------------------------------------------- ffmpeg found on PATH, stand-ins that fail
@pytest.fixture()
def path_ffmpeg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on PATH for an ``ffmpeg``, and imageio-ffmpeg (the video extra) not installed."""
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import fails: ImportError
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ.get('PATH', '')}")
    return directory


def stand_in(directory: Path, script: str) -> None:
    (directory / "ffmpeg").write_text(f"#!/bin/sh\n{script}\n")
    (directory / "ffmpeg").chmod(0o755)


def test_without_the_video_extra_ffmpeg_on_path_writes_the_video(tmp_path: Path, path_ffmpeg: Path) -> None:
    """The fallback to an ffmpeg on PATH: WebM (which only ffmpeg writes) comes out as VP9."""
    (path_ffmpeg / "ffmpeg").symlink_to(str(FFMPEG))
    assert video.ffmpeg_binary() == str(path_ffmpeg / "ffmpeg")
    assert video.write_video(tmp_path / "out.webm", noisy_frames(2, 16, 8), 10.0) == 2
    assert stream_facts(tmp_path / "out.webm")["codec"] == "vp9"


@pytest.mark.parametrize(("script", "reason"), [
    ("cat >/dev/null\nprintf 'frame=1\\n\\n  Error while opening encoder  \\n  Conversion \\377 failed  \\n\\n' >&2"
     "\nexit 1", "ffmpeg failed: Conversion \ufffd failed"),
    ("cat >/dev/null\nexit 3", "ffmpeg failed: exit status 3"),
])
def test_ffmpeg_failing_at_the_end_is_one_error_with_its_last_line(tmp_path: Path, path_ffmpeg: Path, script: str,
                                                                     reason: str) -> None:
    """ffmpeg read every frame, then failed: its last message (undecodable bytes replaced) or its status."""
    stand_in(path_ffmpeg, script)
    with pytest.raises(ImageWriteError) as raised:
        video.write_video(tmp_path / "out.mp4", noisy_frames(3, 16, 8), 10.0)
    assert str(raised.value) == f"{tmp_path / 'out.mp4'}: cannot be written: {reason}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]


@pytest.mark.parametrize(("script", "reason"), [
    ("printf 'first\\n  Unknown encoder libx264  \\n' >&2\nexit 1", "Unknown encoder libx264"),
    ("exit 1", "ffmpeg stopped"),
])
def test_ffmpeg_stopping_before_the_frames_is_its_message(tmp_path: Path, path_ffmpeg: Path, script: str,
                                                          reason: str) -> None:
    """ffmpeg exits without reading (a frame larger than the pipe then cannot be written): its message, once."""
    stand_in(path_ffmpeg, script)
    with pytest.raises(ImageWriteError) as raised:
        video.write_video(tmp_path / "out.mp4", noisy_frames(2, 256, 128), 10.0)
    assert str(raised.value) == f"{tmp_path / 'out.mp4'}: cannot be written: {reason}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]


def test_ffmpeg_that_stops_reading_after_the_last_write_is_its_message(tmp_path: Path, path_ffmpeg: Path) -> None:
    """The frames still buffered when ffmpeg closed its input: the broken pipe on closing is not the error."""
    marker = tmp_path / "closed"
    stand_in(path_ffmpeg, f"exec 0<&-\n: > '{marker}'\nprintf 'Invalid data found\\n' >&2\nexit 1")

    def frames() -> Iterator[np.ndarray]:
        yield from noisy_frames(1, 8, 4)  # 96 bytes: held in the pipe's buffer, not yet written
        for _ in range(1000):  # until ffmpeg's input is closed
            if marker.exists():
                break
            time.sleep(0.01)
        yield from noisy_frames(1, 8, 4)

    with pytest.raises(ImageWriteError) as raised:
        video.write_video(tmp_path / "out.mp4", frames(), 10.0)
    assert str(raised.value) == f"{tmp_path / 'out.mp4'}: cannot be written: ffmpeg failed: Invalid data found"


@pytest.mark.parametrize(("mux", "reason"), [
    ('printf "first\\n  second  \\nCould not write header  \\n\\n" >&2; : > "$last"; exit 1', "Could not write header"),
    ("exit 1", "no message"),
])
def test_audio_ffmpeg_cannot_copy_is_dropped_with_its_reason(tmp_path: Path, path_ffmpeg: Path, mux: str,
                                                             reason: str) -> None:
    """The copy fails (a partial file left or none): the video stays, without sound, and a warning says why."""
    stand_in(path_ffmpeg, f'for last; do :; done\ncase " $* " in *" -c:a "*) {mux};; esac\nexec "{FFMPEG}" "$@"')
    sound_clip(tmp_path / "clip.avi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = video.process_video(tmp_path / "clip.avi", tmp_path / "out.mkv", cvf.Pipeline.parse("invert"),
                                     backend="cpu")
    assert (result.frames, result.audio) == (10, False)
    assert [(w.category, w.filename, str(w.message)) for w in caught] == [
        (video.AudioDroppedWarning, __file__,
         f"{tmp_path / 'clip.avi'}: audio track dropped: ffmpeg could not copy it ({reason})")]
    facts = stream_facts(tmp_path / "out.mkv")
    assert (facts["codec"], facts["audio"]) == ("h264", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "clip.avi", "out.mkv"]
