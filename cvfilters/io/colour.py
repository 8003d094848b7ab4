"""Colour spaces of image files, and conversions between them through LittleCMS.

A file says what its values mean in one of three ways, read here in this order: an
embedded ICC profile, a CICP tag (PNG ``cICP``: primaries, transfer, matrix), or the EXIF
``ColorSpace`` tag (1 is sRGB; 0xFFFF "uncalibrated" with the interoperability index
``R03`` is Adobe RGB, as cameras write it). A file that says nothing is taken as sRGB, as
browsers and every photo tool take it.

:func:`convert` maps an image from one profile to another with a rendering intent;
:func:`to_colourspace` maps an image from its file's space (named by its
:class:`~cvfilters.io.metadata.Metadata`), embedding the output profile in the metadata, as
reads, writes and batches ask. 8-bit images go through Pillow's
``ImageCms``; 16-bit and float32 images through LittleCMS at their own precision with
imagecodecs' binding (``pip install cvfilters[colour]``), float values outside 0..1 kept
(unbounded mode). Both bindings are LittleCMS 2; the tests check one against the other.

:func:`transfer_of` gives the transfer function of a profile (its neutral axis, sampled
through LittleCMS into XYZ) for linear-light runs.
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from cvfilters.core.errors import UsageError
from cvfilters.core.transfer import SRGB, Transfer, tabulated
from cvfilters.io.metadata import Metadata

INTENTS = {"perceptual": 0, "relative": 1, "saturation": 2, "absolute": 3}
Intent = Literal["perceptual", "relative", "saturation", "absolute"]
ColourTarget = str | os.PathLike[str] | bytes
MAX_PROFILE_BYTES = 16 * 1024 * 1024
_EXIF_IFD, _COLOR_SPACE, _INTEROP_IFD, _INTEROP_INDEX = 0x8769, 0xA001, 0xA005, 0x0001
_D65 = [0.3127, 0.3290, 1.0]
_ADOBE_PRIMARIES = [0.64, 0.33, 1.0, 0.21, 0.71, 1.0, 0.15, 0.06, 1.0]
_ADOBE_GAMMA = 563 / 256  # 2.19921875, Adobe RGB (1998) section 4.3.1.2
_CICP_PRIMARIES = {1: "BT.709/sRGB", 9: "BT.2020", 11: "DCI-P3", 12: "Display P3"}
_CICP_TRANSFERS = {1: "BT.709", 6: "BT.709", 8: "linear", 13: "sRGB", 14: "BT.2020", 15: "BT.2020", 16: "PQ",
                   18: "HLG"}


@dataclass(frozen=True)
class ColourSpace:
    """What a file's values mean: a name, where it was read from, and the ICC profile to convert with.

    ``source`` is ``icc``, ``cicp``, ``exif`` or ``assumed``; ``icc`` is None where the
    space is sRGB by default or cannot be converted from (a CICP space LittleCMS has no
    profile for, such as PQ).
    """

    name: str
    source: str
    icc: bytes | None = None

    @property
    def is_srgb(self) -> bool:
        return self.icc is None and self.name.startswith("sRGB")


def colourspace_of(icc: bytes | None, exif: bytes | None = None, data: bytes | None = None) -> ColourSpace:
    """The colour space of a file: its ICC profile, CICP (from the file's bytes ``data``), EXIF, or sRGB."""
    if icc:
        try:
            return ColourSpace(_description(icc), "icc", icc)
        except UsageError:  # kept as it came (``keep``); converting from it is refused by the conversion
            return ColourSpace("an ICC profile LittleCMS cannot read", "icc", icc)
    cicp = _png_cicp(data) if data else None
    if cicp is not None:
        primaries, transfer = cicp[0], cicp[1]
        name = f"{_CICP_PRIMARIES.get(primaries, f'primaries {primaries}')}, " \
               f"{_CICP_TRANSFERS.get(transfer, f'transfer {transfer}')} (CICP {primaries}/{transfer}/{cicp[2]})"
        if primaries == 1 and transfer == 13:
            return ColourSpace("sRGB" + name[len("BT.709/sRGB, sRGB"):], "cicp")
        return ColourSpace(name, "cicp")
    if exif:
        value, interop = _exif_colour_space(exif)
        if value == 1:
            return ColourSpace("sRGB (EXIF ColorSpace 1)", "exif")
        if value == 0xFFFF and interop == "R03":
            return ColourSpace("Adobe RGB (EXIF uncalibrated, interoperability R03)", "exif", _adobe_rgb())
    return ColourSpace("sRGB (assumed: the file names no colour space)", "assumed")


def profile_bytes(target: ColourTarget) -> bytes:
    """The ICC profile ``target`` names: ``srgb`` (LittleCMS's built-in sRGB), ``adobe-rgb``
    (Adobe RGB (1998) built from its specification), a profile's bytes, or the path of an
    ``.icc``/``.icm`` file.

    Raises
    ------
    UsageError
        An unreadable file, or bytes that are not an ICC profile.
    """
    if isinstance(target, bytes):
        data = target
    elif str(target).lower() == "srgb":
        return _srgb()
    elif str(target).lower() in ("adobe-rgb", "adobergb", "adobe_rgb"):
        return _adobe_rgb()
    else:
        try:
            if os.path.getsize(target) > MAX_PROFILE_BYTES:
                raise UsageError(f"colorspace: {os.fspath(target)}: larger than {MAX_PROFILE_BYTES >> 20} MiB")
            with open(target, "rb") as file:
                data = file.read()
        except OSError as exc:
            raise UsageError(f"colorspace: {os.fspath(target)}: cannot read the profile "
                             f"({exc.strerror or exc}); use keep, srgb, adobe-rgb or an ICC file") from None
    _description(data, what=f"colorspace: {target if not isinstance(target, bytes) else 'profile'}")
    return data


def convert(image: np.ndarray, source: ColourSpace | bytes | None, target: ColourTarget,
            intent: Intent = "relative") -> np.ndarray:
    """``image`` (BGR(A) or grey; uint8, uint16 or float32) converted from ``source`` to ``target``.

    Parameters
    ----------
    image : numpy.ndarray
        Alpha passes through. A grey image is returned unchanged (a grey profile's
        neutral axis has no hue to map).
    source : ColourSpace, bytes or None
        The image's space (None and spaces without a profile: sRGB).
    target : str, path or bytes
        As for :func:`profile_bytes`.
    intent : {"relative", "perceptual", "saturation", "absolute"}
        LittleCMS's rendering intent (matrix profiles treat perceptual and saturation as
        relative colorimetric).

    Raises
    ------
    UsageError
        A bad intent or profile (the source's that LittleCMS cannot read, or one of the two not
        RGB); 16-bit or float32 data without imagecodecs installed.
    """
    if intent not in INTENTS:
        raise UsageError(f"intent {intent!r} is not one of {', '.join(INTENTS)}")
    src = source.icc if isinstance(source, ColourSpace) else source
    src_bytes, dst_bytes = src or _srgb(), profile_bytes(target)
    if image.ndim == 2 or image.shape[2] == 1 or _same_profile(src_bytes, dst_bytes):
        return image
    keep = "keep its colours (colorspace keep)"
    try:
        src_name = _description(src_bytes, what="the image's ICC profile cannot be read by LittleCMS")
    except UsageError as exc:
        raise UsageError(f"colorspace: {exc}; {keep}") from None
    if _header_space(src_bytes) != b"RGB ":
        raise UsageError(f"colorspace: the image's ICC profile ({src_name}) is {_space(src_bytes)}, not RGB; {keep}")
    if _header_space(dst_bytes) != b"RGB ":
        raise UsageError(f"colorspace: the target profile ({_description(dst_bytes)}) is {_space(dst_bytes)}, "
                         "not RGB: a colour image needs an RGB one")
    colour, alpha = image[..., 2::-1], image[..., 3:]
    rgb = np.ascontiguousarray(colour)
    if image.dtype == np.uint8:
        out = _pillow_transform(rgb, src_bytes, dst_bytes, INTENTS[intent])
    else:
        out = _lcms_transform(rgb, src_bytes, dst_bytes, INTENTS[intent])
    return np.ascontiguousarray(np.concatenate([out[..., ::-1], alpha], axis=2) if alpha.size else out[..., ::-1])


def to_colourspace(image: np.ndarray, metadata: Metadata, target: ColourTarget | None,
                   intent: Intent = "relative", data: bytes | None = None) -> tuple[np.ndarray, Metadata]:
    """``image`` converted from its file's colour space into ``target``, with metadata embedding
    the target's profile; ``keep`` or None: unchanged.

    ``data`` (the file's bytes) lets a PNG's CICP tag name the source space. A grey image
    (grey+alpha too) is left as it is with its metadata: its values are not converted, and an RGB
    profile would not describe them (libpng refuses one in a grey PNG).
    """
    if target is None or (isinstance(target, str) and target.lower() == "keep"):
        return image, metadata
    space = colourspace_of(metadata.icc, metadata.exif, data)
    if space.icc is None and not space.is_srgb:
        raise UsageError(f"colorspace: the image's space ({space.name}) has no ICC profile to convert from; "
                         "keep it (colorspace keep)")
    dst = profile_bytes(target)
    if image.ndim == 2 or image.shape[2] == 1 or metadata.grey:
        return image, metadata
    return convert(image, space, dst, intent), replace(metadata, icc=dst)


def transfer_of(icc: bytes | None) -> Transfer:
    """The transfer function of an RGB or grey profile: the light (Y) of its neutral axis, sampled
    through LittleCMS (4096 steps, imagecodecs); sRGB for None, LittleCMS's sRGB profile (made at any
    moment), or without imagecodecs.

    Raises
    ------
    UsageError
        A profile LittleCMS cannot read, or one of other colours (CMYK, Lab...).
    """
    if not icc or _same_profile(icc, _srgb()):
        return SRGB
    try:
        import imagecodecs
    except ImportError:
        return SRGB
    return _tabulated_transfer(icc, imagecodecs)


@lru_cache(maxsize=8)
def _tabulated_transfer(icc: bytes, imagecodecs: Any) -> Transfer:
    name = _description(icc, what="linear light: the image's colour profile")
    kind = _header_space(icc)
    if kind not in (b"RGB ", b"GRAY"):
        raise UsageError(f"linear light: the image's colour profile ({name}) is {_space(icc)}: "
                         "only RGB and grey profiles give a transfer function")
    ramp = np.linspace(0.0, 1.0, 4096, dtype=np.float32)
    grey = ramp[None, :] if kind == b"GRAY" else np.ascontiguousarray(np.repeat(ramp[None, :, None], 3, axis=2))
    xyz = imagecodecs.cms_transform(grey, icc, imagecodecs.cms_profile("xyz"), colorspace="gray" if kind == b"GRAY"
                                    else "rgb", outcolorspace="xyz", outdtype="f4")
    light = xyz[0, :, 1].astype(np.float64)
    light = np.maximum.accumulate((light - light[0]) / (light[-1] - light[0]))
    return tabulated(name, ramp, light)


def _pillow_transform(rgb: np.ndarray, src: bytes, dst: bytes, intent: int) -> np.ndarray:
    from PIL import Image

    transform = _pillow_cached(src, dst, intent)
    return np.asarray(transform.apply(Image.fromarray(rgb, "RGB")))


@lru_cache(maxsize=16)
def _pillow_cached(src: bytes, dst: bytes, intent: int) -> Any:
    from PIL import ImageCms

    return ImageCms.buildTransform(ImageCms.ImageCmsProfile(io.BytesIO(src)), ImageCms.ImageCmsProfile(io.BytesIO(dst)),
                                   "RGB", "RGB", renderingIntent=ImageCms.Intent(intent))


def _lcms_transform(rgb: np.ndarray, src: bytes, dst: bytes, intent: int) -> np.ndarray:
    try:
        import imagecodecs
    except ImportError:
        raise UsageError(f"colorspace: converting {rgb.dtype} images needs imagecodecs (LittleCMS at 16-bit and "
                         "float precision): pip install 'cvfilters[colour]'") from None
    if rgb.dtype == np.uint16:  # through float: LittleCMS's 16-bit tables are coarse near black on pure gammas
        unit = imagecodecs.cms_transform(rgb.astype(np.float32) / np.float32(65535), src, dst, colorspace="rgb",
                                         outcolorspace="rgb", intent=intent)
        return np.clip(np.rint(unit * np.float32(65535)), 0, 65535).astype(np.uint16)
    out = imagecodecs.cms_transform(rgb, src, dst, colorspace="rgb", outcolorspace="rgb", intent=intent)
    return np.asarray(out, rgb.dtype)


def _same_profile(a: bytes, b: bytes) -> bool:
    """Whether two ICC profiles are the same but for their header's creation date (bytes 24-35) and
    profile ID (84-99, an MD5 that covers the date): sRGB built by LittleCMS at two moments."""
    def blanked(icc: bytes) -> bytes:
        return icc[:24] + bytes(12) + icc[36:84] + bytes(16) + icc[100:] if len(icc) >= 128 else icc

    return a == b or blanked(a) == blanked(b)


@lru_cache(maxsize=1)
def _srgb() -> bytes:
    from PIL import ImageCms

    return bytes(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())


@lru_cache(maxsize=1)
def _adobe_rgb() -> bytes:
    try:
        import imagecodecs
    except ImportError:
        raise UsageError("colorspace: building the Adobe RGB profile needs imagecodecs: "
                         "pip install 'cvfilters[colour]'") from None
    return bytes(imagecodecs.cms_profile("rgb", whitepoint=_D65, primaries=_ADOBE_PRIMARIES, gamma=_ADOBE_GAMMA))


def _description(icc: bytes, what: str = "profile") -> str:
    from PIL import ImageCms

    try:
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"{what}: not an ICC profile ({exc})") from None
    return ImageCms.getProfileDescription(profile).strip() or "ICC profile"  # Pillow adds a newline


def _header_space(icc: bytes) -> bytes:
    """The data colour space of a profile's header (ICC.1:2010 7.2.6): ``b"RGB "``, ``b"GRAY"``, ``b"CMYK"``..."""
    return icc[16:20]


def _space(icc: bytes) -> str:
    """The data colour space a profile's header names (``GRAY``, ``CMYK``, ``Lab``...), for messages."""
    return f"a {_header_space(icc).decode('latin-1').strip()} profile"


def _png_cicp(data: bytes) -> tuple[int, int, int, int] | None:
    """The four CICP bytes of a PNG ``cICP`` chunk (before the image data), or None."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"cICP" and length == 4 and pos + 12 <= len(data):
            return tuple(data[pos + 8:pos + 12])  # type: ignore[return-value]
        if kind in (b"IDAT", b"IEND"):
            return None
        pos += 12 + length
    return None


def _exif_colour_space(exif: bytes) -> tuple[int | None, str | None]:
    """EXIF ``ColorSpace`` and the interoperability index (``R98`` sRGB, ``R03`` Adobe RGB) of an EXIF block."""
    from PIL import Image

    parsed = Image.Exif()
    try:
        parsed.load(b"Exif\0\0" + exif.removeprefix(b"Exif\0\0"))
        sub = parsed.get_ifd(_EXIF_IFD)
        interop = parsed.get_ifd(_INTEROP_IFD)
    except (SyntaxError, ValueError, struct.error, KeyError, TypeError):
        return None, None
    index = interop.get(_INTEROP_INDEX)
    return sub.get(_COLOR_SPACE), index if isinstance(index, str) else None
