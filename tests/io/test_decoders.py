"""Files OpenCV's decoders misread come back file-faithful, and depths and channels are kept.

Every file is made in the test with the values it must decode to (tests/makefiles.py), so the
reference is the data put in, never a decoder's output. Each case also checks which decoder
was chosen from the header, and that OpenCV alone would indeed have lost something (the
reason the second decoder exists: if a future OpenCV gets it right, that check says so).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from PIL import Image

import cvfilters as cvf
from cvfilters.core.errors import NotAnImageError, TruncatedImageError, UnsupportedDepthError
from cvfilters.io import decoders, reading, writing
from cvfilters.io.metadata import Metadata
from tests import cli_runner, makefiles

ROOT = Path(__file__).resolve().parents[2]


def opencv_reads(path: Path) -> np.ndarray | None:
    return cv2.imread(str(path), cv2.IMREAD_UNCHANGED)


def reason(path: Path) -> str | None:
    data = path.read_bytes()
    header = decoders.parse_header(data)
    assert header is not None
    return decoders.needs_pillow(header, data)


CASES = {
    "os2-palette.bmp": (makefiles.os2_palette_bmp, "OS/2 palette BMP"),
    "palette.tif": (makefiles.palette_tiff, "palette TIFF"),
    "lzma.tif": (makefiles.lzma_tiff, "TIFF compression 34925"),
    "grey4.tif": (makefiles.grey4_tiff, "4-bit TIFF"),
    "float-no-photometric.tif": (makefiles.float_tiff_without_photometric, "TIFF without a Photometric tag"),
    "associated-alpha.tif": (makefiles.associated_alpha_tiff, "8-bit TIFF with alpha"),
    "bitfields.bmp": (makefiles.bitfields_bmp, "bit-field BMP"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_second_decoder_gives_the_file_faithful_array(tmp_path: Path, name: str) -> None:
    make, why = CASES[name]
    path = tmp_path / name
    want = make(path)
    assert reason(path) == why
    got = cvf.read(path)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    tolerance = 1 if name == "associated-alpha.tif" else 0  # the half-transparent row is divided by alpha
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=tolerance)


@pytest.mark.parametrize("name", [n for n in CASES if n != "bitfields.bmp"])
def test_opencv_alone_loses_these(tmp_path: Path, name: str) -> None:
    want = CASES[name][0](tmp_path / name)
    alone = opencv_reads(tmp_path / name)
    assert alone is None or alone.shape != want.shape or not np.array_equal(alone, want)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_grey_png_with_trns_gets_its_alpha_at_its_depth(tmp_path: Path, dtype: type) -> None:
    want, key = makefiles.grey_trns_png(tmp_path / "g.png", dtype)
    assert opencv_reads(tmp_path / "g.png").ndim == 2  # OpenCV drops the transparency
    image, metadata = reading.read_with_metadata(tmp_path / "g.png")
    np.testing.assert_array_equal(image, want)
    assert metadata.grey
    # written back as grey+alpha (colour type 4), the same pixels
    writing.write(tmp_path / "out.png", image, metadata=metadata)
    assert (tmp_path / "out.png").read_bytes()[25] == 4
    np.testing.assert_array_equal(cvf.read(tmp_path / "out.png"), want)


@pytest.mark.parametrize("bits", [1, 2, 4])
def test_low_bit_grey_png_with_trns_keys_the_right_level(tmp_path: Path, bits: int) -> None:
    want = makefiles.low_bit_grey_trns_png(tmp_path / "g.png", bits)
    assert opencv_reads(tmp_path / "g.png").ndim == 2
    np.testing.assert_array_equal(cvf.read(tmp_path / "g.png"), want)


def test_sixteen_bit_associated_alpha_is_unpremultiplied(tmp_path: Path) -> None:
    want = makefiles.associated_alpha_tiff(tmp_path / "a16.tif", np.uint16)
    assert reason(tmp_path / "a16.tif") is None  # OpenCV decodes it as stored; the division happens after
    got = cvf.read(tmp_path / "a16.tif")
    assert got.dtype == np.uint16
    np.testing.assert_allclose(got.astype(np.int64), want.astype(np.int64), atol=1)


def test_files_opencv_reads_well_stay_with_opencv(tmp_path: Path) -> None:
    """No second decode where OpenCV keeps everything (a plain PNG, a palette PNG, a 16-bit TIFF)."""
    cv2.imwrite(str(tmp_path / "plain.png"), np.zeros((4, 5, 3), np.uint8))
    makefiles.int16_tiff(tmp_path / "i16.tif")
    Image.fromarray(makefiles.indices(), "P").save(tmp_path / "p.png")
    for name in ("plain.png", "i16.tif", "p.png"):
        assert reason(tmp_path / name) is None, name


def test_grey_alpha_png_stays_grey_alpha(tmp_path: Path) -> None:
    want = makefiles.grey_alpha_png(tmp_path / "la.png")
    image, metadata = reading.read_with_metadata(tmp_path / "la.png")
    np.testing.assert_array_equal(image, want)
    proc = cli_runner.run_cli("apply", str(tmp_path / "la.png"), "-o",
                           str(tmp_path / "out.png"), "-f", "invert", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    written = Image.open(tmp_path / "out.png")
    assert written.mode == "LA"
    la = np.asarray(written)
    np.testing.assert_array_equal(la[..., 0], 255 - want[..., 0])  # colour inverted ...
    np.testing.assert_array_equal(la[..., 1], want[..., 3])  # ... alpha untouched


def test_int16_tiff_is_filtered_and_written_back_as_int16(tmp_path: Path) -> None:
    source = makefiles.int16_tiff(tmp_path / "i16.tif")
    for spec, reference in (
        ("invert", -1 - source.astype(np.int32)),  # full scale minus v on -32768..32767: -1 - v
        ("flip", source[:, ::-1].astype(np.int32)),
    ):
        out = tmp_path / f"{spec}.tif"
        proc = cli_runner.run_cli("apply", str(tmp_path / "i16.tif"), "-o", str(out),
                               "-f", spec, cwd=ROOT)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        written = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
        assert written.dtype == np.int16
        np.testing.assert_array_equal(written, reference.astype(np.int16))


def test_int16_blur_matches_a_float_reference(tmp_path: Path) -> None:
    source = makefiles.int16_tiff(tmp_path / "i16.tif")
    got = cvf.apply(source, "box_blur", size=3)
    padded = np.pad(source.astype(np.float64), 1, mode="reflect")
    mean = sum(padded[dy:dy + source.shape[0], dx:dx + source.shape[1]] for dy in range(3) for dx in range(3)) / 9
    assert got.dtype == np.int16
    assert np.abs(got.astype(np.float64) - mean).max() <= 1.0


def test_int16_into_png_is_converted_with_the_one_line_warning(tmp_path: Path) -> None:
    source = np.array([[-32768, -1, 0, 32767]], np.int16)
    with pytest.warns(writing.DepthConversionWarning, match=r"stored as uint16 \(-32768..32767 scaled to 0..65535\)"):
        writing.write(tmp_path / "o.png", source)
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "o.png"), cv2.IMREAD_UNCHANGED),
                                  (source.astype(np.int32) + 32768).astype(np.uint16))


def exif_with_camera() -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "TestCam"  # Make
    exif.get_ifd(0x8769)[0x829A] = (1, 250)  # ExposureTime in the Exif sub-IFD
    return exif.tobytes()


@pytest.mark.parametrize("shape, dtype", [((6, 8, 3), np.uint8), ((6, 8, 4), np.uint8), ((6, 8), np.uint16),
                                          ((6, 8), np.float32)], ids=["bgr", "bgra", "grey16", "float"])
def test_exif_and_icc_are_carried_into_tiff(tmp_path: Path, shape: tuple, dtype: type) -> None:
    image = np.random.default_rng(0).integers(0, 200, shape).astype(dtype)
    icc = b"\0\0\0\x10fake-icc-profile"
    writing.write(tmp_path / "o.tif", image, metadata=Metadata(exif=exif_with_camera(), icc=icc))
    written = Image.open(tmp_path / "o.tif")
    assert written.getexif()[0x010F] == "TestCam"
    assert written.getexif().get_ifd(0x8769)[0x829A] == (1, 250) or float(
        written.getexif().get_ifd(0x8769)[0x829A]) == 1 / 250
    assert written.info.get("icc_profile") == icc
    np.testing.assert_array_equal(cvf.read(tmp_path / "o.tif"), image)


def test_jpeg_exif_reaches_a_tiff_output_through_the_cli(tmp_path: Path) -> None:
    Image.fromarray(np.full((8, 10, 3), 90, np.uint8)).save(tmp_path / "in.jpg", exif=exif_with_camera())
    proc = cli_runner.run_cli("apply", str(tmp_path / "in.jpg"), "-o",
                           str(tmp_path / "out.tif"), "-f", "invert", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert Image.open(tmp_path / "out.tif").getexif()[0x010F] == "TestCam"


def test_tiff_metadata_that_pillow_cannot_hold_is_dropped_with_a_warning(tmp_path: Path) -> None:
    image = np.zeros((4, 5, 3), np.uint16)
    with pytest.warns(writing.DepthConversionWarning, match="EXIF and ICC are not kept in a uint16 TIFF"):
        writing.write(tmp_path / "o.tif", image, metadata=Metadata(exif=exif_with_camera()))
    np.testing.assert_array_equal(cvf.read(tmp_path / "o.tif"), image)


def test_a_truncated_file_for_the_second_decoder_is_one_clean_error(tmp_path: Path) -> None:
    makefiles.lzma_tiff(tmp_path / "full.tif")
    data = (tmp_path / "full.tif").read_bytes()
    (tmp_path / "cut.tif").write_bytes(data[: len(data) - 120])
    proc = cli_runner.run_cli("apply", str(tmp_path / "cut.tif"), "-o",
                           str(tmp_path / "out.png"), "-f", "invert", cwd=ROOT)
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(errors) == 1 and "cut.tif" in errors[0], proc.stderr
    assert not (tmp_path / "out.png").exists()


# --- from the survivors of the decoders mutation run (docs/mutation.md) -----------------------


def _grey_keyed_png(exif: Image.Exif | None = None) -> bytes:
    import io

    grey = Image.fromarray((np.arange(256, dtype=np.uint16).reshape(16, 16) * 7 % 256).astype(np.uint8))
    buffer = io.BytesIO()
    grey.save(buffer, "PNG", transparency=0, **({"exif": exif} if exif is not None else {}))
    return buffer.getvalue()


def test_the_exif_of_a_file_pillow_decodes_is_kept(tmp_path: Path) -> None:
    exif = Image.Exif()
    exif[0x010F] = "Maker"  # Make
    path = tmp_path / "keyed.png"
    path.write_bytes(_grey_keyed_png(exif))
    assert reason(path) == "grey PNG with a tRNS key"
    image, metadata = reading.read_with_metadata(path)
    assert image.shape == (16, 16, 4) and metadata.exif is not None
    back = Image.Exif()
    back.load(metadata.exif)
    assert back[0x010F] == "Maker"


def test_a_file_pillow_fails_on_names_the_file_the_reason_and_the_cause(tmp_path: Path) -> None:
    path = makefiles.damaged_png(tmp_path / "keyed.png", _grey_keyed_png())  # Pillow and then OpenCV fail
    with pytest.raises(TruncatedImageError) as caught:
        reading.read(path)
    assert str(caught.value) == (f"{path}: image data is truncated or corrupt (grey PNG with a tRNS key: "
                                 "broken data stream when reading image file)")


def test_a_program_using_pillow_keeps_its_own_limit_after_a_decode(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """cvfilters lifts Pillow's decompression-bomb limit only while it decodes: a program using Pillow beside it
    keeps the limit it set (a lost limit would let its own ``Image.open`` decode any bomb)."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    Image.new("RGB", (60, 40), (10, 20, 30)).save(tmp_path / "a.png")  # 2400 px: over twice 1000
    with decoders.pillow_unlimited(), Image.open(tmp_path / "a.png") as inside:
        assert inside.size == (60, 40)  # opened past Pillow's limit
    with pytest.raises(Image.DecompressionBombError):
        Image.open(tmp_path / "a.png")  # after the block: Pillow's own error, as the program asked


# --- eighth session: the Pillow path's modes (docs/mutation.md, io/decoders) -------------------------


def _lzma_tiff(path: Path, data: np.ndarray, **options: object) -> Path:
    """A TIFF compressed with LZMA, which OpenCV's libtiff lacks: Pillow decodes it."""
    tifffile.imwrite(path, data, compression="lzma", **options)  # type: ignore[arg-type]
    assert reason(path) == "TIFF compression 34925"
    return path


def test_a_signed_16_bit_tiff_pillow_decodes_stays_signed(tmp_path: Path) -> None:
    """Pillow widens signed 16-bit samples to 32-bit integers: they must come back int16 with their
    signs, not as uint16 (-1 read as 65535; SampleFormat is a tuple in Pillow's tags). Little-endian:
    Pillow 13 swaps the bytes of a big-endian one that libtiff decompresses (docs/mutation.md)."""
    data = np.random.default_rng(11).integers(-32768, 32767, (5, 7), dtype=np.int16, endpoint=True)
    got = cvf.read(_lzma_tiff(tmp_path / "s16.tif", data))
    assert got.dtype == np.dtype(np.int16)
    np.testing.assert_array_equal(got, tifffile.imread(tmp_path / "s16.tif"))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_a_32_bit_integer_tiff_pillow_decodes_is_refused_not_cut_to_16_bits(tmp_path: Path, dtype: type) -> None:
    """Refused like the same file uncompressed, never read with its values wrapped to 16 bits (Pillow holds
    both as int32, mode I, which the message names)."""
    data = np.random.default_rng(12).integers(0, 2**31 - 1, (5, 7)).astype(dtype)
    path = _lzma_tiff(tmp_path / "i32.tif", data)
    with pytest.raises(UnsupportedDepthError) as caught:
        cvf.read(path)
    assert str(caught.value) == (f"{path}: pixel depth int32 is not supported (uint8, uint16, int16, float32)")


def test_a_big_endian_16_bit_tiff_pillow_decodes_comes_back_in_native_order(tmp_path: Path) -> None:
    """Pillow gives a big-endian TIFF's samples as big-endian uint16 (mode I;16B): the array must be
    plain native uint16, which OpenCV's functions and cvfilters' depth table accept."""
    data = np.random.default_rng(13).integers(0, 65535, (5, 7), dtype=np.uint16, endpoint=True)
    got = cvf.read(_lzma_tiff(tmp_path / "be.tif", data, byteorder=">"))
    assert got.dtype == np.dtype(np.uint16) and got.dtype.isnative
    np.testing.assert_array_equal(got, data)


def test_a_grey_alpha_tiff_comes_back_bgra_with_its_alpha(tmp_path: Path) -> None:
    """8-bit grey + alpha (Pillow's LA): grey in B, G and R, the alpha kept as stored (OpenCV drops it)."""
    la = np.random.default_rng(14).integers(0, 256, (5, 7, 2), dtype=np.uint8)
    tifffile.imwrite(tmp_path / "la.tif", la, photometric="minisblack", extrasamples=["unassalpha"],
                     planarconfig="contig")
    assert reason(tmp_path / "la.tif") == "8-bit TIFF with alpha"
    assert opencv_reads(tmp_path / "la.tif").ndim == 2
    np.testing.assert_array_equal(cvf.read(tmp_path / "la.tif"), np.dstack([la[..., 0]] * 3 + [la[..., 1]]))


def test_a_palette_tiff_with_alpha_comes_back_bgra(tmp_path: Path) -> None:
    """Palette + alpha (Pillow's PA): the colour map looked up (16-bit entries to 8 bits), the alpha kept."""
    index = makefiles.indices((5, 8), 4)
    alpha = np.random.default_rng(15).integers(0, 256, (5, 8), dtype=np.uint8)
    colormap = np.zeros((3, 256), np.uint16)
    colormap[:, :4] = makefiles.PALETTE_BGR[:, ::-1].T.astype(np.uint16) * 257
    makefiles.raw_tiff(tmp_path / "pa.tif", np.dstack([index, alpha]).tobytes(), 8, 5,
                       {258: (3, [8, 8]), 259: (3, 1), 262: (3, 3), 277: (3, 2), 338: (3, 2),
                        320: (3, colormap.ravel().tolist())})
    assert reason(tmp_path / "pa.tif") == "palette TIFF"
    np.testing.assert_array_equal(cvf.read(tmp_path / "pa.tif"), np.dstack([makefiles.PALETTE_BGR[index], alpha]))


def test_a_cmyk_tiff_pillow_decodes_comes_back_bgr(tmp_path: Path) -> None:
    """A mode outside the array table (CMYK) is converted to three channels as Pillow itself converts it."""
    cmyk = np.random.default_rng(16).integers(0, 256, (5, 7, 4), dtype=np.uint8)
    path = _lzma_tiff(tmp_path / "cmyk.tif", cmyk, photometric="separated")
    with Image.open(path) as direct:
        want = np.asarray(direct.convert("RGB"))[..., ::-1]
    np.testing.assert_array_equal(cvf.read(path), want)


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def test_a_16_bit_rgb_png_with_a_trns_key_keeps_its_depth_and_its_alpha(tmp_path: Path) -> None:
    """Only grey PNGs with a tRNS key go to Pillow: a colour one stays with OpenCV, which keys it at 16 bits
    (Pillow would give 8-bit RGB without alpha). Its ICC profile makes Pillow parse the header, so the
    header holds the key."""
    from PIL import ImageCms

    rgb = np.random.default_rng(17).integers(0, 65535, (4, 6, 3), dtype=np.uint16, endpoint=True)
    rgb[1, 2] = rgb[0, 0]
    path = tmp_path / "k.png"
    cv2.imwrite(str(path), rgb[..., ::-1])
    data = path.read_bytes()
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    at = data.index(b"IDAT") - 4
    path.write_bytes(data[:at] + _png_chunk(b"iCCP", b"sRGB\0\0" + zlib.compress(icc))
                     + _png_chunk(b"tRNS", struct.pack(">HHH", *map(int, rgb[0, 0]))) + data[at:])
    header = decoders.parse_header(path.read_bytes())
    assert header is not None and header.info["transparency"] == tuple(map(int, rgb[0, 0]))
    assert reason(path) is None
    alpha = np.where((rgb == rgb[0, 0]).all(axis=2), 0, 65535).astype(np.uint16)
    np.testing.assert_array_equal(cvf.read(path), np.dstack([rgb[..., ::-1], alpha]))


def test_probe_refuses_a_format_cvfilters_cannot_read_as_read_does(tmp_path: Path) -> None:
    """Pillow parses more formats than OpenCV reads (TGA): probe must not size a file read refuses."""
    Image.new("RGB", (5, 3), (1, 2, 3)).save(tmp_path / "a.tga")
    for call in (reading.probe, reading.read):
        with pytest.raises(NotAnImageError) as caught:
            call(tmp_path / "a.tga")
        assert str(caught.value) == f"{tmp_path / 'a.tga'}: not an image in a format OpenCV can read"


def test_a_cut_file_pillow_fails_on_names_what_libtiff_and_pillow_said(tmp_path: Path) -> None:
    """libtiff's message (printed on descriptor 2) and Pillow's error are joined by "; " in the error."""
    makefiles.lzma_tiff(tmp_path / "full.tif")
    with tifffile.TiffFile(tmp_path / "full.tif") as tiff:
        offset, count = tiff.pages[0].dataoffsets[0], tiff.pages[0].databytecounts[0]
    data = (tmp_path / "full.tif").read_bytes()
    (tmp_path / "cut.tif").write_bytes(data[: len(data) - 120])
    with pytest.raises(TruncatedImageError) as caught:
        reading.read(tmp_path / "cut.tif")
    assert str(caught.value) == (
        f"{tmp_path / 'cut.tif'}: image data is truncated or corrupt (TIFF compression 34925: TIFFFillStrip: "
        f"Read error on strip 0; got {len(data) - 120 - offset} bytes, expected {count}.; decoder error -2)")


def test_a_grey_tiff_with_associated_alpha_comes_back_bgra_with_straight_alpha(tmp_path: Path) -> None:
    """8-bit grey + associated (premultiplied) alpha, Pillow's La: grey divided by alpha, the alpha kept
    (OpenCV gives one premultiplied grey channel and no alpha)."""
    rng = np.random.default_rng(18)
    straight = rng.integers(0, 128, (5, 7), dtype=np.uint8) * 2  # even: halved and doubled back exactly
    alpha = np.full((5, 7), 255, np.uint8)
    alpha[0] = 127  # a half-transparent row checks the division (to 1)
    premultiplied = np.rint(straight * (alpha / 255.0)).astype(np.uint8)
    tifffile.imwrite(tmp_path / "la.tif", np.dstack([premultiplied, alpha]), photometric="minisblack",
                     extrasamples=["assocalpha"], planarconfig="contig")
    assert reason(tmp_path / "la.tif") == "8-bit TIFF with alpha"
    assert opencv_reads(tmp_path / "la.tif").ndim == 2
    got = cvf.read(tmp_path / "la.tif")
    assert got.shape == (5, 7, 4)
    np.testing.assert_allclose(got.astype(np.float64), np.dstack([straight] * 3 + [alpha]).astype(np.float64), atol=1)


def test_a_cielab_tiff_pillow_decodes_comes_back_in_colour_with_three_channels(tmp_path: Path) -> None:
    """CIELab (Pillow's LAB) is converted to colour as Pillow converts it, not refused, and with the
    file's three channels: LAB's A is a colour axis, not alpha (it came back BGRA with an invented
    opaque alpha, where the same picture uncompressed, which OpenCV reads, has three channels)."""
    lab = np.random.default_rng(19).integers(0, 256, (6, 8, 3), dtype=np.uint8)
    path = _lzma_tiff(tmp_path / "lab.tif", lab, photometric="cielab")
    with tifffile.TiffFile(path) as tif:
        assert (tif.pages[0].samplesperpixel, tif.pages[0].extrasamples) == (3, ())
    with Image.open(path) as direct:
        want = np.asarray(direct.convert("RGB"))[..., ::-1]
    np.testing.assert_array_equal(cvf.read(path), want)
    tifffile.imwrite(tmp_path / "plain.tif", lab, photometric="cielab")
    assert cvf.read(tmp_path / "plain.tif").shape == want.shape  # OpenCV's path: three channels too
