"""Header checks for the formats Pillow does not parse, and a bound on JPEG scans.

Pillow's header parse (:func:`cvfilters.io.decoders.parse_header`) sizes PNG, JPEG, TIFF,
WebP, BMP, GIF, PNM and the rest before any pixel is decoded. OpenCV also reads Radiance
HDR (``.hdr``, ``.pic``), PFM and PAM (``P7``), whose headers Pillow does not know: without
this module a 25 MB run-length encoded HDR of 20000 x 20000 decodes to 9.5 GB before the
pixel limit can refuse it. :func:`raw_size` reads their ``width x height`` from the text
header (no pixels decoded).

A progressive JPEG decodes every scan over the whole image; a file that repeats its last
scan thousands of times costs minutes. :func:`jpeg_scans` counts the start-of-scan
markers (FF DA cannot occur inside entropy-coded data, where FF is stuffed as FF 00) and
:data:`MAX_JPEG_SCANS` bounds them (real progressive files have about 10).
"""

from __future__ import annotations

import re
from typing import Literal

MAX_JPEG_SCANS = 100
_HEADER_BYTES = 64 * 1024  # text headers longer than this are not images
_HDR_SIZE = re.compile(rb"^([-+])([YX]) (\d+) ([-+])([YX]) (\d+)$")
_PFM_SIZE = re.compile(rb"^\s*(\d+)\s+(\d+)\s*$")
_TIFF_LAYOUT_TAGS = frozenset({258, 277, 339})  # BitsPerSample, SamplesPerPixel, SampleFormat
_TIFF_SIZES = {1: 1, 3: 2, 4: 4}  # BYTE, SHORT, LONG: the spec says SHORT; libtiff takes the others too
_PAM_FIELD = re.compile(rb"^(WIDTH|HEIGHT)\s+(\d+)\s*$")


class HeaderError(ValueError):
    """A header of a known format that is malformed (the reason, one line)."""


def raw_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` of a Radiance HDR, PFM or PAM file from its header; None for other formats.

    Raises :class:`HeaderError` for a header of one of these formats that gives no size.
    """
    if data.startswith((b"#?RADIANCE", b"#?RGBE")):
        return _radiance(data)
    if data[:3] in (b"PF\n", b"Pf\n", b"PF\r", b"Pf\r"):
        return _pfm(data)
    if data.startswith(b"P7\n"):
        return _pam(data)
    return None


def jpeg_scans(data: bytes) -> int:
    """The number of start-of-scan markers (FF DA) in JPEG data."""
    first = data.find(b"\xff\xda")
    return 0 if first < 0 else data.count(b"\xff\xda", first)


def tiff_layout_problem(data: bytes) -> str | None:
    """What about a classic TIFF's samples OpenCV cannot decode (16-bit float, complex, more than 4
    samples per pixel), from its first IFD; None when nothing is wrong or it is not such a TIFF."""
    if data[:4] not in (b"II*\x00", b"MM\x00*") or len(data) < 8:
        return None
    order: Literal["little", "big"] = "little" if data[:2] == b"II" else "big"

    def number(start: int, size: int) -> int:
        return int.from_bytes(data[start:start + size], order)

    ifd = number(4, 4)
    tags: dict[int, int] = {}
    for pos in range(ifd + 2, min(ifd + 2 + 12 * number(ifd, 2), len(data) - 11), 12):
        tag, kind, count = number(pos, 2), number(pos + 2, 2), number(pos + 4, 4)
        if tag in _TIFF_LAYOUT_TAGS and kind in _TIFF_SIZES:
            size = _TIFF_SIZES[kind]
            where = pos + 8 if count * size <= 4 else number(pos + 8, 4)  # the first value, inline or at its offset
            tags[tag] = number(where, size)
    bits, samples, sample_format = tags.get(258, 1), tags.get(277, 1), tags.get(339, 1)
    if sample_format in (5, 6):
        return f"complex samples ({bits}-bit)"
    if sample_format == 3 and bits not in (32, 64):
        return f"{bits}-bit floating-point samples"
    if samples > 4:
        return f"{samples} samples per pixel"
    return None


def _lines(data: bytes) -> list[bytes]:
    return data[:_HEADER_BYTES].split(b"\n")


def _radiance(data: bytes) -> tuple[int, int]:
    lines = _lines(data)
    for index, line in enumerate(lines[:-1]):
        if not line.strip():  # the blank line ends the variables; the resolution string follows
            match = _HDR_SIZE.match(lines[index + 1].strip())
            if match is None:
                break
            first, second = int(match[3]), int(match[6])
            return (second, first) if match[2] == b"Y" else (first, second)
    raise HeaderError("Radiance HDR header without a resolution line (such as -Y 480 +X 640)")


def _pfm(data: bytes) -> tuple[int, int]:
    lines = [line for line in _lines(data)[1:4] if not line.startswith(b"#")]
    match = _PFM_SIZE.match(lines[0]) if lines else None
    if match is None:
        raise HeaderError("PFM header without 'width height' on its second line")
    return int(match[1]), int(match[2])


def _pam(data: bytes) -> tuple[int, int]:
    size: dict[bytes, int] = {}
    for line in _lines(data)[1:]:
        if line.strip() == b"ENDHDR":
            break
        match = _PAM_FIELD.match(line.strip())
        if match:
            size[match[1]] = int(match[2])
    if len(size) != 2:
        raise HeaderError("PAM header without WIDTH and HEIGHT before ENDHDR")
    return size[b"WIDTH"], size[b"HEIGHT"]


__all__ = ["MAX_JPEG_SCANS", "HeaderError", "jpeg_scans", "raw_size", "tiff_layout_problem"]
