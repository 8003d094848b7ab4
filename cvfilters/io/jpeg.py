"""JPEG facts OpenCV does not handle: the quality a file was coded at, and metadata over 64 KB.

* :func:`estimate_quality` reads the luminance quantisation table (``DQT``) and inverts the
  IJG scaling (``q = (base * S + 50) // 100``, ``S = 5000 / Q`` below 50, ``200 - 2 Q`` above),
  as ImageMagick's ``identify -format %Q`` estimates it, so JPEG output keeps the input's quality.
* A JPEG segment holds at most 65,533 payload bytes. OpenCV's encoder refuses larger metadata;
  :func:`insert_icc` splits an ICC profile over numbered ``APP2 ICC_PROFILE`` segments as the
  ICC specification (annex B.4) allows, after the encoder has written the pixels.
"""

from __future__ import annotations

import struct

import numpy as np

_SEGMENT_MAX = 65533  # payload bytes of one marker segment (its length field counts itself)
_ICC_TAG = b"ICC_PROFILE\0"
ICC_CHUNK = _SEGMENT_MAX - len(_ICC_TAG) - 2  # profile bytes per APP2 segment
_IJG_LUMINANCE = np.array([  # the IJG base table (ITU T.81 K.1), in zig-zag order as DQT stores it
    16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58,
    51, 61, 60, 57, 51, 56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87, 95, 98, 103, 104, 103,
    62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99], np.float64)


def fits_segment(payload: bytes) -> bool:
    """Whether ``payload`` (with its identifier) fits one JPEG marker segment."""
    return len(payload) <= _SEGMENT_MAX


def _segments(data: bytes) -> list[tuple[int, int, int]]:
    """``(marker, start, end)`` of each segment before the first scan."""
    found = []
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker == 0xDA:
            break
        end = pos + 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
        found.append((marker, pos, end))
        pos = end
    return found


def estimate_quality(data: bytes) -> int | None:
    """The IJG quality (1-100) of a JPEG from its luminance table; None where it has none."""
    if not data.startswith(b"\xff\xd8"):
        return None
    for marker, start, end in _segments(data):
        if marker != 0xDB:
            continue
        pos = start + 4
        while pos < min(end, len(data)):  # a file cut inside its DQT segment
            precision, table = data[pos] >> 4, data[pos] & 15
            size = 128 if precision else 64
            values = np.frombuffer(data[pos + 1 : pos + 1 + size], ">u2" if precision else np.uint8)
            if table == 0 and len(values) == 64:
                return _quality_of(values.astype(np.float64))
            pos += 1 + size
    return None


def _quality_of(table: np.ndarray) -> int:
    usable = (table > 1) & (table < 255)  # entries clamped at the ends say nothing about the scale
    if not usable.any():
        return 100 if table.max() <= 1 else 1
    scale = float(np.median(table[usable] * 100 / _IJG_LUMINANCE[usable]))
    quality = (200 - scale) / 2 if scale <= 100 else 5000 / scale
    return int(min(100, max(1, round(quality))))


def insert_icc(jpeg: bytes, icc: bytes) -> bytes:
    """``jpeg`` with ``icc`` in numbered APP2 ``ICC_PROFILE`` segments after its APP0/APP1 segments."""
    chunks = [icc[i : i + ICC_CHUNK] for i in range(0, len(icc), ICC_CHUNK)]
    if len(chunks) > 255:
        raise ValueError(f"an ICC profile of {len(icc)} bytes needs more than 255 segments")
    segments = b"".join(b"\xff\xe2" + struct.pack(">H", 2 + len(_ICC_TAG) + 2 + len(chunk)) + _ICC_TAG
                        + bytes([index + 1, len(chunks)]) + chunk for index, chunk in enumerate(chunks))
    after = 2
    for marker, _, end in _segments(jpeg):
        if marker not in (0xE0, 0xE1):
            break
        after = end
    return jpeg[:after] + segments + jpeg[after:]
