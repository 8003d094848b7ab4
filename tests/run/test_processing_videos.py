"""cvfilters.run.processing: one video task (``process``'s video branch): the skip, the options passed to
the video writer, the report and the progress callback, and an animation written as a video.

References: OpenCV's own decode of the written file (tests.makefiles.video_frames) and numpy's
``255 - x`` for invert; the MJPG / ffmpeg round trip is allowed a few levels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from cvfilters.engine.pipeline import Pipeline
from cvfilters.io.video import ffmpeg_binary
from cvfilters.run import processing
from cvfilters.run.tasks import Options, Outcome, Task
from tests import makefiles
from tests.run.test_batch import make_clip
from tests.run.test_processing_images import over_limit, skipped

INVERT = Pipeline.parse("invert").to_dict()


def clip(path: Path) -> list[np.ndarray]:
    """A 12-frame MJPG clip at 10 fps (tests.run.test_batch); its frames as OpenCV decodes them."""
    make_clip(path)
    return makefiles.video_frames(path)[0]


def inverted_error(target: Path, source: list[np.ndarray]) -> float:
    """Mean absolute difference between the written video's frames and ``255 - source``."""
    frames, _ = makefiles.video_frames(target)
    assert len(frames) == len(source)
    return float(np.mean([np.abs(got.astype(int) - (255 - want.astype(int))).mean()
                          for got, want in zip(frames, source, strict=True)]))


def test_a_video_reports_its_frames_and_silence_and_its_progress_frame_by_frame(tmp_path: Path) -> None:
    """A silent clip's report says "audio none" (it said "kept", or a changed word), and progress(done,
    total) is called after each frame (the callback was dropped)."""
    clip(tmp_path / "in.avi")
    calls: list[tuple[int, int]] = []
    outcome = processing.process(Task(tmp_path / "in.avi", tmp_path / "out.avi"), Options(INVERT),
                                 progress=lambda done, total: calls.append((done, total)))
    assert outcome.status == "done", outcome
    assert outcome.report == ["video: 12 frames at 10 fps, audio none"]
    assert calls == [(done, 12) for done in range(1, 13)]


def test_an_existing_video_output_is_skipped_or_replaced_with_overwrite(tmp_path: Path) -> None:
    """An existing output is skipped, and replaced with --overwrite (it was skipped whatever, or the
    video writer refused it as existing)."""
    source = clip(tmp_path / "in.avi")
    (tmp_path / "out.avi").write_bytes(b"old")
    task = Task(tmp_path / "in.avi", tmp_path / "out.avi")
    assert processing.process(task, Options(INVERT)) == Outcome(task, "skipped", skipped(tmp_path / "out.avi"))
    assert (tmp_path / "out.avi").read_bytes() == b"old"
    assert processing.process(task, Options(INVERT, overwrite=True)).status == "done"
    assert inverted_error(tmp_path / "out.avi", source) < 3


@pytest.mark.skipif(ffmpeg_binary() is None, reason="no ffmpeg binary (install the video extra)")
def test_a_video_takes_the_quality_asked(tmp_path: Path) -> None:
    """--quality reaches the video encoder (it was dropped: every quality gave the default's file):
    quality 5 is a smaller file and further from the filtered frames than quality 95."""
    source = clip(tmp_path / "in.avi")
    sizes, errors = [], []
    for quality in (5, 95):
        target = tmp_path / f"q{quality}.avi"
        assert processing.process(Task(tmp_path / "in.avi", target), Options(INVERT, quality=quality)).status == "done"
        sizes.append(target.stat().st_size)
        errors.append(inverted_error(target, source))
    assert sizes[0] < sizes[1] and errors[0] > errors[1] + 0.5, (sizes, errors)


def test_a_video_runs_on_the_backend_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--backend reaches each frame's run (it was dropped: every frame ran on "auto")."""
    seen: list[str] = []
    run = Pipeline.__call__

    def spy(self: Pipeline, image: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("backend", "auto"))
        return run(self, image, **kwargs)

    monkeypatch.setattr(Pipeline, "__call__", spy)
    make_clip(tmp_path / "in.avi", frames=3)
    outcome = processing.process(Task(tmp_path / "in.avi", tmp_path / "out.avi"), Options(INVERT, backend="cpu"))
    assert outcome.status == "done" and seen == ["cpu"] * 3, (outcome, seen)


def test_an_animation_is_written_as_a_video_after_its_header_is_checked(tmp_path: Path) -> None:
    """A GIF to an AVI is filtered frame by frame (it went to the still-image writer, which has no AVI);
    a GIF over --max-pixels is an error naming it even where its output exists (the header check
    read nothing, took no name, or the default limit, and the output was skipped)."""
    greys = (0, 100, 200)
    frames = [Image.new("RGB", (32, 24), (v, v, v)) for v in greys]
    frames[0].save(tmp_path / "in.gif", save_all=True, append_images=frames[1:], duration=100)
    outcome = processing.process(Task(tmp_path / "in.gif", tmp_path / "out.avi"), Options(INVERT))
    assert outcome.status == "done" and outcome.report[0].startswith("video: 3 frames"), outcome
    assert inverted_error(tmp_path / "out.avi", [np.full((24, 32, 3), v, np.uint8) for v in greys]) < 3
    task = Task(tmp_path / "in.gif", tmp_path / "out.avi")
    outcome = processing.process(task, Options(INVERT, max_pixels=500))
    assert outcome == Outcome(task, "failed", over_limit(str(tmp_path / "in.gif"), "32x24", 768, 500))
