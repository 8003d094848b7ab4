"""Videos as first-class outputs: any size, animations in and out, real codecs, checked writes.

Clips are made by OpenCV's MJPG writer (independent of the ffmpeg path under test); results are
read back by OpenCV's VideoCapture and the codec named by ffmpeg's own probe.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

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
    failed = apply(tmp_path / "clip.avi", "-o", tmp_path / "good.mp4", "-f", "invert", "--quality", "100",
                   shell_prefix="ulimit -f 8")  # files over 8 KiB fail (EFBIG/SIGXFSZ): a full disk
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
