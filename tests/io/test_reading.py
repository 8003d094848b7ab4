"""cvfilters.io.reading, from the survivors of io/images' mutation run (docs/mutation.md; io/images
was split into io/reading and io/writing): each test checks a behaviour against an independent
reference (the file's own header bytes, Pillow, a numpy formula)."""

from __future__ import annotations

import errno
import os
import sys
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from cvfilters.core.errors import (
    EmptyFileError,
    ImageTooLargeError,
    NotAnImageError,
    TruncatedImageError,
    UnreadableFileError,
    UnsupportedDepthError,
    UsageError,
)
from cvfilters.io import headers, reading, writing
from tests import makefiles

HDR_HEADER = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 10 +X 20\n"


def test_probe_sizes_text_headers_without_decoding(tmp_path: Path) -> None:
    path = tmp_path / "cut.hdr"
    path.write_bytes(HDR_HEADER + b"\x02\x02")  # the header, then 2 bytes of the 200 pixels: a decode fails
    assert reading.probe(path) == (20, 10)
    with pytest.raises(TruncatedImageError):
        reading.read(path)


def test_probe_names_the_file_of_a_broken_text_header(tmp_path: Path) -> None:
    path = tmp_path / "broken.hdr"
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\nnonsense\n")
    with pytest.raises(TruncatedImageError) as caught:
        reading.probe(path)
    assert str(caught.value) == f"{path}: Radiance HDR header without a resolution line (such as -Y 480 +X 640)"


def test_probe_of_a_decoded_format_applies_no_pixel_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.exr"
    writing.write(path, np.zeros((10, 20, 3), np.float32))
    monkeypatch.setenv("CVFILTERS_MAX_PIXELS", "100")  # below 20 * 10: read refuses it, probe does not
    assert reading.probe(path) == (20, 10)
    with pytest.raises(ImageTooLargeError):
        reading.read(path)


def _noise(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("icc_extra", [None, 0, 2])
def test_a_lossless_webp_source_is_written_back_lossless(tmp_path: Path, icc_extra: int | None) -> None:
    from PIL import Image, ImageCms

    rgb = _noise((12, 10, 3))
    options: dict[str, object] = {"lossless": True}
    if icc_extra is not None:  # an extended WebP: VP8X, an ICCP chunk of odd size (then one pad byte), then VP8L
        icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
        icc = icc if len(icc) % 2 else icc + b"\0"
        options["icc_profile"] = icc + b"\0" * icc_extra  # two sizes: the VP8L chunk at two alignments
    source = tmp_path / "src.webp"
    Image.fromarray(rgb).save(source, "WEBP", **options)
    assert makefiles.webp_chunks(source.read_bytes())[-1] == b"VP8L"
    image, metadata = reading.read_with_metadata(source)
    assert metadata.lossless is True
    out = writing.write(tmp_path / "out.webp", image, metadata=metadata)
    assert b"VP8L" in makefiles.webp_chunks(out.read_bytes())
    with Image.open(out) as back:  # a second reader: the pixels come back exactly
        np.testing.assert_array_equal(np.asarray(back.convert("RGB")), rgb)


def test_a_lossy_webp_source_is_not_taken_for_lossless(tmp_path: Path) -> None:
    from PIL import Image

    source = tmp_path / "lossy.webp"
    Image.fromarray(_noise((12, 10, 3))).save(source, "WEBP", quality=80)
    assert makefiles.webp_chunks(source.read_bytes()) == [b"VP8 "]
    assert reading.read_with_metadata(source)[1].lossless is False


def test_a_webp_header_too_short_for_opencv_is_truncated_not_foreign(tmp_path: Path) -> None:
    path = tmp_path / "cut.bin"  # no extension to go by: 16 bytes, fewer than OpenCV needs to recognise WebP
    path.write_bytes(b"RIFF\x10\x00\x00\x00WEBPVP8 ")
    with pytest.raises(TruncatedImageError) as caught:
        reading.read(path)
    assert str(caught.value) == f"{path}: image data is truncated or corrupt"


def test_an_unsupported_sample_layout_is_named_in_full(tmp_path: Path) -> None:
    import tifffile

    path = tmp_path / "five.tif"
    tifffile.imwrite(path, np.zeros((4, 4, 5), np.uint8), photometric="minisblack", planarconfig="contig")
    with pytest.raises(UnsupportedDepthError) as caught:
        reading.read(path)
    assert str(caught.value) == (f"{path}: unsupported pixel layout: 5 samples per pixel (cvfilters reads 1 to 4 "
                                 "samples of uint8, uint16, int16, float32 or float64)")


def test_what_the_decoder_printed_is_the_detail_of_the_error(tmp_path: Path) -> None:
    from PIL import Image

    buffer = BytesIO()
    Image.fromarray(_noise((16, 16, 3))).save(buffer, "PNG")
    path = makefiles.damaged_png(tmp_path / "damaged.png", buffer.getvalue())
    with pytest.raises(TruncatedImageError) as caught:
        reading.read(path)
    assert str(caught.value) == (f"{path}: image data is truncated or corrupt "
                                 "(libpng error: IDAT: invalid stored block lengths)")


def test_a_jpeg_cut_right_after_a_header_segment_is_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.jpg"  # SOI and a complete 16-byte APP0 segment, then nothing
    path.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    with pytest.raises(TruncatedImageError, match="ends before its end-of-image marker"):
        reading.read(path)


def test_probe_of_a_damaged_decoded_format_names_the_file(tmp_path: Path) -> None:
    whole = writing.write(tmp_path / "p.exr", np.zeros((10, 20, 3), np.float32)).read_bytes()
    path = tmp_path / "cut.exr"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(TruncatedImageError) as caught:
        reading.probe(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_an_animated_webp_has_no_top_level_image_chunk_and_is_not_lossless(tmp_path: Path) -> None:
    from PIL import Image

    frames = [Image.fromarray(np.full((8, 8, 3), value, np.uint8)) for value in (10, 200)]
    path = tmp_path / "anim.webp"
    frames[0].save(path, "WEBP", save_all=True, append_images=frames[1:], quality=80)
    assert b"VP8L" not in makefiles.webp_chunks(path.read_bytes())
    assert b"VP8 " not in makefiles.webp_chunks(path.read_bytes())
    assert reading.read_with_metadata(path)[1].lossless is False


# ---------------------------------------------------------------- io/reading's own run (sixth session)
def _png_with_cicp(path: Path, rgb: np.ndarray, primaries: int, transfer: int) -> Path:
    """An RGB PNG (Pillow) with a cICP chunk (primaries, transfer, matrix 0, full range) after IHDR."""
    import struct
    import zlib

    from PIL import Image

    buffer = BytesIO()
    Image.fromarray(rgb).save(buffer, "PNG")
    data = buffer.getvalue()
    body = b"cICP" + bytes([primaries, transfer, 0, 1])
    chunk = struct.pack(">I", 4) + body + struct.pack(">I", zlib.crc32(body))
    path.write_bytes(data[:33] + chunk + data[33:])  # signature (8) and IHDR (25) first
    return path


def test_read_and_read_with_metadata_give_rgb_order_when_asked(tmp_path: Path) -> None:
    from PIL import Image

    rgb = np.random.default_rng(3).integers(0, 256, (6, 5, 3), dtype=np.uint8)
    path = tmp_path / "c.png"
    Image.fromarray(rgb).save(path)
    np.testing.assert_array_equal(reading.read(path, channel_order="rgb"), rgb)
    np.testing.assert_array_equal(reading.read_with_metadata(path, channel_order="rgb")[0], rgb)
    np.testing.assert_array_equal(reading.read(path), rgb[..., ::-1])


def test_an_intent_reaches_the_colour_conversion(tmp_path: Path) -> None:
    from PIL import Image

    from cvfilters.core.errors import UsageError

    path = tmp_path / "c.png"
    Image.fromarray(np.full((4, 4, 3), (200, 120, 40), np.uint8)).save(path)
    for call in (reading.read, reading.read_with_metadata):
        with pytest.raises(UsageError, match="intent 'bogus' is not one of"):
            call(path, colorspace="srgb", intent="bogus")  # type: ignore[arg-type]
    assert reading.read_with_metadata(path, colorspace="srgb")[1].icc is not None  # the default intent is valid
    assert reading.read(path, colorspace="srgb").shape == (4, 4, 3)


def test_a_png_cicp_tag_names_the_space_converted_from(tmp_path: Path) -> None:
    """Display P3 by its cICP chunk (12/13/0): a space without an ICC profile here, so it is refused."""
    from cvfilters.core.errors import UsageError

    path = _png_with_cicp(tmp_path / "p3.png", np.full((2, 2, 3), (200, 120, 40), np.uint8), 12, 13)
    with pytest.raises(UsageError) as caught:
        reading.read(path, colorspace="srgb")
    assert str(caught.value) == ("colorspace: the image's space (Display P3, sRGB (CICP 12/13/0)) has no ICC profile "
                                 "to convert from; keep it (colorspace keep)")
    np.testing.assert_array_equal(reading.read(path, colorspace="keep", channel_order="rgb")[0, 0], (200, 120, 40))


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    import struct
    import zlib

    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def test_an_image_past_opencvs_own_pixel_limit_is_too_large(tmp_path: Path) -> None:
    import struct
    import zlib

    path = tmp_path / "big.png"  # a grey PNG header of 40000 x 30000 (1.2e9 > 2**30 pixels), no pixels
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 40000, 30000, 8, 0, 0, 0, 0))
                     + _png_chunk(b"IDAT", zlib.compress(b"\0" * 100)) + _png_chunk(b"IEND", b""))
    with pytest.raises(ImageTooLargeError) as caught:
        reading.read(path, max_pixels=2**40)  # cvfilters' own limit lifted
    assert str(caught.value) == f"{path}: image exceeds OpenCV's own pixel limit (2**30)"


def test_a_single_pixel_image_is_read(tmp_path: Path) -> None:
    from PIL import Image

    Image.fromarray(np.array([[77]], np.uint8)).save(tmp_path / "one.png")
    np.testing.assert_array_equal(reading.read(tmp_path / "one.png"), [[77]])


def test_what_the_decoder_printed_about_a_file_it_decoded_is_a_warning_at_the_caller(tmp_path: Path) -> None:
    from PIL import Image

    buffer = BytesIO()
    Image.fromarray(_noise((64, 64, 3))).save(buffer, "JPEG", quality=90)
    whole = buffer.getvalue()
    path = tmp_path / "short.jpg"  # the scan cut short, its end-of-image marker kept: libjpeg fills the rest
    path.write_bytes(whole[: whole.index(b"\xff\xda") + 300] + b"\xff\xd9")
    with pytest.warns(reading.CorruptDataWarning) as caught:
        image = reading.read_with_metadata(path)[0]
    assert image.shape == (64, 64, 3)
    assert [str(w.message) for w in caught] == [
        f"{path}: decoded, but the decoder reported: Corrupt JPEG data: premature end of data segment"]
    assert caught[0].filename == __file__  # the caller's line, not the reader's


def test_fill_bytes_before_jpeg_markers_are_skipped(tmp_path: Path) -> None:
    from PIL import Image

    buffer = BytesIO()
    Image.fromarray(_noise((16, 16, 3))).save(buffer, "JPEG", quality=90)
    whole = buffer.getvalue()
    scan = whole.index(b"\xff\xda")
    (tmp_path / "plain.jpg").write_bytes(whole)
    path = tmp_path / "filled.jpg"  # FF fill bytes may precede any marker (ITU T.81 B.1.1.2)
    path.write_bytes(whole[:2] + b"\xff" + whole[2:scan] + b"\xff\xff" + whole[scan:])
    np.testing.assert_array_equal(reading.read(path), reading.read(tmp_path / "plain.jpg"))


def test_a_file_the_os_refuses_says_why_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unreadable (no read permission) or unstattable (a symlink loop): one line naming the file and the reason."""
    path = tmp_path / "x.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda name, mode: False if os.fspath(name) == os.fspath(path)
                        else real_access(name, mode))  # root may read every file: refuse this one
    with pytest.raises(UnreadableFileError) as caught:
        reading.read(path)
    assert str(caught.value) == f"{path}: cannot be opened: permission denied"
    loop = tmp_path / "loop.png"
    loop.symlink_to(loop)
    with pytest.raises(UnreadableFileError) as caught:
        reading.read(loop)
    assert str(caught.value) == f"{loop}: cannot be read: {os.strerror(errno.ELOOP)}"


def _noise_jpeg(path: Path, **options: Any) -> bytes:
    from PIL import Image

    Image.fromarray(np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(path, **options)
    return path.read_bytes()


def test_max_pixels_is_a_positive_integer_named_by_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    """1 is the least limit; 0 and text are refused naming the argument or the variable, with the value given."""
    monkeypatch.delenv("CVFILTERS_MAX_PIXELS", raising=False)
    assert reading.max_pixels_limit(1) == 1
    with pytest.raises(UsageError) as caught:
        reading.max_pixels_limit(0)
    assert str(caught.value) == "max_pixels must be a positive integer, got 0"
    monkeypatch.setenv("CVFILTERS_MAX_PIXELS", " many ")
    with pytest.raises(UsageError) as caught:
        reading.max_pixels_limit()
    assert str(caught.value) == "CVFILTERS_MAX_PIXELS must be a positive integer, got 'many'"


def test_a_jpeg_of_more_scans_than_the_limit_is_refused_with_its_count(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The scans are counted from the file's start-of-scan markers (FF DA: an FF inside a scan is stuffed)."""
    path = tmp_path / "p.jpg"
    scans = _noise_jpeg(path, quality=90, progressive=True).count(b"\xff\xda")
    monkeypatch.setattr(headers, "MAX_JPEG_SCANS", scans)  # the limit itself is allowed
    assert reading.read(path).shape == (32, 32, 3)
    monkeypatch.setattr(headers, "MAX_JPEG_SCANS", scans - 1)
    with pytest.raises(ImageTooLargeError) as caught:
        reading.read(path)
    assert str(caught.value) == (f"{path}: JPEG has {scans} scans, more than the limit of {scans - 1} "
                                 "(a progressive file has about 10)")


def test_standard_input_is_read_whole_and_an_empty_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\x89PNG\r\n\x1a\n and the rest"
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=BytesIO(data)))
    assert reading.read_bytes("-") == data
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=BytesIO(b"")))
    with pytest.raises(EmptyFileError) as caught:
        reading.read_bytes("-")
    assert str(caught.value) == "-: standard input is empty"


def test_a_jpeg_cut_before_its_end_marker_is_named_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.jpg"
    path.write_bytes(_noise_jpeg(tmp_path / "whole.jpg")[:-2])  # without its FF D9
    with pytest.raises(TruncatedImageError) as caught:
        reading.read(path)
    assert str(caught.value) == f"{path}: JPEG data ends before its end-of-image marker (file cut short)"


def test_jpeg_quality_and_tiff_compression_reach_the_metadata(tmp_path: Path) -> None:
    """The quality a JPEG was saved with (Pillow's standard tables) and a TIFF's Compression tag (8: Deflate)."""
    import tifffile

    _noise_jpeg(tmp_path / "q.jpg", quality=90)
    assert reading.read_with_metadata(tmp_path / "q.jpg")[1].quality == 90
    tifffile.imwrite(tmp_path / "d.tif", np.zeros((8, 8, 3), np.uint8), photometric="rgb", compression="zlib")
    assert reading.read_with_metadata(tmp_path / "d.tif")[1].compression == 8


def test_a_read_refusal_of_the_file_and_a_broken_text_header_name_the_file(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the input size limit, or a Radiance header without its resolution line: the reason, after the name."""
    monkeypatch.setattr(reading, "MAX_IMAGE_FILE", 10)
    big = tmp_path / "big.png"
    big.write_bytes(bytes(20))
    with pytest.raises(UnreadableFileError) as caught:
        reading.read(big)
    assert str(caught.value) == f"{big}: is 20 bytes, larger than the limit of 10 bytes"
    monkeypatch.undo()
    broken = tmp_path / "broken.hdr"
    broken.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\nnonsense\n")
    with pytest.raises(TruncatedImageError) as cut:
        reading.read(broken)
    assert str(cut.value) == f"{broken}: Radiance HDR header without a resolution line (such as -Y 480 +X 640)"


def test_a_one_byte_file_is_not_an_image_rather_than_empty(tmp_path: Path) -> None:
    path = tmp_path / "one.png"
    path.write_bytes(b"\x89")
    reading.check_file(path)  # not refused: one byte is not empty
    with pytest.raises(NotAnImageError):
        reading.read(path)


def test_a_gif_without_a_transparent_colour_reads_as_three_channels(tmp_path: Path) -> None:
    """OpenCV may give a GIF four channels; an opaque one is BGR, Pillow's palette lookup reversed."""
    from PIL import Image

    path = tmp_path / "opaque.gif"
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (8, 8, 3), dtype=np.uint8)).save(path)
    with Image.open(path) as image:
        expected = np.asarray(image.convert("RGB"))[..., ::-1]
    np.testing.assert_array_equal(reading.read(path), expected)


def test_an_exr_over_the_pixel_limit_is_refused_from_its_header(tmp_path: Path) -> None:
    """Before its pixels are decoded: a file cut short after its header is too large, not truncated."""
    whole = tmp_path / "whole.exr"
    writing.write(whole, np.ones((10, 20, 3), np.float32))
    path = tmp_path / "cut.exr"
    path.write_bytes(whole.read_bytes()[:-8])
    with pytest.raises(TruncatedImageError):
        reading.read(path)
    with pytest.raises(ImageTooLargeError) as caught:
        reading.read(path, max_pixels=199)
    assert str(caught.value) == (f"{path}: 20x10 = 200 pixels exceeds the limit of 199 "
                                 "(set --max-pixels or CVFILTERS_MAX_PIXELS)")
