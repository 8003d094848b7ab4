"""cvfilters.io.headers: sizes from text headers, JPEG scans and TIFF layouts, before any decoding (issue 24)."""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import TiffImagePlugin

from cvfilters.core.errors import ImageTooLargeError, UnsupportedDepthError
from cvfilters.io import headers, reading


@pytest.mark.parametrize("ext", [".hdr", ".pfm", ".pam"])
@pytest.mark.parametrize(("height", "width"), [(3, 5), (17, 2)])
def test_raw_size_equals_what_opencv_decodes(tmp_path: Path, ext: str, height: int, width: int) -> None:
    image = np.random.default_rng(0).random((height, width, 3)).astype(np.float32)
    path = tmp_path / f"x{ext}"
    assert cv2.imwrite(str(path), image if ext != ".pam" else (image * 255).astype(np.uint8))
    data = path.read_bytes()
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)  # the reference: OpenCV itself
    assert headers.raw_size(data) == (decoded.shape[1], decoded.shape[0]) == (width, height)
    assert reading.probe(path) == (width, height)


def test_grey_pfm_size_equals_what_opencv_decodes() -> None:
    """'Pf' is the one-channel PFM (written out: signature, 'width height', scale -1 for little-endian)."""
    data = b"Pf\n3 2\n-1.0\n" + np.arange(6, dtype="<f4").tobytes()
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED).shape == (2, 3)
    assert headers.raw_size(data) == (3, 2)


def test_radiance_orientations_and_bad_headers() -> None:
    assert headers.raw_size(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+X 640 -Y 480\n") == (640, 480)
    assert headers.raw_size(b"#?RGBE\n\n-Y 480 +X 640\n") == (640, 480)
    with pytest.raises(headers.HeaderError,
                       match=r"^Radiance HDR header without a resolution line \(such as -Y 480 \+X 640\)$"):
        headers.raw_size(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\nnonsense\n")
    with pytest.raises(headers.HeaderError):
        headers.raw_size(b"PF\nx y\n")
    with pytest.raises(headers.HeaderError):
        headers.raw_size(b"P7\nDEPTH 3\nENDHDR\n")
    assert headers.raw_size(b"\x89PNG\r\n") is None


def test_a_header_over_the_pixel_limit_is_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "bomb.hdr"
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 20000 +X 20000\n" + b"\x02\x02\x4e\x20" * 16)
    with pytest.raises(ImageTooLargeError, match="20000x20000 = 400000000 pixels exceeds the limit"):
        reading.read(path)


def test_jpeg_scans_are_counted_from_the_first_scan() -> None:
    image = (np.random.default_rng(0).random((32, 32, 3)) * 255).astype(np.uint8)
    baseline = cv2.imencode(".jpg", image)[1].tobytes()
    progressive = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
    assert headers.jpeg_scans(baseline) == 1
    assert headers.jpeg_scans(progressive) == 10  # libjpeg's jpeg_simple_progression for YCbCr
    assert headers.jpeg_scans(b"\xff\xd8\xff\xe1\x00\x04\xff\xda") == 1  # an FF DA inside EXIF before the scan counts


@pytest.mark.parametrize(("dtype", "shape", "problem"), [
    (np.float16, (8, 8, 3), "16-bit floating-point samples"),
    (np.complex64, (8, 8), "complex samples (64-bit)"),
    (np.uint8, (8, 8, 5), "5 samples per pixel"),
])
def test_tiff_layouts_opencv_cannot_decode_are_named(tmp_path: Path, dtype: type, shape: tuple[int, ...],
                                                     problem: str) -> None:
    tifffile = pytest.importorskip("tifffile")
    path = tmp_path / "x.tif"
    extra = {"photometric": "minisblack", "extrasamples": [0] * 4} if shape[-1] == 5 else {}
    tifffile.imwrite(path, np.zeros(shape, dtype), **extra)
    with pytest.raises(UnsupportedDepthError) as caught:
        reading.read(path)
    assert str(caught.value).startswith(f"{path}: unsupported pixel layout: {problem} (cvfilters reads")


def test_tiff_layouts_opencv_decodes_are_not_flagged(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    for dtype, shape in ((np.uint8, (4, 4, 3)), (np.uint16, (4, 4)), (np.float32, (4, 4, 4)), (np.float64, (4, 4))):
        tifffile.imwrite(tmp_path / "ok.tif", np.zeros(shape, dtype))
        assert headers.tiff_layout_problem((tmp_path / "ok.tif").read_bytes()) is None


def test_jpeg_scans_from_offset_zero_and_none() -> None:
    assert headers.jpeg_scans(b"\xff\xd8\xff\xd9") == 0  # SOI, EOI: no scan
    assert headers.jpeg_scans(b"\xff\xda\x00\x02\x11\xff\xda\x00\x02") == 2  # the first marker at offset 0 counts


def test_pfm_and_pam_errors_name_the_header() -> None:
    with pytest.raises(headers.HeaderError, match="^PFM header without 'width height' on its second line$"):
        headers.raw_size(b"PF\nx y\n")
    with pytest.raises(headers.HeaderError, match="^PFM header without"):  # three comment lines: nothing to read
        headers.raw_size(b"PF\n#\n#\n#\n")
    with pytest.raises(headers.HeaderError, match="^PAM header without WIDTH and HEIGHT before ENDHDR$"):
        headers.raw_size(b"P7\nDEPTH 3\nENDHDR\n")


def test_pam_fields_after_endhdr_are_pixels() -> None:
    """Ten grey pixels whose bytes spell a HEIGHT line: the header's HEIGHT 1 stands (OpenCV decodes 1 x 10)."""
    data = b"P7\nWIDTH 10\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n" + b"\nHEIGHT 7\n"
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert decoded.shape == (1, 10) and decoded.tobytes() == b"\nHEIGHT 7\n"
    assert headers.raw_size(data) == (10, 1)


# Classic TIFF written out from the TIFF 6.0 specification (header, one IFD of 12-byte entries sorted by tag,
# the next-IFD offset, values over 4 bytes, then one strip); Pillow's IFD reader reads the same bytes back.
_TYPES = {1: "B", 3: "H", 4: "I", 7: "B"}  # BYTE, SHORT, LONG, UNDEFINED
GRAY = {254: (4, (0,)), 256: (3, (8,)), 257: (3, (1,)), 258: (3, (8,)), 259: (3, (1,)), 262: (3, (1,)),
        277: (3, (1,)), 278: (3, (1,)), 339: (3, (1,))}  # 8 x 1, 8-bit unsigned grey, uncompressed


def tiff(fields: dict[int, tuple[int, Any]], pixels: bytes, *, big_endian: bool = False, next_ifd: int = 0) -> bytes:
    e = ">" if big_endian else "<"
    fields = {**fields, 273: (4, (0,)), 279: (4, (len(pixels),))}
    tags = sorted(fields)
    ifd_end = 8 + 2 + 12 * len(tags) + 4

    def packed(tag: int) -> bytes:
        kind, values = fields[tag]
        return values if isinstance(values, bytes) else struct.pack(e + _TYPES[kind] * len(values), *values)

    fields[273] = (4, (ifd_end + sum(len(packed(t)) for t in tags if len(packed(t)) > 4),))
    entries, extra = b"", b""
    for tag in tags:
        data, kind = packed(tag), fields[tag][0]
        value = data.ljust(4, b"\0") if len(data) <= 4 else struct.pack(e + "I", ifd_end + len(extra))
        extra += data if len(data) > 4 else b""
        entries += struct.pack(e + "HHI", tag, kind, len(data) // struct.calcsize(_TYPES[kind])) + value
    head = (b"MM\x00*" if big_endian else b"II*\x00") + struct.pack(e + "I", 8)
    return head + struct.pack(e + "H", len(tags)) + entries + struct.pack(e + "I", next_ifd) + extra + pixels


def pillow_tags(data: bytes) -> dict[int, Any]:
    ifd = TiffImagePlugin.ImageFileDirectory_v2(data[:8])
    stream = io.BytesIO(data)
    stream.seek(ifd.next)
    ifd.load(stream)
    return dict(ifd)


@pytest.mark.parametrize("big_endian", [False, True], ids=["II", "MM"])
@pytest.mark.parametrize(("fields", "problem"), [
    ({258: (3, (16,)), 339: (3, (5,))}, "complex samples (16-bit)"),  # SampleFormat 5: complex integer
    ({339: (4, (6,))}, "complex samples (8-bit)"),  # SampleFormat as a LONG (the spec says SHORT; libtiff takes it)
    ({339: (1, (6,))}, "complex samples (8-bit)"),  # as a BYTE (was 'truncated or corrupt' before: OpenCV refuses)
    ({258: (1, (16,)), 339: (1, (3,))}, "16-bit floating-point samples"),
    ({258: (4, (16,)), 339: (4, (3,))}, "16-bit floating-point samples"),
    ({258: (3, (16, 16)), 277: (3, (2,)), 338: (3, (0,)), 339: (3, (3, 3))}, "16-bit floating-point samples"),
    ({277: (4, (5,)), 338: (3, (0, 0, 0, 0))}, "5 samples per pixel"),
    ({258: (1, (16,) * 5), 277: (3, (5,)), 338: (3, (0,) * 4), 339: (3, (3,) * 5)}, "16-bit floating-point samples"),
])
def test_tiff_layouts_in_both_byte_orders(fields: dict[int, tuple[int, Any]], problem: str, big_endian: bool) -> None:
    """Two SHORTs fill the 4-byte value field inline (grey + alpha); three or more sit at an offset."""
    data = tiff({**GRAY, **fields}, bytes(64), big_endian=big_endian)
    read = pillow_tags(data)
    for tag, (_, values) in fields.items():  # Pillow gives BYTEs as bytes, one SHORT or LONG as an int
        assert (tuple(read[tag]) if isinstance(read[tag], (tuple, bytes)) else (read[tag],)) == values
    assert headers.tiff_layout_problem(data) == problem
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED) is None  # libtiff reads them: refused


def test_a_byte_typed_sample_format_is_named_by_read(tmp_path: Path) -> None:
    """libtiff takes a BYTE SampleFormat 6 as complex (OpenCV's refusal names sample_format 6)."""
    path = tmp_path / "complex.tif"
    path.write_bytes(tiff({**GRAY, 339: (1, (6,))}, bytes(8)))
    with pytest.raises(UnsupportedDepthError, match="unsupported pixel layout: complex samples"):
        reading.read(path)


def test_tiff_defaults_of_absent_tags_are_the_specifications() -> None:
    """Without BitsPerSample and SamplesPerPixel TIFF 6.0 says 1 and 1 (tifffile agrees)."""
    tifffile = pytest.importorskip("tifffile")
    data = tiff({**{t: v for t, v in GRAY.items() if t not in (258, 277)}, 339: (3, (3,))}, bytes(8))
    with tifffile.TiffFile(io.BytesIO(data)) as tif:
        page = tif.pages[0]
        assert (page.bitspersample, page.samplesperpixel, page.sampleformat) == (1, 1, 3)
    assert headers.tiff_layout_problem(data) == "1-bit floating-point samples"
    assert headers.tiff_layout_problem(tiff({t: v for t, v in GRAY.items() if t != 277}, bytes(8))) is None


def test_only_the_ifds_entries_are_read() -> None:
    """Bytes that would read as a SampleFormat 6 entry, off the 12-byte grid or after the last entry, are not one."""
    tifffile = pytest.importorskip("tifffile")
    # Off the grid: a private UNDEFINED entry's inline value is 53 01 03 00 (tag 339, SHORT); the next entry's
    # count (its data's length, equal to its offset) then reads as the offset of the value 6.
    fields = {**GRAY, 65000: (7, struct.pack("<HH", 339, 3)), 65001: (7, b"")}
    offset = 8 + 2 + 12 * (len(fields) + 2) + 4
    off_grid = tiff({**fields, 65001: (7, b"\x06" + bytes(offset - 1))}, bytes(range(8)))
    # After the last entry: the next-IFD offset 0x00030153 reads as tag 339, SHORT, and the strip's first bytes
    # as count 1, value 6; the second IFD there is a copy of the first.
    first = tiff(GRAY, struct.pack("<IH", 1, 6) + bytes(2), next_ifd=0x30153)
    count = 2 + 12 * (len(GRAY) + 2)
    after = first.ljust(0x30153, b"\0") + first[8:8 + count] + bytes(4)
    for data, pages in ((off_grid, 1), (after, 2)):
        with tifffile.TiffFile(io.BytesIO(data)) as tif:
            assert len(tif.pages) == pages
            assert all(page.sampleformat == 1 and page.asarray().dtype == np.uint8 for page in tif.pages)
        assert headers.tiff_layout_problem(data) is None


def test_a_tiff_entry_is_read_only_when_all_12_bytes_are_there() -> None:
    data = tiff({**GRAY, 339: (3, (6,))}, bytes(8))
    end = 8 + 2 + 12 * (len(GRAY) + 2)  # the last entry (SampleFormat, the highest tag) ends here
    assert headers.tiff_layout_problem(data[:end]) == "complex samples (8-bit)"  # the next-IFD offset cut off
    assert headers.tiff_layout_problem(data[:end - 2]) is None  # its value field cut short


def test_a_tiff_body_behind_another_signature_is_not_read() -> None:
    """BigTIFF (version 43, 'II+\\0') lays out its IFDs differently: not read as a classic TIFF."""
    data = tiff({**GRAY, 339: (3, (6,))}, bytes(8))
    assert headers.tiff_layout_problem(data) == "complex samples (8-bit)"
    assert headers.tiff_layout_problem(b"II+\x00" + data[4:]) is None
