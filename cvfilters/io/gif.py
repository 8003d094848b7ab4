"""GIF output, one frame at a time: exact palettes where they fit, Pillow's quantizer where not.

OpenCV's GIF encoder quantizes every image, even one of four flat colours, with a fixed
octree (a photo comes out near 21 dB). Here each frame gets its own (local) colour table:

* a frame with at most 256 colours (255 with transparency) is stored exactly;
* a frame with more is quantized by Pillow's median cut (about 38.7 dB on a photo),
  with Floyd-Steinberg dithering onto that palette when ``dither`` is asked for;
* pixels with alpha below 128 become the transparent index (GIF transparency is 1 bit).

The LZW coding is Pillow's: each palettised frame is saved as a one-frame GIF in memory and its
image block (descriptor, colour table, LZW data) is copied out. :class:`GifWriter` writes the
header, the loop extension and then each frame as it comes, so memory holds one frame.
"""

from __future__ import annotations

import struct
from io import BytesIO
from typing import BinaryIO

import numpy as np

_OPAQUE_AT = 128  # alpha at or above this is opaque in the 1-bit GIF transparency


def palettise(image: np.ndarray, *, dither: bool = False) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Indices (H, W) uint8, an RGB palette (N, 3) uint8 and the transparent index of a uint8 grey,
    BGR or BGRA frame; exact where the frame has few enough colours.

    A BGRA frame always gets a transparent index (readers clear a disposed frame to transparent
    only where the file declares one), a frame without alpha none.
    """
    from PIL import Image  # imported when frames are decoded or encoded, not at start-up
    if image.ndim == 2:
        image = np.repeat(image[..., None], 3, axis=2)
    rgb = np.ascontiguousarray(image[..., 2::-1])
    clear = image[..., 3] < _OPAQUE_AT if image.shape[2] == 4 else None
    room = 256 if clear is None else 255
    packed = (rgb[..., 0].astype(np.uint32) << 16) | (rgb[..., 1].astype(np.uint32) << 8) | rgb[..., 2]
    shown = packed.reshape(-1) if clear is None else packed[~clear]
    colours = np.unique(shown)
    if len(colours) <= room:
        indices = np.searchsorted(colours, packed).clip(0, max(len(colours) - 1, 0)).astype(np.uint8)
        palette = np.stack([(colours >> 16) & 255, (colours >> 8) & 255, colours & 255], axis=1).astype(np.uint8)
    else:
        picture = Image.fromarray(rgb)
        reduced = picture.quantize(room, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        if dither:
            reduced = picture.quantize(palette=reduced, dither=Image.Dither.FLOYDSTEINBERG)
        indices = np.asarray(reduced, dtype=np.uint8).copy()
        palette = np.asarray(reduced.getpalette() or [], np.uint8)[: room * 3].reshape(-1, 3)
    if clear is None:
        return indices, palette, None
    transparent = len(palette)
    indices[clear] = transparent
    return indices, np.vstack([palette, np.zeros((1, 3), np.uint8)]), transparent


def _image_block(indices: np.ndarray, palette: np.ndarray) -> bytes:
    """Image descriptor, local colour table and LZW data of one frame, coded by Pillow."""
    from PIL import Image  # imported when frames are decoded or encoded, not at start-up
    picture = Image.fromarray(indices, "P")
    table = np.zeros((256, 3), np.uint8)
    table[: len(palette)] = palette
    picture.putpalette(table.reshape(-1).tobytes())
    buffer = BytesIO()
    picture.save(buffer, "GIF", optimize=False)
    data = buffer.getvalue()
    flags = data[10]
    pos = 13
    table_bytes = b""
    if flags & 0x80:
        size = 3 << ((flags & 7) + 1)
        table_bytes, pos = data[pos : pos + size], pos + size
        bits = flags & 7
    while data[pos] == 0x21:  # extensions Pillow wrote: skip their sub-blocks
        pos += 2
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
    descriptor = bytearray(data[pos : pos + 10])
    pos += 10
    if descriptor[9] & 0x80:  # Pillow wrote a local table itself
        bits = descriptor[9] & 7
        size = 3 << (bits + 1)
        table_bytes, pos = data[pos : pos + size], pos + size
    descriptor[9] = (descriptor[9] & 0x40) | 0x80 | bits  # keep the interlace flag
    end = pos + 1
    while data[end]:
        end += data[end] + 1
    return bytes(descriptor) + table_bytes + data[pos : end + 1]


class GifWriter:
    """Writes a GIF to ``file`` one frame at a time; :meth:`close` writes the trailer.

    ``loop``: the NETSCAPE loop count (0 forever); None writes no loop extension (play once).
    """

    def __init__(self, file: BinaryIO, size: tuple[int, int], *, loop: int | None = 0, dither: bool = False) -> None:
        self.file, self.size, self.dither = file, size, dither
        self.alpha: bool | None = None  # frames with an alpha channel: each is cleared before the next
        file.write(b"GIF89a" + struct.pack("<HHBBB", size[0], size[1], 0, 0, 0))
        if loop is not None:
            file.write(b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", min(loop, 65535)) + b"\x00")

    def add(self, image: np.ndarray, duration_ms: int | None = None) -> None:
        """Append a uint8 grey, BGR or BGRA frame of the writer's size, shown ``duration_ms``."""
        indices, palette, transparent = palettise(image, dither=self.dither)
        centiseconds = 0 if duration_ms is None else min(round(duration_ms / 10), 65535)
        if self.alpha is None:
            self.alpha = image.ndim == 3 and image.shape[2] == 4
        disposal = 2 if self.alpha else 1  # frames are whole: holes show the background, not the last frame
        packed = (disposal << 2) | (1 if transparent is not None else 0)
        self.file.write(b"\x21\xf9\x04" + struct.pack("<BHB", packed, centiseconds, transparent or 0) + b"\x00")
        self.file.write(_image_block(indices, palette))

    def close(self) -> None:
        """Write the trailer."""
        self.file.write(b"\x3b")
