"""cvfilters.io.writing, from the survivors of io/images' mutation run (docs/mutation.md; io/images
was split into io/reading and io/writing): each test checks a behaviour against an independent
reference (the file's own header bytes, Pillow, a numpy formula)."""

from __future__ import annotations

import warnings
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest

from cvfilters.core.errors import ImageWriteError, UnsupportedDepthError
from cvfilters.io import writing
from cvfilters.io.metadata import Metadata
from tests import makefiles


def _noise(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, shape, dtype=np.uint8)


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
    assert makefiles.webp_chunks(bytes(writing.encode(image, "webp"))) == [b"VP8 "]
    assert makefiles.webp_chunks(bytes(writing.encode(image, "webp", lossless=True))) == [b"VP8L"]


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


def test_encode_follows_the_source_metadata_and_passes_compression_to_every_encoder() -> None:
    image = _noise((12, 10, 3))
    assert makefiles.webp_chunks(bytes(writing.encode(image, "webp", metadata=Metadata(lossless=True)))) == [b"VP8L"]
    grey = np.repeat(_smooth()[..., :1], 3, axis=2)
    grey_alpha = np.dstack([grey, np.full(grey.shape[:2], 200, np.uint8)])  # written as a grey+alpha PNG
    sizes = {level: len(writing.encode(grey_alpha, "png", metadata=Metadata(grey=True), compression=level))
             for level in (0, None, 9)}
    assert sizes[0] > grey_alpha.shape[0] * grey_alpha.shape[1] * 2 > sizes[None] >= sizes[9]
    from PIL import Image

    with Image.open(BytesIO(bytes(writing.encode(grey_alpha, "png", metadata=Metadata(grey=True))))) as back:
        assert back.mode == "LA"


# ---------------------------------------------------------------- io/writing's own run (sixth session)
def test_jpeg_metadata_past_one_segment(tmp_path: Path) -> None:
    """An ICC profile over 64 KB is split over APP2 segments; EXIF and XMP that large are dropped, each with
    a warning at the caller's line (read back by Pillow)."""
    from PIL import Image

    big_icc = bytes(range(256)) * 400  # 102400 bytes
    exif = b"II*\0" + b"\0" * 70000
    xmp = b"<x:xmpmeta>" + b" " * 70000 + b"</x:xmpmeta>"
    path = tmp_path / "m.jpg"
    with pytest.warns(writing.DepthConversionWarning) as caught:
        writing.write(path, _noise((8, 8, 3)), metadata=Metadata(exif=exif, icc=big_icc, xmp=xmp))
    assert [str(w.message) for w in caught] == [
        f"{path}: EXIF of 70004 bytes does not fit a JPEG segment (64 KB); it is not written",
        f"{path}: XMP of 70023 bytes does not fit a JPEG segment (64 KB); it is not written"]
    assert {w.filename for w in caught} == {__file__}
    with Image.open(path) as image:
        assert image.info.get("icc_profile") == big_icc
        assert "exif" not in image.info and "xmp" not in image.info


def test_write_converts_into_a_colour_space_with_the_intent_given(tmp_path: Path) -> None:
    from PIL import Image

    from cvfilters.core.errors import UsageError

    image = np.full((4, 4, 3), (40, 120, 200), np.uint8)
    writing.write(tmp_path / "c.png", image, colorspace="srgb")  # no metadata, the default intent
    with Image.open(tmp_path / "c.png") as written:
        assert written.info.get("icc_profile", b"")[36:40] == b"acsp"  # an ICC profile embedded
    with pytest.raises(UsageError, match="intent 'bogus' is not one of"):
        writing.write(tmp_path / "d.png", image, colorspace="srgb", intent="bogus")  # type: ignore[arg-type]


def test_write_takes_rgb_order_and_names_the_file_in_a_refusal(tmp_path: Path) -> None:
    import cv2

    from cvfilters.core.errors import CvfError

    rgb = _noise((5, 6, 3))
    writing.write(tmp_path / "c.png", rgb, channel_order="rgb")
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "c.png"), cv2.IMREAD_UNCHANGED), rgb[..., ::-1])
    with pytest.raises(CvfError) as caught:
        writing.write(tmp_path / "bad.png", np.zeros((4, 4, 5), np.uint8))
    assert str(caught.value).startswith(f"{tmp_path / 'bad.png'}: ")


def test_write_bytes_refuses_an_existing_target_and_names_what_failed(tmp_path: Path) -> None:
    from cvfilters.core.errors import OutputExistsError

    target = tmp_path / "a.png"
    target.write_bytes(b"old")
    with pytest.raises(OutputExistsError) as exists:
        writing.write_bytes(target, b"new", overwrite=False)
    assert str(exists.value).startswith(f"{target}: ") and target.read_bytes() == b"old"
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(ImageWriteError) as caught:
        writing.write_bytes(tmp_path / "file" / "a.png", b"new")  # a file where a folder should be
    assert str(caught.value) == f"{tmp_path / 'file' / 'a.png'}: cannot be written: File exists"


def test_write_bytes_syncs_the_folder_unless_told_not_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cvfilters.core import atomic

    synced: list[Path] = []
    monkeypatch.setattr(atomic, "fsync_directory", lambda folder: synced.append(Path(folder)))
    writing.write_bytes(tmp_path / "a.png", b"a")
    writing.write_bytes(tmp_path / "b.png", b"b", sync_directory=True)
    assert synced == [tmp_path, tmp_path]
    writing.write_bytes(tmp_path / "c.png", b"c", sync_directory=False)
    assert synced == [tmp_path, tmp_path] and (tmp_path / "c.png").read_bytes() == b"c"


def test_write_follows_the_source_metadata_and_names_the_file_of_a_refused_pil_image(tmp_path: Path) -> None:
    from PIL import Image

    from cvfilters.core.errors import CvfError
    from cvfilters.io import reading

    image = _noise((8, 8, 3))
    writing.write(tmp_path / "l.webp", image, metadata=Metadata(lossless=True))  # a lossless source stays lossless
    np.testing.assert_array_equal(reading.read(tmp_path / "l.webp"), image)
    with pytest.raises(CvfError) as caught:
        writing.write(tmp_path / "p.png", Image.new("CMYK", (4, 4)))  # type: ignore[arg-type]
    assert str(caught.value).startswith(f"{tmp_path / 'p.png'}: PIL mode CMYK is not supported")


def test_a_gif_is_as_wide_as_its_image(tmp_path: Path) -> None:
    import struct

    writing.write(tmp_path / "w.gif", _noise((5, 7, 3)))
    data = (tmp_path / "w.gif").read_bytes()
    assert struct.unpack("<HH", data[6:10]) == (7, 5)  # the logical screen (Pillow grows it to the frame)


def test_jpeg_exif_that_carries_its_header_fits_up_to_the_last_byte(tmp_path: Path) -> None:
    """EXIF given with its "Exif\\0\\0" header, 65533 bytes: exactly one segment's payload, so kept."""
    import warnings

    from PIL import Image

    exif = b"Exif\0\0II*\0\x08\0\0\0\0\0" + b"\0" * (65533 - 16)  # an empty IFD0, then padding
    path = tmp_path / "e.jpg"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        writing.write(path, _noise((8, 8, 3)), metadata=Metadata(exif=exif))
    assert not [w for w in caught if issubclass(w.category, writing.DepthConversionWarning)]
    with Image.open(path) as image:
        assert image.info.get("exif") == exif


# ---------------------------------------------------------------- io/writing's full run (seventh session)
def _hdr_pixels(data: bytes) -> np.ndarray:
    """The RGB values of a flat (not run-length coded) Radiance file, decoded by hand: m * 2**(e - 136)."""
    header, _, rest = data.partition(b"\n\n")
    size, _, body = rest.partition(b"\n")
    _, height, _, width = size.split()
    rgbe = np.frombuffer(body, np.uint8).reshape(int(height), int(width), 4).astype(np.float64)
    return rgbe[..., :3] * np.where(rgbe[..., 3:] > 0, np.exp2(rgbe[..., 3:] - 136), 0)


def test_hdr_stores_negative_values_as_zero_and_warns_only_for_them(tmp_path: Path) -> None:
    """RGBE holds no sign: negatives are clamped to 0 with a warning naming the file; zeros and values
    below 1 are not negative (a wrong bound would warn or clamp them)."""
    row = np.array([-0.5, 0.0, 0.25, 1.0, 2.0], np.float32)  # 5 wide: below 8, so written flat
    image = np.dstack([np.vstack([row, row])] * 3)
    path = tmp_path / "n.hdr"
    with pytest.warns(writing.DepthConversionWarning) as caught:
        writing.write(path, image)
    assert [str(w.message) for w in caught] == [f"{path}: .hdr (RGBE) holds no negative values; they are stored as 0"]
    assert {w.filename for w in caught} == {__file__}
    np.testing.assert_allclose(_hdr_pixels(path.read_bytes()), np.maximum(image, 0).astype(np.float64), rtol=1 / 128)
    plain = np.dstack([np.vstack([np.array([0.0, 0.25, 0.5, 0.75, 1.5], np.float32)] * 2)] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        writing.write(tmp_path / "p.hdr", plain)
    np.testing.assert_allclose(_hdr_pixels((tmp_path / "p.hdr").read_bytes()), plain, rtol=1 / 128)


def test_pbm_thresholds_grey_at_128_and_leaves_black_and_white_alone(tmp_path: Path) -> None:
    """Only values other than 0 and 255 warn; they become black below 128 and white from it (read by Pillow)."""
    from PIL import Image

    two = np.array([[0, 255, 255, 0]], np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        writing.write(tmp_path / "two.pbm", two)
    grey = np.array([[0, 1, 127, 128, 200, 255]], np.uint8)
    with pytest.warns(writing.DepthConversionWarning) as caught:
        writing.write(tmp_path / "grey.pbm", grey)
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'grey.pbm'}: .pbm holds 1 bit per pixel; stored as black (below 128) and white"]
    assert {w.filename for w in caught} == {__file__}
    for name, expected in (("two", [[0, 255, 255, 0]]), ("grey", [[0, 0, 0, 255, 255, 255]])):
        with Image.open(tmp_path / f"{name}.pbm") as back:
            np.testing.assert_array_equal(np.asarray(back.convert("L")), expected)


def test_float64_and_int16_into_png_scale_onto_uint16(tmp_path: Path) -> None:
    """float64 is taken as float32 (0..1 onto 0..65535); int16 is shifted (-32768..32767 onto 0..65535),
    read back by Pillow."""
    from PIL import Image

    unit = np.array([[0.0, 0.25, 0.5, 1.0]], np.float64)
    signed = np.array([[-32768, -1, 0, 32767]], np.int16)
    with pytest.warns(writing.DepthConversionWarning) as caught:
        writing.write(tmp_path / "f.png", unit)
        writing.write(tmp_path / "i.png", signed)
    assert str(caught[-1].message) == (
        f"{tmp_path / 'i.png'}: .png cannot hold int16; stored as uint16 (-32768..32767 scaled to 0..65535)")
    assert {w.filename for w in caught} == {__file__}
    for name, expected in (("f", [[0, 16384, 32768, 65535]]), ("i", [[0, 32767, 32768, 65535]])):
        with Image.open(tmp_path / f"{name}.png") as back:
            np.testing.assert_array_equal(np.asarray(back).astype(np.int64), expected)


@pytest.mark.parametrize(("name", "said"),
                         [("noext", "a name without extension"), ("sun.sr", ".sr"), ("sun.ras", ".ras")])
def test_a_name_without_an_image_extension_is_refused_in_words(tmp_path: Path, name: str, said: str) -> None:
    """No extension, or one OpenCV writes (Sun raster) that cvfilters does not list as an image format."""
    with pytest.raises(ImageWriteError) as caught:
        writing.write(tmp_path / name, _noise((4, 4, 3)))
    assert str(caught.value) == f"{tmp_path / name}: cannot be written: no encoder for {said}"


def _exif_make(make: str) -> bytes:
    from PIL import Image

    exif = Image.Exif()
    exif[0x010F] = make  # Make
    return exif.tobytes()


def test_tiff_keeps_exif_without_an_icc_profile_or_warns_at_the_callers_line(tmp_path: Path) -> None:
    """EXIF alone goes into an 8-bit TIFF (read back by Pillow); where the TIFF writer cannot keep it
    (int16), the warning names the dtype and the channels and points at the caller."""
    from PIL import Image

    writing.write(tmp_path / "e.tif", _noise((4, 5, 3)), metadata=Metadata(exif=_exif_make("OnlyExif")))
    with Image.open(tmp_path / "e.tif") as back:
        assert back.getexif()[0x010F] == "OnlyExif"
    for shape, channels in (((4, 5), 1), ((4, 5, 3), 3)):
        path = tmp_path / f"s{channels}.tif"
        with pytest.warns(writing.DepthConversionWarning) as caught:
            writing.write(path, np.ones(shape, np.int16), metadata=Metadata(exif=_exif_make("Signed")))
        assert [str(w.message) for w in caught] == [
            f"{path}: EXIF and ICC are not kept in a int16 TIFF with {channels} channels"]
        assert {w.filename for w in caught} == {__file__}


def test_jpeg_with_metadata_is_coded_at_the_quality_asked(tmp_path: Path) -> None:
    """Metadata goes through another OpenCV call; the quality must still reach it (quantization tables
    compared with Pillow's own at the same quality)."""
    from PIL import Image

    image = _smooth()
    writing.write(tmp_path / "q.jpg", image, quality=20, metadata=Metadata(xmp=b"<x:xmpmeta/>"))
    Image.fromarray(image[..., ::-1]).save(tmp_path / "pillow.jpg", quality=20)
    with Image.open(tmp_path / "q.jpg") as ours, Image.open(tmp_path / "pillow.jpg") as theirs:
        assert "xmp" in ours.info
        assert ours.quantization == theirs.quantization


def test_write_stores_exr_through_openexr(tmp_path: Path) -> None:
    """OpenCV here has no EXR encoder: an .exr goes through the OpenEXR bindings (float B, G, R channels,
    read back by OpenEXR itself, which groups them as RGB)."""
    openexr = pytest.importorskip("OpenEXR")
    image = np.random.default_rng(3).random((6, 7, 3)).astype(np.float32)
    path = writing.write(tmp_path / "w.exr", image)
    np.testing.assert_array_equal(openexr.File(str(path)).channels()["RGB"].pixels, image[..., ::-1])


@pytest.mark.parametrize("ext", ["jpg", "webp"])
def test_an_image_the_encoder_refuses_is_named_with_the_reason(ext: str) -> None:
    """JPEG and WebP cannot be 70000 pixels wide; OpenCV returns no bytes and prints nothing, so the error
    says it refused."""
    with pytest.raises(ImageWriteError) as caught:
        writing.encode(np.zeros((1, 70000, 3), np.uint8), ext, name=f"wide.{ext}")
    assert str(caught.value) == f"wide.{ext}: cannot be encoded as .{ext}: OpenCV refused the image"


def test_tiff_keeps_the_sources_compression_where_libtiff_writes_it(tmp_path: Path) -> None:
    """LZW, Deflate and PackBits from the source's metadata are kept; JPEG-in-TIFF (7) and no metadata
    give an uncompressed file (the Compression tag read by tifffile)."""
    import tifffile

    image = _noise((8, 8, 3))
    for given, expected in ((None, 1), (5, 5), (8, 8), (32773, 32773), (7, 1)):
        path = writing.write(tmp_path / f"c{given}.tif", image,
                             metadata=None if given is None else Metadata(compression=given))
        with tifffile.TiffFile(path) as tif:
            assert tif.pages[0].compression == expected
            np.testing.assert_array_equal(tif.pages[0].asarray(), image[..., ::-1])


def test_conversion_warnings_point_at_the_line_that_wrote_or_encoded(tmp_path: Path) -> None:
    """A dropped alpha channel is warned at the caller's line, from write() and from encode() alike (they
    were reported inside cvfilters/io/writing.py)."""
    with pytest.warns(writing.DepthConversionWarning, match="alpha channel is dropped") as caught:
        writing.write(tmp_path / "a.jpg", _noise((4, 4, 4)))
        writing.encode(_noise((4, 4, 4)), "jpg")
    assert [w.filename for w in caught] == [__file__, __file__]
