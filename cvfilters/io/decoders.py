"""Which decoder reads a file: OpenCV, or Pillow where OpenCV's would lose information.

The choice is made from the header Pillow has already parsed (no pixels decoded), so every
file is decoded once, by one library. OpenCV 5.1 loses information on these (tests in
tests/io/test_decoders.py show each):

* OS/2 BMPs (12- and 64-byte headers) with a palette come back as 1-channel grey, and
  bit-field BMPs depend on the mask order; Pillow applies palette and masks.
* Palette TIFFs: OpenCV refuses 2-bit ones and its handling depends on the bit depth; Pillow
  expands every depth (except a non-standard colour map of 8-bit values, which libtiff
  scales and Pillow would show almost black: those stay with OpenCV).
* 8-bit TIFFs with alpha come back premultiplied (libtiff's RGBA interface), and associated
  (premultiplied) alpha is not undone; Pillow returns straight alpha.
* TIFF compressions OpenCV's libtiff lacks (LZMA, Zstandard, WebP), bit depths it does not
  unpack (2, 4, 12 bits), and a TIFF without a Photometric tag are refused; Pillow reads them.
* A grey PNG with a ``tRNS`` transparent grey value decodes without its transparency; the
  alpha is made here from the key, at the image's own depth.

16-bit associated alpha (which OpenCV returns as stored) is un-premultiplied here instead, and
the alpha channel OpenCV gives every GIF is dropped where the file has no transparent colour.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING, Any, NamedTuple

import cv2
import numpy as np

from cvfilters.core.errors import TruncatedImageError
from cvfilters.io.quiet import quiet, tifffile_logger_quiet
from cvfilters.io.sniff import quick_header

if TYPE_CHECKING:  # Pillow is imported where it is used: plain JPEG and PNG never need it
    from PIL import Image

# Pillow plugins of formats OpenCV reads (others may take random bytes for a header).
_PILLOW_FORMATS = ("PNG", "JPEG", "TIFF", "WEBP", "BMP", "GIF", "PPM", "JPEG2000", "AVIF", "SUN")
_PILLOW_LOCK = threading.Lock()  # Pillow's pixel limit is a module global

_OS2_HEADERS = (12, 64)
_BMP_BITFIELDS = (3, 6)  # BI_BITFIELDS, BI_ALPHABITFIELDS
_TIFF_PALETTE = 3
_TIFF_CODECS_OPENCV_LACKS = frozenset({34925, 50000, 50001, 34933, 34934})  # LZMA, ZSTD, WebP, PNG, JPEG XR
_TIFF_BITS_OPENCV_READS = frozenset({1, 8, 16, 32, 64})
_GREY_KEYED = ("1", "L", "I;16", "I")  # Pillow modes of grey PNGs, whose tRNS is one grey value
_PILLOW_MODES: dict[str, tuple[Any, int]] = {  # Pillow mode -> (dtype, channels) of the array it gives
    "1": (np.bool_, 1), "L": (np.uint8, 1), "LA": (np.uint8, 2), "RGB": (np.uint8, 3), "RGBA": (np.uint8, 4),
    "I;16": (np.uint16, 1), "I;16B": (np.uint16, 1), "I;16L": (np.uint16, 1), "I;16S": (np.int16, 1),
    "F": (np.float32, 1),
}


@dataclass(frozen=True)
class Header:
    """What Pillow's header parse of a file tells: enough to choose a decoder and refuse a bomb."""

    format: str
    mode: str
    size: tuple[int, int]
    frames: int
    icc: bytes | None
    info: dict[Any, Any]
    tags: dict[int, Any]

    @classmethod
    def of(cls, image: Image.Image) -> Header:
        """Read from an opened (not loaded) Pillow image; counts frames (GIF scans its blocks)."""
        tags: dict[int, Any] = dict(getattr(image, "tag_v2", None) or {})
        file = getattr(image, "fp", None)  # an ImageFile's open file
        frames = _tiff_pages(file) if image.format == "TIFF" and file is not None else None
        return cls(image.format or "", image.mode, image.size, frames or int(getattr(image, "n_frames", 1) or 1),
                   image.info.get("icc_profile"), dict(image.info), tags)


def tiff_pages_header(file: Any) -> Header | None:
    """A TIFF of several pages that Pillow cannot open (64-bit float samples) described by tifffile from its
    first page (size, compression, ICC profile) and the page count; None for anything else. The file is rewound."""
    pages = _tiff_pages(file)
    if pages is None or pages < 2:
        return None
    import tifffile

    try:
        with tifffile_logger_quiet(), tifffile.TiffFile(file) as tiff:
            page = tiff.pages.first
            icc = page.tags.get(34675)
            return Header("TIFF", "", (page.imagewidth, page.imagelength), pages,
                          icc.value if icc is not None else None, {}, {259: int(page.compression)})
    except Exception:  # noqa: BLE001  (tifffile raises many types on damaged files: the caller's "not an image")
        return None
    finally:
        file.seek(0)


def _tiff_pages(file: Any) -> int | None:
    """The number of IFDs (pages) of a TIFF or BigTIFF by walking the chain of offsets (Pillow's
    ``n_frames`` parses every page's tags: milliseconds a page); None where the chain is odd."""
    where = file.tell()
    try:
        file.seek(0)
        head = file.read(16)
        order = {b"II": "<", b"MM": ">"}.get(head[:2])
        if order is None:
            return None
        big = int.from_bytes(head[2:4], "little" if order == "<" else "big") == 43
        offset_size, count_size, entry = (8, 8, 20) if big else (4, 2, 12)
        endian: Any = "little" if order == "<" else "big"
        offset = int.from_bytes(head[8:16] if big else head[4:8], endian)
        seen: set[int] = set()
        while offset and offset not in seen:
            file.seek(offset)
            counted = file.read(count_size)
            if len(counted) < count_size:  # a next-page pointer past the end: the chain ends, as for libtiff
                break
            seen.add(offset)
            count = int.from_bytes(counted, endian)
            file.seek(offset + count_size + count * entry)
            raw = file.read(offset_size)
            if len(raw) < offset_size:
                break
            offset = int.from_bytes(raw, endian)
        return len(seen) or None
    except (OSError, ValueError):
        return None
    finally:
        file.seek(where)


@contextlib.contextmanager
def pillow_unlimited() -> Iterator[None]:
    """Pillow with its own decompression-bomb limit lifted (cvfilters applies its own) and quiet."""
    from PIL import Image

    with _PILLOW_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
        try:
            yield
        finally:
            Image.MAX_IMAGE_PIXELS = saved


def quick_parse(data: bytes) -> Header | None:
    """The header of a plain still JPEG or PNG from its first bytes, without Pillow
    (:func:`cvfilters.io.sniff.quick_header`); None for anything else."""
    quick = quick_header(data)
    return None if quick is None else Header(quick[0], quick[1], quick[2], 1, None, {}, {})


def parse_header(data: bytes) -> Header | None:
    """The header as Pillow parses it (no pixels decoded), or None where Pillow cannot parse it.

    A plain still JPEG or PNG is read by :func:`cvfilters.io.sniff.quick_header` instead, with
    the same answer, without importing Pillow.
    """
    quick = quick_parse(data)
    if quick is not None:
        return quick
    from PIL import Image

    with pillow_unlimited():
        # preinit registers the common plugins (BMP, GIF, JPEG, PPM, PNG); init all of them, once, only
        # when those cannot parse it (importing every plugin costs more than a small apply).
        for register_plugins in (Image.preinit, Image.init):
            register_plugins()  # formats an older Pillow lacks (AVIF) are skipped
            try:
                with Image.open(BytesIO(data), formats=[name for name in _PILLOW_FORMATS
                                                        if name in Image.OPEN]) as image:
                    return Header.of(image)
            except Exception:  # Pillow raises many types on bad headers; OpenCV decides
                continue
        return None


class Decoded(NamedTuple):
    """What a decoder gives: the pixels, the metadata chunks by OpenCV's ``IMAGE_METADATA_*`` kind,
    and whether the decoder has already applied the file's orientation (:mod:`cvfilters.io.orientation`)."""

    image: np.ndarray
    chunks: dict[int, bytes]
    upright: bool


def decode_pillow(name: str | os.PathLike[str], data: bytes, header: Header, reason: str) -> Decoded:
    """Decode with Pillow (:func:`decode_with_pillow`, upright) and collect the EXIF OpenCV would have returned.

    Raises :class:`TruncatedImageError` naming the file, with ``reason`` and what the decoder
    (or libtiff on descriptor 2) said.
    """
    try:
        with pillow_unlimited(), quiet() as printed:
            image = decode_with_pillow(data, header)
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        detail = "; ".join([*printed, str(exc)])
        raise TruncatedImageError(name, f"{TruncatedImageError.cause} ({reason}: {detail})") from None
    exif = header.info.get("exif")
    return Decoded(image, {cv2.IMAGE_METADATA_EXIF: exif} if exif and header.format != "TIFF" else {}, upright=True)


def needs_pillow(header: Header, data: bytes) -> str | None:
    """Why Pillow must decode this file (a short reason), or None where OpenCV keeps everything."""
    if header.format == "BMP":
        size = int.from_bytes(data[14:18], "little") if len(data) >= 18 else 0
        if size in _OS2_HEADERS and header.mode == "P":
            return "OS/2 palette BMP"
        if header.info.get("compression") in _BMP_BITFIELDS:
            return "bit-field BMP"
    elif header.format == "TIFF":
        return _tiff_reason(header)
    elif header.format == "PNG" and header.mode in _GREY_KEYED and "transparency" in header.info:
        return "grey PNG with a tRNS key"
    return None


def _tag_values(tags: dict[int, Any], code: int, default: int) -> tuple[Any, ...]:
    """A TIFF tag's values as a tuple (Pillow gives one value a sample, or a bare value), ``default`` if absent."""
    values = tags.get(code, (default,))
    return values if isinstance(values, tuple) else (values,)


def _tiff_reason(header: Header) -> str | None:
    tags = header.tags
    bits = _tag_values(tags, 258, 1)
    if tags.get(262) == _TIFF_PALETTE and max(tags.get(320, (0,)), default=0) > 255:
        return "palette TIFF"  # an 8-bit-valued colour map (non-standard) is scaled right by libtiff only
    if tags.get(259, 1) in _TIFF_CODECS_OPENCV_LACKS:
        return f"TIFF compression {tags.get(259)}"
    if 262 not in tags:
        return "TIFF without a Photometric tag"
    if any(b not in _TIFF_BITS_OPENCV_READS for b in bits):
        return f"{bits[0]}-bit TIFF"
    if 338 in tags and max(bits) == 8:
        return "8-bit TIFF with alpha"
    return None


def decode_with_pillow(data: bytes, header: Header) -> np.ndarray:
    """Decode with Pillow into cvfilters' layout: grey, BGR or BGRA at the file's depth, upright.

    Palette images become BGR, or BGRA where the palette has transparency; grey with a tRNS
    key gets an alpha channel of the same depth (0 at the key, full scale elsewhere). The
    file's orientation is applied once: by recent Pillow's TIFF loader itself, else here.
    """
    from PIL import Image, ImageOps  # only files that need Pillow pay for importing it

    with Image.open(BytesIO(data)) as opened:
        opened.load()
        image: Image.Image = opened
        ImageOps.exif_transpose(image, in_place=True)  # a no-op where Pillow's loader applied it
        signed = _tag_values(header.tags, 339, 1)[0] == 2  # SampleFormat 2: signed integers
        key = image.info.get("transparency") if image.mode in _GREY_KEYED else None
        if key is not None and image.mode == "L" and header.format == "PNG" and 0 < data[24] < 8:
            key *= 255 // (2 ** data[24] - 1)  # Pillow scales 1-, 2- and 4-bit grey to 0..255, not the key
        if image.mode == "P":
            image = image.convert("RGBA" if "transparency" in image.info else "RGB")
        elif image.mode == "PA":
            image = image.convert("RGBA")
        elif image.mode == "I" and not signed:  # 16-bit grey PNG (Pillow widens it to I)
            image = image.convert("I;16") if header.format == "PNG" else image
        elif image.mode == "La":  # grey with associated alpha: Pillow converts it to LA only (un-premultiplied)
            image = image.convert("LA")
        elif image.mode not in _PILLOW_MODES and image.mode != "I":  # CMYK, YCbCr, LAB (whose A is no alpha)
            image = image.convert("RGB")
        array = np.asarray(image)
    if image.mode == "I" and _tag_values(header.tags, 258, 16) == (16,):  # signed 16-bit TIFF or 16-bit PNG grey
        array = array.astype(np.int16 if signed else np.uint16)  # 32-bit samples stay int32: refused
    if array.dtype == np.bool_:
        array = array.astype(np.uint8) * np.uint8(255)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("="))
    if key is not None:
        full = np.iinfo(array.dtype).max
        alpha = np.where(array == key, 0, full).astype(array.dtype)
        return np.ascontiguousarray(np.dstack([array, array, array, alpha]))
    if array.ndim == 3 and array.shape[2] == 2:  # LA
        return np.ascontiguousarray(np.dstack([array[..., 0]] * 3 + [array[..., 1]]))
    if array.ndim == 3:
        return cv2.cvtColor(array, cv2.COLOR_RGB2BGR if array.shape[2] == 3 else cv2.COLOR_RGBA2BGRA)
    return np.ascontiguousarray(array)


def undo_associated_alpha(image: np.ndarray, header: Header | None) -> np.ndarray:
    """Straight alpha from a TIFF whose ExtraSamples say associated (premultiplied) alpha.

    Only 16-bit data reaches here (8-bit goes to Pillow); other images are returned as they are.
    """
    if header is None or header.format != "TIFF" or image.ndim != 3 or image.shape[2] != 4:
        return image
    extra = header.tags.get(338)
    extra = extra if isinstance(extra, tuple) else (extra,)
    if extra[:1] != (1,) or image.dtype != np.uint16:
        return image
    full = np.float64(np.iinfo(image.dtype).max)
    alpha = image[..., 3:].astype(np.float64)
    colour = np.divide(image[..., :3] * full, alpha, out=np.zeros(image.shape[:2] + (3,)), where=alpha > 0)
    out = image.copy()
    out[..., :3] = np.clip(np.rint(colour), 0, full).astype(image.dtype)
    return out


def drop_opaque_gif_alpha(image: np.ndarray, header: Header | None) -> np.ndarray:
    """BGR from the BGRA some OpenCV builds give for every GIF, where the file has no transparent colour
    (OpenCV 5.1's wheel already gives such a GIF three channels)."""
    if header is None or header.format != "GIF" or "transparency" in header.info or image.ndim != 3 \
            or image.shape[2] != 4:
        return image
    return np.ascontiguousarray(image[..., :3])
