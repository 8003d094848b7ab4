"""What a file says about its colours (issue #27): ``colourspace_of`` read whole, and the PNG
``cICP`` search on files and chunk sequences written here by hand.

References: the ICC description read with Pillow's ``ImageCms`` directly; the CICP code points of
ITU-T H.273 (1 BT.709, 9 BT.2020, 12 Display P3; transfer 13 sRGB, 16 PQ); EXIF 2.3's
``ColorSpace`` (1 sRGB, 0xFFFF uncalibrated) and DCF's interoperability index ``R03`` (Adobe
RGB); the PNG chunk layout (a 4-byte unsigned length, the type, the data, a CRC-32) written with
``struct`` and ``zlib``; conversions compared with LittleCMS through ``ImageCms``.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageCms

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import colour
from cvfilters.io.colour import ColourSpace
from cvfilters.run import processing
from cvfilters.run.tasks import Options, Task
from tests.io.test_colour import exif_block

imagecodecs = pytest.importorskip("imagecodecs", reason="the profiles here are built with imagecodecs")

RGB = np.random.default_rng(2727).integers(0, 256, (16, 24, 3), dtype=np.uint8)
WIDE = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.329, 1.0], gamma=2.2,
                               primaries=[0.64, 0.33, 1, 0.21, 0.71, 1, 0.15, 0.06, 1])
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
# Adobe RGB (1998) from its specification (D65, these primaries, gamma 563/256)
ADOBE = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.3290, 1.0], gamma=2.19921875,
                                primaries=[0.64, 0.33, 1, 0.21, 0.71, 1, 0.15, 0.06, 1])
ASSUMED = ColourSpace("sRGB (assumed: the file names no colour space)", "assumed")


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_parts() -> tuple[bytes, bytes]:
    """A PNG of ``RGB`` split after its IHDR: the signature and IHDR (33 bytes), then the rest."""
    buffer = io.BytesIO()
    Image.fromarray(RGB).save(buffer, format="PNG")
    data = buffer.getvalue()
    assert data[12:16] == b"IHDR" and data[37:41] != b"cICP"
    return data[:33], data[33:]


def cicp(primaries: int, transfer: int, matrix: int = 0, full_range: int = 1) -> bytes:
    return chunk(b"cICP", bytes([primaries, transfer, matrix, full_range]))


def space_of_png(*chunks: bytes, after_idat: bytes = b"") -> ColourSpace:
    head, rest = png_parts()
    return colour.colourspace_of(None, None, head + b"".join(chunks) + rest[:-12] + after_idat + rest[-12:])


def reference(rgb: np.ndarray, src: bytes, dst: bytes) -> np.ndarray:
    transform = ImageCms.buildTransform(ImageCms.ImageCmsProfile(io.BytesIO(src)),
                                        ImageCms.ImageCmsProfile(io.BytesIO(dst)), "RGB", "RGB")
    return np.asarray(ImageCms.applyTransform(Image.fromarray(rgb), transform)).astype(np.int64)


def test_an_icc_profile_is_named_by_its_description() -> None:
    described = str(ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(WIDE)))).strip()
    assert described == "RGB built-in"
    assert colour.colourspace_of(WIDE) == ColourSpace(described, "icc", WIDE)


def test_a_profile_without_a_description_is_named_icc_profile() -> None:
    # the tag table's 'desc' entry renamed (a private signature): LittleCMS reads the profile, with no description
    at = WIDE.index(b"desc", 128)
    nameless = WIDE[:at] + b"zzzz" + WIDE[at + 4:]
    assert ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(nameless))).strip() == ""
    assert colour.colourspace_of(nameless) == ColourSpace("ICC profile", "icc", nameless)


def test_a_profile_littlecms_cannot_read_is_kept_and_refused_for_conversion() -> None:
    junk = b"not a profile" * 16
    assert colour.colourspace_of(junk) == ColourSpace("an ICC profile LittleCMS cannot read", "icc", junk)
    for image in (np.ascontiguousarray(RGB[..., ::-1]), RGB.astype(np.float32) / 255):
        with pytest.raises(cvf.UsageError) as refused:
            colour.convert(image, colour.colourspace_of(junk), "srgb")
        message = str(refused.value)
        assert message.startswith("colorspace: the image's ICC profile cannot be read by LittleCMS: "
                                  "not an ICC profile (")  # then Pillow's reason
        assert message.endswith("); keep its colours (colorspace keep)")


@pytest.mark.parametrize(("primaries", "transfer", "expected"), [
    (12, 13, "Display P3, sRGB (CICP 12/13/0)"),
    (9, 16, "BT.2020, PQ (CICP 9/16/0)"),
    (9, 18, "BT.2020, HLG (CICP 9/18/0)"),
    (5, 13, "primaries 5, sRGB (CICP 5/13/0)"),  # H.273's BT.601 625-line: no name here
    (11, 2, "DCI-P3, transfer 2 (CICP 11/2/0)"),  # 2: unspecified
])
def test_a_cicp_tag_is_named_by_its_code_points(primaries: int, transfer: int, expected: str) -> None:
    space = space_of_png(cicp(primaries, transfer))
    assert space == ColourSpace(expected, "cicp")
    assert not space.is_srgb


def test_a_cicp_srgb_tag_is_srgb() -> None:
    space = space_of_png(cicp(1, 13))
    assert space == ColourSpace("sRGB (CICP 1/13/0)", "cicp") and space.is_srgb


def test_cicp_is_read_only_from_a_whole_cicp_chunk_before_the_image_data() -> None:
    gamma = chunk(b"gAMA", struct.pack(">I", 45455))  # 4 bytes too, but not CICP
    assert space_of_png(gamma) == ASSUMED
    assert space_of_png(gamma, cicp(12, 13)).name == "Display P3, sRGB (CICP 12/13/0)"
    assert space_of_png(after_idat=cicp(12, 13)) == ASSUMED  # PNG: cICP must precede the first IDAT
    head, rest = png_parts()
    whole = head + cicp(12, 16) + rest
    for cut in range(len(whole)):  # the file's head only: the four bytes must be there (the CRC need not)
        expected = "cicp" if cut >= 33 + 8 + 4 else "assumed"
        assert colour.colourspace_of(None, None, whole[:cut]).source == expected, cut


def test_a_chunk_length_is_unsigned() -> None:
    # A corrupt length of 2**32 - n ends the search (it passes the end of the file); read as a signed
    # number it would step back n bytes, here into a text chunk's words, which spell a cICP chunk.
    fake = cicp(9, 16)
    text = chunk(b"tEXt", b"Comment\0" + fake)
    corrupt_at = 33 + len(text)
    fake_at = 33 + 8 + len(b"Comment\0")
    length = 2 ** 32 - (corrupt_at + 12 - fake_at)
    corrupt = struct.pack(">I", length) + b"zzZz"
    assert space_of_png(text, corrupt) == ASSUMED


@pytest.mark.parametrize("prefix", [b"", b"Exif\0\0"])  # as OpenCV gives the block, and as JPEG's APP1 holds it
def test_exif_names_srgb_and_adobe_rgb(prefix: bytes) -> None:
    def space(value: int, interop: bytes) -> ColourSpace:
        return colour.colourspace_of(None, prefix + exif_block(value, interop))

    assert space(1, b"R98\0") == ColourSpace("sRGB (EXIF ColorSpace 1)", "exif")
    adobe = space(0xFFFF, b"R03\0")
    assert (adobe.name, adobe.source) == ("Adobe RGB (EXIF uncalibrated, interoperability R03)", "exif")
    assert adobe.icc is not None and not adobe.is_srgb
    assert space(0xFFFF, b"R98\0") == ASSUMED  # uncalibrated, but not Adobe RGB: nothing known
    assert space(2, b"R03\0") == ASSUMED  # not an EXIF ColorSpace value


def test_a_file_that_names_nothing_is_assumed_srgb() -> None:
    assert colour.colourspace_of(None) == ASSUMED and ASSUMED.is_srgb
    assert colour.colourspace_of(b"", b"", b"") == ASSUMED
    assert space_of_png() == ASSUMED


def test_untagged_and_exif_adobe_files_convert_from_their_spaces(tmp_path: Path) -> None:
    plain = tmp_path / "plain.png"
    Image.fromarray(RGB).save(plain)
    out = cvf.read(plain, colorspace="adobe-rgb", channel_order="rgb")
    assert np.abs(out - reference(RGB, SRGB, ADOBE)).max() <= 1  # 1 level: LittleCMS's 8-bit rounding
    camera = tmp_path / "camera.jpg"
    Image.fromarray(RGB).save(camera, quality=95, exif=b"Exif\0\0" + exif_block(0xFFFF, b"R03\0"))
    decoded = cvf.read(camera, channel_order="rgb")
    out = cvf.read(camera, colorspace="srgb", channel_order="rgb")
    assert np.abs(out - reference(decoded, ADOBE, SRGB)).max() <= 1
    assert np.abs(out - decoded.astype(np.int64)).max() > 20  # converted, not left as it was


def test_a_grey_file_keeps_its_own_profile_when_converted(tmp_path: Path) -> None:
    # grey values are not converted, so an RGB profile must not be embedded with them: libpng
    # refuses one in a grey PNG ("RGB color space not permitted on grayscale PNG")
    grey = RGB[..., 1]
    gamma = imagecodecs.cms_profile("gray", gamma=2.2)
    for profile in (None, gamma):
        path = tmp_path / f"grey{profile is None}.png"
        Image.fromarray(grey).save(path, icc_profile=profile)
        image, metadata = cvf.read_with_metadata(path, colorspace="adobe-rgb")
        np.testing.assert_array_equal(image, grey)
        assert metadata.icc == profile
    written = tmp_path / "written.png"
    cvf.write(written, grey, colorspace="srgb")
    with Image.open(written) as result:
        assert result.mode == "L" and "icc_profile" not in result.info
    pages, out = tmp_path / "pages.tif", tmp_path / "out.tif"
    Image.fromarray(grey).save(pages, save_all=True, append_images=[Image.fromarray(grey[::-1])], icc_profile=gamma)
    outcome = processing.process(Task(pages, out), Options(Pipeline.parse("invert").to_dict(),
                                                           colorspace="srgb", backend="cpu"))
    assert outcome.status == "done", outcome
    with Image.open(out) as result:
        assert (result.mode, result.n_frames, result.info.get("icc_profile")) == ("L", 2, gamma)
        np.testing.assert_array_equal(np.asarray(result), 255 - grey)
