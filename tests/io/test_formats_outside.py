"""Every file-format behaviour of :func:`cvfilters.io.writing.write`, checked from the outside
(issue 26, part 3): the file is read by a second reader (Pillow, tifffile, imagecodecs'
PNG decoder, or the raw bytes of the format), never only by cvfilters' own reader.

Covered: lossless round trips of each format and depth, the lossy formats within a stated
tolerance, the documented depth and channel conversions, and the metadata each format
holds (EXIF, ICC, XMP) by a round trip; formats that hold none are written without it.
HDR and EXR have no second reader here (Pillow reads neither): not covered.
"""

from __future__ import annotations

import io as bytes_io
import struct
import warnings
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms, features

from cvfilters.io import writing
from cvfilters.io.metadata import Metadata

tifffile = pytest.importorskip("tifffile", reason="tifffile is the second reader of TIFF")
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
XMP = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>'
MAKE = 0x010F


def noise(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.random(shape, dtype=np.float32)
    return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)


def shaped(channels: int) -> tuple[int, ...]:
    return (20, 36) if channels == 1 else (20, 36, channels)


def as_rgb(bgr: np.ndarray) -> np.ndarray:
    return bgr if bgr.ndim == 2 else bgr[..., [2, 1, 0, 3][: bgr.shape[2]]]


def write(path: Path, image: np.ndarray, **options: object) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", writing.DepthConversionWarning)
        return writing.write(path, image, **options)


def pillow_pixels(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        image.load()
        return np.asarray(image)


def png_header(path: Path) -> tuple[int, int]:
    """(bit depth, colour type) from the IHDR chunk."""
    data = path.read_bytes()
    assert data[12:16] == b"IHDR"
    return data[24], data[25]


# --- lossless formats, read by a second reader ---------------------------------------------


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_png_8_bit_pillow_reads_the_same_pixels(tmp_path, channels):
    image = noise(shaped(channels), np.uint8)
    out = write(tmp_path / "a.png", image)
    assert png_header(out) == (8, {1: 0, 3: 2, 4: 6}[channels])  # grey, RGB, RGBA
    np.testing.assert_array_equal(pillow_pixels(out), as_rgb(image))


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_png_16_bit_keeps_16_bits(tmp_path, channels):
    image = noise(shaped(channels), np.uint16)
    out = write(tmp_path / "a.png", image)
    assert png_header(out) == (16, {1: 0, 3: 2, 4: 6}[channels])
    imagecodecs = pytest.importorskip("imagecodecs", reason="imagecodecs decodes 16-bit colour PNG")
    np.testing.assert_array_equal(imagecodecs.png_decode(out.read_bytes()), as_rgb(image))
    if channels == 1:
        np.testing.assert_array_equal(pillow_pixels(out), image)  # mode I;16


def test_grey_alpha_png_is_written_as_colour_type_4(tmp_path):
    grey, alpha = noise((20, 36), np.uint8), noise((20, 36), np.uint8, seed=1)
    out = write(tmp_path / "la.png", np.dstack([grey, grey, grey, alpha]), metadata=Metadata(grey=True))
    assert png_header(out) == (8, 4)
    with Image.open(out) as second:
        assert second.mode == "LA"
        np.testing.assert_array_equal(np.asarray(second), np.dstack([grey, alpha]))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_tiff_keeps_depth_channels_and_straight_alpha(tmp_path, dtype, channels):
    pytest.importorskip("imagecodecs", reason="tifffile needs imagecodecs for OpenCV's LZW")
    image = noise(shaped(channels), dtype)
    out = write(tmp_path / "a.tif", image)
    with tifffile.TiffFile(out) as tif:
        page = tif.pages[0]
        np.testing.assert_array_equal(page.asarray(), as_rgb(image))
        assert page.dtype == image.dtype
    if channels == 4 and dtype == np.uint8:
        # OpenCV writes no ExtraSamples tag (tifffile sees none); Pillow takes the 4th sample as alpha
        with Image.open(out) as second:
            assert second.mode == "RGBA"
            np.testing.assert_array_equal(np.asarray(second), as_rgb(image))


@pytest.mark.parametrize(("ext", "channels", "mode"), [
    (".bmp", 1, "L"), (".bmp", 3, "RGB"), (".ppm", 3, "RGB"), (".pgm", 1, "L"), (".webp", 3, "RGB"),
    (".webp", 4, "RGBA"),
])
def test_other_lossless_formats_pillow_reads_the_same_pixels(tmp_path, ext, channels, mode):
    image = noise(shaped(channels), np.uint8)
    if channels == 4:
        image[..., 3] = np.maximum(image[..., 3], 1)  # libwebp may change the colour of transparent pixels
    options = {"lossless": True} if ext == ".webp" else {}  # WebP is lossy unless asked (issue 23)
    out = write(tmp_path / f"a{ext}", image, **options)
    with Image.open(out) as second:
        assert second.mode in (mode, "P" if mode == "L" else mode)
        np.testing.assert_array_equal(np.asarray(second.convert(mode)), as_rgb(image))


def test_pbm_is_thresholded_at_128(tmp_path):
    image = np.array([[0, 127, 128, 255, 64, 200, 1, 254]], np.uint8)
    with pytest.warns(writing.DepthConversionWarning, match="black"):
        out = writing.write(tmp_path / "a.pbm", image)
    with Image.open(out) as second:
        assert second.mode == "1"
        np.testing.assert_array_equal(np.asarray(second.convert("L")), np.where(image >= 128, 255, 0))


# --- lossy formats, within stated tolerances --------------------------------------------------


def smooth() -> np.ndarray:
    y, x = np.mgrid[0:48, 0:64]
    return np.dstack([(x * 3 + y) % 256, (y * 5) % 256, (x * 2 + y * 2) % 256]).astype(np.uint8)


def test_jpeg_pillow_reads_it_and_the_quality_reaches_the_encoder(tmp_path):
    image = smooth()
    out = write(tmp_path / "a.jpg", image)
    difference = np.abs(pillow_pixels(out).astype(int) - as_rgb(image))
    assert difference.mean() < 2.5  # default quality 95
    tables = {}
    for quality in (20, 95):
        with Image.open(write(tmp_path / f"q{quality}.jpg", image, quality=quality)) as second:
            tables[quality] = np.asarray(second.quantization[0])
    # IJG scaling: quality 20 multiplies the base table by 2.5, quality 95 by 0.1
    assert tables[20].mean() > 10 * tables[95].mean()


def test_lossy_webp_and_gif_pillow_reads_them(tmp_path):
    image = smooth()
    webp = write(tmp_path / "a.webp", image, quality=80)
    with Image.open(webp) as second:
        assert second.info.get("lossless") is not True
        assert np.abs(np.asarray(second.convert("RGB")).astype(int) - as_rgb(image)).mean() < 6
    gif = write(tmp_path / "a.gif", image)
    with Image.open(gif) as second:
        assert second.mode == "P" and len(second.getcolors(256) or []) <= 256
        assert np.abs(np.asarray(second.convert("RGB")).astype(int) - as_rgb(image)).mean() < 25  # quantized


@pytest.mark.skipif(not features.check("avif") or not cv2.haveImageWriter("x.avif"), reason="AVIF codecs")
def test_avif_pillow_reads_it(tmp_path):
    out = write(tmp_path / "a.avif", smooth(), quality=90)
    with Image.open(out) as second:
        assert np.abs(np.asarray(second.convert("RGB")).astype(int) - as_rgb(smooth())).mean() < 6


@pytest.mark.skipif(not cv2.haveImageWriter("x.jp2") or "JPEG2000" not in Image.registered_extensions().values(),
                    reason="JPEG 2000 codecs")
def test_jpeg_2000_pillow_reads_it(tmp_path):
    out = write(tmp_path / "a.jp2", smooth())
    with Image.open(out) as second:
        assert np.abs(np.asarray(second.convert("RGB")).astype(int) - as_rgb(smooth())).mean() < 3


# --- documented conversions ----------------------------------------------------------------


def test_uint16_into_jpeg_is_scaled_by_255_over_65535(tmp_path):
    image = np.zeros((16, 16, 3), np.uint16)
    image[:, :8] = 32896  # 128.0 in 8 bits
    image[:, 8:] = 65535
    pixels = pillow_pixels(write(tmp_path / "a.jpg", image)).astype(int)
    assert abs(pixels[8, 2, 0] - 128) <= 2 and abs(pixels[8, 13, 0] - 255) <= 2


def test_float_into_png_is_scaled_by_65535_and_clipped(tmp_path):
    floats = np.array([[-0.5, 0.0, 0.25, 0.5, 1.0, 1.5]], np.float32)
    out = write(tmp_path / "f.png", floats)
    assert png_header(out) == (16, 0)
    np.testing.assert_array_equal(pillow_pixels(out), [[0, 0, 16384, 32768, 65535, 65535]])


def test_uint16_into_bmp_is_divided_by_257(tmp_path):
    sixteen = np.array([[0, 128, 129, 257, 32767, 32768, 65407, 65535]], np.uint16)
    np.testing.assert_array_equal(pillow_pixels(write(tmp_path / "a.bmp", sixteen)),
                                  np.rint(sixteen / 257.0).astype(np.uint8))


def test_jpeg_drops_alpha_and_webp_stores_grey_as_colour(tmp_path):
    image = noise(shaped(4), np.uint8)
    with Image.open(write(tmp_path / "a.jpg", image)) as second:
        assert second.mode == "RGB"
    with Image.open(write(tmp_path / "g.webp", noise(shaped(1), np.uint8))) as second:
        assert second.mode == "RGB"


# --- metadata, format by format ----------------------------------------------------------------


def metadata() -> Metadata:
    exif = Image.Exif()
    exif[MAKE] = "OutsideCam"
    exif[0x0112] = 6
    return Metadata(exif=exif.tobytes(), icc=SRGB, xmp=XMP)


HOLDS = {  # extension -> what the format holds (EXIF, ICC, XMP)
    ".jpg": (True, True, True), ".png": (True, True, True), ".webp": (True, True, True),
    ".avif": (True, True, True), ".tif": (True, True, False), ".tiff": (True, True, False),
    ".bmp": (False, False, False), ".gif": (False, False, False), ".ppm": (False, False, False),
}


@pytest.mark.parametrize("ext", HOLDS)
def test_each_format_keeps_the_metadata_it_holds(tmp_path, ext):
    if ext == ".avif" and not (features.check("avif") and cv2.haveImageWriter("x.avif")):
        pytest.skip("AVIF codecs")
    out = write(tmp_path / f"a{ext}", smooth(), metadata=metadata())
    holds_exif, holds_icc, holds_xmp = HOLDS[ext]
    with Image.open(out) as second:
        exif = second.getexif()
        assert (exif.get(MAKE) == "OutsideCam") == holds_exif, ext
        if holds_exif:
            assert exif.get(0x0112, 1) == 1  # the pixels written are upright
        assert (second.info.get("icc_profile") == SRGB) == holds_icc, ext
        xmp = second.info.get("xmp", second.info.get("XML:com.adobe.xmp"))
        assert (xmp in (XMP, XMP.decode())) == holds_xmp, (ext, xmp)
    if ext in (".tif", ".tiff"):  # tifffile: the profile in tag 34675, the EXIF's IFD0 tags in the page's IFD
        with tifffile.TiffFile(out) as tif:
            tags = tif.pages[0].tags
            assert tags.valueof(34675) == SRGB
            assert (tags.valueof(MAKE), tags.valueof(0x0112)) == ("OutsideCam", 1)


def test_png_metadata_chunks_are_in_the_file(tmp_path):
    out = write(tmp_path / "a.png", smooth(), metadata=metadata())
    data, chunks, position = out.read_bytes(), [], 8
    while position < len(data):
        length = struct.unpack(">I", data[position : position + 4])[0]
        chunks.append(data[position + 4 : position + 8])
        position += 12 + length
    assert {b"eXIf", b"iCCP"} <= set(chunks) and {b"iTXt", b"tEXt"} & set(chunks)  # OpenCV writes XMP as tEXt
    assert chunks.index(b"iCCP") < chunks.index(b"IDAT")  # the PNG spec: before the image data
    with Image.open(bytes_io.BytesIO(data)) as second:
        assert second.getexif()[MAKE] == "OutsideCam"


def test_grey_alpha_png_16_bit_with_metadata_and_compression(tmp_path):
    grey, alpha = noise((20, 36), np.uint16), noise((20, 36), np.uint16, seed=1)
    image = np.dstack([grey, grey, grey, alpha])
    out = write(tmp_path / "la16.png", image, metadata=Metadata(grey=True, exif=metadata().exif, icc=SRGB,
                                                                     xmp=XMP))
    assert png_header(out) == (16, 4)
    with Image.open(out) as second:
        assert second.getexif()[MAKE] == "OutsideCam" and second.getexif()[0x0112] == 1
        assert second.info["icc_profile"] == SRGB
        assert second.info.get("XML:com.adobe.xmp", second.info.get("xmp")) in (XMP, XMP.decode())
    imagecodecs = pytest.importorskip("imagecodecs", reason="imagecodecs decodes 16-bit grey+alpha PNG")
    np.testing.assert_array_equal(imagecodecs.png_decode(out.read_bytes()), np.dstack([grey, alpha]))
    flat = np.dstack([np.full((64, 64), 9, np.uint8)] * 3 + [np.full((64, 64), 200, np.uint8)])
    sizes = [write(tmp_path / f"c{level}.png", flat, metadata=Metadata(grey=True), compression=level)
             .stat().st_size for level in (0, 9)]
    assert sizes[0] > 4 * sizes[1]  # level 0 stores, level 9 deflates


@pytest.mark.parametrize(("image", "mode"), [
    (noise((20, 36), np.uint16), "I;16"), (noise((20, 36), np.float32), "F"), (noise((20, 36, 3), np.uint8), "RGB"),
    (noise((20, 36, 4), np.uint8), "RGBA"),
])
def test_tiff_with_metadata_keeps_pixels_exif_and_icc(tmp_path, image, mode):
    out = write(tmp_path / "m.tif", image, metadata=metadata())
    with Image.open(out) as second:
        assert second.mode == mode and second.getexif()[MAKE] == "OutsideCam"
        assert second.info["icc_profile"] == SRGB
    with tifffile.TiffFile(out) as tif:
        np.testing.assert_array_equal(tif.pages[0].asarray(), as_rgb(image))
        assert tif.pages[0].tags.valueof(34675) == SRGB


def test_tiff_grey_alpha_with_metadata_is_stored_as_grey_alpha(tmp_path):
    grey, alpha = noise((20, 36), np.uint8), noise((20, 36), np.uint8, seed=1)
    out = write(tmp_path / "la.tif", np.dstack([grey, grey, grey, alpha]),
                metadata=Metadata(grey=True, icc=None, exif=metadata().exif))
    with Image.open(out) as second:
        assert second.mode == "LA"
        np.testing.assert_array_equal(np.asarray(second), np.dstack([grey, alpha]))


# --- the encoders cvfilters writes itself (io/encoders.py), from the outside --------------------


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, payload) of every chunk, each CRC checked."""
    chunks, position = [], 8
    while position < len(data):
        length = struct.unpack(">I", data[position : position + 4])[0]
        kind, payload = data[position + 4 : position + 8], data[position + 8 : position + 8 + length]
        crc = data[position + 8 + length : position + 12 + length]
        assert struct.unpack(">I", crc)[0] == zlib.crc32(kind + payload)
        chunks.append((kind, payload))
        position += 12 + length
    return chunks


@pytest.mark.parametrize("ext", [".jpg", ".webp", ".tif", ".tiff", ".png"])
def test_grey_looking_colour_images_keep_their_format_and_colour(tmp_path, ext):
    # B = G = R in 3 channels, and BGRA grey without the source's grey flag: never a grey+alpha PNG
    grey = noise((20, 36), np.uint8)
    for image, flag in ((np.dstack([grey] * 3), True), (np.dstack([grey] * 3 + [grey[::-1]]), False)):
        if ext == ".jpg" and image.shape[2] == 4:
            continue
        out = write(tmp_path / f"a{image.shape[2]}{ext}", image, metadata=Metadata(grey=flag, icc=SRGB))
        with Image.open(out) as second:
            assert second.format == {".jpg": "JPEG", ".webp": "WEBP", ".png": "PNG"}.get(ext, "TIFF")
            assert second.mode in ("RGB", "RGBA", "L", "LA")
            if ext != ".jpg":
                want = {3: "RGB", 4: "RGBA"}[image.shape[2]] if not flag else second.mode
                assert second.mode == want, (ext, image.shape)


@pytest.mark.parametrize("ext", [".png", ".tif"])
@pytest.mark.parametrize("equal", [(0, 1), (0, 2), (1, 2)])
def test_only_b_g_and_r_all_equal_make_a_grey_image(tmp_path, ext, equal):
    image = noise((20, 36, 4), np.uint8)
    image[..., equal[1]] = image[..., equal[0]]  # two channels equal, the third not
    out = write(tmp_path / f"a{ext}", image, metadata=Metadata(grey=True, icc=SRGB))
    with Image.open(out) as second:
        assert second.mode == "RGBA"
        np.testing.assert_array_equal(np.asarray(second), as_rgb(image))


def test_grey_alpha_png_chunks_and_its_documented_default_compression(tmp_path):
    from cvfilters.io import encoders

    grey, alpha = noise((20, 36), np.uint8), noise((20, 36), np.uint8, seed=1)
    image = np.dstack([grey, grey, grey, alpha])
    exif = b"Exif\0\0" + metadata().exif.removeprefix(b"Exif\0\0")  # with the header: stored without it
    data = encoders.grey_alpha_png(image, exif=exif, icc=SRGB, xmp=XMP)
    chunks = png_chunks(data)
    assert [kind for kind, _ in chunks] == [b"IHDR", b"iCCP", b"eXIf", b"iTXt", b"IDAT", b"IEND"]
    assert chunks[-1] == (b"IEND", b"")
    assert dict(chunks)[b"eXIf"][:2] in (b"MM", b"II")
    assert data == encoders.grey_alpha_png(image, exif=exif, icc=SRGB, xmp=XMP, compression=6)  # "default 6"
    with Image.open(bytes_io.BytesIO(data)) as second:
        assert second.getexif()[MAKE] == "OutsideCam"


def test_tiff_with_metadata_called_directly(tmp_path):
    from cvfilters.io import encoders

    grey = noise((20, 36), np.uint8)
    image = np.dstack([grey, grey, grey, grey[::-1]])
    exif = b"Exif\0\0" + metadata().exif.removeprefix(b"Exif\0\0")
    data = encoders.tiff_with_metadata(image, exif=exif, icc=None)  # grey defaults to False: RGBA
    with Image.open(bytes_io.BytesIO(data)) as second:
        assert second.mode == "RGBA" and second.getexif()[MAKE] == "OutsideCam"


def test_a_tiff_pillow_cannot_hold_is_written_without_metadata_and_says_so(tmp_path):
    image = (noise((20, 36), np.uint16).astype(np.int32) - 32768).astype(np.int16)
    with pytest.warns(writing.DepthConversionWarning, match="not kept"):
        out = writing.write(tmp_path / "s.tif", image, metadata=metadata())
    pytest.importorskip("imagecodecs", reason="tifffile needs imagecodecs for OpenCV's LZW")
    with tifffile.TiffFile(out) as tif:
        assert tif.pages[0].dtype == np.int16
        np.testing.assert_array_equal(tif.pages[0].asarray(), image)
