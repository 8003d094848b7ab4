"""What :func:`cvfilters.io.frames.write_frames` puts in each multi-frame format, read by a second reader.

tifffile reads the TIFF tags and pages (photometric, extra samples, compression, ICC profile, one
series per page), Pillow the WebP frames, alpha, loop count and durations (its chunks walked with
struct; the whole file compared with Pillow's own ``save_all``). For AVIF, Pillow's AVIF plugin and
OpenCV's ``cv2.imdecodeanimation`` both read the file; both use libavif (1.4.2 here, separate builds),
so the AVIF checks are not independent of the codec library, only of cvfilters. References are
hand-built numpy arrays (RGB order by slicing, inversion by subtraction) and PSNR by its formula.
The writers are called in-process (mutation testing counts only those calls).
"""

from __future__ import annotations

import contextlib
import struct
import sys
import warnings
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from PIL import Image, ImageCms, ImageSequence, features

from cvfilters.core.errors import ImageWriteError, OutputExistsError, ParameterError
from cvfilters.io import frames as frames_io
from cvfilters.io.frames import Frame, FramesInfo
from cvfilters.io.writing import DepthConversionWarning

RNG = np.random.default_rng(26)


def noise(shape: tuple[int, ...], dtype: type = np.uint8) -> np.ndarray:
    return RNG.integers(0, 256, shape).astype(dtype)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR in dB by its formula (numpy), 8-bit peak."""
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else float(10 * np.log10(255.0**2 / mse))


def write_quietly(path: Path, frames: list[Frame], **options: object) -> int:
    """write_frames with every warning an error: these frames need no conversion."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return frames_io.write_frames(path, frames, **options)  # type: ignore[arg-type]


def tiff_like(compression: int | None = None, icc: bytes | None = None) -> FramesInfo:
    return FramesInfo("TIFF", 2, (8, 6), icc=icc, compression=compression)


# ---------------------------------------------------------------- TIFF pages (tifffile reads them)
def test_tiff_pages_are_rgb_rgba_and_grey_each_its_own_series(tmp_path: Path) -> None:
    bgr, bgra, grey = noise((6, 8, 3)), noise((5, 7, 4)), noise((4, 9))
    assert write_quietly(tmp_path / "out.tif", [Frame(bgr), Frame(bgra), Frame(grey)]) == 3
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        pages = list(tif.pages)
        assert [page.photometric for page in pages] == [2, 2, 1]  # RGB, RGB, MINISBLACK
        assert [page.extrasamples for page in pages] == [(), (2,), ()]  # the 4th sample: unassociated alpha
        assert [page.planarconfig for page in pages[:2]] == [1, 1]  # samples interleaved
        np.testing.assert_array_equal(pages[0].asarray(), bgr[..., ::-1])  # RGB order
        np.testing.assert_array_equal(pages[1].asarray(), bgra[..., [2, 1, 0, 3]])
        np.testing.assert_array_equal(pages[2].asarray(), grey)
        # one series per page (contiguous=False): not one stack, each page its own shape
        assert [series.shape for series in tif.series] == [(6, 8, 3), (5, 7, 4), (4, 9)]


def test_same_sized_tiff_pages_stay_separate_series(tmp_path: Path) -> None:
    pages = [noise((4, 5)) for _ in range(3)]
    write_quietly(tmp_path / "out.tif", [Frame(page) for page in pages])
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        assert len(tif.pages) == 3 and [series.shape for series in tif.series] == [(4, 5)] * 3  # not one (3, 4, 5)
        for want, series in zip(pages, tif.series, strict=True):
            np.testing.assert_array_equal(series.asarray(), want)


def test_float_colour_tiff_pages_are_rgb_not_three_grey_samples(tmp_path: Path) -> None:
    bgr = RNG.random((4, 6, 3)).astype(np.float32)
    write_quietly(tmp_path / "out.tif", [Frame(bgr), Frame(1 - bgr)])  # no warning: tifffile is told RGB
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        assert [page.photometric for page in tif.pages] == [2, 2]
        assert tif.pages[0].dtype == np.float32
        np.testing.assert_array_equal(tif.pages[1].asarray(), (1 - bgr)[..., ::-1])


@pytest.mark.parametrize(("source", "written"), [
    (None, 1), (1, 1), (5, 5), (8, 8), (32773, 32773), (32946, 32946),  # none, LZW, Deflate, PackBits kept
    (4, 1), (7, 1), (50000, 1),  # CCITT fax 4, JPEG, Zstandard: written uncompressed, as a still TIFF
])
def test_tiff_pages_keep_a_lossless_source_compression_else_none(tmp_path: Path, source: int | None,
                                                                 written: int) -> None:
    pages = [noise((6, 8, 3)), noise((6, 8, 3))]
    write_quietly(tmp_path / "out.tif", [Frame(page) for page in pages], like=tiff_like(source))
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        assert [page.compression for page in tif.pages] == [written, written]
        for want, page in zip(pages, tif.pages, strict=True):
            np.testing.assert_array_equal(page.asarray(), want[..., ::-1])  # lossless either way


def test_a_group_4_fax_tiff_is_filtered_into_tiff_pages(tmp_path: Path) -> None:
    # the bug: the fax compression was passed on to tifffile, which has no CCITT encoder ("internal error: KeyError")
    bits = [(np.indices((6, 8)).sum(axis=0) % (index + 2)) == 0 for index in range(2)]
    images = [Image.fromarray(page) for page in bits]  # mode "1"
    images[0].save(tmp_path / "fax.tif", save_all=True, append_images=images[1:], compression="group4")
    with frames_io.read_frames(tmp_path / "fax.tif") as reader:
        assert reader.info.compression == 4
        frames_io.write_frames(tmp_path / "out.tif", (f.replace(255 - f.image) for f in reader), like=reader.info)
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        assert [page.compression for page in tif.pages] == [1, 1]
        for want, page in zip(bits, tif.pages, strict=True):
            np.testing.assert_array_equal(page.asarray(), np.where(want, 0, 255).astype(np.uint8))


def test_a_multi_page_lzw_tiff_stays_lzw_page_by_page(tmp_path: Path) -> None:
    pages = [noise((6, 8, 3)) for _ in range(3)]
    images = [Image.fromarray(page[..., ::-1]) for page in pages]
    images[0].save(tmp_path / "in.tif", save_all=True, append_images=images[1:], compression="tiff_lzw")
    with frames_io.read_frames(tmp_path / "in.tif") as reader:
        frames_io.write_frames(tmp_path / "out.tif", (f.replace(255 - f.image) for f in reader), like=reader.info)
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        assert [page.compression for page in tif.pages] == [5, 5, 5]
        for want, page in zip(pages, tif.pages, strict=True):
            np.testing.assert_array_equal(page.asarray(), 255 - want[..., ::-1])


def test_every_tiff_page_carries_the_icc_profile(tmp_path: Path) -> None:
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    write_quietly(tmp_path / "out.tif", [Frame(noise((4, 5, 3))), Frame(noise((4, 5)))], like=tiff_like(icc=icc))
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        assert [page.tags[34675].value for page in tif.pages] == [icc, icc]  # InterColorProfile
    write_quietly(tmp_path / "plain.tif", [Frame(noise((4, 5, 3)))])
    with tifffile.TiffFile(tmp_path / "plain.tif") as tif:
        assert 34675 not in tif.pages[0].tags


# ---------------------------------------------------------------- WebP (Pillow reads it)
def pillow_rgba(path: Path) -> tuple[list[np.ndarray], str, object]:
    with Image.open(path) as image:
        mode, loop = image.mode, image.info.get("loop")
        return [np.asarray(f.convert("RGBA")).copy() for f in ImageSequence.Iterator(image)], mode, loop


def test_webp_frames_keep_their_alpha(tmp_path: Path) -> None:
    bgra = [noise((6, 8, 4)) for _ in range(2)]
    for index, frame in enumerate(bgra):
        frame[..., 3] = 255
        frame[index * 3:index * 3 + 3, :, 3] = 0  # a transparent band, elsewhere in each frame
    write_quietly(tmp_path / "out.webp", [Frame(f, 50) for f in bgra], lossless=True)
    got, mode, _ = pillow_rgba(tmp_path / "out.webp")
    assert mode == "RGBA" and len(got) == 2
    for want, have in zip(bgra, got, strict=True):
        np.testing.assert_array_equal(have[..., 3], want[..., 3])  # lossless: alpha exact
        opaque = want[..., 3] == 255
        np.testing.assert_array_equal(have[..., :3][opaque], want[..., 2::-1][opaque])  # colour exact where seen


def test_webp_colour_frames_are_rgb_in_order_and_opaque(tmp_path: Path) -> None:
    bgr = [noise((6, 8, 3)) for _ in range(2)]
    write_quietly(tmp_path / "out.webp", [Frame(f, 50) for f in bgr], lossless=True)
    got, mode, _ = pillow_rgba(tmp_path / "out.webp")
    assert mode == "RGB"
    for want, have in zip(bgr, got, strict=True):
        np.testing.assert_array_equal(have, np.dstack([want[..., ::-1], np.full(want.shape[:2], 255, np.uint8)]))


@pytest.mark.parametrize(("loop", "stored"), [(None, 1), (0, 0), (3, 3)])  # None: play once (WebP's 1)
def test_webp_loop_count(tmp_path: Path, loop: int | None, stored: int) -> None:
    write_quietly(tmp_path / "out.webp", [Frame(noise((4, 4, 3)), 40), Frame(noise((4, 4, 3)), 60)], loop=loop)
    assert pillow_rgba(tmp_path / "out.webp")[2] == stored


def webp_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """A WebP file's top-level RIFF chunks (tag, payload), walked with struct (no image library)."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    chunks, offset = [], 12
    while offset < len(data):
        tag, size = struct.unpack_from("<4sI", data, offset)
        chunks.append((tag, data[offset + 8:offset + 8 + size]))
        offset += 8 + size + (size & 1)
    return chunks


def scene_cut(count: int = 20, cut: int = 10) -> list[np.ndarray]:
    """A red block moving over noise, the noise changed at frame ``cut``: the encoder's choice of key frames
    (full frames that need no earlier one) depends on its key-frame distances."""
    scenes = noise((48, 64, 3)), noise((48, 64, 3))
    frames = []
    for index in range(count):
        frame = scenes[index >= cut].copy()
        frame[10:20, 2 * index:2 * index + 8] = (0, 0, 255)
        frames.append(frame)
    return frames


@pytest.mark.parametrize("lossless", [False, True], ids=["lossy", "lossless"])
def test_webp_animation_is_the_file_pillow_writes(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                   lossless: bool) -> None:
    """Frames added one by one give the file Pillow's own ``save_all`` writes for them, byte for byte
    (quality 90, method 4, loop 0; Pillow's key-frame distances 3 to 5 lossy, 9 to 17 lossless, its
    transparent black background, no size search, no metadata), and libwebp prints nothing.
    Catches a key-frame distance, the method, the background or the size search changed, a profile or
    XMP chunk invented, and libwebp's verbose mode (a line on standard error per frame)."""
    frames = scene_cut()
    write_quietly(tmp_path / "out.webp", [Frame(frame, 40) for frame in frames], lossless=lossless)
    assert capfd.readouterr().err == ""
    images = [Image.fromarray(frame[..., ::-1]) for frame in frames]
    images[0].save(tmp_path / "pillow.webp", save_all=True, append_images=images[1:], duration=40, loop=0,
                   quality=90, method=4, lossless=lossless)
    data = (tmp_path / "out.webp").read_bytes()
    assert data == (tmp_path / "pillow.webp").read_bytes()
    keys = [index for index, (tag, body) in enumerate(c for c in webp_chunks(data) if c[0] == b"ANMF")
            if body[6:12] == bytes.fromhex("3f00002f0000") and body[15] & 2]  # 64x48, no blending: key frames
    assert keys[0] == 0 and len(keys) >= 2  # not all frames key frames, nor none but the first
    with Image.open(tmp_path / "out.webp") as webp:
        assert webp.info["background"] == (0, 0, 0, 0) and webp.n_frames == 20


def test_webp_frames_without_a_duration_show_100_ms(tmp_path: Path) -> None:
    """Frames without a duration get the documented 100 ms (Pillow reads each frame's)."""
    frames = [Frame(noise((4, 6, 3))), Frame(noise((4, 6, 3)), 70), Frame(noise((4, 6, 3)))]
    write_quietly(tmp_path / "out.webp", frames)
    durations = []
    with Image.open(tmp_path / "out.webp") as webp:
        for frame in ImageSequence.Iterator(webp):
            frame.load()  # Pillow sets a WebP frame's duration as it decodes it
            durations.append(frame.info["duration"])
    assert durations == [100, 70, 100]


def test_a_webp_carries_the_source_profile_and_no_other_metadata(tmp_path: Path) -> None:
    """Written like a source with an ICC profile, the WebP has it (an ICCP chunk, Pillow's icc_profile);
    without one it has no ICCP, EXIF or XMP chunk: catches a made-up profile or XMP packet."""
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    frames = [Frame(noise((4, 6, 3)), 40), Frame(noise((4, 6, 3)), 40)]
    write_quietly(tmp_path / "icc.webp", frames, like=FramesInfo("WEBP", 2, (6, 4), icc=icc))
    write_quietly(tmp_path / "plain.webp", frames)
    with Image.open(tmp_path / "icc.webp") as webp:
        assert webp.info.get("icc_profile") == icc
    tags = [tag for tag, _ in webp_chunks((tmp_path / "plain.webp").read_bytes())]
    assert tags == [b"VP8X", b"ANIM", b"ANMF", b"ANMF"]
    assert [tag for tag, _ in webp_chunks((tmp_path / "icc.webp").read_bytes())] == [b"VP8X", b"ICCP", *tags[1:]]


# ---------------------------------------------------------------- AVIF (Pillow's plugin and OpenCV read it)
needs_avif = pytest.mark.skipif(not features.check("avif"), reason="Pillow without AVIF")


def gradients() -> list[np.ndarray]:
    y, x = np.mgrid[0:16, 0:24]
    smooth = np.dstack([x * 10, y * 15, (x + y) * 6]).astype(np.uint8)
    return [smooth, 255 - smooth]


def both_readers(path: Path) -> list[tuple[list[np.ndarray], list[int]]]:
    """(BGR frames, durations) as Pillow and as OpenCV decode the file."""
    with Image.open(path) as image:
        pillow = [(np.asarray(f.convert("RGB"))[..., ::-1].copy(), int(f.info["duration"]))
                  for f in ImageSequence.Iterator(image)]
    ok, animation = cv2.imdecodeanimation(np.fromfile(path, np.uint8))
    assert ok
    return [([p[0] for p in pillow], [p[1] for p in pillow]),
            ([f[..., :3] for f in animation.frames], [int(d) for d in animation.durations])]


@needs_avif
def test_avif_frames_without_a_duration_show_100_ms(tmp_path: Path) -> None:
    frames = gradients()
    write_quietly(tmp_path / "out.avif", [Frame(frames[0]), Frame(frames[1], 70)], quality=100)
    for got, durations in both_readers(tmp_path / "out.avif"):
        assert durations == [100, 70]  # the documented default for a frame without one
        for want, have in zip(frames, got, strict=True):
            np.testing.assert_array_equal(have, want)  # quality 100 is lossless


@needs_avif
def test_avif_quality_reaches_the_encoder(tmp_path: Path) -> None:
    frames = [Frame(f, 50) for f in gradients()]
    write_quietly(tmp_path / "q100.avif", frames, quality=100)
    write_quietly(tmp_path / "q1.avif", frames, quality=1)
    write_quietly(tmp_path / "default.avif", frames)
    for got, _ in both_readers(tmp_path / "q100.avif"):
        assert all(psnr(have, want.image) == float("inf") for have, want in zip(got, frames, strict=True))
    for got, _ in both_readers(tmp_path / "q1.avif"):  # measured 23.8 dB
        assert all(psnr(have, want.image) < 30 for have, want in zip(got, frames, strict=True))
    for got, _ in both_readers(tmp_path / "default.avif"):  # OpenCV's default quality: measured 41.6 dB and more
        assert all(psnr(have, want.image) > 35 for have, want in zip(got, frames, strict=True))


def test_an_avif_animation_opencv_refuses_is_a_write_error_naming_it(tmp_path: Path) -> None:
    grey, colour = np.full((8, 8), 100, np.uint8), np.full((8, 8, 3), 50, np.uint8)  # OpenCV wants one layout
    with pytest.raises(ImageWriteError) as caught:
        frames_io.write_frames(tmp_path / "out.avif", [Frame(grey, 40), Frame(colour, 40)])
    assert str(caught.value) == f"{tmp_path / 'out.avif'}: cannot be written: OpenCV refused the animation"
    assert not (tmp_path / "out.avif").exists()


def test_an_avif_is_written_to_standard_output_whole(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    frames = gradients()
    frames_io.write_frames("-", [Frame(f, 30) for f in frames], fmt="avif", quality=100)
    data = capfdbinary.readouterr().out
    ok, animation = cv2.imdecodeanimation(np.frombuffer(data, np.uint8))
    assert ok and [int(d) for d in animation.durations] == [30, 30]
    with Image.open(BytesIO(data)) as image:
        assert image.n_frames == 2  # type: ignore[attr-defined]


def test_write_frames_defaults_replace_loop_forever_and_are_lossy(tmp_path: Path) -> None:
    """Plain arrays (100 ms frames) replace an existing file by default; a GIF loops forever (Pillow
    reads loop 0) and a WebP is lossy (a VP8 chunk, no VP8L): catches the defaults changed."""
    frames = [noise((6, 8, 3)), noise((6, 8, 3))]
    for ext in (".gif", ".webp"):
        (tmp_path / f"out{ext}").write_bytes(b"old")
        assert frames_io.write_frames(tmp_path / f"out{ext}", frames) == 2
    with Image.open(tmp_path / "out.gif") as gif:
        assert gif.n_frames == 2 and gif.info.get("loop") == 0 and gif.info.get("duration") == 100
    data = (tmp_path / "out.webp").read_bytes()
    assert b"VP8 " in data and b"VP8L" not in data


def test_write_frames_refuses_an_existing_target_when_told_not_to_overwrite(tmp_path: Path) -> None:
    """``overwrite=False`` on an existing file raises OutputExistsError naming it and leaves it as it was."""
    (tmp_path / "out.png").write_bytes(b"old")
    with pytest.raises(OutputExistsError, match="out.png"):
        frames_io.write_frames(tmp_path / "out.png", [noise((4, 4, 3))] * 2, overwrite=False)
    assert (tmp_path / "out.png").read_bytes() == b"old"


def test_rgb_channel_order_frames_are_written_in_their_colours(tmp_path: Path) -> None:
    """``channel_order="rgb"`` arrays: pure red written to APNG is red to Pillow (not blue)."""
    red = np.zeros((4, 6, 3), np.uint8)
    red[..., 0] = 255
    frames_io.write_frames(tmp_path / "out.png", [red, red], channel_order="rgb")
    with Image.open(tmp_path / "out.png") as png:
        got = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(png)]
    assert len(got) == 2
    for frame in got:
        np.testing.assert_array_equal(frame, red)


def test_an_unknown_extension_is_a_write_error_naming_the_target_and_extension(tmp_path: Path) -> None:
    """The message names the target and the extension that has no encoder."""
    with pytest.raises(ImageWriteError) as caught:
        frames_io.write_frames(tmp_path / "out.xyz", [noise((4, 4, 3))])
    assert str(tmp_path / "out.xyz") in str(caught.value) and "no encoder for .xyz" in str(caught.value)
    assert not (tmp_path / "out.xyz").exists()


def test_apng_keeps_the_icc_profile_and_plays_once_for_no_loop(tmp_path: Path) -> None:
    """An APNG written like a source with an ICC profile carries it (Pillow's icc_profile), and
    ``loop=None`` is stored as one play (Pillow reads loop 1), not as 2 or forever."""
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    like = FramesInfo("PNG", 2, (4, 4), loop=None, icc=icc)
    frames_io.write_frames(tmp_path / "out.png", [noise((4, 4, 3))] * 2, like=like)
    with Image.open(tmp_path / "out.png") as png:
        assert png.n_frames == 2 and png.info.get("icc_profile") == icc and png.info.get("loop") == 1


def test_gif_frames_are_not_dithered_unless_asked(tmp_path: Path) -> None:
    """By default a frame of more than 256 colours is quantised colour by colour: pixels of one colour
    stay one colour (Floyd-Steinberg spreads each pixel's error to its neighbours, so they would not)."""
    y, x = np.mgrid[0:64, 0:64]
    gradient = np.kron(np.dstack([x * 4, y * 4, np.full_like(x, 128)]).astype(np.uint8), np.ones((2, 2, 1), np.uint8))
    for dither in (None, True):  # 4096 colours, each on four pixels
        options = {} if dither is None else {"dither": dither}
        frames_io.write_frames(tmp_path / f"{dither}.gif", [gradient, gradient[::-1]], **options)  # type: ignore[arg-type]
    split = {}
    for dither in (None, True):
        with Image.open(tmp_path / f"{dither}.gif") as gif:
            written = np.asarray(gif.convert("RGB")).reshape(-1, 3)
        source = gradient.reshape(-1, 3) @ np.array([65536, 256, 1])
        pairs = np.unique(np.column_stack([source, written @ np.array([65536, 256, 1])]), axis=0)
        split[dither] = len(pairs) - len(np.unique(source))  # extra outputs of a source colour
    assert split[None] == 0 and split[True] > 1000  # measured 3245 of 4096 colours split when dithered


def test_a_bad_quality_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """Quality 101 is refused (ParameterError) even for GIF, which takes none, and an existing target
    is left as it was: catches the check made on no quality."""
    (tmp_path / "out.gif").write_bytes(b"old")
    with pytest.raises(ParameterError, match="quality must be an integer from 1 to 100, got 101"):
        frames_io.write_frames(tmp_path / "out.gif", [noise((4, 4, 3))] * 2, quality=101)
    assert (tmp_path / "out.gif").read_bytes() == b"old"


def test_an_error_writing_frames_to_standard_output_names_it(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    """Frames of two sizes sent to ``-`` are an error naming ``-`` (not None), and nothing is written."""
    with pytest.raises(ImageWriteError) as caught:
        frames_io.write_frames("-", [noise((4, 6, 3)), noise((5, 4, 3))], fmt="gif")
    assert str(caught.value) == "-: cannot be written: frame 1 is 4x5, the first 6x4"
    assert capfdbinary.readouterr().out == b""


class TrickleStdout:
    """A standard output taking at most ``per_call`` bytes a call, and ``capacity`` in all (then 0 a call)."""

    def __init__(self, per_call: int, capacity: int, fd: int) -> None:
        self.buffer, self.per_call, self.capacity, self.fd = self, per_call, capacity, fd
        self.got = bytearray()

    def write(self, data: memoryview) -> int:
        taken = bytes(data[:min(self.per_call, self.capacity - len(self.got))])
        self.got += taken
        return len(taken)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self.fd  # a scratch file's: an error redirects it to /dev/null, never the real output


@pytest.mark.parametrize(("capacity", "error"), [(10, None), (6, "short write: 6 of 10 bytes")])
def test_standard_output_taking_a_few_bytes_a_call_gets_all_or_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capacity: int, error: str | None) -> None:
    """Written 4 bytes a call, the 10 bytes arrive whole and once; where the output stops taking any after
    6, the error says how many went: catches the count of bytes written reset to the last call's."""
    with open(tmp_path / "scratch", "wb") as scratch:
        out = TrickleStdout(4, capacity, scratch.fileno())
        monkeypatch.setattr(sys, "stdout", out)
        if error is None:
            frames_io.write_stdout(b"0123456789")
        else:
            with pytest.raises(ImageWriteError) as caught:
                frames_io.write_stdout(b"0123456789")
            assert str(caught.value) == f"standard output: cannot be written: {error}"
    assert bytes(out.got) == b"0123456789"[:capacity]



class ClosedStdout(TrickleStdout):
    """A standard output that takes nothing and whose descriptor is gone (``fileno`` raises ValueError)."""

    def fileno(self) -> int:
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize("out", [ClosedStdout(4, 0, 0), TrickleStdout(4, 0, -1)], ids=["closed", "bad-descriptor"])
def test_a_failed_standard_output_without_a_usable_descriptor_is_still_one_write_error(
        monkeypatch: pytest.MonkeyPatch, out: TrickleStdout) -> None:
    """After a failed write, standard output is pointed at /dev/null; where that fails too (its descriptor
    closed: ValueError; not one: OSError) the error is still the one ImageWriteError, not that failure."""
    monkeypatch.setattr(sys, "stdout", out)
    with pytest.raises(ImageWriteError) as caught:
        frames_io.write_stdout(b"abc")
    assert str(caught.value) == "standard output: cannot be written: short write: 0 of 3 bytes"

# ---------------------------------------------------------------- still outputs, warnings, refusals
@contextlib.contextmanager
def warned() -> Iterator[list[tuple[type[Warning], str, str]]]:
    """The warnings given in the block: category, message and the file they point at (called in the
    test's own body, a warning one frame too far up points into pytest, not here)."""
    said: list[tuple[type[Warning], str, str]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield said
    said += [(w.category, str(w.message), w.filename) for w in caught]


def test_frames_into_a_still_format_give_the_first_and_one_warning_counting_them(tmp_path: Path) -> None:
    """1, 2 or 3 plain frames into a BMP: the file is the first frame (Pillow, exact), 1 is returned, and
    2 or 3 frames give one warning naming the file and the count, at the caller's line; one frame none.
    Catches the count (or its threshold) off, the warning's category or line changed, 2 returned."""
    frames = [noise((6, 8, 3)) for _ in range(3)]
    for count in (1, 2, 3):
        target = tmp_path / f"{count}.bmp"
        with warned() as said:
            written = frames_io.write_frames(target, frames[:count])
        told = f"{target}: .bmp holds one frame; only the first of {count} is written"
        assert written == 1 and said == ([] if count == 1 else [(DepthConversionWarning, told, __file__)])
        with Image.open(target) as bmp:
            np.testing.assert_array_equal(np.asarray(bmp.convert("RGB")), frames[0][..., ::-1])


def test_a_still_output_of_a_known_frame_count_decodes_only_the_first_and_keeps_the_profile(tmp_path: Path) -> None:
    """Frames read with a range (``like.selected`` 5) into a JPEG: the count comes from ``like``, so no frame
    after the first is decoded (the stream here fails if one is), and the source's ICC profile is in the
    file (Pillow's icc_profile)."""
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    first = noise((8, 8, 3))

    def stream() -> Iterator[np.ndarray]:
        yield first
        raise AssertionError("a frame after the first was decoded for a still output")

    like = FramesInfo("GIF", 9, (8, 6), icc=profile, selected=5)
    with warned() as said:
        frames_io.write_frames(tmp_path / "out.jpg", stream(), like=like)
    told = f"{tmp_path / 'out.jpg'}: .jpg holds one frame; only the first of 5 is written"
    assert said == [(DepthConversionWarning, told, __file__)]
    with Image.open(tmp_path / "out.jpg") as jpeg:
        assert jpeg.info.get("icc_profile") == profile


@pytest.mark.parametrize("quality", [20, None])
def test_a_still_jpeg_of_frames_takes_the_quality_asked_else_90(tmp_path: Path, quality: int | None) -> None:
    """The JPEG's quantisation tables are those Pillow writes at the quality asked (libjpeg's scaling of
    the standard tables), at 90 where none is asked: catches the quality dropped on the way."""
    frame = noise((16, 16, 3))
    frames_io.write_frames(tmp_path / "out.jpg", [frame], quality=quality)
    Image.fromarray(frame[..., ::-1]).save(tmp_path / "pillow.jpg", quality=quality or 90)
    with Image.open(tmp_path / "out.jpg") as ours, Image.open(tmp_path / "pillow.jpg") as pillows:
        assert ours.quantization == pillows.quantization  # type: ignore[attr-defined]


def test_no_frames_is_a_write_error_naming_the_target_and_the_old_file_stays(tmp_path: Path) -> None:
    """An empty stream: "cannot be written: no frames" naming the target; an existing target is kept."""
    for ext in (".gif", ".jpg"):
        (tmp_path / f"out{ext}").write_bytes(b"old")
        with pytest.raises(ImageWriteError) as caught:
            frames_io.write_frames(tmp_path / f"out{ext}", [])
        assert str(caught.value) == f"{tmp_path / f'out{ext}'}: cannot be written: no frames"
        assert (tmp_path / f"out{ext}").read_bytes() == b"old"


def test_a_frame_the_still_encoder_refuses_is_an_error_naming_the_target(tmp_path: Path) -> None:
    """A frame 70000 pixels wide into a JPEG (its limit is 65535): the error names the target file."""
    target = tmp_path / "wide.jpg"
    with pytest.raises(ImageWriteError) as caught:
        frames_io.write_frames(target, [np.zeros((2, 70000, 3), np.uint8)])
    assert str(caught.value).startswith(f"{target}: cannot be encoded as .jpg")
    assert not target.exists()


def test_frame_conversions_warn_once_naming_the_target_at_the_callers_line(tmp_path: Path) -> None:
    """Two 16-bit frames into a GIF warn once (not per frame) that they are stored 8-bit, naming the
    file, as a DepthConversionWarning at the caller's line; into a still JPEG the same words; timed
    frames into TIFF pages warn once that durations go. Catches the message, category or line lost."""
    deep = [np.full((4, 6, 3), 65535, np.uint16), np.zeros((4, 6, 3), np.uint16)]
    for ext in (".gif", ".jpg"):
        target = tmp_path / f"out{ext}"
        with warned() as said:
            frames_io.write_frames(target, deep)
        told = f"{target}: {ext} cannot hold uint16; stored as uint8 (0..65535 scaled to 0..255)"
        assert (DepthConversionWarning, told, __file__) in said  # the still path pointed inside frames.py
        if ext == ".gif":
            assert said == [(DepthConversionWarning, told, __file__)]
    target = tmp_path / "out.tif"
    with warned() as said:
        frames_io.write_frames(target, [Frame(noise((4, 6, 3)), 40)])
    assert said == [(DepthConversionWarning, f"{target}: TIFF pages have no durations; the frame timing is dropped",
                     __file__)]
