"""cvfilters.run.processing: one outcome per file whatever goes wrong, dry runs, and what a done outcome reports.

A stand-in pipeline raises each kind of error inside :func:`processing.process`; the messages are
written out by hand, and the output folder is checked to hold nothing afterwards (no partial
output, no temporary file).
"""

from __future__ import annotations

import errno
import io
import warnings
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

from cvfilters.core.errors import CvfError, ImageReadError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.registry.params import allow_large
from cvfilters.run import processing
from cvfilters.run.tasks import Options, Outcome, Task

INVERT = Pipeline.parse("invert").to_dict()


def grey(path: Path, value: int = 7) -> np.ndarray:
    image = np.full((3, 4), value, np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), image)
    return image


class Raising:
    """A pipeline whose run raises ``error`` (after warning ``warn`` when given)."""

    def __init__(self, error: BaseException | None, warn: list[str] | None = None) -> None:
        self.error, self.warn = error, warn or []

    def run(self, image: np.ndarray, **_: Any) -> Any:
        for message in self.warn:
            warnings.warn(message, stacklevel=1)
        if self.error is not None:
            raise self.error
        return 255 - image, Pipeline.parse("invert").run(image)[1]


@pytest.mark.parametrize(("error", "message"), [
    (cv2.error("OpenCV(4) resize.cpp:1: error: (-215)\n\nAssertion failed  "), "OpenCV error: Assertion failed"),
    (cv2.error(""), "OpenCV error: error"),
    (MemoryError(), "out of memory"),
    (OSError(errno.ENOSPC, "No space left on device"), "cannot write {target}: No space left on device"),
    (OSError("plain"), "cannot write {target}: plain"),
    (CvfError("k-means cannot cluster NaN"), "k-means cannot cluster NaN"),
    (RuntimeError("boom\nthe last line\n  \n"), "internal error: RuntimeError: the last line"),
    (RuntimeError("one\ntwo\nthree"), "internal error: RuntimeError: three"),
    (KeyError(), "internal error: KeyError: KeyError"),
])
def test_every_error_is_one_failed_outcome_naming_the_file_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException, message: str) -> None:
    grey(tmp_path / "a.png")
    target = tmp_path / "out" / "b.png"
    target.parent.mkdir()
    monkeypatch.setattr(processing, "_pipeline", lambda *args: Raising(error))
    outcome = processing.process(Task(tmp_path / "a.png", target), Options(INVERT, backend="cpu"))
    assert (outcome.status, outcome.message) == ("failed", f"{tmp_path / 'a.png'}: " + message.format(target=target))
    assert list(target.parent.iterdir()) == []


def test_an_image_error_is_its_own_message_and_standard_output_is_named(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    grey(tmp_path / "a.png")
    monkeypatch.setattr(processing, "_pipeline", lambda *args: Raising(ImageReadError("elsewhere.png", "is odd")))
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "b.png"), Options(INVERT, backend="cpu"))
    assert (outcome.status, outcome.message) == ("failed", "elsewhere.png: is odd")
    monkeypatch.setattr(processing, "_pipeline", lambda *args: Raising(OSError(errno.EPIPE, "Broken pipe")))
    outcome = processing.process(Task(tmp_path / "a.png", Path("-"), True, ".png"), Options(INVERT))
    assert outcome.message == f"{tmp_path / 'a.png'}: cannot write standard output: Broken pipe"


def test_warnings_become_notes_naming_the_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    image = grey(tmp_path / "a.png")
    source = tmp_path / "a.png"
    monkeypatch.setattr(processing, "_pipeline", lambda *args: Raising(None, ["clipped", f"{source}: already named",
                                                                              "clipped"]))
    outcome = processing.process(Task(source, tmp_path / "b.png"), Options(INVERT, backend="cpu"))
    assert (outcome.status, outcome.message) == ("done", str(tmp_path / "b.png"))
    assert outcome.warnings == [f"{source}: clipped", f"{source}: already named", f"{source}: clipped"]
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "b.png"), cv2.IMREAD_UNCHANGED), 255 - image)


def test_a_bad_input_fails_even_where_its_output_exists(tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(40))
    (tmp_path / "bad.avi").write_bytes(bytes(100))
    for name in ("bad.png", "bad.avi"):
        target = tmp_path / "out" / name
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(b"old")
        outcome = processing.process(Task(tmp_path / name, target), Options(INVERT))
        assert outcome.status == "failed" and outcome.message.startswith(f"{tmp_path / name}: "), outcome
        assert target.read_bytes() == b"old"
        dry = processing.dry_run(Task(tmp_path / name, target), Options(INVERT))
        assert dry.status == "failed" and dry.message.startswith(f"{tmp_path / name}: "), dry
        assert dry.task == Task(tmp_path / name, target)


def test_an_output_that_is_its_input_is_refused_never_skipped(tmp_path: Path) -> None:
    grey(tmp_path / "a.png")
    before = (tmp_path / "a.png").read_bytes()
    for options in (Options(INVERT), Options(INVERT, overwrite=True)):
        outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "a.png"), options)
        assert (outcome.status, outcome.message) == (
            "failed", f"{tmp_path / 'a.png'}: is the input file; cvfilters never overwrites its input")
    assert (tmp_path / "a.png").read_bytes() == before


def test_an_existing_output_is_skipped_unless_replaced(tmp_path: Path) -> None:
    image = grey(tmp_path / "a.png")
    (tmp_path / "b.png").write_bytes(b"old")
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "b.png"), Options(INVERT))
    assert (outcome.status, outcome.message) == ("skipped", f"{tmp_path / 'b.png'}: exists, skipped "
                                                            "(--overwrite replaces it)")
    assert (tmp_path / "b.png").read_bytes() == b"old"
    (tmp_path / "gone.png").symlink_to(tmp_path / "nowhere.png")  # an output that is a broken link is not the input
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "gone.png"), Options(INVERT))
    assert (outcome.status, outcome.message) == ("skipped", f"{tmp_path / 'gone.png'}: exists, skipped "
                                                            "(--overwrite replaces it)")
    for task, options in ((Task(tmp_path / "a.png", tmp_path / "b.png", replace=True), Options(INVERT)),
                          (Task(tmp_path / "a.png", tmp_path / "b.png"), Options(INVERT, overwrite=True))):
        (tmp_path / "b.png").write_bytes(b"old")
        assert processing.process(task, options).status == "done"
        np.testing.assert_array_equal(cv2.imread(str(tmp_path / "b.png"), cv2.IMREAD_UNCHANGED), 255 - image)


# ---------------------------------------------------------------- dry run
def test_dry_run_says_what_it_read_and_would_write(tmp_path: Path) -> None:
    grey(tmp_path / "a.png")
    frames = [Image.new("L", (5, 2), v) for v in (0, 200)]  # two frames: the fewest an animation has
    frames[0].save(tmp_path / "g.gif", save_all=True, append_images=frames[1:], duration=50)
    cv2.imwrite(str(tmp_path / "h.hdr"), np.ones((6, 2, 3), np.float32))  # a header Pillow does not parse
    cases = [
        (Task(tmp_path / "a.png", tmp_path / "o.png"), f"read {tmp_path / 'a.png'} (4x3) -> write "
                                                             f"{tmp_path / 'o.png'}"),
        (Task(tmp_path / "g.gif", tmp_path / "o.gif"), f"read {tmp_path / 'g.gif'} (5x2, 2 frames) -> write "
                                                             f"{tmp_path / 'o.gif'}"),
        (Task(tmp_path / "h.hdr", tmp_path / "o.hdr"), f"read {tmp_path / 'h.hdr'} (2x6) -> write "
                                                             f"{tmp_path / 'o.hdr'}"),
        (Task(tmp_path / "a.png", Path("-"), True, ".png"), f"read {tmp_path / 'a.png'} (4x3) -> write "
                                                                   "standard output"),
        (Task(tmp_path / "a.png", tmp_path / "h.hdr", replace=True), f"read {tmp_path / 'a.png'} (4x3) -> "
                                                                            f"replace {tmp_path / 'h.hdr'}"),
    ]
    before = sorted(tmp_path.iterdir())
    for task, message in cases:
        assert processing.dry_run(task, Options(INVERT)) == Outcome(task, "done", message)
    skipped = processing.dry_run(Task(tmp_path / "a.png", tmp_path / "h.hdr"), Options(INVERT))
    assert (skipped.status, skipped.message) == ("skipped", f"{tmp_path / 'h.hdr'}: exists, skipped "
                                                            "(--overwrite replaces it)")
    assert processing.dry_run(Task(tmp_path / "a.png", tmp_path / "h.hdr"),
                              Options(INVERT, overwrite=True)).message.endswith(f"-> replace {tmp_path / 'h.hdr'}")
    assert sorted(tmp_path.iterdir()) == before


def test_dry_run_of_a_tiled_tiff_reads_only_its_header(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    tifffile.imwrite(tmp_path / "big.tif", np.zeros((40, 30, 3), np.uint8), photometric="rgb", tile=(16, 16))
    task = Task(tmp_path / "big.tif", tmp_path / "o.tif")
    outcome = processing.dry_run(task, Options(INVERT, backend="cpu"))
    assert outcome.message == f"read {tmp_path / 'big.tif'} (30x40, read in pieces) -> write {tmp_path / 'o.tif'}"
    outcome = processing.dry_run(task, Options(INVERT, backend="cpu", colorspace="srgb"))  # decoded whole
    assert outcome.message == f"read {tmp_path / 'big.tif'} (30x40) -> write {tmp_path / 'o.tif'}"
    outcome = processing.dry_run(task, Options(INVERT, backend="cpu", linear=True))
    assert outcome.message == f"read {tmp_path / 'big.tif'} (30x40) -> write {tmp_path / 'o.tif'}"


# ---------------------------------------------------------------- what a done outcome reports and writes
def test_a_still_image_reports_its_colour_and_how_it_ran(tmp_path: Path) -> None:
    source = tmp_path / "a.png"
    image = np.dstack([np.full((3, 4), v, np.uint8) for v in (10, 20, 30)])
    cv2.imwrite(str(source), image)
    assumed = "colour: sRGB (assumed: the file names no colour space) [assumed]"
    whole = processing.process(Task(source, tmp_path / "o.png", True), Options(INVERT, backend="cpu"))
    assert whole.report[0] == "backend: cpu" or whole.report[0].startswith("backend: cpu (")
    assert whole.report[-1] == assumed
    linear = processing.process(Task(source, tmp_path / "l.png", True), Options(INVERT, linear=True))
    assert linear.report[-1] == assumed + "; linear light: sRGB transfer"
    tiled = processing.process(Task(source, tmp_path / "t.png", True),
                               Options(INVERT, tile_size=16, memory=2**30))
    assert tiled.report[0] == "memory budget: 1.0 GiB" and tiled.report[1].startswith("tiles: 16 x 16 output px")
    assert tiled.report[-1] == assumed
    for name in ("o.png", "l.png", "t.png"):
        np.testing.assert_array_equal(cv2.imread(str(tmp_path / name)), 255 - image)
    converted = processing.process(Task(source, tmp_path / "c.png", True),
                                   Options(INVERT, colorspace="adobe-rgb", intent="perceptual"))
    assert converted.report[-1] == assumed + " -> adobe-rgb (perceptual)"
    with Image.open(tmp_path / "c.png") as written:  # converted, then inverted: other values, a profile
        assert written.info["icc_profile"] and not np.array_equal(np.asarray(written)[..., ::-1], 255 - image)


def test_an_animation_reports_the_frames_written(tmp_path: Path) -> None:
    frames = [Image.new("RGB", (5, 2), (v, v, v)) for v in (0, 100, 200)]
    frames[0].save(tmp_path / "g.gif", save_all=True, append_images=frames[1:], duration=50)
    outcome = processing.process(Task(tmp_path / "g.gif", tmp_path / "o.gif"), Options(INVERT, frames=(1, 3)))
    assert outcome.status == "done" and outcome.report[-1] == "frames: 2 of 3"
    assert outcome.report[0].startswith("backend: ")
    with Image.open(tmp_path / "o.gif") as written:
        values = []
        for index in range(written.n_frames):
            written.seek(index)
            values.append(int(np.asarray(written.convert("L"))[0, 0]))
    assert values == [155, 55]


def test_a_zarr_output_of_a_decoded_image_is_rgb(tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr")
    image = np.dstack([np.full((3, 4), v, np.uint8) for v in (10, 20, 30)])  # BGR
    cv2.imwrite(str(tmp_path / "a.png"), image)
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "o.zarr", True), Options(INVERT))
    assert outcome.status == "done" and not any(line.startswith("colour:") for line in outcome.report)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "o.zarr"), mode="r")[:], 255 - image[..., ::-1])


def test_standard_output_gets_the_encoded_image(tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    image = grey(tmp_path / "a.png", 40)
    outcome = processing.process(Task(tmp_path / "a.png", Path("-"), True, ".png"), Options(INVERT))
    assert outcome.status == "done", outcome
    written = capfdbinary.readouterr().out
    np.testing.assert_array_equal(cv2.imdecode(np.frombuffer(written, np.uint8), cv2.IMREAD_UNCHANGED), 255 - image)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png"]


def test_a_tiled_tiff_streams_through_process(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    data = np.random.default_rng(3).integers(0, 255, (40, 30, 3), np.uint8, endpoint=True)
    tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", tile=(16, 16), compression="zlib")
    outcome = processing.process(Task(tmp_path / "in.tif", tmp_path / "o.tif"), Options(INVERT, backend="cpu"))
    assert outcome.status == "done", outcome
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "o.tif"), 255 - data)


def test_a_dry_run_over_the_pixel_limit_names_the_file(tmp_path: Path) -> None:
    """Also an EXR (no header parsed before decoding: the decode checks the limit, --max-pixels, not the default)."""
    pytest.importorskip("OpenEXR")
    from cvfilters.io import exr

    grey(tmp_path / "a.png")
    (tmp_path / "e.exr").write_bytes(exr.encode(np.ones((6, 2, 3), np.float32), "e.exr"))
    for name in ("a.png", "e.exr"):
        outcome = processing.dry_run(Task(tmp_path / name, tmp_path / "o.png"), Options(INVERT, max_pixels=5))
        assert outcome.status == "failed" and outcome.message.startswith(f"{tmp_path / name}: "), outcome


@pytest.mark.parametrize(("mode", "layout"), [("1", (1, 1)), ("L", (1, 1)), ("I;16", (1, 2)), ("I", (1, 4)),
                                              ("F", (1, 4)), ("P", (4, 1)), ("RGB", (4, 1)), ("RGBA", (4, 1))])
def test_the_memory_layout_of_a_frame_by_its_mode(mode: str, layout: tuple[int, int]) -> None:
    from types import SimpleNamespace

    assert processing._layout_of(SimpleNamespace(mode=mode)) == layout


def test_a_grey_image_is_estimated_as_one_channel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cvfilters.run import limits

    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((100, 200), np.uint8))
    monkeypatch.setattr(limits, "available_bytes", lambda: 3 * 100 * 200 * (2 + 12))  # 3 workers of one channel
    assert processing.process(Task(tmp_path / "a.png", tmp_path / "o.png"), Options(INVERT, workers=3)).status \
        == "done"


def test_an_animation_to_standard_output_keeps_its_timing(tmp_path: Path,
                                                         capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    frames = [Image.new("RGB", (5, 2), (v, v, v)) for v in (0, 100, 200)]
    frames[0].save(tmp_path / "g.gif", save_all=True, append_images=frames[1:], duration=70, loop=0)
    outcome = processing.process(Task(tmp_path / "g.gif", Path("-"), True, ".gif"), Options(INVERT))
    assert outcome.status == "done", outcome
    with Image.open(io.BytesIO(capfdbinary.readouterr().out)) as written:
        assert written.n_frames == 3 and written.info["duration"] == 70
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.gif"]


def test_a_good_video_with_an_existing_output_is_skipped_and_its_dry_run_says_video(tmp_path: Path) -> None:
    writer = cv2.VideoWriter(str(tmp_path / "clip.avi"), cv2.VideoWriter.fourcc(*"MJPG"), 5.0, (16, 8))
    if not writer.isOpened():
        pytest.skip("this OpenCV build has no video writer for MJPG AVI")
    for value in (0, 120, 240):
        writer.write(np.full((8, 16, 3), value, np.uint8))
    writer.release()
    task = Task(tmp_path / "clip.avi", tmp_path / "out.avi")
    assert processing.dry_run(task, Options(INVERT)).message == (f"read {tmp_path / 'clip.avi'} (video) -> write "
                                                                 f"{tmp_path / 'out.avi'}")
    (tmp_path / "out.avi").write_bytes(b"old")
    outcome = processing.process(task, Options(INVERT))
    assert (outcome.status, outcome.message) == ("skipped", f"{tmp_path / 'out.avi'}: exists, skipped "
                                                            "(--overwrite replaces it)")
    assert (tmp_path / "out.avi").read_bytes() == b"old"


@pytest.mark.parametrize("workers", [1, 3])
def test_an_animation_is_estimated_with_two_frames_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        workers: int) -> None:
    """Each of ``workers`` holds two frames of bytes (with 3 workers: the count was dropped, or taken as the
    bytes per sample)."""
    from cvfilters.run import limits

    frames = [Image.new("RGB", (20, 10), (v, 0, 0)) for v in (0, 90, 180)]
    frames[0].save(tmp_path / "g.gif", save_all=True, append_images=frames[1:], duration=40)
    needed = workers * (20 * 10 * 4 * (2 + 12) + 20 * 10 * 4)  # up to 4 channels of bytes; one more frame held
    monkeypatch.setattr(limits, "available_bytes", lambda: needed - 1)
    refused = processing.process(Task(tmp_path / "g.gif", tmp_path / "o.gif"), Options(INVERT, workers=workers))
    assert refused.status == "failed" and f"(20x10, 4 channels, 2 frames) x {workers} worker(s)" in refused.message, \
        refused
    monkeypatch.setattr(limits, "available_bytes", lambda: needed)
    assert processing.process(Task(tmp_path / "g.gif", tmp_path / "o.gif"),
                              Options(INVERT, workers=workers)).status == "done"


def test_an_animation_runs_on_the_backend_asked(tmp_path: Path, backend: str) -> None:
    """--backend reaches each frame's run (it was dropped: auto ran on the cpu)."""
    gif(tmp_path / "g.gif")
    outcome = processing.process(Task(tmp_path / "g.gif", tmp_path / "o.gif"), Options(INVERT, backend=backend))
    assert outcome.status == "done" and outcome.report[0].startswith(f"backend: {backend} ("), outcome
    assert gif_values((tmp_path / "o.gif").read_bytes()) == [255, 155, 55]


# ---------------------------------------------------------------- a TIFF read in pieces (_stream_image)
def tiled_tiff(path: Path) -> np.ndarray:
    """A tiled RGB TIFF of noise (40x30): it streams on the cpu backend; the data as stored (RGB)."""
    tifffile = pytest.importorskip("tifffile")
    data = np.random.default_rng(3).integers(0, 255, (40, 30, 3), np.uint8, endpoint=True)
    tifffile.imwrite(path, data, photometric="rgb", tile=(16, 16), compression="zlib")
    return data


def test_a_streamed_tiff_is_skipped_or_replaced_as_any_input(tmp_path: Path) -> None:
    """A streamed input whose output exists was written over without --overwrite, or skipped
    (or refused by the writer) with it."""
    tifffile = pytest.importorskip("tifffile")
    data = tiled_tiff(tmp_path / "in.tif")
    (tmp_path / "o.tif").write_bytes(b"old")
    outcome = processing.process(Task(tmp_path / "in.tif", tmp_path / "o.tif"), Options(INVERT, backend="cpu"))
    assert (outcome.status, outcome.message) == ("skipped", f"{tmp_path / 'o.tif'}: exists, skipped "
                                                            "(--overwrite replaces it)")
    assert (tmp_path / "o.tif").read_bytes() == b"old"
    replacing = Options(INVERT, backend="cpu", overwrite=True)
    for task, options in ((Task(tmp_path / "in.tif", tmp_path / "o.tif"), replacing),
                          (Task(tmp_path / "in.tif", tmp_path / "o.tif", True), Options(INVERT, backend="cpu"))):
        (tmp_path / "o.tif").write_bytes(b"old")
        outcome = processing.process(task, options)
        assert outcome.status == "done", outcome
        np.testing.assert_array_equal(tifffile.imread(tmp_path / "o.tif"), 255 - data)


def test_a_streamed_tiff_takes_the_tile_size_quality_scheduler_and_standard_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    """--tile-size, --quality, --scheduler and ``-o -`` reach the streamed run (each was dropped or None)."""
    data = tiled_tiff(tmp_path / "in.tif")
    tiled = processing.process(Task(tmp_path / "in.tif", tmp_path / "t.tif"), Options(INVERT, backend="cpu",
                                                                                      tile_size=16))
    assert any(line.startswith("tiles: 16 x 16 output px") for line in tiled.report), tiled
    jpeg = processing.process(Task(tmp_path / "in.tif", tmp_path / "q.jpg"), Options(INVERT, backend="cpu",
                                                                                     quality=20))
    assert jpeg.status == "done", jpeg
    ok, encoded = cv2.imencode(".jpg", np.ascontiguousarray((255 - data)[..., ::-1]), [cv2.IMWRITE_JPEG_QUALITY, 20])
    with Image.open(tmp_path / "q.jpg") as written:  # as OpenCV encodes at quality 20, within one level
        assert ok and np.abs(np.asarray(written, np.int16) - cv2.imdecode(encoded, 1)[..., ::-1]).max() <= 1
    clustered = processing.process(Task(tmp_path / "in.tif", tmp_path / "c.tif"),
                                   Options(INVERT, backend="cpu", scheduler="tcp://127.0.0.1:9"))
    assert (clustered.status, clustered.message) == (  # refused before any connection
        "failed", f"{tmp_path / 'in.tif'}: -o {tmp_path / 'c.tif'}: with --scheduler the output is a Zarr array "
                  "(name it .zarr): the workers write its chunks where they are")
    monkeypatch.chdir(tmp_path)
    capfdbinary.readouterr()
    piped = processing.process(Task(tmp_path / "in.tif", Path("-"), True, ".png"), Options(INVERT, backend="cpu"))
    assert piped.status == "done", piped
    written = cv2.imdecode(np.frombuffer(capfdbinary.readouterr().out, np.uint8), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(written, (255 - data)[..., ::-1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.tif", "q.jpg", "t.tif"]


def test_a_streamed_tiff_over_the_pixel_limit_fails_naming_it_even_where_its_output_exists(tmp_path: Path) -> None:
    """The claimed size of a streamed input is checked against --max-pixels (not the default) with its name
    and type, before the skip decision: a decompression bomb is an error, never a skip or a crash."""
    tifffile = pytest.importorskip("tifffile")
    pytest.importorskip("imagecodecs")  # zstd
    source = tmp_path / "bomb.tif"
    tifffile.imwrite(source, np.zeros((1024, 1024), np.uint8), tile=(512, 512), compression="zstd")
    assert source.stat().st_size * 1100 < 1024 * 1024  # more than 1100:1, the bomb ratio
    (tmp_path / "o.tif").write_bytes(b"old")
    message = (f"{source}: 1024x1024 = 1048576 pixels exceeds the limit of 100, and 1048576 decoded bytes from "
               f"{source.stat().st_size} on disk")
    for run in (processing.process, processing.dry_run):
        outcome = run(Task(source, tmp_path / "o.tif"), Options(INVERT, backend="cpu", max_pixels=100))
        assert outcome.status == "failed" and outcome.message.startswith(message), outcome
    assert (tmp_path / "o.tif").read_bytes() == b"old"


def test_max_pixels_wins_over_the_environment_for_a_streamed_tiff_and_an_animation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--max-pixels raised over CVFILTERS_MAX_PIXELS accepts the file all the way (a later check of the
    streamed run or of the frame reader fell back to the environment's limit)."""
    tifffile = pytest.importorskip("tifffile")
    pytest.importorskip("imagecodecs")  # zstd
    tifffile.imwrite(tmp_path / "bomb.tif", np.zeros((1024, 1024), np.uint8), tile=(512, 512), compression="zstd")
    gif(tmp_path / "g.gif")
    monkeypatch.setenv("CVFILTERS_MAX_PIXELS", "4")
    for name in ("bomb.tif", "g.gif"):
        task = Task(tmp_path / name, tmp_path / f"o{name}")
        refused = processing.process(task, Options(INVERT, backend="cpu"))
        assert refused.status == "failed" and "exceeds the limit of 4" in refused.message, refused
        assert processing.dry_run(task, Options(INVERT, backend="cpu", max_pixels=2**20)).status == "done"
        outcome = processing.process(task, Options(INVERT, backend="cpu", max_pixels=2**20))
        assert outcome.status == "done", outcome
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "obomb.tif"), np.full((1024, 1024), 255, np.uint8))
    assert gif_values((tmp_path / "og.gif").read_bytes()) == [255, 155, 55]


# ---------------------------------------------------------------- animations (_process_image, _process_frames)
def gif(path: Path, values: tuple[int, ...] = (0, 100, 200)) -> bytes:
    """An RGB GIF of grey 5x2 frames of ``values``; its bytes."""
    frames = [Image.new("RGB", (5, 2), (v, v, v)) for v in values]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=50)
    return path.read_bytes()


def gif_values(data: bytes) -> list[int]:
    with Image.open(io.BytesIO(data)) as written:
        values = []
        for index in range(written.n_frames):
            written.seek(index)
            values.append(int(np.asarray(written.convert("L"))[0, 0]))
    return values


def test_an_animation_is_skipped_or_replaced_as_any_input(tmp_path: Path) -> None:
    """An animation's existing output was written over without --overwrite, or skipped with it."""
    gif(tmp_path / "g.gif")
    (tmp_path / "o.gif").write_bytes(b"old")
    outcome = processing.process(Task(tmp_path / "g.gif", tmp_path / "o.gif"), Options(INVERT))
    assert (outcome.status, outcome.message) == ("skipped", f"{tmp_path / 'o.gif'}: exists, skipped "
                                                            "(--overwrite replaces it)")
    assert (tmp_path / "o.gif").read_bytes() == b"old"
    outcome = processing.process(Task(tmp_path / "g.gif", tmp_path / "o.gif"), Options(INVERT, overwrite=True))
    assert outcome.status == "done", outcome
    assert gif_values((tmp_path / "o.gif").read_bytes()) == [255, 155, 55]


def test_a_multi_frame_file_is_streamed_never_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes of an animation file are never held whole (its header is probed from the open file)."""
    from cvfilters.io import reading

    gif(tmp_path / "g.gif")
    read_whole = reading.read_bytes

    def refuse_the_gif(path: Any) -> bytes:
        assert Path(path).suffix != ".gif", f"{path} read whole"
        return read_whole(path)

    monkeypatch.setattr(reading, "read_bytes", refuse_the_gif)
    outcome = processing.process(Task(tmp_path / "g.gif", tmp_path / "o.gif"), Options(INVERT))
    assert outcome.status == "done", outcome
    assert gif_values((tmp_path / "o.gif").read_bytes()) == [255, 155, 55]


def test_an_animation_from_standard_input_is_filtered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input is read once: its animation was read again, empty ("standard input is empty")."""
    from types import SimpleNamespace

    data = gif(tmp_path / "g.gif")
    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=io.BytesIO(data)))
    monkeypatch.chdir(tmp_path)
    outcome = processing.process(Task(Path("-"), tmp_path / "o.gif"), Options(INVERT))
    assert outcome.status == "done" and outcome.report[-1] == "frames: 3 of 3", outcome
    assert gif_values((tmp_path / "o.gif").read_bytes()) == [255, 155, 55]


def test_an_image_over_the_pixel_limit_fails_naming_it(tmp_path: Path) -> None:
    """--max-pixels, not the default limit, refuses a still image and an animation."""
    grey(tmp_path / "a.png")
    gif(tmp_path / "g.gif")
    for name in ("a.png", "g.gif"):
        outcome = processing.process(Task(tmp_path / name, tmp_path / f"o{name}"), Options(INVERT, max_pixels=5))
        assert (outcome.status, outcome.message.split(" = ")[0]) == ("failed", f"{tmp_path / name}: "
                                                                               f"{'4x3' if name == 'a.png' else '5x2'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "g.gif"]


def test_allow_large_lets_a_batch_run_a_parameter_past_its_large_bound(tmp_path: Path) -> None:
    """``--allow-large`` reaches the worker: resize by 20 (over the large bound 16, under the max 32) runs."""
    grey(tmp_path / "a.png")
    with allow_large():
        spec = Pipeline.parse("resize:scale=20").to_dict()
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "b.png"), Options(spec, backend="cpu",
                                                                                        allow_large=True))
    assert outcome.status == "done", outcome.message
    assert cv2.imread(str(tmp_path / "b.png"), cv2.IMREAD_UNCHANGED).shape == (60, 80)  # 3 x 4, 20 times


@pytest.mark.parametrize(("linear", "expected"), [(False, (85, 170)), (True, (156, 216))])
def test_linear_reaches_the_frames_of_a_video(tmp_path: Path, linear: bool, expected: tuple[int, int]) -> None:
    """``--linear`` on a video blurs its frames in linear light: a 3-wide box across a black | white edge gives
    the sRGB encoding of 1/3 and 2/3 (156, 216; 85 and 170 when it blurs the encoded values)."""
    frame = np.zeros((48, 64, 3), np.uint8)
    frame[:, 32:] = 255
    writer = cv2.VideoWriter(str(tmp_path / "a.avi"), cv2.VideoWriter.fourcc(*"MJPG"), 10.0, (64, 48))
    for _ in range(3):
        writer.write(frame)
    writer.release()
    options = Options(Pipeline.parse("box_blur:size=3").to_dict(), backend="cpu", linear=linear)
    outcome = processing.process(Task(tmp_path / "a.avi", tmp_path / "b.avi"), options)
    assert outcome.status == "done", outcome.message
    capture = cv2.VideoCapture(str(tmp_path / "b.avi"))
    ok, out = capture.read()
    capture.release()
    assert ok
    edge = out[8:40, 31:33].reshape(-1, 2, 3).mean(axis=(0, 2))  # the two columns beside the edge, rows inside
    np.testing.assert_allclose(edge, expected, atol=12)  # lossy codecs: within 12 levels, the two cases 60 apart


def test_a_batch_fuses_warps_into_one_resampling_unless_told_not_to(tmp_path: Path) -> None:
    """Fusion on (the default) reaches the worker: rotate 10 then -10 compose to the identity map, so noise comes
    back exactly; with ``fuse=False`` two bilinear resamplings blur it (tens of levels)."""
    noise = np.random.default_rng(1).integers(0, 256, (40, 50), np.uint8)
    assert cv2.imwrite(str(tmp_path / "a.png"), noise)
    spec = Pipeline.parse("rotate:angle=10 | rotate:angle=-10").to_dict()
    for fuse, target in ((True, "fused.png"), (False, "apart.png")):
        outcome = processing.process(Task(tmp_path / "a.png", tmp_path / target), Options(spec, backend="cpu",
                                                                                           fuse=fuse))
        assert outcome.status == "done", outcome.message
    inner = np.s_[10:30, 10:40]  # away from the corners the turn brings in
    fused = cv2.imread(str(tmp_path / "fused.png"), cv2.IMREAD_UNCHANGED).astype(int)
    apart = cv2.imread(str(tmp_path / "apart.png"), cv2.IMREAD_UNCHANGED).astype(int)
    assert np.abs(fused[inner] - noise[inner]).max() <= 1
    assert np.abs(apart[inner] - noise[inner]).max() > 30
