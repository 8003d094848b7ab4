"""Colour spaces (issue #27): reading what a file says, converting through LittleCMS.

The reference is LittleCMS called directly through Pillow's ``ImageCms`` on the same pixels
(RGB order, 8 bits), with profiles built here: LittleCMS's sRGB and an Adobe-RGB-like
matrix profile (gamma 2.2 with Adobe's primaries) made with imagecodecs' LittleCMS binding.
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageCms

import cvfilters as cvf
from cvfilters.io import colour
from cvfilters.io.metadata import Metadata
from tests.cli_runner import run_cli

imagecodecs = pytest.importorskip("imagecodecs", reason="16-bit/float conversions and built profiles need imagecodecs")

RNG = np.random.default_rng(27)
RGB = RNG.integers(0, 256, (40, 56, 3), dtype=np.uint8)
WIDE = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.329, 1.0], gamma=2.2,
                               primaries=[0.64, 0.33, 1, 0.21, 0.71, 1, 0.15, 0.06, 1])
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


def reference(rgb: np.ndarray, src: bytes, dst: bytes, intent: int = 1) -> np.ndarray:
    transform = ImageCms.buildTransform(ImageCms.ImageCmsProfile(io.BytesIO(src)),
                                        ImageCms.ImageCmsProfile(io.BytesIO(dst)), "RGB", "RGB",
                                        renderingIntent=ImageCms.Intent(intent))
    return np.asarray(ImageCms.applyTransform(Image.fromarray(rgb), transform)).astype(np.int64)


def description(icc: bytes) -> str:
    return str(ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(icc)))).strip()


def exif_block(color_space: int, interop: bytes) -> bytes:
    """A little-endian EXIF block built by hand: IFD0 -> Exif IFD (ColorSpace, Interop) -> InteropIndex."""
    ifd0 = struct.pack("<H", 1) + struct.pack("<HHII", 0x8769, 4, 1, 26) + struct.pack("<I", 0)
    exif_ifd = struct.pack("<H", 2) + struct.pack("<HHIHH", 0xA001, 3, 1, color_space, 0)
    exif_ifd += struct.pack("<HHII", 0xA005, 4, 1, 26 + 2 + 24 + 4) + struct.pack("<I", 0)
    interop_ifd = struct.pack("<H", 1) + struct.pack("<HHI", 1, 2, 4) + interop + struct.pack("<I", 0)
    return b"II*\0" + struct.pack("<I", 8) + ifd0 + exif_ifd + interop_ifd


def levels(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.float64) - b).max())


@pytest.mark.parametrize("intent", ["relative", "perceptual", "absolute"])
def test_8_bit_matches_littlecms(intent: str) -> None:
    bgr = np.ascontiguousarray(RGB[..., ::-1])
    out = colour.convert(bgr, WIDE, "srgb", intent)  # type: ignore[arg-type]
    assert levels(out[..., ::-1], reference(RGB, WIDE, SRGB, colour.INTENTS[intent])) <= 1


def within_one_level(a: np.ndarray, b: np.ndarray) -> None:
    """Within 1 level, but for the foot of a pure gamma 2.2 (slope infinite at 0), where 8-bit LittleCMS
    rounds a channel to 0 that float LittleCMS encodes as up to 1.5 levels (light of 1e-6): 2 levels there."""
    diff = np.abs(a.astype(np.float64) - b)
    assert diff.max() <= 2 and np.mean(diff > 1) < 0.002 and np.all((diff <= 1) | (np.minimum(a, b) < 2))


def test_16_bit_and_float_match_littlecms_at_8_bit_precision() -> None:
    ref = reference(RGB, SRGB, WIDE)
    bgr16 = np.ascontiguousarray(RGB[..., ::-1].astype(np.uint16) * 257)
    out16 = colour.convert(bgr16, SRGB, WIDE)
    assert out16.dtype == np.uint16
    within_one_level(out16[..., ::-1] / 257, ref)
    bgrf = np.ascontiguousarray(RGB[..., ::-1].astype(np.float32) / 255)
    outf = colour.convert(bgrf, SRGB, WIDE)
    assert outf.dtype == np.float32
    within_one_level(outf[..., ::-1] * 255, ref)


def test_float_keeps_values_beyond_one_and_alpha_passes() -> None:
    bright = np.full((4, 4, 4), 0.5, np.float32)
    bright[..., :3] = 2.0
    out = colour.convert(bright, SRGB, WIDE)
    assert out[..., :3].max() > 1.5  # unbounded LittleCMS, not clipped
    np.testing.assert_array_equal(out[..., 3], bright[..., 3])


def test_read_and_write_convert_and_embed_the_profile(tmp_path: Path) -> None:
    tagged = tmp_path / "wide.png"
    Image.fromarray(RGB).save(tagged, icc_profile=WIDE)
    out = cvf.read(tagged, colorspace="srgb", channel_order="rgb")
    assert levels(out, reference(RGB, WIDE, SRGB)) <= 1
    kept = cvf.read(tagged, channel_order="rgb")
    np.testing.assert_array_equal(kept, RGB)
    image, metadata = cvf.read_with_metadata(tagged, colorspace="srgb")
    assert metadata.icc is not None and description(metadata.icc) == "sRGB built-in"
    written = tmp_path / "web.png"
    cvf.write(written, RGB, channel_order="rgb", metadata=Metadata(icc=WIDE), colorspace="srgb")
    with Image.open(written) as result:
        assert description(result.info["icc_profile"]) == "sRGB built-in"
        assert levels(np.asarray(result), reference(RGB, WIDE, SRGB)) <= 1


def _png_with_cicp(path: Path, primaries: int, transfer: int) -> None:
    buffer = io.BytesIO()
    Image.fromarray(RGB).save(buffer, format="PNG")
    data = buffer.getvalue()
    body = bytes([primaries, transfer, 0, 1])
    chunk = struct.pack(">I", 4) + b"cICP" + body + struct.pack(">I", zlib.crc32(b"cICP" + body))
    path.write_bytes(data[:33] + chunk + data[33:])  # after the 8-byte signature and the 25-byte IHDR


def test_the_colour_space_of_a_file(tmp_path: Path) -> None:
    assert colour.colourspace_of(WIDE).source == "icc"
    p3 = tmp_path / "p3.png"
    _png_with_cicp(p3, 12, 13)
    space = colour.colourspace_of(None, None, p3.read_bytes())
    assert (space.source, space.name.split(",")[0]) == ("cicp", "Display P3")
    with pytest.raises(cvf.UsageError, match="no ICC profile"):
        cvf.read(p3, colorspace="srgb")
    srgb_cicp = tmp_path / "srgb.png"
    _png_with_cicp(srgb_cicp, 1, 13)
    assert colour.colourspace_of(None, None, srgb_cicp.read_bytes()).is_srgb
    for value, interop, expected in ((1, b"R98\0", "sRGB"), (0xFFFF, b"R03\0", "Adobe RGB")):
        path = tmp_path / f"exif{value}.jpg"
        Image.fromarray(RGB).save(path, exif=b"Exif\0\0" + exif_block(value, interop))
        _, metadata = cvf.read_with_metadata(path)
        assert colour.colourspace_of(metadata.icc, metadata.exif).name.startswith(expected)
    assert colour.colourspace_of(None).source == "assumed"


def test_cli_colorspace(tmp_path: Path) -> None:
    tagged, target = tmp_path / "wide.png", tmp_path / "web.png"
    Image.fromarray(RGB).save(tagged, icc_profile=WIDE)

    def run(*args: str, process: bool = False) -> subprocess.CompletedProcess[str]:
        argv = ["apply", str(tagged), "-o", str(target), "-f", "flip", "--backend", "cpu", *args]
        if process:
            return subprocess.run([sys.executable, "-m", "cvfilters", *argv], capture_output=True, text=True,
                                  check=False)
        return run_cli(*argv)

    # the whole conversion as a process runs it; the profile file and the refusals in this process
    done = run("--colorspace", "srgb", "--intent", "perceptual", "--linear", "--explain", process=True)
    assert done.returncode == 0, done.stderr
    assert "colour: RGB built-in [icc] -> srgb (perceptual); linear light: sRGB transfer" in done.stderr
    with Image.open(target) as result:
        assert description(result.info["icc_profile"]) == "sRGB built-in"
        flipped = np.asarray(result)[:, ::-1]
    assert levels(flipped, reference(RGB, WIDE, SRGB, 0)) <= 1
    icc = tmp_path / "wide.icc"
    icc.write_bytes(WIDE)
    assert run("--colorspace", str(icc)).returncode == 0
    for bad in (["--colorspace", str(tmp_path / "missing.icc")], ["--intent", "vivid"],
                ["--colorspace", str(tagged)]):
        refused = run(*bad)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr


# Adobe RGB (1998) as its specification writes it (section 4.3.1.2 and table 4.1): D65, these
# primaries, gamma 563/256; built here, independently of the module's constants.
ADOBE = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.3290, 1.0], gamma=2.19921875,
                                primaries=[0.64, 0.33, 1, 0.21, 0.71, 1, 0.15, 0.06, 1])


@pytest.mark.parametrize("name", ["adobe-rgb", "adobergb", "adobe_rgb", "Adobe-RGB", "ADOBE_RGB"])
def test_every_spelling_of_adobe_rgb_converts_as_the_specification(name: str) -> None:
    out = colour.convert(np.ascontiguousarray(RGB[..., ::-1]), None, name)
    assert levels(out[..., ::-1], reference(RGB, SRGB, ADOBE)) <= 1  # 1 level: LittleCMS's 8-bit rounding
    assert levels(out[..., ::-1], RGB) > 20  # not left as sRGB


def test_a_profile_file_is_read_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "wide.icc"
    path.write_bytes(WIDE)
    assert colour.profile_bytes(path) == WIDE
    assert colour.profile_bytes(str(path)) == WIDE
    out = colour.convert(np.ascontiguousarray(RGB[..., ::-1]), None, path)
    assert levels(out[..., ::-1], reference(RGB, SRGB, WIDE)) <= 1


def test_profile_refusals_name_the_file_and_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "missing.icc"
    with pytest.raises(cvf.UsageError) as refused:
        colour.profile_bytes(missing)
    assert str(refused.value) == (f"colorspace: {missing}: cannot read the profile (No such file or directory); "
                                  "use keep, srgb, adobe-rgb or an ICC file")
    text = tmp_path / "notes.icc"
    text.write_bytes(b"not a profile")
    with pytest.raises(cvf.UsageError) as refused:
        colour.profile_bytes(text)
    assert str(refused.value).startswith(f"colorspace: {text}: not an ICC profile (")
    with pytest.raises(cvf.UsageError) as refused:
        colour.profile_bytes(b"not a profile")
    assert str(refused.value).startswith("colorspace: profile: not an ICC profile (")
    with pytest.raises(cvf.UsageError) as refused:
        colour.convert(RGB, None, "srgb", "vivid")  # type: ignore[arg-type]
    assert str(refused.value) == "intent 'vivid' is not one of perceptual, relative, saturation, absolute"


def test_profile_files_are_bounded_at_16_mib(tmp_path: Path) -> None:
    limit, over = tmp_path / "limit.icc", tmp_path / "over.icc"
    with open(limit, "wb") as file:  # sparse: the size is what the bound reads
        file.truncate(16 * 1024 * 1024)
    with open(over, "wb") as file:
        file.truncate(16 * 1024 * 1024 + 1)
    with pytest.raises(cvf.UsageError) as refused:
        colour.profile_bytes(over)
    assert str(refused.value) == f"colorspace: {over}: larger than 16 MiB"
    with pytest.raises(cvf.UsageError) as refused:  # exactly 16 MiB is read, then refused as no profile
        colour.profile_bytes(limit)
    assert str(refused.value).startswith(f"colorspace: {limit}: not an ICC profile (")


def test_a_conversion_to_the_same_profile_leaves_the_values_untouched() -> None:
    # 1e-6 to 1.5, beyond 1 too: through LittleCMS sRGB -> sRGB moves some by a few 1e-9 (this host)
    values = np.float32(10) ** RNG.uniform(-6, np.log10(1.5), (64, 64, 4)).astype(np.float32)
    # the same sRGB built at another moment: only the header's date (bytes 24-35, ICC.1:2010 7.2.8) differs
    # and its profile ID (bytes 84-99, an MD5 that covers the date) where one is written
    later = SRGB[:24] + bytes([255] * 12) + SRGB[36:]  # every byte of the date differs, the edges too
    with_id = later[:84] + bytes(range(1, 17)) + later[100:]
    for source, target in ((None, "srgb"), (SRGB, "srgb"), (later, "srgb"), (with_id, "srgb"), (WIDE, WIDE)):
        np.testing.assert_array_equal(colour.convert(values, source, target), values)


def renamed(icc: bytes, old: str, new: str) -> bytes:
    """``icc`` with its description (a UTF-16 ``mluc`` string) changed to another of the same length."""
    assert len(old) == len(new) and old.encode("utf-16-be") in icc
    return icc.replace(old.encode("utf-16-be"), new.encode("utf-16-be"))


def with_media_white(icc: bytes, x: float, y: float) -> bytes:
    """``icc`` with its ``wtpt`` tag's XYZ (s15Fixed16, ICC.1:2010 4.6 and 10.31) set to the white at ``x, y``."""
    count = struct.unpack(">I", icc[128:132])[0]
    for entry in range(132, 132 + 12 * count, 12):
        signature, offset, _ = struct.unpack(">4sII", icc[entry:entry + 12])
        if signature == b"wtpt":
            xyz = b"".join(struct.pack(">i", round(v * 65536)) for v in (x / y, 1.0, (1 - x - y) / y))
            return icc[:offset + 8] + xyz + icc[offset + 20:]
    raise AssertionError("no wtpt tag")


def test_grey_images_are_returned_unchanged() -> None:
    grey = RGB[..., 0]
    for image in (grey, grey[..., None], grey.astype(np.float32) / 255):
        np.testing.assert_array_equal(colour.convert(image, WIDE, "srgb"), image)


def test_8_bit_colour_converts_in_bgr_order_and_alpha_passes() -> None:
    bgra = np.dstack([RGB[..., ::-1], RNG.integers(0, 256, RGB.shape[:2], dtype=np.uint8)])
    out = colour.convert(bgra, WIDE, "srgb")
    assert out.shape == bgra.shape and out.dtype == np.uint8
    assert levels(out[..., 2::-1], reference(RGB, WIDE, SRGB)) <= 1
    np.testing.assert_array_equal(out[..., 3], bgra[..., 3])


def test_the_absolute_intent_reaches_littlecms_at_16_bit_and_float() -> None:
    # A v4 profile's media white is D50 unless its wtpt tag says otherwise: with D65 there, absolute
    # colorimetric keeps sRGB's white as it is (yellowish in this space) where relative maps white to white.
    d65_white = with_media_white(WIDE, 0.3127, 0.3290)
    absolute, relative = reference(RGB, SRGB, d65_white, 3), reference(RGB, SRGB, d65_white, 1)
    assert levels(absolute, relative) > 50 and np.abs(absolute - relative).mean() > 10  # measured 55 and 10.3

    def near_absolute(out: np.ndarray) -> None:
        # 8-bit LittleCMS goes through an interpolated table here: 2.5 % of the values, bright saturated
        # colours, differ by 2 to 9 levels from its float result; the mean difference is 0.38 level
        diff = np.abs(out - absolute)
        assert diff.max() <= 10 and diff.mean() <= 0.5

    bgr = np.ascontiguousarray(RGB[..., ::-1])
    near_absolute(colour.convert(bgr.astype(np.uint16) * 257, SRGB, d65_white, "absolute")[..., ::-1] / 257)
    near_absolute(np.clip(colour.convert(bgr.astype(np.float32) / 255, SRGB, d65_white, "absolute")[..., ::-1], 0, 1)
                  * 255)


def test_16_bit_and_float_between_two_profiles_of_one_space_come_back_exact() -> None:
    # the same profile under another description: LittleCMS converts (the bytes differ) and the
    # matrices and curves cancel, so every one of the 65536 values comes back, black and white too
    copy = renamed(WIDE, "RGB built-in", "RGB copy-in!")
    ramp = np.arange(65536, dtype=np.uint16)
    values = np.stack([ramp, ramp[::-1], np.roll(ramp, 12345)], axis=-1).reshape(256, 256, 3)
    np.testing.assert_array_equal(colour.convert(values, WIDE, copy), values)
    unit = values.astype(np.float32) / 65535
    np.testing.assert_allclose(colour.convert(unit, WIDE, copy), unit, rtol=0, atol=1e-6)


def to_xyz(primaries: list[tuple[float, float]], white: tuple[float, float] = (0.3127, 0.3290)) -> np.ndarray:
    """The linear RGB -> XYZ matrix of primaries and a white (their chromaticities), as SMPTE RP 177 derives it."""
    columns = np.array([[x / y, 1.0, (1 - x - y) / y] for x, y in primaries]).T
    white_xyz = np.array([white[0] / white[1], 1.0, (1 - white[0] - white[1]) / white[1]])
    return np.asarray(columns * np.linalg.solve(columns, white_xyz))


def test_16_bit_values_beyond_the_target_gamut_are_clipped() -> None:
    # WIDE (Adobe's primaries, gamma 2.2) to sRGB in numpy: 14 % of random colours fall below 0 and
    # 4 % above 1 in sRGB; stored as 0 and 65535, not wrapped around
    matrix = np.linalg.solve(to_xyz([(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)]),
                             to_xyz([(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)]))
    values = RNG.integers(0, 65536, (64, 64, 3)).astype(np.uint16)
    linear = np.clip((values / 65535.0) ** 2.2 @ matrix.T, 0, 1)
    encoded = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)  # IEC 61966-2-1
    out = colour.convert(np.ascontiguousarray(values[..., ::-1]), WIDE, "srgb")[..., ::-1]
    # 32 of 65535: LittleCMS holds the profiles in 16.16 fixed point (22 measured, near black)
    assert np.abs(out - np.rint(encoded * 65535)).max() <= 32
    assert np.mean(out == 0) > 0.05 and np.mean(out == 65535) > 0.01


def test_16_bit_and_float_without_imagecodecs_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "imagecodecs", None)  # `import imagecodecs` raises ImportError
    for dtype in (np.uint16, np.float32):
        with pytest.raises(cvf.UsageError) as refused:
            colour.convert(RGB.astype(dtype), SRGB, WIDE)
        assert str(refused.value) == (f"colorspace: converting {np.dtype(dtype)} images needs imagecodecs (LittleCMS "
                                      "at 16-bit and float precision): pip install 'cvfilters[colour]'")


def test_profiles_of_other_colours_are_refused_for_colour_images() -> None:
    grey = imagecodecs.cms_profile("gray", gamma=2.2)
    bgr = np.ascontiguousarray(RGB[..., ::-1])
    with pytest.raises(cvf.UsageError) as refused:
        colour.convert(bgr, grey, "srgb")
    assert str(refused.value) == ("colorspace: the image's ICC profile (gray built-in) is a GRAY profile, not RGB; "
                                  "keep its colours (colorspace keep)")
    with pytest.raises(cvf.UsageError) as refused:
        colour.convert(bgr.astype(np.float32) / 255, None, grey)
    assert str(refused.value) == ("colorspace: the target profile (gray built-in) is a GRAY profile, not RGB: "
                                  "a colour image needs an RGB one")


def srgb_decode(x: np.ndarray) -> np.ndarray:
    """IEC 61966-2-1, written out here."""
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def test_the_transfer_of_a_profile() -> None:
    ramp = np.linspace(0, 1, 1001, dtype=np.float32)
    later = SRGB[:24] + bytes([255] * 12) + SRGB[36:]  # LittleCMS's sRGB made at another moment
    for icc in (None, b"", SRGB, later):
        np.testing.assert_allclose(colour.transfer_of(icc).decode(ramp), srgb_decode(ramp.astype(np.float64)),
                                   rtol=0, atol=1e-6)  # float32 arithmetic
    grey = imagecodecs.cms_profile("gray", gamma=2.2)
    for icc in (WIDE, grey):  # sampled through LittleCMS at 4096 steps: within 2e-6 of the power law both ways
        assert colour.transfer_of(icc).name in ("RGB built-in", "gray built-in")  # (5.5e-7 and 8.9e-7 measured;
        np.testing.assert_allclose(colour.transfer_of(icc).decode(ramp), ramp.astype(np.float64) ** 2.2,
                                   rtol=0, atol=2e-6)  # 50 steps: 1.4e-4 and 6e-3)
        np.testing.assert_allclose(colour.transfer_of(icc).encode(ramp), ramp.astype(np.float64) ** (1 / 2.2),
                                   rtol=0, atol=2e-6)
    with pytest.raises(cvf.UsageError, match=r"^linear light: the image's colour profile: not an ICC profile \("):
        colour.transfer_of(b"not a profile" * 16)
    lab = ImageCms.ImageCmsProfile(ImageCms.createProfile("LAB")).tobytes()
    with pytest.raises(cvf.UsageError) as refused:
        colour.transfer_of(lab)
    assert str(refused.value).endswith("is a Lab profile: only RGB and grey profiles give a transfer function")


SRGB_PRIMARIES = [0.64, 0.33, 1, 0.30, 0.60, 1, 0.15, 0.06, 1]


def straight(low: float, high: float, white: list[float] | None = None) -> bytes:
    """An RGB matrix profile with sRGB's primaries whose curve is the straight line from ``low`` to ``high``
    (a two-entry table, 16-bit: give multiples of 0.2)."""
    table = np.array([round(low * 65535), round(high * 65535)], np.uint16)
    return bytes(imagecodecs.cms_profile("rgb", whitepoint=white or [0.3127, 0.3290, 1.0], primaries=SRGB_PRIMARIES,
                                         transferfunction=table))


def test_a_straight_profile_curve_gives_the_identity_transfer_even_below_full_white() -> None:
    """The transfer is the curve scaled to pass through (0, 0) and (1, 1), as Transfer documents: a linear
    profile, or one whose white is 0.8 of the PCS white, is the identity. Catches the light scaled by its range
    instead of divided, or measured from the second sample (1 / 4095 off)."""
    ramp = np.linspace(0, 1, 1001, dtype=np.float32)
    linear = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.3290, 1.0], primaries=SRGB_PRIMARIES, gamma=1.0)
    for icc in (linear, straight(0.0, 0.8)):
        transfer = colour.transfer_of(icc)
        np.testing.assert_allclose(transfer.decode(ramp), ramp, rtol=0, atol=5e-5)  # 2.2e-5 measured: the table
        np.testing.assert_allclose(transfer.encode(ramp), ramp, rtol=0, atol=5e-5)


def test_the_transfer_of_a_profile_with_a_curve_per_channel_is_the_light_of_its_grey() -> None:
    """Curves v, v^2 and v^3 for R, G and B (a D50 white: no adaptation): the light (Y) of the grey (v, v, v) is
    Y_R v + Y_G v^2 + Y_B v^3, the Y row of the primaries' matrix (SMPTE RP 177, computed here). Catches another
    row of XYZ (Z, mostly blue) read as the light."""
    d50 = (0.3457, 0.3585)
    v = np.linspace(0, 1, 4096)
    curves = np.stack([v, v ** 2, v ** 3]).astype(np.float32)
    icc = imagecodecs.cms_profile("rgb", whitepoint=[*d50, 1.0], primaries=SRGB_PRIMARIES, transferfunction=curves)
    y_r, y_g, y_b = to_xyz([(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)], d50)[1]
    ramp = np.linspace(0, 1, 1001, dtype=np.float32)
    x = ramp.astype(np.float64)
    np.testing.assert_allclose(colour.transfer_of(icc).decode(ramp), y_r * x + y_g * x ** 2 + y_b * x ** 3,
                               rtol=0, atol=1e-4)  # 1.9e-5 measured: the matrix in 16.16 fixed point


def test_8_bit_relative_colorimetric_keeps_a_raised_black() -> None:
    """A profile whose black is 0.2 of white (light 0.2 + 0.8 v, sRGB's primaries and white) to sRGB at 8 bits: the
    relative intent (the default) keeps that black grey, as IEC 61966-2-1's encoding of the light written out here
    gives, within LittleCMS's 8-bit rounding. Catches Pillow's transform built without the intent: perceptual,
    where LittleCMS compensates the black point of v4 profiles and black comes out black (85 levels off)."""
    light = 0.2 + 0.8 * RGB / 255.0
    encoded = np.where(light <= 0.0031308, 12.92 * light, 1.055 * light ** (1 / 2.4) - 0.055) * 255
    for intent in ("relative", "absolute"):  # the same here: both whites are D50 after adaptation
        out = colour.convert(np.ascontiguousarray(RGB[..., ::-1]), straight(0.2, 1.0), "srgb", intent)
        assert levels(out[..., ::-1], encoded) <= 1  # 0.5 measured


def test_adobe_rgb_without_imagecodecs_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Adobe RGB profile is built with imagecodecs: without it, even an 8-bit conversion is a usage error
    naming what to install."""
    monkeypatch.setitem(sys.modules, "imagecodecs", None)  # `import imagecodecs` raises ImportError
    colour._adobe_rgb.cache_clear()  # as in a new process: the profile not built yet
    with pytest.raises(cvf.UsageError) as refused:
        colour.convert(np.ascontiguousarray(RGB[..., ::-1]), None, "adobe-rgb")
    assert str(refused.value) == ("colorspace: building the Adobe RGB profile needs imagecodecs: "
                                  "pip install 'cvfilters[colour]'")
