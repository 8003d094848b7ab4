"""Header reads of plain JPEG and PNG files without Pillow, checked against Pillow's own parse (cvfilters.io.sniff)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms

from cvfilters.io import reading
from cvfilters.io.sniff import quick_header


def _pillow(data: bytes) -> tuple[str, str, tuple[int, int]]:
    with Image.open(io.BytesIO(data)) as image:
        return image.format, image.mode, image.size


def _encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


RNG = np.random.default_rng(5)
RGB = Image.fromarray(RNG.integers(0, 256, (7, 13, 3), dtype=np.uint8))
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
PLAIN = {
    "jpeg rgb": _encode(RGB, "JPEG"),
    "jpeg grey": _encode(RGB.convert("L"), "JPEG"),
    "jpeg progressive": _encode(RGB, "JPEG", progressive=True),
    "jpeg with exif and icc": _encode(RGB, "JPEG", exif=Image.Exif().tobytes(), icc_profile=SRGB),
    "png rgb": _encode(RGB, "PNG"),
    "png rgba": _encode(RGB.convert("RGBA"), "PNG"),
    "png grey": _encode(RGB.convert("L"), "PNG"),
    "png 1-bit": _encode(RGB.convert("1"), "PNG"),
    "png grey+alpha": _encode(RGB.convert("LA"), "PNG"),
    "png palette": _encode(RGB.convert("P"), "PNG"),
    "png palette with transparency": _encode(RGB.convert("P"), "PNG", transparency=3),
    "png rgb with a colour key": _encode(RGB, "PNG", transparency=(1, 2, 3)),
}
DEFERRED = {  # Pillow decides: grey keys, animations, multi-picture JPEG, CMYK, other formats, damage
    "png grey with a key": _encode(RGB.convert("L"), "PNG", transparency=7),
    "apng": _encode(RGB, "PNG", save_all=True, append_images=[RGB.convert("L").convert("RGB")]),
    "jpeg cmyk": _encode(RGB.convert("CMYK"), "JPEG"),
    "mpo": _encode(RGB, "MPO", save_all=True, append_images=[RGB]),
    "gif": _encode(RGB, "GIF"),
    "png cut in its header": _encode(RGB, "PNG")[:20],
    "jpeg cut before its frame header": _encode(RGB, "JPEG")[:4],
}


@pytest.mark.parametrize("name", list(PLAIN))
def test_plain_files_give_what_pillow_gives(name: str) -> None:
    assert quick_header(PLAIN[name]) == _pillow(PLAIN[name])


def test_sixteen_bit_png_sizes_and_grey_mode() -> None:
    for image in (np.full((5, 9), 40000, np.uint16), np.full((5, 9, 3), 40000, np.uint16)):
        data = cv2.imencode(".png", image)[1].tobytes()
        fmt, mode, size = quick_header(data) or ("", "", (0, 0))
        pillow = _pillow(data)
        assert (fmt, size) == (pillow[0], pillow[2])
        assert (mode in ("I;16", "I")) == (pillow[1] in ("I;16", "I"))  # Pillow's name for 16-bit grey varies


@pytest.mark.parametrize("name", list(DEFERRED))
def test_anything_else_is_left_to_pillow(name: str) -> None:
    assert quick_header(DEFERRED[name]) is None


def test_profiles_still_arrive_through_opencv(tmp_path: Path) -> None:
    """The quick header has no ICC profile: OpenCV's decoder gives a JPEG's; a PNG with an iCCP chunk
    is left to Pillow (libpng refuses profiles it cannot parse), and the profile arrives either way."""
    icc = SRGB
    for fmt in ("JPEG", "PNG"):
        path = tmp_path / f"p.{fmt.lower()}"
        path.write_bytes(_encode(RGB, fmt, icc_profile=icc))
        assert (quick_header(path.read_bytes()) is None) == (fmt == "PNG"), fmt
        assert reading.read_with_metadata(path)[1].icc == icc, fmt


# Headers written byte by byte from the specs (PNG: ISO/IEC 15948 section 11.2.2, IHDR; JPEG: ITU T.81
# annex B.1-B.2, markers, fill bytes and the frame header SOFn), checked against Pillow's parse of
# the same bytes (its size and mode exactly) or, where Pillow refuses the file, against "leave it to Pillow".
PNG_SIGNATURE = bytes([137, 80, 78, 71, 13, 10, 26, 10])  # the spec's eight bytes, section 5.2


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def _png(width: int, height: int, *, colour: int = 2, depth: int = 8, before_data: bytes = b"") -> bytes:
    """A PNG of one IHDR (width, height, depth, colour type, compression 0, filter 0, no interlace), then
    ``before_data``, an IDAT of a zlib stream, IEND."""
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0))
    return PNG_SIGNATURE + header + before_data + _chunk(b"IDAT", zlib.compress(b"\0")) + _chunk(b"IEND", b"")


def _segments(jpeg: bytes) -> dict[int, int]:
    """Marker -> offset of the first segment with it, up to the scan (T.81 B.1.1.4: length counts itself)."""
    found: dict[int, int] = {}
    pos = 2
    while 0xDA not in found:
        found.setdefault(jpeg[pos + 1], pos)
        pos += 2 + (jpeg[pos + 2] << 8 | jpeg[pos + 3])
    return found


JPEG = PLAIN["jpeg rgb"]
SOF = _segments(JPEG)[0xC0]  # Pillow writes a baseline frame header


def _with_frame(height: int, width: int) -> bytes:
    """JPEG with its SOF0's Y (lines) and X (samples per line) fields, 3 and 5 bytes into the segment's body."""
    return JPEG[:SOF + 5] + struct.pack(">HH", height, width) + JPEG[SOF + 9:]


def test_png_sizes_of_one_pixel_and_above_the_signed_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """1 x n, n x 1 (a check against 1 instead of 0 would refuse them) and a width of 2**31, which
    PNG's spec forbids but Pillow reads as unsigned: the quick answer is Pillow's either way."""
    for width, height in ((1, 6), (6, 1), (1, 1)):
        data = _encode(Image.new("RGB", (width, height)), "PNG")
        assert quick_header(data) == _pillow(data) == ("PNG", "RGB", (width, height))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)  # 2**31 pixels: Pillow's bomb check refuses it
    data = _png(2**31, 1)
    assert quick_header(data) == _pillow(data) == ("PNG", "RGB", (2**31, 1))


@pytest.mark.parametrize(("width", "height", "colour"), [(0, 5, 2), (5, 0, 2), (3, 5, 5), (3, 5, 1)])
def test_png_headers_pillow_refuses_are_left_to_it(width: int, height: int, colour: int) -> None:
    """A zero width or height, or a colour type the spec does not define (1, 5): Pillow refuses them."""
    data = _png(width, height, colour=colour)
    with pytest.raises(OSError):  # UnidentifiedImageError, or "Truncated File Read"
        _pillow(data)
    assert quick_header(data) is None


def test_png_cut_files() -> None:
    """Pillow's header parse stops at the first IDAT chunk's 8-byte header: a file cut there or later
    gives its size; one cut before it (after IHDR, inside an ancillary chunk) is Pillow's to refuse."""
    data = _png(4, 3, before_data=_chunk(b"tEXt", b"Comment\0hello"))
    idat = data.index(b"IDAT") - 4
    for cut in (idat + 8, idat + 9, len(data) - 12):  # at the IDAT header's end, in its data, before IEND
        assert quick_header(data[:cut]) == _pillow(data[:cut]) == ("PNG", "RGB", (4, 3)), cut
    for cut in (33, 34, 40, idat, idat + 7):  # right after IHDR, inside tEXt, in IDAT's own header
        with pytest.raises(OSError):
            _pillow(data[:cut])
        assert quick_header(data[:cut]) is None, cut


@pytest.mark.parametrize("length", [2**31, 2**32 - 20])
def test_png_chunk_lengths_past_the_signed_range_are_left_to_pillow(length: int) -> None:
    """A chunk length of 2**31 or more (the spec's limit is 2**31 - 1): the file ends before it does."""
    data = _png(4, 3)
    damaged = data[:33] + struct.pack(">I", length) + b"tEXt" + data[33:]
    with pytest.raises(OSError):
        _pillow(damaged)
    assert quick_header(damaged) is None


def test_png_without_image_data_gives_its_header_at_iend() -> None:
    """IHDR then IEND (the spec asks for an IDAT; Pillow's parse stops at IEND and gives the header)."""
    data = PNG_SIGNATURE + _png(4, 3)[8:33] + _chunk(b"IEND", b"")
    assert quick_header(data) == _pillow(data) == ("PNG", "RGB", (4, 3))


def test_png_answers_at_the_first_image_data_chunk() -> None:
    """A grey key after the image data is not the image's (the spec puts tRNS before IDAT): the answer
    is given at IDAT, as Pillow's parse, which stops there."""
    grey = _png(4, 3, colour=0)
    idat = grey.index(b"IDAT") - 4
    data = grey[:idat] + grey[idat:-12] + _chunk(b"tRNS", b"\0\7") + grey[-12:]
    assert quick_header(data) == _pillow(data) == ("PNG", "L", (4, 3))


def test_jpeg_sizes_of_one_pixel_and_past_the_signed_range() -> None:
    for width, height in ((1, 6), (6, 1), (1, 1)):
        data = _encode(Image.new("RGB", (width, height)), "JPEG")
        assert quick_header(data) == _pillow(data) == ("JPEG", "RGB", (width, height))
    data = _with_frame(7, 40000)  # X = 40000 > 2**15: an unsigned 16-bit field
    assert quick_header(data) == _pillow(data) == ("JPEG", "RGB", (40000, 7))
    data = _with_frame(40000, 13)
    assert quick_header(data) == _pillow(data) == ("JPEG", "RGB", (13, 40000))


@pytest.mark.parametrize(("height", "width"), [(7, 0), (0, 13)])
def test_jpeg_zero_sizes_are_left_to_pillow(height: int, width: int) -> None:
    """X = 0 is not allowed; Y = 0 means the lines are counted by a later DNL marker (T.81 B.2.2)."""
    data = _with_frame(height, width)
    with pytest.raises(OSError):
        _pillow(data)
    assert quick_header(data) is None


@pytest.mark.parametrize("inserted", [b"\xff", b"\xff" * 3, b"\xff\xd3", b"\xff\xd0\xff\xd7", b"\xff\xfe\x00\x02"],
                         ids=["a fill byte", "three fill bytes", "RST3", "RST0 and RST7", "an empty COM segment"])
def test_jpeg_markers_before_the_frame_header(inserted: bytes) -> None:
    """Fill bytes (0xFF before a marker, T.81 B.1.1.2), markers without a length (RSTn, B.1.1.3) and a
    segment of length 2 (its length field alone) before SOF0: Pillow and libjpeg (OpenCV) read them."""
    data = JPEG[:SOF] + inserted + JPEG[SOF:]
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert decoded is not None and decoded.shape == (7, 13, 3)
    assert quick_header(data) == _pillow(data) == ("JPEG", "RGB", (13, 7))


@pytest.mark.parametrize("cut", [3, SOF + 5, SOF + 9])
def test_jpeg_cut_before_the_frame_size(cut: int) -> None:
    """Cut after SOI and one byte, or inside SOF0 before its component count: Pillow refuses it."""
    with pytest.raises(OSError):
        _pillow(JPEG[:cut])
    assert quick_header(JPEG[:cut]) is None


def test_jpeg_scan_before_any_frame_header_is_left_to_pillow() -> None:
    """A start of scan (SOS) before the frame header: the frame header after it is not read."""
    sos = _segments(JPEG)[0xDA]
    data = JPEG[:2] + JPEG[sos:sos + 14] + JPEG[2:]
    with pytest.raises(OSError):
        _pillow(data)
    assert quick_header(data) is None
