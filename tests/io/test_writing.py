"""cvfilters.io.writing, from the survivors of io/images' mutation run (docs/mutation.md; io/images
was split into io/reading and io/writing): each test checks a behaviour against an independent
reference (the file's own header bytes, Pillow, a numpy formula)."""

from __future__ import annotations

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
