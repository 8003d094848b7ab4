"""Header reads of plain JPEG and PNG files without Pillow (importing it costs a small ``apply``'s time).

Only files OpenCV decodes whole and exactly are answered: a still JPEG with 1 or 3 components
and a still PNG without a grey transparency key. Anything else (an animation, a multi-picture
JPEG, CMYK, a grey PNG with ``tRNS``, a damaged or unusual header) returns None, and the caller
asks Pillow, as for every other format. The answer is what Pillow's header parse would give
for the same file: format, mode and (width, height).
"""

from __future__ import annotations

import struct

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# PNG colour type -> Pillow mode (8-bit; 16-bit grey is I;16, 1-bit grey is 1)
_PNG_MODES = {0: "L", 2: "RGB", 3: "P", 4: "LA", 6: "RGBA"}
_JPEG_MODES = {1: "L", 3: "RGB"}
# Start-of-frame markers: baseline, extended, progressive, lossless (Huffman and arithmetic)
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_NO_LENGTH = frozenset({0x01, *range(0xD0, 0xD8)})  # TEM and RSTn carry no length field


def quick_header(data: bytes) -> tuple[str, str, tuple[int, int]] | None:
    """``(format, mode, (width, height))`` of a plain still JPEG or PNG, else None (ask Pillow)."""
    if data.startswith(_PNG_SIGNATURE):
        return _png(data)
    if data.startswith(b"\xff\xd8\xff"):
        return _jpeg(data)
    return None


def _png(data: bytes) -> tuple[str, str, tuple[int, int]] | None:
    if data[12:16] != b"IHDR" or len(data) < 33:
        return None
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    if colour not in _PNG_MODES or width == 0 or height == 0:
        return None
    mode = _PNG_MODES[colour]
    if colour == 0:
        mode = {1: "1", 16: "I;16"}.get(depth, "L")
    pos = 8
    while pos + 8 <= len(data):  # the chunks before the image data: an animation or a grey key defers
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind in (b"IDAT", b"IEND"):
            return "PNG", mode, (width, height)
        if kind in (b"acTL", b"iCCP") or (kind == b"tRNS" and colour == 0):  # animation, profile, grey key
            return None
        pos += 12 + length
    return None


def _jpeg(data: bytes) -> tuple[str, str, tuple[int, int]] | None:
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in _NO_LENGTH:
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if marker == 0xE2 and data[pos + 4:pos + 8] == b"MPF\0":
            return None  # a multi-picture file: Pillow counts its frames
        if marker in _SOF:
            if pos + 10 > len(data):
                return None
            height, width, components = struct.unpack(">HHB", data[pos + 5:pos + 10])
            if components not in _JPEG_MODES or width == 0 or height == 0:
                return None
            return "JPEG", _JPEG_MODES[components], (width, height)
        if marker == 0xDA or length < 2:
            return None
        pos += 2 + length
    return None
