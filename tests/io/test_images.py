"""cvfilters.io.images, from the survivors of its mutation run (docs/mutation.md): each test checks
a behaviour against an independent reference (the file's own header bytes, Pillow, a numpy formula)."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import numpy as np
import pytest

from cvfilters.core.errors import ImageTooLargeError, ImageWriteError, TruncatedImageError, UnsupportedDepthError
from cvfilters.io import reading, writing
from cvfilters.io.metadata import Metadata
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


def _webp_chunks(data: bytes) -> list[bytes]:
    """The FourCCs of a RIFF WebP's chunks, walked by hand (RIFF pads odd chunk sizes by one byte)."""
    kinds, pos = [], 12
    while pos + 8 <= len(data):
        size = int.from_bytes(data[pos + 4 : pos + 8], "little")
        kinds.append(data[pos : pos + 4])
        pos += 8 + size + size % 2
    return kinds


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
    assert _webp_chunks(source.read_bytes())[-1] == b"VP8L"
    image, metadata = reading.read_with_metadata(source)
    assert metadata.lossless is True
    out = writing.write(tmp_path / "out.webp", image, metadata=metadata)
    assert b"VP8L" in _webp_chunks(out.read_bytes())
    with Image.open(out) as back:  # a second reader: the pixels come back exactly
        np.testing.assert_array_equal(np.asarray(back.convert("RGB")), rgb)


def test_a_lossy_webp_source_is_not_taken_for_lossless(tmp_path: Path) -> None:
    from PIL import Image

    source = tmp_path / "lossy.webp"
    Image.fromarray(_noise((12, 10, 3))).save(source, "WEBP", quality=80)
    assert _webp_chunks(source.read_bytes()) == [b"VP8 "]
    assert reading.read_with_metadata(source)[1].lossless is False


def test_a_still_gif_has_no_loop_extension_and_dithers_only_when_asked(tmp_path: Path) -> None:
    from PIL import Image

    ramp_x, ramp_y = np.meshgrid(np.arange(64, dtype=np.uint8) * 4, np.arange(64, dtype=np.uint8) * 4)
    gradient = np.dstack([ramp_x, ramp_y, np.full((64, 64), 128, np.uint8)])  # 4096 colours: more than 256
    plain = writing.write(tmp_path / "plain.gif", gradient)
    dithered = writing.write(tmp_path / "dithered.gif", gradient, dither=True)
    for path in (plain, dithered):
        assert b"NETSCAPE2.0" not in path.read_bytes()  # a still image: played once, no loop block
        with Image.open(path) as back:
            assert "loop" not in back.info
    with Image.open(plain) as a, Image.open(dithered) as b:
        first, second = np.asarray(a.convert("RGB")).astype(int), np.asarray(b.convert("RGB")).astype(int)
    assert not np.array_equal(first, second)
    # dithering trades banding for noise: neighbouring pixels of a smooth ramp differ more often
    assert (np.diff(second, axis=1) != 0).mean() > (np.diff(first, axis=1) != 0).mean()


def test_output_dtype_names_the_path_in_its_refusal() -> None:
    with pytest.raises(UnsupportedDepthError) as caught:
        writing.output_dtype("dir/a.png", np.int32)
    assert str(caught.value) == "dir/a.png: cannot write pixel depth int32 (uint8, uint16, int16, float32)"


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


# --- encode: the bytes write() would store, in memory ------------------------------------------


def _smooth() -> np.ndarray:
    ramp = np.linspace(0, 255, 48, dtype=np.float32)
    return np.dstack([np.add.outer(ramp[:32] / 2, ramp / 2).astype(np.uint8)] * 3)


@pytest.mark.parametrize("fmt", ["png", ".png", "PNG", ".Png"])
def test_encode_takes_an_extension_in_any_spelling(fmt: str) -> None:
    from PIL import Image

    data = bytes(writing.encode(_smooth(), fmt))
    with Image.open(BytesIO(data)) as back:
        assert back.format == "PNG"
        np.testing.assert_array_equal(np.asarray(back), _smooth()[..., ::-1])


def test_encode_refusals_name_the_output() -> None:
    with pytest.raises(ImageWriteError) as caught:
        writing.encode(_smooth(), "xyz", name="out.xyz")
    assert str(caught.value) == "out.xyz: cannot be written: no encoder for .xyz"
    with pytest.raises(UnsupportedDepthError) as refused:  # the default name is "-", standard output
        writing.encode(np.zeros((4, 4), np.int32), "png")
    assert str(refused.value) == "-: cannot write pixel depth int32 (uint8, uint16, int16, float32)"


def test_encode_webp_is_lossy_unless_asked() -> None:
    image = _noise((12, 10, 3))
    assert _webp_chunks(bytes(writing.encode(image, "webp"))) == [b"VP8 "]
    assert _webp_chunks(bytes(writing.encode(image, "webp", lossless=True))) == [b"VP8L"]


def test_encode_passes_the_quality_on() -> None:
    from PIL import Image

    for quality in (30, 95):
        reference = BytesIO()
        Image.fromarray(_smooth()).save(reference, "JPEG", quality=quality)  # libjpeg's scaled standard tables
        with Image.open(BytesIO(bytes(writing.encode(_smooth(), "jpg", quality=quality)))) as ours, \
                Image.open(reference) as theirs:
            assert ours.quantization == theirs.quantization


def test_encode_passes_the_png_compression_on() -> None:
    image = _smooth()
    stored, default, smallest = (len(writing.encode(image, "png", compression=level)) for level in (0, None, 9))
    assert stored > image.size  # level 0: deflate's stored blocks, larger than the pixels
    assert smallest < default < stored


def test_encode_keeps_the_metadata() -> None:
    from PIL import Image, ImageCms

    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    data = bytes(writing.encode(_smooth(), "png", metadata=Metadata(icc=icc)))
    with Image.open(BytesIO(data)) as back:
        assert back.info.get("icc_profile") == icc


def test_encode_dithers_a_gif_only_when_asked() -> None:
    ramp_x, ramp_y = np.meshgrid(np.arange(64, dtype=np.uint8) * 4, np.arange(64, dtype=np.uint8) * 4)
    gradient = np.dstack([ramp_x, ramp_y, np.full((64, 64), 128, np.uint8)])
    plain, dithered = bytes(writing.encode(gradient, "gif")), bytes(writing.encode(gradient, "gif", dither=True))
    assert plain == bytes(writing.encode(gradient, "gif", dither=False)) and plain != dithered


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
    assert b"VP8L" not in _webp_chunks(path.read_bytes()) and b"VP8 " not in _webp_chunks(path.read_bytes())
    assert reading.read_with_metadata(path)[1].lossless is False


def test_encode_follows_the_source_metadata_and_passes_compression_to_every_encoder() -> None:
    image = _noise((12, 10, 3))
    assert _webp_chunks(bytes(writing.encode(image, "webp", metadata=Metadata(lossless=True)))) == [b"VP8L"]
    grey = np.repeat(_smooth()[..., :1], 3, axis=2)
    grey_alpha = np.dstack([grey, np.full(grey.shape[:2], 200, np.uint8)])  # written as a grey+alpha PNG
    sizes = {level: len(writing.encode(grey_alpha, "png", metadata=Metadata(grey=True), compression=level))
             for level in (0, None, 9)}
    assert sizes[0] > grey_alpha.shape[0] * grey_alpha.shape[1] * 2 > sizes[None] >= sizes[9]
    from PIL import Image

    with Image.open(BytesIO(bytes(writing.encode(grey_alpha, "png", metadata=Metadata(grey=True))))) as back:
        assert back.mode == "LA"
