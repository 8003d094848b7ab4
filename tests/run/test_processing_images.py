"""cvfilters.run.processing, still images (``_process_image``): validation before a skip, the colour
space reported, linear light, the encoder's options and tiles.

References: the pixel limit's message and the skip message written out by hand; the colour space
named by Pillow's ``ImageCms`` (ICC description), the CICP code points of ITU-T H.273 (12 Display
P3, 13 sRGB) and EXIF's ``ColorSpace`` 1 in chunks written by hand (tests/io/test_colour_spaces.py);
linear light by a power law written out with numpy; JPEG quality by OpenCV's encoder called
directly; a lossless WebP exact; dithering by block means; tiles against the budget asked for.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms

from cvfilters.core import machine
from cvfilters.core.errors import CvfError, ImageReadError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import reading
from cvfilters.run import processing
from cvfilters.run.tasks import Options, Outcome, Task
from tests.io.test_colour import exif_block
from tests.io.test_colour_spaces import ADOBE, cicp, png_parts
from tests.properties.test_nonfinite import hostile
from tests.run.test_processing import tiled_tiff

imagecodecs = pytest.importorskip("imagecodecs", reason="the profiles here are built with imagecodecs")

INVERT = Pipeline.parse("invert").to_dict()
NOISE = np.random.default_rng(26).integers(0, 256, (24, 32, 3), dtype=np.uint8)


def skipped(target: Path) -> str:
    return f"{target}: exists, skipped (--overwrite replaces it)"


def over_limit(name: str, size: str, pixels: int, limit: int) -> str:
    return f"{name}: {size} = {pixels} pixels exceeds the limit of {limit} (set --max-pixels or CVFILTERS_MAX_PIXELS)"


# ---------------------------------------------------------------- validation and the skip
def test_a_skipped_outcome_names_its_task(tmp_path: Path) -> None:
    """The skipped outcome carries the task it skipped (it carried None: a caller could not tell which)."""
    cv2.imwrite(str(tmp_path / "a.png"), NOISE)
    (tmp_path / "o.png").write_bytes(b"old")
    task = Task(tmp_path / "a.png", tmp_path / "o.png")
    for run in (processing.process, processing.dry_run):
        assert run(task, Options(INVERT)) == Outcome(task, "skipped", skipped(tmp_path / "o.png"))


@pytest.mark.parametrize("raised, message", [
    (None, "{target}"),
    (ImageReadError("x.png", "broken"), "x.png: broken"),
    (CvfError("no colours"), "{source}: no colours"),
    (cv2.error("bad size"), "{source}: OpenCV error: bad size"),
    (MemoryError(), "{source}: out of memory"),
    (OSError(28, "No space left on device"), "{source}: cannot write {target}: No space left on device"),
    (KeyError("k"), "{source}: internal error: KeyError: 'k'"),
], ids=["done", "image", "cvf", "opencv", "memory", "os", "bug"])
def test_every_outcome_names_its_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      raised: Exception | None, message: str) -> None:
    """A written file's outcome and each kind of failure's carry the task (they carried None: a caller
    could not tell which file failed)."""
    def run(*_: Any) -> list[str]:
        if raised is not None:
            raise raised
        return []

    monkeypatch.setattr(processing, "_process_image", run)
    task = Task(tmp_path / "a.png", tmp_path / "o.png")
    outcome = processing.process(task, Options(INVERT))
    assert outcome.task == task and outcome.message == message.format(source=task.source, target=task.target)


def test_an_input_only_opencv_parses_is_validated_by_decoding_whatever_its_output(tmp_path: Path) -> None:
    """Radiance HDR and OpenEXR (no header Pillow parses): a good one filtered, or skipped where its output
    exists; a damaged one, or one over --max-pixels (not the default limit), an error naming it whether
    its output exists or not (the decode that validates it crashed, took no limit or no name, or the
    output check crashed)."""
    pytest.importorskip("OpenEXR")
    from cvfilters.io import exr

    good, damaged, large = tmp_path / "h.hdr", tmp_path / "cut.hdr", tmp_path / "e.exr"
    cv2.imwrite(str(good), np.full((6, 2, 3), 0.25, np.float32))
    damaged.write_bytes(good.read_bytes()[:-20])
    large.write_bytes(exr.encode(np.ones((6, 2, 3), np.float32), "e.exr"))
    target = tmp_path / "o.hdr"
    for exists in (False, True):
        if exists:
            target.write_bytes(b"old")
        refused = processing.process(Task(large, target), Options(INVERT, backend="cpu", max_pixels=5))
        assert (refused.status, refused.message) == ("failed", over_limit(str(large), "2x6", 12, 5))
        cut = processing.process(Task(damaged, target), Options(INVERT, backend="cpu"))
        assert cut.status == "failed" and cut.message.startswith(f"{damaged}: "), cut
        done = processing.process(Task(good, target), Options(INVERT, backend="cpu"))
        if exists:
            assert (done.status, done.message, target.read_bytes()) == ("skipped", skipped(target), b"old")
        else:
            assert done.status == "done", done
            np.testing.assert_allclose(cv2.imread(str(target), cv2.IMREAD_UNCHANGED), 0.75)  # 1 - 0.25, exact in RGBE
            target.unlink()


def test_skipping_an_existing_output_reads_only_the_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An input whose header parses is skipped without decoding its pixels (a rerun decoded every
    input whose output it then skipped)."""
    cv2.imwrite(str(tmp_path / "a.png"), NOISE)
    (tmp_path / "o.png").write_bytes(b"old")
    decoded: list[Any] = []
    decode = reading.decode

    def counted(data: bytes, name: Any, **kwargs: Any) -> Any:
        decoded.append(name)
        return decode(data, name, **kwargs)

    monkeypatch.setattr(reading, "decode", counted)
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "o.png"), Options(INVERT))
    assert (outcome.status, outcome.message, decoded) == ("skipped", skipped(tmp_path / "o.png"), [])
    assert processing.process(Task(tmp_path / "a.png", tmp_path / "o.png", True), Options(INVERT)).status == "done"
    assert decoded == [tmp_path / "a.png"]  # replaced: decoded once


def test_a_still_image_from_standard_input_over_the_limit_names_it_dash(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input is named ``-`` in the pixel limit's error (it was named None)."""
    ok, png = cv2.imencode(".png", np.zeros((3, 4), np.uint8))
    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=io.BytesIO(png.tobytes())))
    monkeypatch.chdir(tmp_path)
    outcome = processing.process(Task(Path("-"), tmp_path / "o.png"), Options(INVERT, max_pixels=5))
    assert ok and (outcome.status, outcome.message) == ("failed", over_limit("-", "4x3", 12, 5))


def test_an_output_that_appears_while_the_image_is_filtered_is_not_written_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --overwrite an output another process wrote meanwhile is kept (it was replaced)."""
    cv2.imwrite(str(tmp_path / "a.png"), NOISE)
    target = tmp_path / "o.png"

    class Racing:
        def run(self, image: np.ndarray, **_: Any) -> Any:
            target.write_bytes(b"theirs")
            return Pipeline.parse("invert").run(image)

    monkeypatch.setattr(processing, "_pipeline", lambda *args: Racing())
    outcome = processing.process(Task(tmp_path / "a.png", target), Options(INVERT, backend="cpu"))
    assert (outcome.status, outcome.message) == ("failed", f"{target}: exists already (pass --overwrite to "
                                                           "replace it)")
    assert target.read_bytes() == b"theirs"
    assert processing.process(Task(tmp_path / "a.png", target), Options(INVERT, overwrite=True)).status == "done"
    np.testing.assert_array_equal(cv2.imread(str(target)), 255 - NOISE)


# ---------------------------------------------------------------- colour
def test_a_still_image_reports_the_colour_space_its_file_names(tmp_path: Path) -> None:
    """An ICC profile, a PNG cICP chunk and EXIF's ColorSpace each name the space in the report (each was
    lost: "assumed"); a CICP space other than sRGB has no profile to convert from (it was taken as sRGB)."""
    Image.fromarray(NOISE).save(tmp_path / "icc.png", icc_profile=ADOBE)
    head, rest = png_parts()
    (tmp_path / "p3.png").write_bytes(head + cicp(12, 13) + rest)
    Image.fromarray(NOISE).save(tmp_path / "exif.jpg", quality=95, exif=b"Exif\0\0" + exif_block(1, b"R98\0"))
    description = ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(ADOBE))).strip()
    for name, line in (("icc.png", f"colour: {description} [icc]"),
                       ("p3.png", "colour: Display P3, sRGB (CICP 12/13/0) [cicp]"),
                       ("exif.jpg", "colour: sRGB (EXIF ColorSpace 1) [exif]")):
        outcome = processing.process(Task(tmp_path / name, tmp_path / f"o-{name}"), Options(INVERT, backend="cpu"))
        assert outcome.status == "done" and outcome.report[-1] == line, outcome
    refused = processing.process(Task(tmp_path / "p3.png", tmp_path / "srgb.png"), Options(INVERT, colorspace="srgb"))
    assert (refused.status, refused.message) == (
        "failed", f"{tmp_path / 'p3.png'}: colorspace: the image's space (Display P3, sRGB (CICP 12/13/0)) has no "
                  "ICC profile to convert from; keep it (colorspace keep)")
    assert not (tmp_path / "srgb.png").exists()


def test_a_still_image_is_filtered_in_the_linear_light_of_its_own_profile(tmp_path: Path) -> None:
    """--linear decodes with the file's profile's transfer (a gamma of 3 here, not sRGB's); without it the
    values are filtered as stored. A half-size resize averages each 2x2 block of two 0 and two 255."""
    gamma3 = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.3290, 1.0], gamma=3.0,
                                     primaries=[0.64, 0.33, 1, 0.30, 0.60, 1, 0.15, 0.06, 1])
    checker = np.tile(np.array([[0, 255], [255, 0]], np.uint8), (2, 2))
    Image.fromarray(np.dstack([checker] * 3)).save(tmp_path / "g3.png", icc_profile=gamma3)
    halve = Pipeline.parse("resize:scale=0.5").to_dict()
    expected = {False: 127.5, True: 255 * 0.5 ** (1 / 3)}  # 202.4: the mean light (0.5), back through gamma 3
    for linear, value in expected.items():
        outcome = processing.process(Task(tmp_path / "g3.png", tmp_path / f"{linear}.png"), Options(halve,
                                                                                                   linear=linear))
        assert outcome.status == "done", outcome
        assert outcome.report[-1].endswith("; linear light: RGB built-in transfer") == linear, outcome.report
        with Image.open(tmp_path / f"{linear}.png") as written:
            assert written.info["icc_profile"] == gamma3
            assert np.abs(np.asarray(written, np.float64) - value).max() <= 1, (linear, np.asarray(written)[..., 0])


# ---------------------------------------------------------------- running and writing
def test_a_still_image_runs_on_the_backend_asked(tmp_path: Path, backend: str) -> None:
    """--backend reaches a still image's run (it was dropped: the default ran)."""
    cv2.imwrite(str(tmp_path / "a.png"), NOISE)
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "o.png"), Options(INVERT, backend=backend))
    assert outcome.status == "done" and outcome.report[0].startswith(f"backend: {backend} ("), outcome
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "o.png")), 255 - NOISE)


def test_a_still_image_takes_quality_lossless_and_dithering(tmp_path: Path) -> None:
    """--quality (as OpenCV's JPEG at 20, within a level), --lossless (an exact WebP) and --dither (GIF block
    means closer to the image) reach a still image's encoder (each was dropped or None)."""
    yy, xx = np.mgrid[0:64, 0:64]
    gradient = np.dstack([xx * 4, yy * 4, np.full_like(xx, 128)]).astype(np.uint8)  # 4096 colours
    cv2.imwrite(str(tmp_path / "g.png"), gradient)
    inverted = 255 - gradient.astype(np.int64)
    outputs = {"q.jpg": Options(INVERT, quality=20), "l.webp": Options(INVERT, lossless=True),
               "d.gif": Options(INVERT, dither=True), "plain.gif": Options(INVERT)}
    for name, options in outputs.items():
        outcome = processing.process(Task(tmp_path / "g.png", tmp_path / name), options)
        assert outcome.status == "done", outcome
    ok, reference = cv2.imencode(".jpg", np.ascontiguousarray(255 - gradient), [cv2.IMWRITE_JPEG_QUALITY, 20])
    assert ok and np.abs(cv2.imread(str(tmp_path / "q.jpg")).astype(np.int64) - cv2.imdecode(reference, 1)).max() <= 1
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "l.webp")), 255 - gradient)

    def block_error(name: str) -> float:
        with Image.open(tmp_path / name) as written:
            bgr = np.asarray(written.convert("RGB")).astype(np.int64)[..., ::-1]
        return float(np.abs((bgr - inverted).reshape(8, 8, 8, 8, 3).mean(axis=(1, 3))).mean())

    assert block_error("d.gif") < block_error("plain.gif")  # Floyd-Steinberg keeps the local mean of the colours


def test_the_encoder_s_warnings_name_the_output(tmp_path: Path) -> None:
    """A conversion the output format forces is a note naming the output file (it named None or ``-``)."""
    cv2.imwrite(str(tmp_path / "a.png"), np.dstack([NOISE, np.full(NOISE.shape[:2], 200, np.uint8)]))
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "o.jpg"), Options(INVERT))
    assert (outcome.status, outcome.warnings) == ("done", [f"{tmp_path / 'a.png'}: {tmp_path / 'o.jpg'}: .jpg cannot "
                                                           "hold 4 channels; the alpha channel is dropped"])


def tiles_line(outcome: Outcome) -> str:
    return next(line for line in outcome.report if line.startswith("tiles: "))


def test_one_image_of_a_batch_of_several_workers_runs_its_tiles_on_one_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch workers each run one image's tiles on one thread, a lone worker on every core, for a decoded
    image and a streamed TIFF (each got every core: jobs x cores threads)."""
    monkeypatch.setattr(machine, "cores", lambda: 4)
    cv2.imwrite(str(tmp_path / "a.png"), NOISE)
    tiled_tiff(tmp_path / "t.tif")
    for source in ("a.png", "t.tif"):
        for workers, threads in ((3, 1), (1, 4)):
            target = tmp_path / f"{workers}-{source}"
            outcome = processing.process(Task(tmp_path / source, target),
                                         Options(INVERT, backend="cpu", tile_size=16, workers=workers))
            assert outcome.status == "done", outcome
            assert tiles_line(outcome).startswith(f"tiles: 16 x 16 output px, {threads} worker(s), "), outcome.report


def test_the_tiles_of_a_decoded_image_keep_within_the_memory_budget(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An image over --memory runs in tiles whose peak working memory is within it (16 threads here; the
    budget was not given to the tile plan, which kept tiles of four times the memory)."""
    monkeypatch.setattr(machine, "cores", lambda: 16)
    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((1300, 1300, 3), np.uint8))
    outcome = processing.process(Task(tmp_path / "a.png", tmp_path / "o.png"), Options(INVERT, backend="cpu",
                                                                                        memory="64M"))
    assert outcome.status == "done" and outcome.report[0] == "memory budget: 64 MiB", outcome
    peak = re.search(r"peak working memory ~(\d+) MiB", tiles_line(outcome))
    assert peak is not None and int(peak.group(1)) <= 64, outcome.report
    assert (cv2.imread(str(tmp_path / "o.png")) == 255).all()


def test_non_finite_values_are_filtered_without_numpy_warnings(tmp_path: Path) -> None:
    """NaN and infinity pass through a filter quietly (with numpy's error state left as it was, sepia's
    "invalid value encountered in cast" became a warning naming the file)."""
    tifffile = pytest.importorskip("tifffile")
    tifffile.imwrite(tmp_path / "a.tif", hostile(3), photometric="rgb")
    sepia = Pipeline.parse("sepia").to_dict()
    outcome = processing.process(Task(tmp_path / "a.tif", tmp_path / "o.tif"), Options(sepia))
    assert outcome.status == "done" and outcome.warnings == [], outcome
    assert tifffile.imread(tmp_path / "o.tif").shape == (24, 20, 3)
