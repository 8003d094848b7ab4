"""An input corpus through ``cvfilters apply``: every format and depth we read, and broken files.

The corpus is generated here (OpenCV, Pillow, numpy), so expected pixels come from the
generator, not from :func:`cvfilters.read`. Each batch is ONE CLI run over a whole
directory or file list; per-file results are parsed from the output tree and stderr.

Decided behaviour asserted here:

* The content decides the decoder and the output extension decides the encoder: a PNG
  named ``.jpg`` reads (OpenCV sniffs it) and its output ``.jpg`` is a real JPEG.
* Every broken input gives one ``error: PATH: cause`` line, writes nothing, and the rest
  of the batch is done (exit 1); no traceback and no OpenCV/libpng/libtiff log lines.
* An animated GIF keeps every frame, each filtered (tests/io/test_frames.py checks timing);
  OpenCV's GIF encoder quantizes colours (a warning says so). Into TIFF its frames become
  pages, with a warning that the frame durations are dropped.

``FORMATS_TRIED`` and ``BROKEN_TRIED`` list what was tried (for the issue's closing note).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import subprocess
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

import cvfilters
import cvfilters.io.writing
from cvfilters.io.formats import IMAGE_EXTENSIONS
from tests import cli_runner

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ORIENTATION = 0x0112
# Pillow transposes that turn an upright image into what a camera stores with each orientation.
STORED_AS = {
    1: None, 2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_90, 7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}
SUMMARY = re.compile(r"^done \d+(, skipped \d+ .*)?, failed \d+ in ")


# ---------------------------------------------------------------- helpers
def noise(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.random(shape, dtype=np.float32)
    return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)


def smooth(channels: int, height: int = 24, width: int = 32) -> np.ndarray:
    """A gradient JPEG keeps within a few levels."""
    y, x = np.mgrid[0:height, 0:width]
    planes = [(x * 6 + y * 2) % 256, (y * 9) % 256, (x * 4 + y * 4) % 256][:channels]
    return np.dstack(planes).astype(np.uint8).squeeze()


def blocks_bgr() -> np.ndarray:
    """48x64 BGR of 16x16 blocks in 12 distinct colours: every flip and rotation differs."""
    colours = np.array([(r, g, b) for r in (20, 230) for g in (20, 120, 230) for b in (20, 230)], np.uint8)
    return np.repeat(np.repeat(colours.reshape(3, 4, 3), 16, axis=0), 16, axis=1)


def centres(image: np.ndarray) -> np.ndarray:
    return np.asarray(image)[8::16, 8::16].astype(int)


def cv_encode(ext: str, image: np.ndarray, params: tuple[int, ...] = ()) -> bytes:
    ok, data = cv2.imencode(ext, image, list(params))
    assert ok, ext
    return data.tobytes()


def pil_encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def rgb_to_bgr(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array[..., ::-1]) if array.ndim == 3 else array


def inverted(image: np.ndarray) -> np.ndarray:
    """What ``invert`` gives: colour channels to full scale minus the value, alpha untouched."""
    full = 1.0 if image.dtype.kind == "f" else np.iinfo(image.dtype).max
    out = image.copy()
    colour = out[..., :3] if out.ndim == 3 else out
    colour[...] = (full - colour.astype(np.float64)).astype(image.dtype)
    return out


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def channels_of(image: np.ndarray) -> int:
    return 1 if image.ndim == 2 else image.shape[2]


def run_cli(*args: object, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CVFILTERS_MAX_PIXELS"}
    if prefix:
        return cli_runner.run_process(*args, cwd=ROOT, env=env, prefix=prefix)
    return cli_runner.run_cli(*args, cwd=ROOT, env=env)


def stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """Non-empty stderr lines; every one must be ours (no traceback, no OpenCV log line)."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    foreign = [line for line in lines if not (line.startswith(("error: ", "warning: ")) or SUMMARY.match(line))]
    assert not foreign, foreign
    return lines


def lines_naming(lines: list[str], path: Path) -> list[str]:
    return [line for line in lines if f"{path}: " in line]


def load(path: Path) -> np.ndarray:
    """An output as stored, read by OpenCV directly (not by cvfilters)."""
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    assert image is not None, f"{path} does not decode"
    return image


def hidden(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".")]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- the valid corpus
@dataclass
class Sample:
    """One valid input file and what its inverted output must be."""

    name: str
    data: bytes
    pixels: np.ndarray  # the upright image as decoded, independent of cvfilters
    tolerance: float = 0.0  # mean |difference| allowed (0: exact, lossless formats)
    check: Callable[[np.ndarray, np.ndarray], None] | None = None  # replaces the pixel comparison
    channels: tuple[int, ...] = ()  # output channels allowed when not the input's
    warns: bool = False  # the output format converts (a warning line is expected)
    notes: list[str] = field(default_factory=list)


def _centres_close(out: np.ndarray, want: np.ndarray) -> None:
    assert np.abs(centres(out) - centres(want)).max() <= 16


def _valid_samples() -> list[Sample]:
    samples: list[Sample] = []

    def add(name: str, data: bytes, pixels: np.ndarray, **kwargs: object) -> None:
        samples.append(Sample(name, data, pixels, **kwargs))  # type: ignore[arg-type]

    # PNG: 1-bit, 8/16-bit gray, BGR, BGRA, palette (with and without tRNS), gray+alpha
    bits = noise((24, 32), np.uint8, 1) > 127
    add("png_1bit.png", pil_encode(Image.fromarray(bits), "PNG"), bits.astype(np.uint8) * 255)
    for dtype, depth in ((np.uint8, 8), (np.uint16, 16)):
        for channels, kind in ((1, "gray"), (3, "bgr"), (4, "bgra")):
            shape = (24, 32) if channels == 1 else (24, 32, channels)
            image = noise(shape, dtype, depth + channels)
            add(f"png_{kind}{depth}.png", cv_encode(".png", image), image)
    colours = np.array([(0, 0, 0), (255, 0, 0), (0, 200, 0), (30, 60, 250), (255, 255, 255), (128, 64, 32)], np.uint8)
    index = noise((24, 32), np.uint8, 7) % len(colours)
    palette = Image.fromarray(colours[index]).convert("P", palette=Image.Palette.ADAPTIVE, colors=8)
    rgb = np.asarray(palette.convert("RGB"))
    add("png_palette.png", pil_encode(palette, "PNG"), rgb_to_bgr(rgb))
    transparent = int(np.asarray(palette)[0, 0])
    alpha = np.where(np.asarray(palette) == transparent, 0, 255).astype(np.uint8)
    add("png_palette_trns.png", pil_encode(palette, "PNG", transparency=transparent),
        np.dstack([rgb_to_bgr(rgb), alpha]))
    gray, alpha = noise((24, 32), np.uint8, 8), noise((24, 32), np.uint8, 9)
    add("png_gray_alpha.png", pil_encode(Image.fromarray(np.dstack([gray, alpha]), "LA"), "PNG"),
        np.dstack([gray, gray, gray, alpha]))
    # JPEG: baseline colour and gray, progressive, CMYK, EXIF orientation 1-8
    add("jpeg_baseline.jpg", cv_encode(".jpg", smooth(3), (cv2.IMWRITE_JPEG_QUALITY, 95)), smooth(3), tolerance=3)
    add("jpeg_gray.jpg", cv_encode(".jpg", smooth(1), (cv2.IMWRITE_JPEG_QUALITY, 95)), smooth(1), tolerance=3)
    add("jpeg_progressive.jpg", pil_encode(Image.fromarray(rgb_to_bgr(smooth(3))), "JPEG", quality=95,
                                           progressive=True), smooth(3), tolerance=3)
    cmyk = Image.fromarray(rgb_to_bgr(smooth(3))).convert("CMYK")
    add("jpeg_cmyk.jpg", pil_encode(cmyk, "JPEG", quality=95), smooth(3),
        check=lambda out, want: None)  # geometry and 3 channels only: CMYK to BGR conversions differ
    upright = blocks_bgr()
    for orientation in range(1, 9):
        stored = Image.fromarray(rgb_to_bgr(upright))
        if STORED_AS[orientation] is not None:
            stored = stored.transpose(STORED_AS[orientation])
        exif = Image.Exif()
        exif[ORIENTATION] = orientation
        add(f"jpeg_exif{orientation}.jpg", pil_encode(stored, "JPEG", exif=exif, quality=100, subsampling=0),
            upright, check=_centres_close)
    stored = Image.fromarray(rgb_to_bgr(upright)).transpose(STORED_AS[6])
    exif = Image.Exif()
    exif[ORIENTATION] = 6
    add("png_exif6.png", pil_encode(stored, "PNG", exif=exif), upright)
    exif[ORIENTATION] = 8
    stored = Image.fromarray(rgb_to_bgr(upright)).transpose(STORED_AS[8])
    add("webp_exif8.webp", pil_encode(stored, "WEBP", exif=exif, lossless=True), upright)
    # TIFF: 8-bit, 16-bit, float, LZW-compressed (Pillow)
    for dtype, channels in ((np.uint8, 3), (np.uint16, 1), (np.uint16, 4), (np.float32, 1), (np.float32, 3)):
        image = noise((24, 32) if channels == 1 else (24, 32, channels), dtype, 20 + channels)
        add(f"tiff_{np.dtype(dtype).name}_{channels}.tif", cv_encode(".tif", image), image)
    image = noise((24, 32, 3), np.uint8, 30)
    add("tiff_lzw.tiff", pil_encode(Image.fromarray(rgb_to_bgr(image)), "TIFF", compression="tiff_lzw"), image)
    # WebP: lossless BGR and BGRA, lossy
    image = noise((24, 32, 3), np.uint8, 31)
    add("webp_lossless.webp", cv_encode(".webp", image, (cv2.IMWRITE_WEBP_QUALITY, 101)), image)
    image = noise((24, 32, 4), np.uint8, 32)
    image[..., 3] = np.maximum(image[..., 3], 1)  # libwebp may rewrite the colour of fully transparent pixels
    add("webp_bgra.webp", cv_encode(".webp", image, (cv2.IMWRITE_WEBP_QUALITY, 101)), image)
    add("webp_lossy.webp", cv_encode(".webp", smooth(3), (cv2.IMWRITE_WEBP_QUALITY, 90)), smooth(3), tolerance=4)
    # BMP: 8-bit gray, 24-bit, 32-bit
    for channels in (1, 3, 4):
        image = noise((24, 32) if channels == 1 else (24, 32, channels), np.uint8, 40 + channels)
        add(f"bmp_{channels}.bmp", cv_encode(".bmp", image), image)
    # Netpbm, Radiance HDR, JPEG 2000, AVIF (as this OpenCV build encodes them)
    image = noise((24, 32, 3), np.uint8, 50)
    add("ppm_u8.ppm", cv_encode(".ppm", image), image)
    image = noise((24, 32), np.uint16, 51)
    add("pgm_u16.pgm", cv_encode(".pgm", image), image)
    image = np.where(noise((24, 32), np.uint8, 52) > 127, 255, 0).astype(np.uint8)
    add("pbm_1bit.pbm", cv_encode(".pbm", image), image)
    image = noise((24, 32, 3), np.float32, 53) * np.float32(0.9) + np.float32(0.05)
    add("radiance.hdr", cv_encode(".hdr", image), image,
        check=lambda out, want: np.testing.assert_allclose(out, want, rtol=0.02, atol=0.01))
    image = smooth(3, 48, 64)  # OpenJPEG cannot encode tiny images with its default resolutions
    add("jpeg2000.jp2", cv_encode(".jp2", image), image, tolerance=1)
    add("jpeg2000_u16.jp2", cv_encode(".jp2", image.astype(np.uint16) * 257), image.astype(np.uint16) * 257,
        tolerance=257)
    add("avif_u8.avif", cv_encode(".avif", smooth(3), (cv2.IMWRITE_AVIF_QUALITY, 95)), smooth(3), tolerance=4)
    # Degenerate geometry: 1x1, one row, one column
    pixel = np.array([[[10, 20, 30]]], np.uint8)
    add("one_pixel.png", cv_encode(".png", pixel), pixel)
    add("one_pixel_jpeg.jpg", cv_encode(".jpg", pixel), pixel, tolerance=6)
    row = noise((1, 37), np.uint16, 60)
    add("row_1x37.png", cv_encode(".png", row), row)
    column = noise((37, 1), np.float32, 61)
    add("column_37x1.tif", cv_encode(".tif", column), column)
    # Animated GIF: every frame (the checks below look at the first; OpenCV decodes GIF as BGRA)
    four = np.array([(0, 0, 0), (250, 250, 250), (250, 0, 0), (0, 0, 250)], np.uint8)
    frames = [four[(noise((24, 32), np.uint8, 70 + i) % 4)] for i in range(3)]
    gif = [Image.fromarray(frame).convert("P", palette=Image.Palette.ADAPTIVE, colors=4) for frame in frames]
    first = rgb_to_bgr(np.asarray(gif[0].convert("RGB")))
    later = rgb_to_bgr(np.asarray(gif[1].convert("RGB")))

    def first_frame(out: np.ndarray, want: np.ndarray) -> None:
        out3 = out[..., :3].astype(int)
        assert np.abs(out3 - inverted(first)).mean() < 30  # OpenCV's GIF encoder quantizes colours
        assert np.abs(out3 - inverted(first)).mean() < np.abs(out3 - inverted(later)).mean()
        if channels_of(out) == 4:
            assert (out[..., 3] == 255).all()

    add("animated.gif", pil_encode(gif[0], "GIF", save_all=True, append_images=gif[1:], duration=80, loop=0),
        np.dstack([first, np.full(first.shape[:2], 255, np.uint8)]), check=first_frame, channels=(3, 4), warns=True)
    # Wrong extensions: the content decides the decoder, the output extension the encoder
    add("png_named.jpg", cv_encode(".png", smooth(3)), smooth(3), tolerance=3)
    jpeg = cv_encode(".jpg", smooth(3))
    add("jpeg_named.png", jpeg, cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_UNCHANGED))
    image = noise((24, 32), np.uint16, 81)
    add("png16_named.tif", cv_encode(".png", image), image)
    return samples


VALID = _valid_samples()
FORMATS_TRIED: list[str] = [sample.name for sample in VALID]
VALID_IDS = [sample.name for sample in VALID]


@pytest.fixture(scope="module")
def valid_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """All valid samples in one directory, inverted by one CLI run (same formats), then again
    by a second run into TIFF (which holds every depth and channel count)."""
    base = tmp_path_factory.mktemp("corpus")
    src = base / "src"
    src.mkdir()
    for sample in VALID:
        (src / sample.name).write_bytes(sample.data)
    before = {p.name: digest(p) for p in src.iterdir()}
    same = run_cli("apply", src, "-o", base / "out", "-f", "invert", "--backend", "cpu", "--jobs", "1")
    as_tiff = run_cli("apply", src, "-o", base / "tif", "-f", "invert", "--backend", "cpu", "--jobs", "2",
                      "--format", "tif")
    after = {p.name: digest(p) for p in src.iterdir()}
    return {"src": src, "out": base / "out", "tif": base / "tif", "same": same, "as_tiff": as_tiff,
            "before": before, "after": after}


def test_valid_corpus_runs_clean(valid_run: dict) -> None:
    proc = valid_run["same"]
    lines = stderr_lines(proc)
    assert proc.returncode == 0, proc.stderr
    assert not [line for line in lines if line.startswith("error:")], lines
    warned = {sample.name for sample in VALID if sample.warns}
    for line in lines:
        if line.startswith("warning:"):
            assert any(name in line for name in warned), line
    assert sorted(p.name for p in valid_run["out"].iterdir()) == sorted(FORMATS_TRIED)
    assert not hidden(valid_run["out"])
    assert valid_run["before"] == valid_run["after"]  # inputs untouched


@pytest.mark.parametrize("sample", VALID, ids=VALID_IDS)
def test_output_keeps_geometry_channels_depth_and_pixels(valid_run: dict, sample: Sample) -> None:
    out = load(valid_run["out"] / sample.name)
    want = inverted(sample.pixels)
    assert out.shape[:2] == want.shape[:2], "geometry (after EXIF orientation)"
    assert channels_of(out) in (sample.channels or (channels_of(want),))
    assert out.dtype == want.dtype
    if sample.check is not None:
        sample.check(out, want)
    elif sample.tolerance == 0:
        np.testing.assert_array_equal(out, want)
    else:
        assert np.abs(out.astype(np.float64) - want).mean() <= sample.tolerance


def test_animated_gif_keeps_every_frame(valid_run: dict) -> None:
    for path in (valid_run["out"] / "animated.gif", valid_run["tif"] / "animated.tif"):
        assert cv2.imcount(str(path)) == 3, path


def test_exif_orientation_is_written_as_1(valid_run: dict) -> None:
    for orientation in range(1, 9):
        written = Image.open(valid_run["out"] / f"jpeg_exif{orientation}.jpg").getexif()
        assert written.get(ORIENTATION, 1) == 1, orientation


def test_wrong_extension_reads_by_content_and_writes_by_extension(valid_run: dict) -> None:
    jpeg = valid_run["out"] / "png_named.jpg"
    assert jpeg.read_bytes()[:3] == b"\xff\xd8\xff"  # a real JPEG, whatever the input was
    assert (valid_run["out"] / "jpeg_named.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_format_and_depth_kept_exactly_in_tiff(valid_run: dict) -> None:
    """TIFF holds uint8, uint16, float32 and 1, 3, 4 channels: no conversion, no warning."""
    proc = valid_run["as_tiff"]
    lines = stderr_lines(proc)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in lines if not SUMMARY.match(line) and "animated.gif" not in line] == []
    assert [line for line in lines if "animated.gif" in line] == [
        f"warning: {valid_run['src'] / 'animated.gif'}: {valid_run['tif'] / 'animated.tif'}: TIFF pages have no "
        "durations; the frame timing is dropped"]
    assert not hidden(valid_run["tif"])
    for sample in VALID:
        out = load(valid_run["tif"] / (Path(sample.name).stem + ".tif"))
        source = cvfilters.read(valid_run["src"] / sample.name)
        assert out.dtype == source.dtype and out.shape == source.shape, sample.name
        np.testing.assert_array_equal(out, inverted(source), err_msg=sample.name)


# ---------------------------------------------------------------- every output format
WRITABLE = sorted(ext for ext in IMAGE_EXTENSIONS if cv2.haveImageWriter("x" + ext))


@pytest.mark.parametrize("ext", WRITABLE)
def test_every_output_format_keeps_channels_and_depth_or_warns(tmp_path: Path, ext: str) -> None:
    """No silent change: what a format cannot hold is converted with a DepthConversionWarning."""
    import warnings

    for dtype in (np.uint8, np.uint16, np.float32):
        for channels in (1, 3, 4):
            image = noise((40, 48) if channels == 1 else (40, 48, channels), dtype, channels)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                back = cvfilters.read(cvfilters.write(tmp_path / f"{np.dtype(dtype).name}_{channels}{ext}", image))
            kept = channels_of(back) == channels and back.dtype == image.dtype
            warned = [w for w in caught if issubclass(w.category, cvfilters.io.writing.DepthConversionWarning)]
            assert kept or warned, (ext, np.dtype(dtype).name, channels, channels_of(back), back.dtype)
            assert back.dtype == cvfilters.io.writing.output_dtype(f"x{ext}", dtype)


def test_pbm_is_thresholded_at_half_with_a_warning(tmp_path: Path) -> None:
    ramp = np.tile(np.arange(256, dtype=np.uint8), (4, 1))
    with pytest.warns(cvfilters.io.writing.DepthConversionWarning, match="1 bit"):
        back = cvfilters.read(cvfilters.write(tmp_path / "ramp.pbm", ramp))
    np.testing.assert_array_equal(back, np.where(ramp >= 128, 255, 0))


# ---------------------------------------------------------------- the broken corpus
@dataclass
class Broken:
    name: str
    make: Callable[[Path], None]
    cause: str  # regex the error line must match after "error: PATH: "


def _bytes(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


def _tiff_header(width: int, height: int) -> bytes:
    """A little-endian baseline TIFF whose IFD claims width x height, with 16 bytes of data."""
    entries = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 1), (262, 3, 1),
               (273, 4, 8 + 2 + 9 * 12 + 4), (277, 3, 1), (278, 4, height), (279, 4, 16)]
    ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", tag, kind, 1, value)
                                                     for tag, kind, value in entries) + struct.pack("<I", 0)
    return b"II*\0" + struct.pack("<I", 8) + ifd + bytes(16)


def _jpeg_claiming(width: int, height: int) -> bytes:
    data = bytearray(cv_encode(".jpg", smooth(3)))
    sof = data.find(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def _broken_samples() -> list[Broken]:
    truncated = r"(truncated or corrupt|cut short)"
    png = cv_encode(".png", noise((24, 32, 3), np.uint8, 90))
    png16 = cv_encode(".png", noise((24, 32), np.uint16, 91))
    jpeg = cv_encode(".jpg", smooth(3))
    tiff = cv_encode(".tif", noise((24, 32, 3), np.uint8, 92))
    webp = cv_encode(".webp", noise((24, 32, 3), np.uint8, 93))
    bmp = cv_encode(".bmp", noise((24, 32, 3), np.uint8, 94))
    gif = pil_encode(Image.fromarray(noise((24, 32, 3), np.uint8, 95)).convert("P"), "GIF")
    items = [Broken(f"cut{offset}.png", _bytes(png[:offset]), truncated)
             for offset in (8, 20, 33, len(png) // 2, len(png) - 20, len(png) - 1)]
    items.append(Broken("cut_half16.png", _bytes(png16[: len(png16) // 2]), truncated))
    items += [Broken(f"cut{offset}.jpg", _bytes(jpeg[:offset]), r"(truncated or corrupt|cut short|not an image)")
              for offset in (2, 30, len(jpeg) // 2, len(jpeg) - 2)]
    for name, data, offsets in (("tif", tiff, (8, len(tiff) // 2)), ("webp", webp, (12, len(webp) // 2)),
                                ("bmp", bmp, (14, len(bmp) // 2)), ("gif", gif, (13, len(gif) // 2))):
        items += [Broken(f"cut{offset}.{name}", _bytes(data[:offset]), truncated) for offset in offsets]
    huge = r"65535x65535 = 4294836225 pixels exceeds the limit of 268435456"
    bomb_png = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 65535, 65535, 8, 0, 0, 0, 0))
                + png_chunk(b"IDAT", zlib.compress(b"\0" * 64)) + png_chunk(b"IEND", b""))
    bomb_gif = b"GIF89a" + struct.pack("<HHBBB", 65535, 65535, 0, 0, 0) + b"," + struct.pack(
        "<HHHHB", 0, 0, 65535, 65535, 0) + b"\x08\x02\x02\x04\x01\x00;"
    items += [
        Broken("empty.png", _bytes(b""), r"file is empty \(0 bytes\)"),
        Broken("empty.jpg", _bytes(b""), r"file is empty \(0 bytes\)"),
        Broken("text.png", _bytes(b"just some notes, not an image\n" * 10), r"not an image"),
        Broken("random.jpg", _bytes(noise((3000,), np.uint8, 96).tobytes()), r"not an image"),
        Broken("html.tif", _bytes(b"<!doctype html><title>404 Not Found</title>\n"), r"not an image"),
        Broken("bomb.png", _bytes(bomb_png), huge),
        Broken("bomb.jpg", _bytes(_jpeg_claiming(65535, 65535)), huge),
        Broken("bomb.tif", _bytes(_tiff_header(65535, 65535)), huge),
        Broken("bomb.gif", _bytes(bomb_gif), huge),
        Broken("loop.png", lambda path: path.symlink_to(path.name), r"[Tt]oo many levels of symbolic links"),
        Broken("dangling.jpg", lambda path: path.symlink_to(path.parent / "gone" / "x.jpg"), r"no such file"),
    ]
    return items


BROKEN = _broken_samples()
UNREADABLE = Broken("unreadable.png", lambda path: (path.write_bytes(cv_encode(".png", smooth(3))), path.chmod(0)),
                    r"permission denied")
DIRECTORY = "photo.png"  # a directory named like an image, given as an input
GOOD_IN_BROKEN_BATCH = ("good.png", "good.jpg")
DAMAGED = "damaged_scan.jpg"  # complete, but libjpeg reports corrupt data: written, with a warning
BROKEN_TRIED: list[str] = [b.name for b in BROKEN] + [UNREADABLE.name, DIRECTORY + "/", DAMAGED, "walk/loop.png",
                                                       "walk/dangling.png"]


def _damaged_jpeg() -> bytes:
    data = bytearray(cv_encode(".jpg", smooth(3, 48, 64)))
    middle = (data.find(b"\xff\xda") + len(data)) // 2
    data[middle : middle + 64] = bytes(64)  # libjpeg: "Corrupt JPEG data: N extraneous bytes before marker"
    return bytes(data)


def _without_dac_override() -> tuple[str, ...] | None:
    """A command prefix under which permission bits apply to us, or None where impossible.

    Root ignores them (CAP_DAC_OVERRIDE); ``setpriv`` drops that capability from the
    bounding set, so the command runs as root whose files' mode bits still refuse it.
    """
    if not IS_ROOT:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Every broken input given explicitly, two good files and a directory holding broken
    symlinks, in one CLI run (``--jobs 2``: the worker processes print too)."""
    base = tmp_path_factory.mktemp("broken")
    bad = base / "bad"
    (bad / "gone").mkdir(parents=True)
    for item in BROKEN:
        item.make(bad / item.name)
    (bad / DIRECTORY).mkdir()
    (bad / "good.png").write_bytes(cv_encode(".png", noise((24, 32, 3), np.uint8, 97)))
    (bad / "good.jpg").write_bytes(cv_encode(".jpg", smooth(3)))
    (bad / DAMAGED).write_bytes(_damaged_jpeg())
    walk = base / "walk"
    walk.mkdir()
    (walk / "walked.png").write_bytes(cv_encode(".png", noise((24, 32), np.uint8, 98)))
    (walk / "loop.png").symlink_to("loop.png")
    (walk / "dangling.png").symlink_to(base / "gone.png")
    prefix = _without_dac_override()
    inputs = [bad / item.name for item in BROKEN] + [bad / DIRECTORY] + [bad / name for name in GOOD_IN_BROKEN_BATCH]
    inputs.append(bad / DAMAGED)
    if prefix is not None:
        UNREADABLE.make(bad / UNREADABLE.name)
        inputs.append(bad / UNREADABLE.name)
    inputs.append(walk)
    before = {p.name: digest(p) for p in bad.iterdir() if p.is_file() and os.access(p, os.R_OK)
              and not p.is_symlink()}
    proc = run_cli("apply", *inputs, "-o", base / "out", "-f", "invert", "--backend", "cpu", "--jobs", "2",
                   prefix=prefix or ())
    after = {p.name: digest(p) for p in bad.iterdir() if p.name in before}
    if prefix is not None:
        (bad / UNREADABLE.name).chmod(0o644)
    return {"bad": bad, "walk": walk, "out": base / "out", "proc": proc, "lines": stderr_lines(proc),
            "unreadable": prefix is not None, "before": before, "after": after}


def test_broken_batch_exits_1_and_does_the_rest(broken_run: dict) -> None:
    proc, out = broken_run["proc"], broken_run["out"]
    assert proc.returncode == 1, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted([*GOOD_IN_BROKEN_BATCH, DAMAGED, "walked.png"])
    assert not hidden(out)
    for name in GOOD_IN_BROKEN_BATCH:
        assert load(out / name).shape == (24, 32, 3)
    summary = [line for line in broken_run["lines"] if SUMMARY.match(line)]
    # the broken files, the directory named like an image, and the two broken symlinks in the walked folder
    failed = len(BROKEN) + int(broken_run["unreadable"]) + 3
    assert summary and summary[0].startswith(f"done {len(GOOD_IN_BROKEN_BATCH) + 2}, failed {failed} "), summary
    assert broken_run["before"] == broken_run["after"]  # no input was touched


@pytest.mark.parametrize("item", BROKEN, ids=[b.name for b in BROKEN])
def test_each_broken_input_gives_one_line_naming_it(broken_run: dict, item: Broken) -> None:
    path = broken_run["bad"] / item.name
    lines = lines_naming(broken_run["lines"], path)
    assert len(lines) == 1, (item.name, broken_run["lines"])
    assert lines[0].startswith(f"error: {path}: ")
    assert re.search(item.cause, lines[0]), lines[0]
    assert not (broken_run["out"] / item.name).exists()


def test_damaged_but_decodable_jpeg_is_written_with_a_warning(broken_run: dict) -> None:
    path = broken_run["bad"] / DAMAGED
    lines = lines_naming(broken_run["lines"], path)
    assert len(lines) == 1, broken_run["lines"]
    assert lines[0].startswith(f"warning: {path}: ") and "Corrupt JPEG data" in lines[0], lines[0]
    assert load(broken_run["out"] / DAMAGED).shape == (48, 64, 3)


def test_unreadable_input(broken_run: dict) -> None:
    if not broken_run["unreadable"]:
        pytest.skip("running as root without setpriv: permission bits cannot refuse a read")
    path = broken_run["bad"] / UNREADABLE.name
    lines = lines_naming(broken_run["lines"], path)
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), broken_run["lines"]
    assert re.search(UNREADABLE.cause, lines[0]), lines[0]
    assert not (broken_run["out"] / UNREADABLE.name).exists()


def test_directory_named_like_an_image_is_reported(broken_run: dict) -> None:
    lines = lines_naming(broken_run["lines"], broken_run["bad"] / DIRECTORY)
    assert len(lines) == 1 and lines[0].startswith("error: "), broken_run["lines"]


def test_broken_symlinks_in_an_input_directory_are_reported(broken_run: dict) -> None:
    for name in ("loop.png", "dangling.png"):
        assert len(lines_naming(broken_run["lines"], broken_run["walk"] / name)) == 1, broken_run["lines"]


def test_corpus_counts() -> None:
    """For the closing note of issue #9 (shown with ``pytest -s``)."""
    assert len(FORMATS_TRIED) >= 40 and len(BROKEN_TRIED) >= 30
    print(f"\ncorpus: {len(FORMATS_TRIED)} valid format/depth variants, {len(BROKEN_TRIED)} broken inputs")
