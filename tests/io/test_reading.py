"""cvfilters.io.reading, from the survivors of io/images' mutation run (docs/mutation.md; io/images
was split into io/reading and io/writing): each test checks a behaviour against an independent
reference (the file's own header bytes, Pillow, a numpy formula)."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import numpy as np
import pytest

from cvfilters.core.errors import ImageTooLargeError, TruncatedImageError, UnsupportedDepthError
from cvfilters.io import reading, writing
from tests import makefiles

HDR_HEADER = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 10 +X 20\n"


def test_probe_sizes_text_headers_without_decoding(tmp_path: Path) -> None:
    path = tmp_path / "cut.hdr"
    path.write_bytes(HDR_HEADER + b"\x02\x02")  # the header, then 2 bytes of the 200 pixels: a decode fails
    assert reading.probe(path) == (20, 10)
    with pytest.raises(TruncatedImageError):
        reading.read(path)


def test_probe_names_the_file_of_a_broken_text_header(tmp_path: Path) -> None:
    path = tmp_path / "broken.hdr"
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\nnonsense\n")
    with pytest.raises(TruncatedImageError) as caught:
        reading.probe(path)
    assert str(caught.value) == f"{path}: Radiance HDR header without a resolution line (such as -Y 480 +X 640)"


def test_probe_of_a_decoded_format_applies_no_pixel_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.exr"
    writing.write(path, np.zeros((10, 20, 3), np.float32))
    monkeypatch.setenv("CVFILTERS_MAX_PIXELS", "100")  # below 20 * 10: read refuses it, probe does not
    assert reading.probe(path) == (20, 10)
    with pytest.raises(ImageTooLargeError):
        reading.read(path)


def _noise(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("icc_extra", [None, 0, 2])
def test_a_lossless_webp_source_is_written_back_lossless(tmp_path: Path, icc_extra: int | None) -> None:
    from PIL import Image, ImageCms

    rgb = _noise((12, 10, 3))
    options: dict[str, object] = {"lossless": True}
    if icc_extra is not None:  # an extended WebP: VP8X, an ICCP chunk of odd size (then one pad byte), then VP8L
        icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
        icc = icc if len(icc) % 2 else icc + b"\0"
        options["icc_profile"] = icc + b"\0" * icc_extra  # two sizes: the VP8L chunk at two alignments
    source = tmp_path / "src.webp"
    Image.fromarray(rgb).save(source, "WEBP", **options)
    assert makefiles.webp_chunks(source.read_bytes())[-1] == b"VP8L"
    image, metadata = reading.read_with_metadata(source)
    assert metadata.lossless is True
    out = writing.write(tmp_path / "out.webp", image, metadata=metadata)
    assert b"VP8L" in makefiles.webp_chunks(out.read_bytes())
    with Image.open(out) as back:  # a second reader: the pixels come back exactly
        np.testing.assert_array_equal(np.asarray(back.convert("RGB")), rgb)


def test_a_lossy_webp_source_is_not_taken_for_lossless(tmp_path: Path) -> None:
    from PIL import Image

    source = tmp_path / "lossy.webp"
    Image.fromarray(_noise((12, 10, 3))).save(source, "WEBP", quality=80)
    assert makefiles.webp_chunks(source.read_bytes()) == [b"VP8 "]
    assert reading.read_with_metadata(source)[1].lossless is False


def test_a_webp_header_too_short_for_opencv_is_truncated_not_foreign(tmp_path: Path) -> None:
    path = tmp_path / "cut.bin"  # no extension to go by: 16 bytes, fewer than OpenCV needs to recognise WebP
    path.write_bytes(b"RIFF\x10\x00\x00\x00WEBPVP8 ")
    with pytest.raises(TruncatedImageError) as caught:
        reading.read(path)
    assert str(caught.value) == f"{path}: image data is truncated or corrupt"


def test_an_unsupported_sample_layout_is_named_in_full(tmp_path: Path) -> None:
    import tifffile

    path = tmp_path / "five.tif"
    tifffile.imwrite(path, np.zeros((4, 4, 5), np.uint8), photometric="minisblack", planarconfig="contig")
    with pytest.raises(UnsupportedDepthError) as caught:
        reading.read(path)
    assert str(caught.value) == (f"{path}: unsupported pixel layout: 5 samples per pixel (cvfilters reads 1 to 4 "
                                 "samples of uint8, uint16, int16, float32 or float64)")


def test_what_the_decoder_printed_is_the_detail_of_the_error(tmp_path: Path) -> None:
    from PIL import Image

    buffer = BytesIO()
    Image.fromarray(_noise((16, 16, 3))).save(buffer, "PNG")
    path = makefiles.damaged_png(tmp_path / "damaged.png", buffer.getvalue())
    with pytest.raises(TruncatedImageError) as caught:
        reading.read(path)
    assert str(caught.value) == (f"{path}: image data is truncated or corrupt "
                                 "(libpng error: IDAT: invalid stored block lengths)")


def test_a_jpeg_cut_right_after_a_header_segment_is_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.jpg"  # SOI and a complete 16-byte APP0 segment, then nothing
    path.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    with pytest.raises(TruncatedImageError, match="ends before its end-of-image marker"):
        reading.read(path)


def test_probe_of_a_damaged_decoded_format_names_the_file(tmp_path: Path) -> None:
    whole = writing.write(tmp_path / "p.exr", np.zeros((10, 20, 3), np.float32)).read_bytes()
    path = tmp_path / "cut.exr"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(TruncatedImageError) as caught:
        reading.probe(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_an_animated_webp_has_no_top_level_image_chunk_and_is_not_lossless(tmp_path: Path) -> None:
    from PIL import Image

    frames = [Image.fromarray(np.full((8, 8, 3), value, np.uint8)) for value in (10, 200)]
    path = tmp_path / "anim.webp"
    frames[0].save(path, "WEBP", save_all=True, append_images=frames[1:], quality=80)
    assert b"VP8L" not in makefiles.webp_chunks(path.read_bytes())
    assert b"VP8 " not in makefiles.webp_chunks(path.read_bytes())
    assert reading.read_with_metadata(path)[1].lossless is False
