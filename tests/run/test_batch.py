"""Batch planning and execution, video files, device assignment, Dask and interrupts."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io.video import ffmpeg_binary
from cvfilters.run import batch, executors, planning, processing
from cvfilters.run.tasks import Options, Task
from tests import cli_runner, makefiles
from tests.conftest import photo

INVERT = Pipeline.parse("invert").to_dict()


def write_images(root: Path, names: list[str], size: tuple[int, int] = (24, 32)) -> None:
    for i, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(path), np.roll(photo(*size), 5 * i, axis=1))


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_plan_mirrors_trees_renames_and_reports_collisions(tmp_path: Path) -> None:
    write_images(tmp_path / "in", ["a.png", "sub/b.jpg", "sub/deep/c.png"])
    (tmp_path / "in" / "notes.txt").write_text("not an image")
    (tmp_path / "in" / "clip.avi").write_bytes(b"")
    tasks, failures = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"), recursive=True,
                                    extension=".webp", name_suffix="_x")
    assert not failures
    assert {t.target.relative_to(tmp_path / "out").as_posix() for t in tasks} == {
        "a_x.webp", "sub/b_x.webp", "sub/deep/c_x.webp", "clip_x.avi"}
    flat, _ = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"))
    assert {t.source.name for t in flat} == {"a.png", "clip.avi"}
    same_name, clashes = planning.plan([str(tmp_path / "in/a.png"), str(tmp_path / "in/sub/deep/c.png"),
                                        str(tmp_path / "in/a.png")], str(tmp_path / "out"))
    assert len(same_name) == 2 and len(clashes) == 1 and "also the output of" in clashes[0].message
    nothing, missing = planning.plan([str(tmp_path / "none/*.png")], str(tmp_path / "out"))
    assert not nothing and "no files match" in missing[0].message


def test_batch_counts_failures_skips_and_leaves_no_partial_files(tmp_path: Path) -> None:
    write_images(tmp_path / "in", ["a.png", "sub/b.png", "sub/c.png"])
    (tmp_path / "in" / "sub" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(200))
    (tmp_path / "in" / "text.png").write_text("hello")
    write_images(tmp_path / "out", ["sub/c.png"])
    existing = (tmp_path / "out" / "sub" / "c.png").read_bytes()
    sources = {p: p.read_bytes() for p in (tmp_path / "in").rglob("*") if p.is_file()}
    tasks, _ = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"), recursive=True)
    summary = batch.Summary()
    outcomes = list(batch.timed(batch.run(tasks, Options(INVERT)), summary))
    assert (summary.done, summary.skipped, summary.failed) == (2, 1, 2)
    assert {o.task.source.name for o in outcomes if o.status == "failed"} == {"broken.png", "text.png"}
    assert files(tmp_path / "out") == {"a.png", "sub/b.png", "sub/c.png"}
    assert (tmp_path / "out" / "sub" / "c.png").read_bytes() == existing
    assert {p: p.read_bytes() for p in sources} == sources  # inputs untouched
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "out" / "a.png")),
                                  255 - cv2.imread(str(tmp_path / "in" / "a.png")))
    assert "done 2, skipped 1" in summary.line() and "failed 2" in summary.line()


def test_local_pool_gives_the_same_outputs_as_in_process(tmp_path: Path) -> None:
    write_images(tmp_path / "in", [f"{i}.png" for i in range(4)])
    options = Options(Pipeline.parse("gaussian_blur:sigma=2 | vignette").to_dict())
    for name, jobs in (("one", 1), ("two", 2)):
        tasks, _ = planning.plan([str(tmp_path / "in")], str(tmp_path / name))
        with executors.choose(jobs, len(tasks), backend="cpu", devices=None, scheduler=None) as executor:
            assert (executor is None) == (jobs == 1)
            assert all(o.status == "done" for o in batch.run(tasks, options, executor=executor))
    for i in range(4):
        assert (tmp_path / "one" / f"{i}.png").read_bytes() == (tmp_path / "two" / f"{i}.png").read_bytes()


def test_dask_local_cluster_matches_local_run(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    write_images(tmp_path / "in", [f"{i}.png" for i in range(3)])
    subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in"), "-o", str(tmp_path / "local"),
                    "-f", "pixellate:size=4", "--jobs", "1"], check=True, capture_output=True)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        run = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in"),
                              "-o", str(tmp_path / "dask"), "-f", "pixellate:size=4",
                              "--scheduler", cluster.scheduler_address], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    for i in range(3):
        assert (tmp_path / "dask" / f"{i}.png").read_bytes() == (tmp_path / "local" / f"{i}.png").read_bytes()


def test_unreachable_scheduler_is_a_usage_error(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    write_images(tmp_path / "in", ["a.png"])
    run = cli_runner.run_cli("apply", tmp_path / "in", "-o", tmp_path / "o", "-f", "invert",
                             "--scheduler", "tcp://127.0.0.1:9")
    assert run.returncode == 2 and "cannot connect" in run.stderr and not (tmp_path / "o").exists()
    run = cli_runner.run_cli("apply", tmp_path / "in", "-o", tmp_path / "o", "-f", "invert",
                             "--scheduler", "tcp://127.0.0.1:port")
    assert run.returncode == 2 and "--scheduler tcp://127.0.0.1:port: not a scheduler address" in run.stderr


def test_device_ids_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors, "_device_count", lambda backend: 3)
    assert executors.device_ids("all", "cuda") == [0, 1, 2]
    assert executors.device_ids("2,0", "cuda") == [2, 0]
    for spec, message in [("3", "no device 3"), ("0,0", "3 cuda GPU"), ("x", "must be 'all'"), ("", "3 cuda")]:
        with pytest.raises(UsageError, match=message):
            executors.device_ids(spec, "cuda")
    with pytest.raises(UsageError, match="needs --backend cuda or opencl"):
        executors.device_ids("all", "cpu")


def test_device_workers_pin_their_device(monkeypatch: pytest.MonkeyPatch) -> None:
    devices: queue.Queue[int] = queue.Queue()
    devices.put(1)
    monkeypatch.setenv("OPENCV_OPENCL_DEVICE", ":CPU:")
    previous = signal.getsignal(signal.SIGINT)
    try:
        executors._init_worker(devices, "opencl")
        assert os.environ["OPENCV_OPENCL_DEVICE"] == ":GPU:1" and devices.empty()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
        cv2.setNumThreads(-1)
    pinned: list[int] = []
    monkeypatch.setattr(cv2.cuda, "setDevice", pinned.append)
    devices.put(2)
    try:
        executors._init_worker(devices, "cuda")
    finally:
        signal.signal(signal.SIGINT, previous)
        cv2.setNumThreads(-1)
    assert pinned == [2]


def make_clip(path: Path, frames: int = 12, fps: float = 10.0) -> list[np.ndarray]:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build has no video writer for MJPG AVI")
    written = []
    for i in range(frames):
        frame = cv2.resize(photo(48, 64), (64, 48))
        frame = np.roll(frame, 4 * i, axis=1)
        writer.write(frame)
        written.append(frame)
    writer.release()
    return written


def test_video_frames_are_filtered_and_fps_kept(tmp_path: Path) -> None:
    make_clip(tmp_path / "in.avi")
    decoded, _ = makefiles.video_frames(tmp_path / "in.avi")
    run = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in.avi"), "-o",
                          str(tmp_path / "out.avi"), "-f", "invert"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    frames, fps = makefiles.video_frames(tmp_path / "out.avi")
    assert len(frames) == len(decoded) == 12 and fps == pytest.approx(10.0)
    for got, source in zip(frames, decoded, strict=True):
        assert got.shape == source.shape
        assert np.abs(got.astype(int) - (255 - source.astype(int))).mean() < 3  # MJPG re-encoding
    ranged = processing.process(Task(tmp_path / "in.avi", tmp_path / "part.avi"),
                                Options(INVERT, frames=(3, 8)))
    assert ranged.status == "done" and len(makefiles.video_frames(tmp_path / "part.avi")[0]) == 5


@pytest.mark.skipif(ffmpeg_binary() is None, reason="no ffmpeg binary (install the video extra)")
def test_video_audio_track_is_kept(tmp_path: Path) -> None:
    make_clip(tmp_path / "silent.avi", frames=20)
    subprocess.run([ffmpeg_binary(), "-v", "error", "-i", str(tmp_path / "silent.avi"), "-f", "lavfi", "-i",
                    "sine=frequency=440:duration=2", "-c:v", "copy", "-c:a", "pcm_s16le", "-shortest",
                    str(tmp_path / "in.avi")], check=True)
    outcome = processing.process(Task(tmp_path / "in.avi", tmp_path / "out.avi"), Options(INVERT))
    assert outcome.status == "done" and "audio kept" in outcome.report[0]
    probe = subprocess.run([ffmpeg_binary(), "-hide_banner", "-i", str(tmp_path / "out.avi")],
                           capture_output=True, text=True)
    assert "Audio:" in probe.stderr and len(makefiles.video_frames(tmp_path / "out.avi")[0]) == 20


def test_broken_video_fails_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "bad.mp4").write_bytes(os.urandom(1000))
    outcome = processing.process(Task(tmp_path / "bad.mp4", tmp_path / "out.mp4"), Options(INVERT))
    assert outcome.status == "failed" and "bad.mp4" in outcome.message
    assert not list(tmp_path.glob("*out*")) and not list(tmp_path.glob(".*"))


def test_sigint_stops_cleanly_without_partial_outputs(tmp_path: Path) -> None:
    write_images(tmp_path / "in", [f"{i:03}.png" for i in range(60)], size=(600, 800))
    process = subprocess.Popen([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in"), "-o",
                                str(tmp_path / "out"), "-f", "gaussian_blur:sigma=6", "--jobs", "2"],
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(files(tmp_path / "out") if (tmp_path / "out").exists() else ()) < 3:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    written = list((tmp_path / "out").iterdir())
    assert 3 <= len(written) < 60
    assert not [p for p in written if p.name.startswith(".")]  # no temporary files left
    for path in written:
        assert cv2.imread(str(path)) is not None  # every output is complete


def test_outputs_equal_python_api(tmp_path: Path) -> None:
    write_images(tmp_path / "in", ["a.png"])
    outcome = processing.process(Task(tmp_path / "in/a.png", tmp_path / "b.png"),
                                 Options(Pipeline.parse("sobel:magnitude=true").to_dict()))
    assert outcome.status == "done"
    expected = cvf.apply(cvf.read(tmp_path / "in/a.png"), "sobel", magnitude=True)
    np.testing.assert_array_equal(cvf.read(tmp_path / "b.png"), expected)


def test_memory_estimate_refuses_what_cannot_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cvfilters.run import limits

    write_images(tmp_path, ["a.png"], size=(100, 200))
    needed = limits.estimate_bytes(100, 200, 3, 1)
    assert needed == 100 * 200 * 3 * (2 + 12)
    monkeypatch.setattr(limits, "available_bytes", lambda: 3 * needed)
    fits = processing.process(Task(tmp_path / "a.png", tmp_path / "ok.png"), Options(INVERT, workers=3))
    assert fits.status == "done"
    refused = processing.process(Task(tmp_path / "a.png", tmp_path / "no.png"), Options(INVERT, workers=4))
    assert refused.status == "failed" and "a.png: needs about" in refused.message and "x 4 worker(s)" in refused.message
    assert not (tmp_path / "no.png").exists()


def test_a_batch_syncs_each_file_before_its_rename_and_each_folder_once_at_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The durability rule of a batch: data fsynced before the rename; one folder fsync per folder, last."""
    write_images(tmp_path / "in", ["a.png", "b.png", "sub/c.png"])
    tasks, failures = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"), recursive=True)
    assert not failures and len(tasks) == 3
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        events.append(("rename", os.fspath(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    options = Options(Pipeline.parse(["invert"]).to_dict(), "cpu")
    assert [o.status for o in batch.run(tasks, options)] == ["done"] * 3
    renames = [i for i, (kind, _) in enumerate(events) if kind == "rename"]
    assert len(renames) == 3
    for index in renames:  # the fsync just before each rename is of that file's data (its temporary name)
        kind, path = events[index - 1]
        assert kind == "fsync" and Path(path).name.endswith(".tmp")
        assert Path(path).parent == Path(events[index][1]).parent
    folders = [path for kind, path in events[renames[-1] + 1:] if kind == "fsync"]
    assert sorted(folders) == sorted({str(tmp_path / "out"), str(tmp_path / "out" / "sub")})
    assert not [path for kind, path in events[:renames[-1]] if kind == "fsync" and os.path.isdir(path)]


def test_pool_workers_adopt_the_parents_gpu_answers_instead_of_probing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker probing OpenCL again would cost it tenths of a second and the driver's memory."""
    from cvfilters import backends
    from cvfilters.backends.base import Availability

    seeded = {name: Availability(name, False, reason=f"seeded by the test for {name}") for name in ("cuda", "opencl")}
    monkeypatch.setattr(backends, "_PROBED", dict(seeded))
    pool = executors.local_pool(2, backend="auto")
    try:
        assert pool.submit(backends.probed).result(timeout=120) == seeded
    finally:
        pool.shutdown(wait=True)
    pool = executors.local_pool(2, backend="cpu")  # a named backend: nothing to hand over
    try:
        assert pool.submit(backends.probed).result(timeout=120) == {}
    finally:
        pool.shutdown(wait=True)
