"""Image files OpenCV's decoders misread or that hold more than one frame, made in the tests.

Each maker writes the file and returns what a faithful decoder must give (BGR(A) order, as
cvfilters reads), computed from the values put in, never by decoding the file. :func:`webp_chunks`
walks a WebP file's chunks, to check how one was coded without decoding it.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
import tifffile
from PIL import Image

PALETTE_BGR = np.array([[0, 0, 255], [0, 255, 0], [255, 0, 0], [0, 255, 255]], np.uint8)


def indices(shape: tuple[int, int] = (6, 9), colours: int = 4, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, colours, shape, dtype=np.uint8)


def damaged_png(path: Path, png: bytes) -> Path:
    """``png`` written to ``path`` with a byte of its first IDAT's zlib stream flipped (decoders fail on it)."""
    data = bytearray(png)
    data[data.find(b"IDAT") + 10] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def os2_palette_bmp(path: Path, index: np.ndarray | None = None) -> np.ndarray:
    """An OS/2 1.x BMP (12-byte BITMAPCOREHEADER, 3-byte palette entries), 8 bits per pixel."""
    index = indices() if index is None else index
    height, width = index.shape
    row = (width + 3) & ~3
    palette = PALETTE_BGR.tobytes() + b"\0" * 3 * (256 - len(PALETTE_BGR))
    pixels = b"".join(index[y].tobytes() + b"\0" * (row - width) for y in range(height - 1, -1, -1))
    offset = 14 + 12 + len(palette)
    path.write_bytes(b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
                     + struct.pack("<IHHHH", 12, width, height, 1, 8) + palette + pixels)
    return PALETTE_BGR[index]


def bitfields_bmp(path: Path, seed: int = 2) -> np.ndarray:
    """A 32-bit BMP v4 with BI_BITFIELDS masks in an unusual order (R in the low byte, alpha high)."""
    rgba = np.random.default_rng(seed).integers(0, 256, (5, 7, 4), dtype=np.uint8)
    rgba[..., 3] = np.maximum(rgba[..., 3], 1)
    height, width = rgba.shape[:2]
    masks = (0x000000FF, 0x0000FF00, 0x00FF0000, 0xFF000000)  # R, G, B, A
    info = struct.pack("<IiiHHIIiiII", 108, width, height, 1, 32, 3, width * height * 4, 2835, 2835, 0, 0)
    info += struct.pack("<IIII", *masks) + b"sRGB" + b"\0" * 36 + b"\0" * 12
    pixels = b"".join(rgba[y].tobytes() for y in range(height - 1, -1, -1))  # bytes R, G, B, A little-endian
    offset = 14 + len(info)
    path.write_bytes(b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset) + info + pixels)
    return rgba[..., [2, 1, 0, 3]]


def palette_tiff(path: Path, bits: int = 2) -> np.ndarray:
    """A palette (Photometric 3) TIFF with a 16-bit colour map, 2, 4 or 8 bits per pixel."""
    index = indices((5, 8), 4)
    per_byte = 8 // bits
    packed = np.zeros((5, 8 // per_byte), np.uint8)
    for k in range(per_byte):
        packed |= index[:, k::per_byte] << (8 - bits * (k + 1))
    colormap = np.zeros((3, 2**bits), np.uint16)
    colormap[:, : len(PALETTE_BGR)] = PALETTE_BGR[:, ::-1].T.astype(np.uint16) * 257
    raw_tiff(path, packed.tobytes(), 8, 5, {258: (3, bits), 259: (3, 1), 262: (3, 3), 277: (3, 1),
                                             320: (3, colormap.ravel().tolist())})
    return PALETTE_BGR[index]


def grey_trns_png(path: Path, dtype: type = np.uint8, seed: int = 3) -> tuple[np.ndarray, int]:
    """A grey PNG whose tRNS chunk makes one grey value transparent; returns (BGRA, that value)."""
    top = np.iinfo(dtype).max
    grey = np.random.default_rng(seed).integers(0, top, (6, 9), dtype=dtype, endpoint=True)
    key = int(grey[0, 0])
    Image.fromarray(grey).save(path, transparency=key)
    alpha = np.where(grey == key, 0, top).astype(dtype)
    return np.dstack([grey, grey, grey, alpha]), key


def low_bit_grey_trns_png(path: Path, bits: int, seed: int = 10) -> np.ndarray:
    """A 1-, 2- or 4-bit grey PNG with a tRNS key, written chunk by chunk; returns the BGRA it shows
    (levels scaled to 0..255, alpha 0 where the level is the key)."""
    top = 2**bits - 1
    levels = np.random.default_rng(seed).integers(0, top, (4, 8), dtype=np.uint8, endpoint=True)
    key = int(levels[0, 0])
    per_byte = 8 // bits
    packed = np.zeros((4, 8 // per_byte), np.uint8)
    for k in range(per_byte):
        packed |= levels[:, k::per_byte] << (8 - bits * (k + 1))
    raw = b"".join(b"\0" + row.tobytes() for row in packed)

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 4, bits, 0, 0, 0, 0))
                     + chunk(b"tRNS", struct.pack(">H", key)) + chunk(b"IDAT", zlib.compress(raw))
                     + chunk(b"IEND", b""))
    grey = (levels * (255 // top)).astype(np.uint8)
    return np.dstack([grey, grey, grey, np.where(levels == key, 0, 255).astype(np.uint8)])


def grey_alpha_png(path: Path, seed: int = 4) -> np.ndarray:
    """An 8-bit grey+alpha (LA) PNG; returns the BGRA a reader gives (B = G = R)."""
    la = np.random.default_rng(seed).integers(0, 256, (6, 9, 2), dtype=np.uint8)
    Image.fromarray(la, "LA").save(path)
    return np.dstack([la[..., 0]] * 3 + [la[..., 1]])


def int16_tiff(path: Path, seed: int = 5) -> np.ndarray:
    data = np.random.default_rng(seed).integers(-32768, 32767, (6, 9), dtype=np.int16, endpoint=True)
    tifffile.imwrite(path, data)
    return data


def lzma_tiff(path: Path, seed: int = 6) -> np.ndarray:
    """An RGB TIFF compressed with LZMA (34925), which OpenCV's libtiff is built without."""
    rgb = np.random.default_rng(seed).integers(0, 256, (6, 9, 3), dtype=np.uint8)
    tifffile.imwrite(path, rgb, photometric="rgb", compression="lzma")
    return rgb[..., ::-1]


def associated_alpha_tiff(path: Path, dtype: type = np.uint8, seed: int = 7) -> np.ndarray:
    """An RGBA TIFF with premultiplied (associated) alpha; returns the straight-alpha BGRA."""
    top = np.iinfo(dtype).max
    rng = np.random.default_rng(seed)
    straight = rng.integers(0, top, (6, 9, 4), dtype=dtype, endpoint=True)
    straight[..., 3] = top  # opaque pixels are exact either way ...
    straight[0, :, 3] = top // 2  # ... a half-transparent row checks the division
    straight[0, :, :3] = (straight[0, :, :3] // 2) * 2  # even values: premultiplied by 1/2 and back exactly
    alpha = straight[..., 3:].astype(np.float64) / top
    premultiplied = np.rint(straight[..., :3] * alpha).astype(dtype)
    tifffile.imwrite(path, np.dstack([premultiplied, straight[..., 3:]]), photometric="rgb",
                     extrasamples=["assocalpha"])
    return straight[..., [2, 1, 0, 3]]


def raw_tiff(path: Path, payload: bytes, width: int, height: int, tags: dict[int, tuple[int, int | list[int]]]) -> None:
    """A one-strip little-endian TIFF with the given ``{tag: (type, value or values)}`` entries
    (SHORT=3, LONG=4); lists of values are stored after the directory."""
    tags = {256: (4, width), 257: (4, height), 273: (4, 0), 278: (4, height), 279: (4, len(payload)), **tags}
    ifd_size = 2 + 12 * len(tags) + 4
    extra = b""
    entries = []
    for tag, (kind, value) in sorted(tags.items()):
        values = value if isinstance(value, list) else [value]
        packed = struct.pack(f"<{len(values)}{'H' if kind == 3 else 'I'}", *values)
        if len(packed) <= 4:
            entries.append((tag, kind, len(values), packed.ljust(4, b"\0"), None))
        else:
            entries.append((tag, kind, len(values), None, len(extra)))
            extra += packed + b"\0" * (len(packed) % 2)
    data_offset = 8 + ifd_size + len(extra)
    ifd = struct.pack("<H", len(entries))
    for tag, kind, count, inline, at in entries:
        if tag == 273:
            inline = struct.pack("<I", data_offset)
        ifd += struct.pack("<HHI", tag, kind, count) + (inline if inline is not None
                                                        else struct.pack("<I", 8 + ifd_size + at))
    path.write_bytes(b"II*\0" + struct.pack("<I", 8) + ifd + b"\0\0\0\0" + extra + payload)


def grey4_tiff(path: Path, seed: int = 8) -> np.ndarray:
    """A 4-bit grey TIFF; returns the uint8 grey it shows (each level times 17)."""
    levels = np.random.default_rng(seed).integers(0, 16, (5, 8), dtype=np.uint8)
    packed = (levels[:, 0::2] << 4 | levels[:, 1::2]).astype(np.uint8)
    raw_tiff(path, packed.tobytes(), 8, 5, {258: (3, 4), 259: (3, 1), 262: (3, 1), 277: (3, 1)})
    return levels * 17


def float_tiff_without_photometric(path: Path, seed: int = 9) -> np.ndarray:
    data = np.random.default_rng(seed).random((5, 8), dtype=np.float32)
    raw_tiff(path, data.tobytes(), 8, 5, {258: (3, 32), 259: (3, 1), 277: (3, 1), 339: (3, 3)})
    return data


def frames_bgr(count: int = 4, shape: tuple[int, int] = (12, 16)) -> list[np.ndarray]:
    """Distinct flat-colour frames (few colours, so a GIF palette holds them exactly)."""
    colours = [(0, 0, 255), (0, 255, 0), (255, 0, 0), (0, 255, 255), (255, 0, 255), (255, 255, 0), (40, 80, 120)]
    out = []
    for i in range(count):
        frame = np.zeros((*shape, 3), np.uint8)
        frame[:] = colours[i % len(colours)]
        frame[: shape[0] // 2, : shape[1] // 2] = colours[(i + 1) % len(colours)]
        out.append(frame)
    return out


def animation(path: Path, count: int = 4, durations: list[int] | None = None, loop: int = 3) -> list[np.ndarray]:
    """An animated GIF, WebP (lossless) or APNG (``.png``) written by Pillow; returns its BGR frames."""
    frames = frames_bgr(count)
    durations = durations or [100 * (i + 1) for i in range(count)]
    images = [Image.fromarray(f[..., ::-1]) for f in frames]
    extra = {"lossless": True} if path.suffix == ".webp" else {}
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=loop, disposal=1, **extra)
    return frames


def video_frames(path: Path) -> tuple[list[np.ndarray], float]:
    """Every frame of a video file as OpenCV decodes it (a second reader beside ffmpeg), and its frame rate."""
    import cv2

    capture = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    fps = capture.get(cv2.CAP_PROP_FPS)
    capture.release()
    return frames, fps


def webp_chunks(data: bytes) -> list[bytes]:
    """The FourCCs of a RIFF WebP's chunks, walked by hand (RIFF pads odd chunk sizes by one byte)."""
    kinds, pos = [], 12
    while pos + 8 <= len(data):
        size = int.from_bytes(data[pos + 4 : pos + 8], "little")
        kinds.append(data[pos : pos + 4])
        pos += 8 + size + size % 2
    return kinds


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    """A PNG chunk: length, kind, payload and CRC."""
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


class ApngFrame(NamedTuple):
    """One APNG frame: its zlib-compressed filtered rows and its fcTL fields (delay in ms)."""

    data: bytes
    width: int
    height: int
    x: int = 0
    y: int = 0
    delay: int = 50
    dispose: int = 0
    blend: int = 0


def apng_bytes(ihdr: bytes | None, frames: list[ApngFrame], plays: int = 0, extra: tuple[bytes, ...] = ()) -> bytes:
    """An APNG built chunk by chunk (no image library): IHDR (left out for None), acTL, ``extra``,
    each frame's fcTL then its data in IDAT (the first) or fdAT, and IEND."""
    out = [PNG_SIGNATURE, *([png_chunk(b"IHDR", ihdr)] if ihdr is not None else []),
           png_chunk(b"acTL", struct.pack(">II", len(frames), plays)), *extra]
    sequence = 0
    for index, frame in enumerate(frames):
        out.append(png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, frame.width, frame.height, frame.x,
                                                  frame.y, frame.delay, 1000, frame.dispose, frame.blend)))
        sequence += 1
        if index == 0:
            out.append(png_chunk(b"IDAT", frame.data))
        else:
            out.append(png_chunk(b"fdAT", struct.pack(">I", sequence) + frame.data))
            sequence += 1
    out.append(png_chunk(b"IEND", b""))
    return b"".join(out)
