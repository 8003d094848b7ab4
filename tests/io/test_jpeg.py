"""JPEG quality estimates and split ICC profiles (cvfilters.io.jpeg), checked from the outside.

The references: the quality Pillow's libjpeg encoder was told (``jpeg_set_quality``), ImageMagick's
``identify -format %Q`` where installed, Pillow's and OpenCV's reading of the files written, and the
byte layouts of ITU T.81 (B.1.1.4 marker segments, B.2.4.1 DQT) and of the ICC specification (B.4:
``APP2 "ICC_PROFILE\\0"``, a one-byte sequence number from 1 and a one-byte count), parsed here.
Every comparison is exact (tolerance 0): qualities are integers, profiles and pixels bytes.
"""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from cvfilters.io import jpeg

RGB = Image.fromarray(np.random.default_rng(3).integers(0, 256, (16, 16, 3), dtype=np.uint8))
SEGMENT_LENGTH_MAX = 2**16 - 1  # T.81 B.1.1.4: a 16-bit length that counts its own two bytes
ICC_PER_SEGMENT = SEGMENT_LENGTH_MAX - 2 - len(b"ICC_PROFILE\0") - 2  # ICC B.4: tag, sequence, count


def _pillow_jpeg(quality: int = 75, **options: object) -> bytes:
    buffer = io.BytesIO()
    RGB.save(buffer, "JPEG", quality=quality, **options)
    return buffer.getvalue()


def _walk(data: bytes) -> list[tuple[int, bytes]]:
    """(marker, body without the length field) of each segment from SOI to SOS (fill bytes skipped)."""
    assert data[:2] == b"\xff\xd8"
    found, pos = [], 2
    while True:
        assert data[pos] == 0xFF, pos
        if data[pos + 1] == 0xFF:
            pos += 1
            continue
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        found.append((data[pos + 1], data[pos + 4:pos + 2 + length]))
        if data[pos + 1] == 0xDA:
            return found
        pos += 2 + length


def _segment(marker: int, body: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", 2 + len(body)) + body


def _luminance_table(data: bytes) -> bytes:
    """Table 0's 64 entries (8-bit, zig-zag order as stored) of a file Pillow wrote (one table per DQT)."""
    tables = [body for marker, body in _walk(data) if marker == 0xDB]
    return next(body[1:65] for body in tables if body[0] == 0x00)


def _with_tables(data: bytes, dqt_bodies: list[bytes], before: bytes = b"") -> bytes:
    """``data`` with its DQT segments replaced by ``dqt_bodies`` (``before`` ahead of them)."""
    before_scan = _walk(data)[:-1]
    kept = [_segment(marker, body) for marker, body in before_scan if marker != 0xDB]
    scan = 2 + sum(4 + len(body) for _, body in before_scan)  # Pillow writes no fill bytes
    app = [s for s in kept if s[1] in (0xE0, 0xE1)]
    rest = [s for s in kept if s[1] not in (0xE0, 0xE1)]
    return (b"\xff\xd8" + b"".join(app) + before + b"".join(_segment(0xDB, b) for b in dqt_bodies)
            + b"".join(rest) + data[scan:])


def test_the_estimate_is_the_quality_libjpeg_was_told() -> None:
    """Every quality 1-100 (at 1 every entry clamps at 255, at 100 every entry is 1)."""
    assert [jpeg.estimate_quality(_pillow_jpeg(quality)) for quality in range(1, 101)] == list(range(1, 101))


@pytest.mark.skipif(shutil.which("identify") is None, reason="ImageMagick's identify is not installed")
def test_the_estimate_is_imagemagicks(tmp_path: Path) -> None:
    for quality in (3, 31, 50, 68, 97):
        path = tmp_path / f"{quality}.jpg"
        path.write_bytes(_pillow_jpeg(quality))
        told = subprocess.run(["identify", "-format", "%Q", str(path)], capture_output=True, text=True, check=True)
        assert jpeg.estimate_quality(path.read_bytes()) == int(told.stdout) == quality


@pytest.mark.parametrize("quality", [3, 40, 50, 85])
def test_sixteen_bit_tables_and_two_tables_in_one_segment(quality: int) -> None:
    """One DQT segment holding the chrominance table (id 1) first, then the luminance table at 16-bit
    precision (Pq = 1, B.2.4.1): the same values as libjpeg wrote, so Pillow reads the same tables."""
    data = _pillow_jpeg(quality)
    luminance = _luminance_table(data)
    chroma = b"\x01" + bytes(range(64, 128))
    wide = b"\x10" + struct.pack(">64H", *luminance)
    rewritten = _with_tables(data, [chroma + wide])
    with Image.open(io.BytesIO(rewritten)) as image, Image.open(io.BytesIO(data)) as original:
        assert image.quantization[0] == original.quantization[0]
    assert jpeg.estimate_quality(rewritten) == quality


def test_an_unclamped_sixteen_bit_table() -> None:
    """Below quality 6 libjpeg without ``force_baseline`` scales entries past 255 into a 16-bit table;
    the scaling of libjpeg's jcparam.c, ``(base * (5000 / q) + 50) // 100`` with quality 50's table as
    the base (at 50 the scale is 100 %), written here."""
    base = np.frombuffer(_luminance_table(_pillow_jpeg(50)), np.uint8).astype(np.int64)
    for quality in (1, 2, 4):
        table = np.clip((base * (5000 // quality) + 50) // 100, 1, 32767)
        assert table.max() > 255
        data = _with_tables(_pillow_jpeg(50), [b"\x10" + struct.pack(">64H", *table.tolist())])
        assert jpeg.estimate_quality(data) == quality


def test_what_has_no_luminance_table() -> None:
    data = _pillow_jpeg(60)
    only_chroma = _with_tables(data, [b"\x01" + _luminance_table(data)])
    assert jpeg.estimate_quality(only_chroma) is None
    assert jpeg.estimate_quality(only_chroma[:only_chroma.index(b"\xff\xdb") + 4 + 65]) is None  # ends there
    assert jpeg.estimate_quality(b"\x89PNG\r\n\x1a\n" + data[2:]) is None
    assert jpeg.estimate_quality(data[:2] + data[2:].split(b"\xff\xdb", 1)[0]) is None  # cut before DQT


def test_a_file_cut_inside_its_tables() -> None:
    """Cut anywhere from the DQT's length field to its last entry: Pillow cannot read the table, and
    there is no estimate (the estimate raised IndexError at the cut right after the length field)."""
    data = _pillow_jpeg(44)
    dqt = data.index(b"\xff\xdb")
    for cut in range(dqt + 4, dqt + 4 + 65):
        with pytest.raises(OSError):
            Image.open(io.BytesIO(data[:cut]))
        assert jpeg.estimate_quality(data[:cut]) is None, cut
    assert jpeg.estimate_quality(data[:dqt + 4 + 65]) == 44  # the whole table, nothing after it


def test_fill_bytes_and_other_segments_before_the_tables() -> None:
    """0xFF fill bytes before a marker (T.81 B.1.1.2), an empty COM segment and one of 300 bytes
    (a length field past one byte), before the DQT."""
    for before in (b"\xff", b"\xff\xff\xff", _segment(0xFE, b""), _segment(0xFE, bytes(300))):
        data = _with_tables(_pillow_jpeg(37), [b"\x00" + _luminance_table(_pillow_jpeg(37))], before=before)
        with Image.open(io.BytesIO(data)) as image:
            assert image.size == (16, 16)
        assert jpeg.estimate_quality(data) == 37


def test_segment_limit_is_the_length_fields() -> None:
    assert jpeg.fits_segment(bytes(SEGMENT_LENGTH_MAX - 2))
    assert not jpeg.fits_segment(bytes(SEGMENT_LENGTH_MAX - 1))


def _icc_segments(data: bytes) -> list[tuple[int, int, bytes]]:
    found = [body for marker, body in _walk(data) if marker == 0xE2 and body.startswith(b"ICC_PROFILE\0")]
    return [(body[12], body[13], body[14:]) for body in found]


@pytest.mark.parametrize("size", [1, ICC_PER_SEGMENT, ICC_PER_SEGMENT + 1, 2 * ICC_PER_SEGMENT + 7])
@pytest.mark.parametrize("exif", [False, True])
def test_a_profile_split_over_numbered_segments(size: int, exif: bool) -> None:
    """Full segments have the largest length field; sequence numbers run 1..n with the count n; they
    follow APP0 (JFIF) and APP1 (Exif); Pillow joins the profile back; OpenCV decodes the same pixels."""
    icc = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    exif_bytes = Image.Exif()
    exif_bytes[0x010F] = "cvfilters"  # Make
    plain = _pillow_jpeg(90, exif=exif_bytes.tobytes()) if exif else _pillow_jpeg(90)
    data = jpeg.insert_icc(plain, icc)
    count = -(-size // ICC_PER_SEGMENT)
    segments = _icc_segments(data)
    assert [(sequence, total) for sequence, total, _ in segments] == [(i, count) for i in range(1, count + 1)]
    assert b"".join(chunk for _, _, chunk in segments) == icc
    assert all(len(chunk) == ICC_PER_SEGMENT for _, _, chunk in segments[:-1])
    assert [marker for marker, _ in _walk(data)][:2 + exif + count] == [0xE0] + [0xE1] * exif + [0xE2] * count + [0xDB]
    with Image.open(io.BytesIO(data)) as image:
        assert image.info["icc_profile"] == icc
        assert (image.getexif().get(0x010F) == "cvfilters") == exif
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(decoded, cv2.imdecode(np.frombuffer(plain, np.uint8), cv2.IMREAD_UNCHANGED))


def test_a_profile_in_a_file_without_app_segments() -> None:
    """No APP0 or APP1: the profile goes right after SOI."""
    plain = _pillow_jpeg(90)
    bare = b"\xff\xd8" + plain[2 + len(_segment(0xE0, _walk(plain)[0][1])):]
    data = jpeg.insert_icc(bare, b"profile")
    assert data[:2] == b"\xff\xd8" and _walk(data)[0] == (0xE2, b"ICC_PROFILE\0\x01\x01profile")
    with Image.open(io.BytesIO(data)) as image:
        assert image.info["icc_profile"] == b"profile"


def test_at_most_255_segments() -> None:
    """The sequence number is one byte: 255 full segments fit, one byte more does not."""
    plain = _pillow_jpeg(90)
    data = jpeg.insert_icc(plain, bytes(255 * ICC_PER_SEGMENT))
    segments = _icc_segments(data)
    assert (len(segments), segments[-1][:2]) == (255, (255, 255))
    with pytest.raises(ValueError, match="255"):
        jpeg.insert_icc(plain, bytes(255 * ICC_PER_SEGMENT + 1))
