"""Header reads of plain JPEG and PNG files without Pillow, checked against Pillow's own parse (cvfilters.io.sniff)."""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms

from cvfilters.io import images as cio
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
        assert cio.read_with_metadata(path)[1].icc == icc, fmt
