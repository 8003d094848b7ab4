"""cvfilters.run.processing, animations frame by frame: --colorspace, linear light and the encoder's options.

References: LittleCMS through Pillow's ``ImageCms`` with profiles built by imagecodecs (those of
tests/io/test_colour_spaces.py, and a gamma-3 one whose power law is written out with numpy), the
frames read back with Pillow; the encoder's options by what they do to the file (lossless: exact;
a lower quality: a smaller file further from the source; dithering: block means closer to the source).
"""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from cvfilters.engine.pipeline import Pipeline
from cvfilters.run import processing
from cvfilters.run.tasks import Options, Task
from tests.io.test_colour_spaces import ADOBE, SRGB, reference
from tests.run.test_processing import gif, gif_values

imagecodecs = pytest.importorskip("imagecodecs", reason="the profiles here are built with imagecodecs")

INVERT = Pipeline.parse("invert").to_dict()
NOISE = [np.random.default_rng(seed).integers(0, 256, (6, 8, 3), dtype=np.uint8) for seed in (1, 2)]


def apng(path: Path, frames: list[np.ndarray], icc: bytes | None = None) -> Path:
    first, *rest = (Image.fromarray(frame) for frame in frames)
    first.save(path, save_all=True, append_images=rest, duration=100, icc_profile=icc)
    return path


def frames_of(path: Path) -> tuple[list[np.ndarray], bytes | None]:
    """The frames (RGB, int64) and the ICC profile of an animation, read with Pillow."""
    with Image.open(path) as image:
        frames = []
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")).astype(np.int64))
        return frames, image.info.get("icc_profile")


def test_an_animation_is_converted_to_the_colorspace_frame_by_frame(tmp_path: Path) -> None:
    """Each frame is converted from the file's profile (sRGB where it has none) into --colorspace, which it
    then carries; ``keep`` leaves frames and profile as they are (no conversion, the source's profile
    ignored or taken as the target, the wrong arguments to the conversion, a profile looked up for
    ``keep``: each changed these values or failed)."""
    (tmp_path / "adobe.icc").write_bytes(ADOBE)
    plain = apng(tmp_path / "plain.png", NOISE)
    to_adobe = processing.process(Task(plain, tmp_path / "adobe.png"),
                                  Options(INVERT, colorspace=str(tmp_path / "adobe.icc")))
    assert to_adobe.status == "done", to_adobe
    adobe, icc = frames_of(tmp_path / "adobe.png")
    assert icc == ADOBE and len(adobe) == 2
    for frame, written in zip(NOISE, adobe, strict=True):
        assert np.abs(written - (255 - reference(frame, SRGB, ADOBE))).max() <= 1
        assert np.abs(written - (255 - frame.astype(np.int64))).max() > 20  # converted, not left as it was
    back = processing.process(Task(tmp_path / "adobe.png", tmp_path / "srgb.png"), Options(INVERT, colorspace="srgb"))
    assert back.status == "done", back
    for frame, written in zip(adobe, frames_of(tmp_path / "srgb.png")[0], strict=True):
        assert np.abs(written - (255 - reference(frame.astype(np.uint8), ADOBE, SRGB))).max() <= 1
    kept = processing.process(Task(tmp_path / "adobe.png", tmp_path / "kept.png"), Options(INVERT, colorspace="keep"))
    assert kept.status == "done", kept
    frames, icc = frames_of(tmp_path / "kept.png")
    assert icc == ADOBE
    for frame, written in zip(adobe, frames, strict=True):
        np.testing.assert_array_equal(written, 255 - frame)


def test_an_animation_is_filtered_in_the_linear_light_of_its_own_profile(tmp_path: Path) -> None:
    """--linear decodes each frame with its profile's transfer (a gamma of 3 here, not sRGB's); without
    it the frames are filtered as stored. A half-size resize averages each 2x2 block of 0 and 255."""
    gamma3 = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.3290, 1.0], gamma=3.0,
                                     primaries=[0.64, 0.33, 1, 0.30, 0.60, 1, 0.15, 0.06, 1])
    checker = np.tile(np.array([[0, 255], [255, 0]], np.uint8), (2, 2))  # 4x4: each 2x2 block two 0, two 255
    frames = [np.dstack([checker] * 3), np.dstack([255 - checker] * 3)]
    source = apng(tmp_path / "g3.png", frames, gamma3)
    halve = Pipeline.parse("resize:scale=0.5").to_dict()
    expected = {False: 127.5, True: 255 * 0.5 ** (1 / 3)}  # 202.4: the mean light (0.5), back through gamma 3
    for linear, value in expected.items():
        outcome = processing.process(Task(source, tmp_path / f"{linear}.png"), Options(halve, linear=linear))
        assert outcome.status == "done", outcome
        written, icc = frames_of(tmp_path / f"{linear}.png")
        assert icc == gamma3 and len(written) == 2
        for frame in written:
            assert frame.shape == (2, 2, 3) and np.abs(frame - value).max() <= 1, (linear, frame[..., 0])


def test_an_animation_takes_lossless_quality_and_dithering(tmp_path: Path) -> None:
    """--lossless, --quality and --dither reach the frames' encoder (each was dropped or None)."""
    source = apng(tmp_path / "noise.png", [np.kron(frame, np.ones((2, 2, 1), np.uint8)) for frame in NOISE])
    sizes, errors = {}, {}
    for name, options in (("lossless", Options(INVERT, lossless=True)), ("low", Options(INVERT, quality=5)),
                          ("high", Options(INVERT, quality=95))):
        outcome = processing.process(Task(source, tmp_path / f"{name}.webp"), options)
        assert outcome.status == "done", outcome
        written, _ = frames_of(tmp_path / f"{name}.webp")
        sizes[name] = (tmp_path / f"{name}.webp").stat().st_size
        errors[name] = max(np.abs(frame - (255 - np.kron(original, np.ones((2, 2, 1), np.int64)))).mean()
                           for frame, original in zip(written, NOISE, strict=True))
    assert errors["lossless"] == 0 and 0 < errors["high"] < errors["low"] and sizes["low"] < sizes["high"]
    yy, xx = np.mgrid[0:64, 0:64]
    gradient = np.dstack([xx * 4, yy * 4, np.full_like(xx, 128)]).astype(np.uint8)  # 4096 colours
    source = apng(tmp_path / "gradient.png", [gradient, gradient[::-1]])
    block_errors = {}
    for dither in (False, True):
        outcome = processing.process(Task(source, tmp_path / f"{dither}.gif"), Options(INVERT, dither=dither))
        assert outcome.status == "done", outcome
        written = frames_of(tmp_path / f"{dither}.gif")[0][0]
        means = (written - (255 - gradient.astype(np.int64))).reshape(8, 8, 8, 8, 3).mean(axis=(1, 3))
        block_errors[dither] = np.abs(means).mean()
    assert block_errors[True] < block_errors[False]  # Floyd-Steinberg keeps the local mean of the colours


def test_an_animation_whose_profile_cannot_be_read_is_filtered_where_nothing_is_converted(tmp_path: Path) -> None:
    """A profile LittleCMS cannot read fails only a conversion: colour frames without --colorspace, and grey
    frames with it (they are not converted), are filtered (the profile was looked up for every frame)."""
    unreadable = b"not an ICC profile " * 8
    colour = [np.full((2, 3, 3), value, np.uint8) for value in (10, 200)]
    grey = [frame[..., 0] for frame in colour]
    for frames, options in ((colour, Options(INVERT)), (grey, Options(INVERT, colorspace="srgb"))):
        source = apng(tmp_path / "in.png", frames, unreadable)
        outcome = processing.process(Task(source, tmp_path / "out.png", True), options)
        assert outcome.status == "done", outcome
        for frame, written in zip(frames, frames_of(tmp_path / "out.png")[0], strict=True):
            np.testing.assert_array_equal(written[..., 0], 255 - np.atleast_3d(frame)[..., 0])


def test_an_animation_from_standard_input_to_standard_output_keeps_its_frames(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    """``cvfilters apply - -o - --format gif`` on an animation: the frames, filtered, on standard output
    (the format was not passed on: no encoder for a name without extension)."""
    data = gif(tmp_path / "g.gif")
    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=io.BytesIO(data)))
    monkeypatch.chdir(tmp_path)
    outcome = processing.process(Task(Path("-"), Path("-"), True, ".gif"), Options(INVERT))
    assert outcome.status == "done" and outcome.report[-1] == "frames: 3 of 3", outcome
    assert gif_values(capfdbinary.readouterr().out) == [255, 155, 55]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.gif"]
