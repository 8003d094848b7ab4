"""Animated PNG frame by frame, at the file's depth (16-bit frames stay 16-bit).

Pillow and OpenCV's animation reader both narrow 16-bit APNG frames to 8 bits. Here each frame's
data (``IDAT`` or ``fdAT`` chunks) is wrapped as a standalone PNG with the file's ``IHDR`` (at the
frame's size) and its palette and transparency chunks, and decoded by OpenCV's PNG decoder, the
one still PNGs use; the frame is then composited onto the canvas as its ``fcTL`` says (blend
source or over, dispose none, background or previous). The writer does the reverse with OpenCV's
PNG encoder, one frame at a time, and patches the frame count into ``acTL`` when it closes.
Memory holds the canvas, the frame and one frame's chunks.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from io import BytesIO
from typing import BinaryIO

import cv2
import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CARRIED = (b"PLTE", b"tRNS", b"sBIT", b"gAMA", b"cHRM", b"sRGB")  # chunks a frame's pixels depend on


class ApngError(ValueError):
    """The file is not a well-formed animated PNG (the message says where)."""


@dataclass(frozen=True)
class Control:
    """An ``fcTL`` chunk: where the frame goes, how long it shows, how it is blended and disposed."""

    width: int
    height: int
    x: int
    y: int
    duration_ms: int
    dispose: int
    blend: int


def _chunks(file: BinaryIO) -> Iterator[tuple[bytes, bytes]]:
    if file.read(8) != SIGNATURE:
        raise ApngError("no PNG signature")
    while True:
        head = file.read(8)
        if len(head) < 8:
            raise ApngError("ends before IEND")
        length, kind = struct.unpack(">I4s", head)
        payload = file.read(length)
        if len(payload) < length or len(file.read(4)) < 4:
            raise ApngError(f"a {kind.decode(errors='replace')} chunk is cut short")
        yield kind, payload
        if kind == b"IEND":
            return


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def _control(payload: bytes) -> Control:
    if len(payload) < 26:
        raise ApngError("a fcTL chunk is shorter than 26 bytes")
    _, width, height, x, y, num, den, dispose, blend = struct.unpack(">IIIIIHHBB", payload[:26])
    return Control(width, height, x, y, round(1000 * num / (den or 100)), dispose, blend)


def loop_count(file: BinaryIO) -> tuple[int, int]:
    """``(frames, plays)`` from the ``acTL`` chunk (plays 0: forever); the file is left at its start."""
    start = file.tell()
    try:
        for kind, payload in _chunks(file):
            if kind == b"acTL":
                frames, plays = struct.unpack(">II", payload[:8])
                return frames, plays
            if kind == b"IDAT":
                break
        return 1, 0
    finally:
        file.seek(start)


def frames(file: BinaryIO) -> Iterator[tuple[np.ndarray, int]]:
    """Yield ``(frame, duration_ms)`` for every frame of an APNG, composited at full size.

    Frames are grey, BGR or BGRA (as OpenCV decodes the PNG's colour type, and BGRA for grey with a
    ``tRNS`` key, as still PNGs read) at 8 or 16 bits; a file whose frames carry alpha (or blend over
    earlier ones) yields BGRA throughout.

    Raises
    ------
    ApngError
        Missing or inconsistent chunks, or a frame OpenCV cannot decode.
    """
    header = b""
    carried: list[bytes] = []
    control: Control | None = None
    data: list[bytes] = []
    canvas: np.ndarray | None = None
    for kind, payload in _chunks(file):
        if kind == b"IHDR":
            header = payload
        elif kind in _CARRIED:
            carried.append(_chunk(kind, payload))
        elif kind == b"fcTL":
            if control is not None and data:
                canvas = yield from _emit(header, carried, control, data, canvas)
            control, data = _control(payload), []
        elif kind == b"IDAT" and control is not None:
            data.append(payload)
        elif kind == b"fdAT" and control is not None:
            data.append(payload[4:])
        elif kind == b"IEND" and control is not None and data:
            yield from _emit(header, carried, control, data, canvas)


def _emit(header: bytes, carried: list[bytes], control: Control, data: list[bytes],
          canvas: np.ndarray | None) -> Generator[tuple[np.ndarray, int], None, np.ndarray]:
    """Decode one frame, composite it, yield the canvas; returns the canvas after disposal."""
    if len(header) < 13:
        raise ApngError("no IHDR before the first frame")
    width, height = struct.unpack(">II", header[:8])
    if control.x + control.width > width or control.y + control.height > height:
        raise ApngError("a frame lies outside the canvas")
    png = SIGNATURE + _chunk(b"IHDR", struct.pack(">II", control.width, control.height) + header[8:]) + \
        b"".join(carried) + b"".join(_chunk(b"IDAT", part) for part in data) + _chunk(b"IEND", b"")
    frame: np.ndarray | None = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    if frame is None:
        raise ApngError("a frame cannot be decoded")
    key = _grey_key(header, carried)
    if key is not None and frame.ndim == 2:  # OpenCV drops a grey PNG's tRNS key (it keeps an RGB one)
        alpha = np.where(frame == key, 0, np.iinfo(frame.dtype).max).astype(frame.dtype)
        frame = np.dstack([frame, frame, frame, alpha])
    whole = (control.x, control.y, control.width, control.height) == (0, 0, width, height)
    if canvas is None:
        if whole and control.blend == 0:
            canvas = np.zeros_like(frame)
        else:  # a partial first frame: the rest of the canvas is transparent
            canvas = np.zeros((height, width, 4), frame.dtype)
    frame = _like(frame, canvas)
    region = (slice(control.y, control.y + control.height), slice(control.x, control.x + control.width))
    before = canvas[region].copy() if control.dispose == 2 else None
    if control.blend == 1 and canvas.ndim == 3 and canvas.shape[2] == 4:
        canvas[region] = _over(frame, canvas[region])
    else:
        canvas[region] = frame
    yield canvas.copy(), control.duration_ms
    if control.dispose == 1:
        canvas[region] = 0
    elif before is not None:
        canvas[region] = before
    return canvas


def _grey_key(header: bytes, carried: list[bytes]) -> int | None:
    """The transparent value of a grey PNG's ``tRNS`` chunk at the decoded depth (OpenCV widens 1-, 2- and
    4-bit grey to 0..255), or None where the colour type is not grey or there is no key."""
    bits, colour = header[8], header[9]
    keys = [chunk[8:10] for chunk in carried if chunk[4:8] == b"tRNS" and len(chunk) >= 14]
    if colour != 0 or not keys:
        return None
    key = int.from_bytes(keys[0], "big")
    return key * (255 // (2 ** bits - 1)) if bits < 8 else key


def _like(frame: np.ndarray, canvas: np.ndarray) -> np.ndarray:
    """``frame`` with the canvas's channels (grey or BGR widened to BGRA with full alpha)."""
    channels = 1 if canvas.ndim == 2 else canvas.shape[2]
    have = 1 if frame.ndim == 2 else frame.shape[2]
    if have == channels:
        return frame
    if have == 1:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if channels == 4 and frame.shape[2] == 3:
        full = np.full(frame.shape[:2] + (1,), np.iinfo(frame.dtype).max, frame.dtype)
        frame = np.concatenate([frame, full], axis=2)
    return frame


def _over(source: np.ndarray, below: np.ndarray) -> np.ndarray:
    """Porter-Duff source over destination, straight alpha."""
    full = float(np.iinfo(source.dtype).max)
    a = source[..., 3:].astype(np.float64) / full
    b = below[..., 3:].astype(np.float64) / full
    out_a = a + b * (1 - a)
    colour = np.divide(source[..., :3] * a + below[..., :3] * b * (1 - a), out_a,
                       out=np.zeros(source.shape[:2] + (3,)), where=out_a > 0)
    return np.rint(np.concatenate([colour, out_a * full], axis=2)).astype(source.dtype)


class ApngWriter:
    """Writes an APNG to a seekable ``file`` one frame at a time (OpenCV encodes each frame's pixels).

    ``plays``: 0 forever. Every frame replaces the whole canvas. :meth:`close` writes ``IEND`` and
    the frame count.
    """

    def __init__(self, file: BinaryIO, *, plays: int = 0, compression: int | None = None,
                 icc: bytes | None = None) -> None:
        self.file, self.plays, self.icc = file, plays, icc
        self.params = [] if compression is None else [cv2.IMWRITE_PNG_COMPRESSION, compression]
        self.count = 0
        self.sequence = 0
        self.header: bytes | None = None
        self.actl_at = 0

    def add(self, image: np.ndarray, duration_ms: int | None) -> None:
        """Append a frame (grey, BGR or BGRA, uint8 or uint16) shown ``duration_ms``."""
        ok, encoded = cv2.imencode(".png", image, self.params)
        if not ok:
            raise ApngError("OpenCV cannot encode a frame as PNG")
        chunks = list(_chunks(BytesIO(encoded.tobytes())))
        header = next(payload for kind, payload in chunks if kind == b"IHDR")
        if self.header is None:
            self.header = header
            self.file.write(SIGNATURE + _chunk(b"IHDR", header))
            if self.icc:
                self.file.write(_chunk(b"iCCP", b"ICC\0\0" + zlib.compress(self.icc)))
            self.actl_at = self.file.tell()
            self.file.write(_chunk(b"acTL", struct.pack(">II", 0, self.plays)))
            for kind, payload in chunks:
                if kind in (b"PLTE", b"tRNS"):
                    self.file.write(_chunk(kind, payload))
        elif header != self.header:
            raise ApngError("frames differ in size, depth or channels")
        delay, scale = (duration_ms if duration_ms is not None else 100), 1000
        if delay > 65535:  # fcTL: seconds as 16-bit numerator / 16-bit denominator; past 65,535 ms, a coarser one
            scale = max(65_535_000 // delay, 1)
            delay = min(round(delay * scale / 1000), 65535)
        width, height = struct.unpack(">II", header[:8])
        self.file.write(_chunk(b"fcTL", struct.pack(">IIIIIHHBB", self.sequence, width, height, 0, 0, delay, scale,
                                                     0, 0)))
        self.sequence += 1
        for kind, payload in chunks:
            if kind != b"IDAT":
                continue
            if self.count == 0:
                self.file.write(_chunk(b"IDAT", payload))
            else:
                self.file.write(_chunk(b"fdAT", struct.pack(">I", self.sequence) + payload))
                self.sequence += 1
        self.count += 1

    def close(self) -> None:
        """Write ``IEND`` and patch the frame count into ``acTL`` (:class:`ApngError` if no frame was added)."""
        if self.header is None:  # nothing written yet: an APNG has at least one frame
            raise ApngError("no frame was added; an APNG needs at least one")
        self.file.write(_chunk(b"IEND", b""))
        end = self.file.tell()
        self.file.seek(self.actl_at)
        self.file.write(_chunk(b"acTL", struct.pack(">II", self.count, self.plays)))
        self.file.seek(end)

