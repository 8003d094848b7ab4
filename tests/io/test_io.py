"""Tests of cvfilters.io.reading and cvfilters.io.writing: round trips, EXIF orientation, metadata, limits,
errors, atomic writes."""

from __future__ import annotations

import errno
import io
import os
import struct
import threading
import time
import warnings
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms, ImageOps

from cvfilters.core.errors import (
    EmptyFileError,
    FileMissingError,
    ImageTooLargeError,
    ImageWriteError,
    NotAFileError,
    NotAnImageError,
    OutputExistsError,
    ParameterError,
    TruncatedImageError,
    UnreadableFileError,
    UnsupportedDepthError,
    UsageError,
)
from cvfilters.io import reading, writing
from cvfilters.io.metadata import Metadata

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ORIENTATION = 0x0112
MAKE = 0x010F
XMP = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>'
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
# Pillow transposes that turn an upright image into what a camera stores with each orientation.
STORED_AS = {
    1: None, 2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_90, 7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}


def noise(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.random(shape, dtype=np.float32)
    return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)


def shaped(channels: int, height: int = 24, width: int = 40) -> tuple[int, ...]:
    return (height, width) if channels == 1 else (height, width, channels)


def blocks_rgb() -> np.ndarray:
    """64x48 RGB image of 16x16 blocks in 12 distinct colours: every flip/rotation differs."""
    colours = np.array([(r, g, b) for r in (20, 230) for g in (20, 120, 230) for b in (20, 230)], np.uint8)
    grid = colours.reshape(3, 4, 3)
    return np.repeat(np.repeat(grid, 16, axis=0), 16, axis=1)


def centres(image: np.ndarray) -> np.ndarray:
    """The centre pixel of every 16x16 block, as int: robust against JPEG ringing at block edges."""
    return np.asarray(image)[8::16, 8::16].astype(int)


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def no_temporaries(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture
def strict_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", writing.DepthConversionWarning)
        yield


# --- round trips ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ext", "dtype", "channels"),
    [(".png", np.uint8, c) for c in (1, 3, 4)]
    + [(".png", np.uint16, c) for c in (1, 3, 4)]
    + [(".tif", np.uint16, c) for c in (1, 3, 4)]
    + [(".tiff", np.float32, c) for c in (1, 3, 4)]
    + [(".tif", np.uint8, 3), (".bmp", np.uint8, 1), (".bmp", np.uint8, 4), (".webp", np.uint8, 3)],
)
def test_lossless_round_trip_is_exact(tmp_path, strict_warnings, ext, dtype, channels):
    image = noise(shaped(channels), dtype)
    written = writing.write(tmp_path / f"out{ext}", image, lossless=ext == ".webp")  # WebP is lossy by default
    assert written == tmp_path / f"out{ext}"
    back = reading.read(written)
    assert back.dtype == image.dtype and back.shape == image.shape
    np.testing.assert_array_equal(back, image)


def test_webp_keeps_alpha_losslessly(tmp_path, strict_warnings):
    image = noise(shaped(4), np.uint8)
    image[..., 3] = np.maximum(image[..., 3], 1)  # libwebp may rewrite the colour of fully transparent pixels
    np.testing.assert_array_equal(reading.read(writing.write(tmp_path / "a.webp", image, lossless=True)), image)


def smooth(channels: int) -> np.ndarray:
    y, x = np.mgrid[0:48, 0:64]
    planes = [(x * 3 + y) % 256, (y * 5) % 256, (x * 2 + y * 2) % 256][:channels]
    return np.dstack(planes).astype(np.uint8).squeeze()


@pytest.mark.parametrize("channels", [1, 3])
def test_jpeg_round_trip_within_tolerance(tmp_path, strict_warnings, channels):
    image = smooth(channels)
    back = reading.read(writing.write(tmp_path / "a.jpg", image))
    assert back.shape == image.shape and back.dtype == np.uint8
    difference = np.abs(back.astype(int) - image)
    assert difference.mean() < 2.0 and difference.max() <= 40  # default quality 95


def test_quality_is_passed_to_jpeg_and_webp(tmp_path):
    image = noise(shaped(3, 64, 64), np.uint8)
    for ext in (".jpg", ".webp"):
        low = writing.write(tmp_path / f"low{ext}", image, quality=10).stat().st_size
        high = writing.write(tmp_path / f"high{ext}", image, quality=95).stat().st_size
        assert low < high
    lossy = reading.read(writing.write(tmp_path / "smooth.webp", smooth(3), quality=90))
    assert not np.array_equal(lossy, smooth(3)) and np.abs(lossy.astype(int) - smooth(3)).mean() < 3


def test_png_compression_is_passed(tmp_path):
    image = np.tile(np.arange(256, dtype=np.uint8), (64, 1))
    fast = writing.write(tmp_path / "fast.png", image, compression=0).stat().st_size
    small = writing.write(tmp_path / "small.png", image, compression=9).stat().st_size
    assert small < fast
    np.testing.assert_array_equal(reading.read(tmp_path / "small.png"), image)


def test_write_accepts_str_paths_and_creates_parents(tmp_path):
    target = tmp_path / "a" / "b" / "c.png"
    assert writing.write(str(target), noise(shaped(1), np.uint8)) == target
    assert reading.probe(str(target)) == (40, 24)


def test_written_file_mode_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = writing.write(tmp_path / "m.png", noise(shaped(1), np.uint8))
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


# --- what OpenCV gives for special PNGs --------------------------------------------------


def test_gray_alpha_png_reads_as_bgra(tmp_path):
    gray, alpha = noise((6, 5), np.uint8, 1), noise((6, 5), np.uint8, 2)
    Image.fromarray(np.dstack([gray, alpha]), "LA").save(tmp_path / "la.png")
    image = reading.read(tmp_path / "la.png")
    assert image.shape == (6, 5, 4)
    for channel in range(3):
        np.testing.assert_array_equal(image[..., channel], gray)
    np.testing.assert_array_equal(image[..., 3], alpha)


def test_palette_png_reads_as_bgr_or_bgra(tmp_path):
    rgb = np.zeros((4, 6, 3), np.uint8)
    rgb[:, :3] = (255, 0, 0)
    palette = Image.fromarray(rgb).convert("P")
    palette.save(tmp_path / "p.png")
    np.testing.assert_array_equal(reading.read(tmp_path / "p.png"), rgb[..., ::-1])
    palette.save(tmp_path / "pt.png", transparency=0)
    with_alpha = reading.read(tmp_path / "pt.png")
    assert with_alpha.shape == (4, 6, 4) and set(np.unique(with_alpha[..., 3])) <= {0, 255}


def test_float64_reads_as_float32_int16_is_kept_and_int8_refused(tmp_path):
    values = noise((5, 7), np.float32).astype(np.float64)
    assert cv2.imwrite(str(tmp_path / "f64.tif"), values)
    image = reading.read(tmp_path / "f64.tif")
    assert image.dtype == np.float32
    np.testing.assert_allclose(image, values, rtol=1e-7)
    signed = np.array([[-32768, -3, 0, 5, 32767]], np.int16)
    assert cv2.imwrite(str(tmp_path / "i16.tif"), signed)
    np.testing.assert_array_equal(reading.read(tmp_path / "i16.tif"), signed)
    assert cv2.imwrite(str(tmp_path / "i8.tif"), np.full((5, 7), -3, np.int8))
    with pytest.raises(UnsupportedDepthError, match="int8") as caught:
        reading.read(tmp_path / "i8.tif")
    assert str(tmp_path / "i8.tif") in str(caught.value)


# --- EXIF orientation --------------------------------------------------------------------


def save_oriented(path: Path, orientation: int, **options) -> np.ndarray:
    """Save the block image as a camera would with ``orientation``; return the upright RGB."""
    upright = Image.fromarray(blocks_rgb())
    stored = upright if STORED_AS[orientation] is None else upright.transpose(STORED_AS[orientation])
    exif = Image.Exif()
    exif[ORIENTATION] = orientation
    exif[MAKE] = "TestCam"
    stored.save(path, exif=exif, **options)
    # the test's own premise: Pillow, applying the tag, sees the upright image
    assert np.abs(centres(ImageOps.exif_transpose(Image.open(path)).convert("RGB")) - centres(upright)).max() <= 8
    return np.asarray(upright)


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize(("ext", "options"), [
    (".jpg", {"quality": 100, "subsampling": 0}), (".png", {}), (".webp", {"lossless": True}),
])
def test_exif_orientation_is_applied_once_and_written_as_1(tmp_path, orientation, ext, options):
    source = tmp_path / f"in{ext}"
    upright = save_oriented(source, orientation, **options)
    image, metadata = reading.read_with_metadata(source)
    assert image.shape == (48, 64, 3)
    if ext == ".jpg":
        assert np.abs(centres(image[..., ::-1]) - centres(upright)).max() <= 8
    else:
        np.testing.assert_array_equal(image[..., ::-1], upright)
    out = writing.write(tmp_path / f"out{ext}", image, metadata=metadata)
    written = Image.open(out).getexif()
    assert written[ORIENTATION] == 1 and written[MAKE] == "TestCam"
    assert np.abs(centres(reading.read(out)[..., ::-1]) - centres(upright)).max() <= 16


@pytest.mark.parametrize("orientation", range(1, 9))
def test_tiff_orientation_is_applied_once(tmp_path, orientation):
    upright = save_oriented(tmp_path / "in.tif", orientation)
    np.testing.assert_array_equal(reading.read(tmp_path / "in.tif")[..., ::-1], upright)


def test_exif_comes_without_header_and_only_the_orientation_changes(tmp_path):
    save_oriented(tmp_path / "in.jpg", 6, quality=100, subsampling=0)
    original = Image.open(tmp_path / "in.jpg").info["exif"].removeprefix(b"Exif\0\0")
    exif = reading.read_with_metadata(tmp_path / "in.jpg")[1].exif
    assert exif[:4] in (b"MM\0*", b"II*\0") and len(exif) == len(original)
    assert sum(a != b for a, b in zip(exif, original, strict=True)) == 1  # the orientation value, 6 -> 1
    # a block with the "Exif\0\0" header (as Pillow gives it) is accepted and written once
    out = writing.write(tmp_path / "out.jpg", blocks_rgb(), metadata=Metadata(exif=b"Exif\0\0" + original))
    assert b"Exif\0\0Exif" not in out.read_bytes()
    assert Image.open(out).getexif()[ORIENTATION] == 1


# --- ICC and XMP -------------------------------------------------------------------------


@pytest.mark.parametrize("source_ext", [".png", ".jpg", ".tif"])
@pytest.mark.parametrize("target_ext", [".png", ".jpg", ".webp"])
def test_icc_profile_is_kept(tmp_path, source_ext, target_ext):
    Image.fromarray(blocks_rgb()).save(tmp_path / f"in{source_ext}", icc_profile=SRGB)
    image, metadata = reading.read_with_metadata(tmp_path / f"in{source_ext}")
    assert metadata.icc == SRGB
    out = writing.write(tmp_path / f"out{target_ext}", image, metadata=metadata)
    assert Image.open(out).info.get("icc_profile") == SRGB


@pytest.mark.parametrize("target_ext", [".png", ".jpg", ".webp"])
def test_xmp_is_kept_as_the_bare_packet(tmp_path, target_ext):
    Image.fromarray(blocks_rgb()).save(tmp_path / "in.jpg", xmp=XMP)
    image, metadata = reading.read_with_metadata(tmp_path / "in.jpg")
    assert metadata.xmp == XMP
    out = writing.write(tmp_path / f"out{target_ext}", image, metadata=metadata)
    assert reading.read_with_metadata(out)[1].xmp == XMP
    info = Image.open(out).info
    assert info.get("xmp", info.get("XML:com.adobe.xmp")) in (XMP, XMP.decode())


def test_png_xmp_is_written_exactly(tmp_path):
    # OpenCV's PNG encoder reads the packet up to a NUL; without one it often appends heap bytes
    for length in range(40):
        packet = XMP.replace(b"<rdf:RDF/>", b"<rdf:RDF/>" + b" " * length)
        out = writing.write(tmp_path / f"x{length}.png", np.zeros((4, 4), np.uint8), metadata=Metadata(xmp=packet))
        assert Image.open(out).info["XML:com.adobe.xmp"] == packet.decode()
        assert reading.read_with_metadata(out)[1].xmp == packet


def test_formats_without_metadata_are_written_without_it(tmp_path):
    metadata = Metadata(icc=SRGB, xmp=XMP)
    out = writing.write(tmp_path / "out.bmp", blocks_rgb(), metadata=metadata)
    assert reading.read_with_metadata(out)[1] == Metadata()


# --- pixel limit -------------------------------------------------------------------------


def test_pixel_limit_argument_and_environment(tmp_path, monkeypatch):
    path = writing.write(tmp_path / "s.png", noise(shaped(3, 10, 20), np.uint8))
    with pytest.raises(ImageTooLargeError, match=r"20x10 = 200 pixels exceeds the limit of 199") as caught:
        reading.read(path, max_pixels=199)
    assert str(path) in str(caught.value)
    assert reading.read(path, max_pixels=200).shape == (10, 20, 3)
    monkeypatch.setenv("CVFILTERS_MAX_PIXELS", "150")
    assert reading.max_pixels_limit() == 150
    with pytest.raises(ImageTooLargeError, match="limit of 150"):
        reading.read(path)
    assert reading.read(path, max_pixels=1000).shape == (10, 20, 3)  # the argument wins
    monkeypatch.setenv("CVFILTERS_MAX_PIXELS", "lots")
    with pytest.raises(UsageError, match="CVFILTERS_MAX_PIXELS"):
        reading.read(path)
    monkeypatch.delenv("CVFILTERS_MAX_PIXELS")
    assert reading.max_pixels_limit() == reading.DEFAULT_MAX_PIXELS == 2**28
    with pytest.raises(UsageError, match="max_pixels"):
        reading.max_pixels_limit(0)


def test_huge_png_header_is_refused_before_decoding(tmp_path):
    header = struct.pack(">IIBBBBB", 65535, 65535, 8, 0, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", zlib.compress(b"\0" * 64))
    path = tmp_path / "bomb.png"
    path.write_bytes(data + png_chunk(b"IEND", b""))
    assert reading.probe(path) == (65535, 65535)
    start = time.perf_counter()
    with pytest.raises(ImageTooLargeError) as caught:
        reading.read(path)
    assert time.perf_counter() - start < 1.0
    assert str(caught.value) == (
        f"{path}: 65535x65535 = 4294836225 pixels exceeds the limit of 268435456"
        " (set --max-pixels or CVFILTERS_MAX_PIXELS)"
    )


def test_formats_pillow_cannot_parse_are_decoded_then_checked(tmp_path):
    image = noise(shaped(3, 10, 20), np.float32)
    path = writing.write(tmp_path / "r.hdr", image)
    assert reading.probe(path) == (20, 10)
    back = reading.read(path)
    assert back.dtype == np.float32 and np.abs(back - image).max() < 0.01
    with pytest.raises(ImageTooLargeError, match="20x10 = 200 pixels"):
        reading.read(path, max_pixels=100)
    huge = tmp_path / "huge.hdr"
    huge.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 65535 +X 65535\n" + b"\0" * 64)
    with pytest.raises(ImageTooLargeError, match="65535x65535 = 4294836225 pixels exceeds"):
        reading.read(huge)  # from the header, before OpenCV decodes


# --- read errors -------------------------------------------------------------------------


def expect(error: type[Exception], path: Path) -> None:
    with pytest.raises(error) as caught:
        reading.read(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_missing_directory_empty_and_text_files(tmp_path):
    expect(FileMissingError, tmp_path / "nope.png")
    expect(FileMissingError, tmp_path / "nope" / "x.png")
    (tmp_path / "dir.png").mkdir()
    expect(NotAFileError, tmp_path / "dir.png")
    (tmp_path / "empty.png").write_bytes(b"")
    expect(EmptyFileError, tmp_path / "empty.png")
    (tmp_path / "text.png").write_text("not an image at all\n" * 20)
    expect(NotAnImageError, tmp_path / "text.png")
    (tmp_path / "random.jpg").write_bytes(noise((300,), np.uint8).tobytes())
    expect(NotAnImageError, tmp_path / "random.jpg")
    with pytest.raises(FileMissingError):
        reading.probe(tmp_path / "nope.png")


@pytest.mark.skipif(IS_ROOT or not hasattr(os, "geteuid"), reason="root reads every file")
def test_unreadable_file(tmp_path):
    path = writing.write(tmp_path / "locked.png", noise(shaped(1), np.uint8))
    path.chmod(0)
    try:
        expect(UnreadableFileError, path)
    finally:
        path.chmod(0o644)


@pytest.mark.parametrize("error", [PermissionError(errno.EACCES, "Permission denied"), OSError(errno.EIO, "I/O")])
def test_open_failures_are_unreadable(tmp_path, monkeypatch, error):
    path = writing.write(tmp_path / "x.png", noise(shaped(1), np.uint8))

    real_open = os.open

    def refuse(name, *args, **kwargs):
        if os.fspath(name) == os.path.realpath(path):
            raise error
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)  # the open in cvfilters.core.files.read_regular
    expect(UnreadableFileError, path)


def test_truncated_png_at_several_offsets(tmp_path):
    data = cv2.imencode(".png", noise(shaped(3), np.uint8))[1].tobytes()
    for offset in (8, 20, 33, 60, len(data) // 2, len(data) - 20, len(data) - 1):
        path = tmp_path / f"cut{offset}.png"
        path.write_bytes(data[:offset])
        expect(TruncatedImageError, path)


def test_truncated_jpeg(tmp_path):
    data = cv2.imencode(".jpg", smooth(3))[1].tobytes()
    for offset in (30, len(data) // 2, len(data) - 2):
        path = tmp_path / f"cut{offset}.jpg"
        path.write_bytes(data[:offset])
        expect(TruncatedImageError, path)
    # cut in the scan, then zero-filled (a preallocated download): OpenCV decodes it with garbage at
    # the bottom, the end-marker check refuses it
    scan = data.find(b"\xff\xda")
    padded = data[: (scan + len(data)) // 2] + bytes(10_000)
    assert cv2.imdecode(np.frombuffer(padded, np.uint8), cv2.IMREAD_UNCHANGED) is not None
    (tmp_path / "padded.jpg").write_bytes(padded)
    expect(TruncatedImageError, tmp_path / "padded.jpg")


def test_jpeg_end_marker_check(tmp_path):
    data = cv2.imencode(".jpg", smooth(3))[1].tobytes()
    # a trailer after the end marker, larger than 64 KiB (a motion photo's video), still reads
    (tmp_path / "trailer.jpg").write_bytes(data + noise((200_000,), np.uint8).tobytes().replace(b"\xff\xd9", b"\0\0"))
    assert reading.read(tmp_path / "trailer.jpg").shape == (48, 64, 3)
    # the end marker of an embedded thumbnail does not make a cut main image complete
    thumbnail = cv2.imencode(".jpg", smooth(3)[:8, :8])[1].tobytes()
    app = b"\xff\xe2" + struct.pack(">H", len(thumbnail) + 2) + thumbnail
    cut = data[:2] + app + data[2 : (data.find(b"\xff\xda") + len(data)) // 2] + bytes(10_000)
    assert cv2.imdecode(np.frombuffer(cut, np.uint8), cv2.IMREAD_UNCHANGED) is not None
    (tmp_path / "thumb.jpg").write_bytes(cut)
    expect(TruncatedImageError, tmp_path / "thumb.jpg")


# --- writing -----------------------------------------------------------------------------


def test_overwrite_false_refuses_an_existing_file(tmp_path):
    path = writing.write(tmp_path / "o.png", noise(shaped(1), np.uint8, 1))
    before = path.read_bytes()
    with pytest.raises(OutputExistsError) as caught:
        writing.write(path, noise(shaped(1), np.uint8, 2), overwrite=False)
    assert str(path) in str(caught.value) and path.read_bytes() == before
    writing.write(path, noise(shaped(1), np.uint8, 2))
    np.testing.assert_array_equal(reading.read(path), noise(shaped(1), np.uint8, 2))


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_failed_write_leaves_no_partial_output(tmp_path, monkeypatch, failing):
    old = writing.write(tmp_path / "keep.png", noise(shaped(3), np.uint8, 1))
    before = old.read_bytes()

    def fail(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, failing, fail)
    for target in (tmp_path / "new.png", old):
        with pytest.raises(ImageWriteError, match="No space left") as caught:
            writing.write(target, noise(shaped(3), np.uint8, 2))
        assert str(target) in str(caught.value)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.png"] and old.read_bytes() == before


def test_failed_encoding_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(cv2, "imencode", lambda *args, **kwargs: (False, None))
    with pytest.raises(ImageWriteError, match="cannot be encoded"):
        writing.write(tmp_path / "e.png", noise(shaped(1), np.uint8))
    assert list(tmp_path.iterdir()) == []


def test_unwritable_places(tmp_path):
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(ImageWriteError) as caught:
        writing.write(tmp_path / "file" / "out.png", noise(shaped(1), np.uint8))
    assert str(tmp_path / "file" / "out.png") in str(caught.value)
    if not IS_ROOT:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        with pytest.raises(ImageWriteError, match="ermission"):
            writing.write(locked / "out.png", noise(shaped(1), np.uint8))


def test_concurrent_writers_do_not_collide(tmp_path):
    images = [noise(shaped(3, 64, 64), np.uint8, seed) for seed in range(8)]
    errors: list[BaseException] = []

    def run(image: np.ndarray) -> None:
        try:
            for _ in range(3):
                writing.write(tmp_path / "same.png", image)
        except BaseException as exc:  # collected and re-checked below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(image,)) for image in images]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and no_temporaries(tmp_path)
    final = reading.read(tmp_path / "same.png")
    assert any(np.array_equal(final, image) for image in images)


def test_bad_parameters_and_extensions(tmp_path):
    image = noise(shaped(1), np.uint8)
    for bad in (0, 101, 50.0, True):
        with pytest.raises(ParameterError, match="quality"):
            writing.write(tmp_path / "q.jpg", image, quality=bad)
    with pytest.raises(ParameterError, match="compression"):
        writing.write(tmp_path / "c.png", image, compression=10)
    for name in ("x.xyz", "noextension"):
        with pytest.raises(ImageWriteError, match="no encoder"):
            writing.write(tmp_path / name, image)
    with pytest.raises(UnsupportedDepthError, match="int32"):
        writing.write(tmp_path / "i.tif", image.astype(np.int32))
    with pytest.raises(ImageWriteError, match="shape"):
        writing.write(tmp_path / "s.png", np.zeros((4, 4, 2), np.uint8))
    assert list(tmp_path.iterdir()) == []


# --- depth and channel conversion --------------------------------------------------------


def test_uint16_to_jpeg_warns_and_scales(tmp_path):
    image = np.full((16, 16, 3), 0, np.uint16)
    image[:, :8] = 32896  # 32896 * 255 / 65535 = 128.0
    image[:, 8:] = 65535
    with pytest.warns(writing.DepthConversionWarning, match="uint16"):
        path = writing.write(tmp_path / "d.jpg", image)
    back = reading.read(path)
    assert back.dtype == np.uint8
    assert abs(int(back[8, 2, 0]) - 128) <= 2 and abs(int(back[8, 13, 0]) - 255) <= 2


@pytest.mark.filterwarnings("error::RuntimeWarning")  # NaN must not reach an integer cast
def test_depth_conversions_round_and_clip(tmp_path):
    sixteen = np.array([[0, 128, 129, 257, 32767, 32768, 65407, 65535]], np.uint16)
    with pytest.warns(writing.DepthConversionWarning):
        eight = reading.read(writing.write(tmp_path / "u16.bmp", sixteen))
    np.testing.assert_array_equal(eight, np.rint(sixteen / 257.0).astype(np.uint8))
    floats = np.array([[-0.5, 0.0, 0.25, 0.5, 1.0, 1.5, np.nan, np.inf]], np.float32)
    with pytest.warns(writing.DepthConversionWarning, match="float32"):
        as_png = reading.read(writing.write(tmp_path / "f.png", floats))
    np.testing.assert_array_equal(as_png, np.array([[0, 0, 16384, 32768, 65535, 65535, 0, 65535]], np.uint16))
    with pytest.warns(writing.DepthConversionWarning):
        as_bmp = reading.read(writing.write(tmp_path / "f.bmp", floats))
    np.testing.assert_array_equal(as_bmp, np.array([[0, 0, 64, 128, 255, 255, 0, 255]], np.uint8))


def test_alpha_is_dropped_for_jpeg_only(tmp_path, strict_warnings):
    image = noise(shaped(4), np.uint8)
    with pytest.warns(writing.DepthConversionWarning, match="alpha"):
        assert reading.read(writing.write(tmp_path / "a.jpg", image)).shape == (24, 40, 3)
    for ext in (".png", ".tif", ".bmp"):
        assert reading.read(writing.write(tmp_path / f"a{ext}", image)).shape == (24, 40, 4)


def test_channel_conversion_for_pnm(tmp_path):
    gray = noise(shaped(1), np.uint8)
    with pytest.warns(writing.DepthConversionWarning, match="1 channels"):
        colour = reading.read(writing.write(tmp_path / "g.ppm", gray))
    np.testing.assert_array_equal(colour, np.dstack([gray] * 3))
    with pytest.warns(writing.DepthConversionWarning, match="converted to gray"):
        assert reading.read(writing.write(tmp_path / "c.pgm", colour)).shape == gray.shape


@pytest.mark.parametrize(("ext", "dtype", "stored"), [
    (".jpg", np.uint16, np.uint8), (".jpeg", np.float32, np.uint8), (".webp", np.uint8, np.uint8),
    (".png", np.uint16, np.uint16), (".png", np.float32, np.uint16), (".png", np.float64, np.uint16),
    (".tif", np.float32, np.float32), (".tiff", np.uint16, np.uint16), (".hdr", np.uint8, np.float32),
    (".bmp", np.float32, np.uint8),
])
def test_output_dtype(ext, dtype, stored):
    assert writing.output_dtype(f"x{ext.upper()}", dtype) == np.dtype(stored)


def test_extension_sets():
    from cvfilters.io.formats import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS

    assert {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".exr", ".avif"} <= IMAGE_EXTENSIONS
    assert VIDEO_EXTENSIONS == {".mp4", ".avi", ".mov", ".mkv", ".webm"}
    assert all(ext == ext.lower() and ext.startswith(".") for ext in IMAGE_EXTENSIONS)


def test_probe_reads_only_the_header(tmp_path):
    path = writing.write(tmp_path / "p.jpg", smooth(3))
    assert reading.probe(path) == (64, 48)
    buffer = io.BytesIO()
    Image.new("RGB", (300, 200)).save(buffer, "PNG")
    (tmp_path / "cut.png").write_bytes(buffer.getvalue()[:50])  # header only: probing still works
    assert reading.probe(tmp_path / "cut.png") == (300, 200)
    expect(TruncatedImageError, tmp_path / "cut.png")
