"""Orientation is applied exactly once on every decode path (issue 28).

Each file stores the same pixels (blocks of distinct colours, 24x40, so every flip and
rotation differs) with one of the eight orientations. The reference is a numpy rotation or
flip of those stored pixels (``UPRIGHT``, itself checked against Pillow's
``ImageOps.exif_transpose``), never cvfilters' own transform. Paths (the decoder that
reads each file, and who applies the orientation):

* OpenCV, cvfilters applies it: JPEG (EXIF APP1), PNG (eXIf), WebP (EXIF chunk), AVIF
  (``irot``/``imir`` boxes, reported by Pillow's header as the EXIF tag).
* OpenCV applies it itself: TIFF (8- and 16-bit, float, grey, 1-bit; stripped and tiled).
* Pillow (each case :func:`cvfilters.io.decoders.needs_pillow` routes there), the Pillow
  decoder applies it: LZMA, Zstandard and Deflate-less codecs, 4-bit palette, 16-bit-map
  palette, 8-bit with alpha, no Photometric tag, and a grey PNG with a tRNS key (EXIF).
* Frames: every frame of an APNG and an animated WebP (cvfilters applies it; OpenCV's PNG
  decoder misses an APNG's eXIf, the header has it), and every page of a multi-page TIFF,
  each page with its own Orientation tag (OpenCV applies it per page).
* Video: ``cv2.VideoCapture`` applies a display-matrix rotation itself (its
  ``CAP_PROP_ORIENTATION_AUTO``), and the written video carries none.

``read``, ``read_with_metadata`` and ``cvfilters apply`` give the same upright pixels; the
files written are checked by a second reader (Pillow, tifffile) and carry Orientation 1 or none.
"""

from __future__ import annotations

import struct
import subprocess
import warnings
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageOps, features

from cvfilters.cli.main import main
from cvfilters.io import decoders, reading, writing

tifffile = pytest.importorskip("tifffile", reason="tifffile writes the TIFF cases and reads them back")

ORIENTATIONS = range(1, 9)
TAG = 0x0112
# numpy: the stored pixels -> what a viewer shows for each orientation (EXIF 2.32, tag 274)
UPRIGHT: dict[int, Callable[[np.ndarray], np.ndarray]] = {
    1: lambda s: s,
    2: lambda s: s[:, ::-1],
    3: lambda s: s[::-1, ::-1],
    4: lambda s: s[::-1],
    5: lambda s: s.swapaxes(0, 1),
    6: lambda s: np.rot90(s, -1),
    7: lambda s: s[::-1, ::-1].swapaxes(0, 1),
    8: lambda s: np.rot90(s, 1),
}


def stored_rgb(seed: int = 0) -> np.ndarray:
    """24x40 RGB of 8x8 blocks in 15 distinct colours (a block's centre survives JPEG)."""
    rng = np.random.default_rng(seed)
    colours = rng.permutation(np.array([(r, g, b) for r in (30, 220) for g in (30, 130, 220) for b in (30, 220)]
                                       + [(130, 30, 130), (130, 220, 30), (30, 30, 130)], np.uint8))[:15]
    return np.repeat(np.repeat(colours.reshape(3, 5, 3), 8, axis=0), 8, axis=1)


def rgb_of(bgr: np.ndarray) -> np.ndarray:
    """RGB(A) from cvfilters' BGR(A)."""
    return bgr if bgr.ndim == 2 else bgr[..., [2, 1, 0, 3][: bgr.shape[2]]]


def exif_of(orientation: int) -> Image.Exif:
    exif = Image.Exif()
    exif[TAG] = orientation
    return exif


def assert_upright(got: np.ndarray, stored: np.ndarray, orientation: int, tolerance: int = 0) -> None:
    want = UPRIGHT[orientation](stored)
    assert got.shape == want.shape, f"orientation {orientation}: {got.shape} != {want.shape}"
    if tolerance:
        assert np.abs(got[4::8, 4::8].astype(int) - want[4::8, 4::8]).max() <= tolerance, orientation
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"orientation {orientation}")


def tiff_bytes(stored: np.ndarray, orientation: int, **options: object) -> bytes:
    buffer = BytesIO()
    tifffile.imwrite(buffer, stored, extratags=[(274, "H", 1, orientation, True)], **options)
    return buffer.getvalue()


def pillow_bytes(image: Image.Image, fmt: str, orientation: int, **options: object) -> bytes:
    buffer = BytesIO()
    image.save(buffer, fmt, exif=exif_of(orientation), **options)
    return buffer.getvalue()


def raw_tiff(stored: np.ndarray, orientation: int, fields: dict[int, list[int]], bits: int = 8) -> bytes:
    """A little-endian TIFF of one uncompressed strip written field by field (what tifffile will
    not write: 4-bit samples without imagecodecs, no Photometric tag); ``fields`` as SHORTs."""
    height, width = stored.shape
    if bits == 4:  # two pixels a byte, the first in the high nibble; rows end on a byte
        padded = np.pad(stored, ((0, 0), (0, width % 2)))
        pixels = (padded[:, 0::2] << 4 | padded[:, 1::2]).astype(np.uint8).tobytes()
    else:
        pixels = stored.astype(np.uint8).tobytes()
    shorts = {256: [width], 257: [height], 258: [bits], 259: [1], 274: [orientation], 277: [1], 278: [height],
              **fields}
    tags = sorted([*shorts, 273, 279])
    data_at = 8 + 2 + 12 * len(tags) + 4
    entries, extra = [], b""
    for tag in tags:
        if tag in (273, 279):
            value = data_at + sum(len(v) * 2 for v in shorts.values() if len(v) > 2) if tag == 273 else len(pixels)
            entries.append(struct.pack("<HHII", tag, 4, 1, value))
        elif len(shorts[tag]) > 2:
            entries.append(struct.pack("<HHII", tag, 3, len(shorts[tag]), data_at + len(extra)))
            extra += struct.pack(f"<{len(shorts[tag])}H", *shorts[tag])
        else:
            entries.append(struct.pack("<HHI", tag, 3, len(shorts[tag])) + struct.pack("<2H", *shorts[tag], 0)[:4])
    return b"II*\0" + struct.pack("<IH", 8, len(tags)) + b"".join(entries) + b"\0\0\0\0" + extra + pixels


def grey(stored: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(stored[..., 1])


# --- the cases: name -> (bytes for an orientation, the stored pixels as read, JPEG-like tolerance)
RGB = stored_rgb()
GREY = grey(RGB)
PALETTE = (GREY // 16).astype(np.uint8)  # 4-bit indices
COLOURMAP = (np.arange(256 * 3).reshape(3, 256) * 1361 % 65536).astype(np.uint16)  # 16-bit values
CASES: dict[str, tuple[Callable[[int], bytes], np.ndarray, int]] = {
    # OpenCV decodes; cvfilters applies the EXIF orientation
    "jpeg": (lambda o: pillow_bytes(Image.fromarray(RGB), "JPEG", o, quality=100, subsampling=0), RGB, 8),
    "png": (lambda o: pillow_bytes(Image.fromarray(RGB), "PNG", o), RGB, 0),
    "webp": (lambda o: pillow_bytes(Image.fromarray(RGB), "WEBP", o, lossless=True), RGB, 0),
    # OpenCV decodes and applies the TIFF Orientation itself
    "tiff-u8": (lambda o: tiff_bytes(RGB, o, photometric="rgb"), RGB, 0),
    "tiff-u16-tiled": (lambda o: tiff_bytes(RGB.astype(np.uint16) * 257, o, photometric="rgb", tile=(16, 16)),
                       RGB.astype(np.uint16) * 257, 0),
    "tiff-f32-grey": (lambda o: tiff_bytes(GREY / np.float32(255), o, photometric="minisblack"),
                      GREY / np.float32(255), 0),
    "tiff-1bit": (lambda o: tiff_bytes(GREY > 128, o, photometric="minisblack"),
                  np.where(GREY > 128, 255, 0).astype(np.uint8), 0),
    # Pillow decodes (decoders.needs_pillow) and applies it
    "tiff-lzma": (lambda o: tiff_bytes(RGB, o, photometric="rgb", compression="lzma"), RGB, 0),
    "tiff-zstd": (lambda o: tiff_bytes(RGB, o, photometric="rgb", compression="zstd"), RGB, 0),
    "tiff-4bit-palette": (lambda o: raw_tiff(PALETTE, o, {262: [3], 320: COLOURMAP[:, :16].ravel().tolist()}, 4),
                          np.stack([COLOURMAP[c][PALETTE] >> 8 for c in range(3)], axis=-1).astype(np.uint8), 0),
    "tiff-palette": (lambda o: tiff_bytes(PALETTE, o, photometric="palette", colormap=COLOURMAP),
                     np.stack([COLOURMAP[c][PALETTE] >> 8 for c in range(3)], axis=-1).astype(np.uint8), 0),
    "tiff-u8-alpha": (lambda o: tiff_bytes(np.dstack([RGB, GREY]), o, photometric="rgb", extrasamples=["unassalpha"]),
                      np.dstack([RGB, GREY]), 0),
    "tiff-no-photometric": (lambda o: raw_tiff(GREY, o, {}), 255 - GREY, 0),  # read as WhiteIsZero, Pillow's guess
    "png-grey-trns": (lambda o: pillow_bytes(Image.fromarray(GREY), "PNG", o, transparency=int(GREY[0, 0])),
                      np.dstack([GREY] * 3 + [np.where(GREY == GREY[0, 0], 0, 255).astype(np.uint8)]), 0),
}
PILLOW_ROUTED = {"tiff-lzma", "tiff-zstd", "tiff-4bit-palette", "tiff-palette", "tiff-u8-alpha",
                 "tiff-no-photometric", "png-grey-trns"}


def case_bytes(name: str, orientation: int) -> bytes:
    if name in ("tiff-lzma", "tiff-zstd"):
        codec = name.removeprefix("tiff-")
        try:
            Image.open(BytesIO(tiff_bytes(RGB, 1, photometric="rgb", compression=codec))).load()
        except Exception as exc:  # a Pillow or tifffile without the codec
            pytest.skip(f"Pillow or tifffile here cannot handle TIFF {codec}: {exc}")
    return CASES[name][0](orientation)


def read_rgb(path: Path) -> np.ndarray:
    return rgb_of(reading.read(path))


def inverted(rgb: np.ndarray) -> np.ndarray:
    """What ``-f invert`` makes of 8-bit pixels (the CLI needs a filter): colour negated, alpha kept."""
    out = 255 - rgb
    if rgb.ndim == 3 and rgb.shape[2] == 4:
        out[..., 3] = rgb[..., 3]
    return out


# --- the reference -----------------------------------------------------------------------


@pytest.mark.parametrize("orientation", ORIENTATIONS)
def test_the_numpy_reference_agrees_with_pillow(orientation):
    upright = ImageOps.exif_transpose(Image.open(BytesIO(case_bytes("png", orientation))))
    assert_upright(np.asarray(upright), RGB, orientation)


# --- still images: every decoder path, all eight orientations -----------------------------


@pytest.mark.parametrize("name", CASES)
def test_every_decoder_path_turns_the_image_upright_once(tmp_path, name):
    _, stored, tolerance = CASES[name]
    header_reasons = set()
    for orientation in ORIENTATIONS:
        path = tmp_path / f"{name}-{orientation}.{'tif' if name.startswith('tiff') else name.split('-')[0]}"
        path.write_bytes(case_bytes(name, orientation))
        image, metadata = reading.read_with_metadata(path)
        assert_upright(rgb_of(image), stored, orientation, tolerance)
        np.testing.assert_array_equal(reading.read(path), image)  # read and read_with_metadata agree
        if metadata.exif:  # the EXIF carried to outputs says the pixels are upright
            carried = Image.Exif()
            carried.load(b"Exif\0\0" + metadata.exif)
            assert carried[TAG] == 1
        data = path.read_bytes()
        header = decoders.parse_header(data)
        header_reasons.add(decoders.needs_pillow(header, data) if header else None)
    # the case exercises the decoder path it is named for
    assert (None not in header_reasons) == (name in PILLOW_ROUTED), header_reasons


@pytest.mark.skipif(not features.check("avif") or not cv2.haveImageWriter("x.avif"),
                    reason="AVIF needs Pillow's and OpenCV's AVIF codecs")
@pytest.mark.parametrize("orientation", ORIENTATIONS)
def test_avif_transforms_are_applied_once(tmp_path, orientation):
    # Pillow stores the EXIF orientation as irot/imir boxes over unchanged pixels
    path = tmp_path / "in.avif"
    path.write_bytes(pillow_bytes(Image.fromarray(RGB), "AVIF", orientation, quality=100))
    assert (b"irot" in path.read_bytes() or b"imir" in path.read_bytes()) == (orientation != 1)
    assert_upright(read_rgb(path), RGB, orientation, tolerance=12)


def test_the_reported_tiff_bug_lzma_orientation_6(tmp_path):
    """Issue 28: a 60x40 LZMA TIFF with Orientation 6 came out 60x40 and turned 180 degrees."""
    stored = np.zeros((40, 60, 3), np.uint8)
    stored[:10, :10] = (255, 0, 0)
    case_bytes("tiff-lzma", 1)  # skips without the codec
    (tmp_path / "o6.tif").write_bytes(tiff_bytes(stored, 6, photometric="rgb", compression="lzma"))
    code = main(["apply", str(tmp_path / "o6.tif"), "-o", str(tmp_path / "out.png"), "-f", "invert"])
    assert code == 0
    out = np.asarray(Image.open(tmp_path / "out.png"))
    assert out.shape == (60, 40, 3)  # 40 wide, 60 high
    np.testing.assert_array_equal(out, 255 - np.rot90(stored, -1))
    assert (out[:10, 30:] == (0, 255, 255)).all()  # the red block, inverted, is now at the top right


# --- the CLI and the written tag ----------------------------------------------------------

@pytest.mark.parametrize("name", ["jpeg", "png", "webp", "tiff-u8", "tiff-lzma", "tiff-4bit-palette",
                                  "tiff-no-photometric", "png-grey-trns"])
def test_cli_gives_the_api_result_and_writes_orientation_1(tmp_path, name):
    _, stored, tolerance = CASES[name]
    sources = []
    for orientation in ORIENTATIONS:
        path = tmp_path / "in" / f"{orientation}.{'tif' if name.startswith('tiff') else name.split('-')[0]}"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(case_bytes(name, orientation))
        sources.append(path)
    for ext in (".png", ".jpg", ".tif"):
        out = tmp_path / f"out-{ext.lstrip('.')}"
        assert main(["apply", *map(str, sources), "-o", str(out), "-f", "invert", "--format", ext.lstrip(".")]) == 0
        for orientation, source in zip(ORIENTATIONS, sources, strict=True):
            written = out / f"{orientation}{ext}"
            with Image.open(written) as second:  # a second reader
                assert second.getexif().get(TAG, 1) == 1
                alpha = stored.ndim == 3 and stored.shape[2] == 4 and ext != ".jpg"
                pixels = np.asarray(second.convert("RGBA" if alpha else "RGB" if stored.ndim == 3 else "L"))
            if ext == ".tif":
                with tifffile.TiffFile(written) as tif:
                    assert tif.pages[0].tags.valueof(274, 1) == 1
            if ext == ".jpg":  # no alpha; lossy (quality 90, the default for a non-JPEG input)
                assert_upright(pixels, inverted(stored)[..., :3] if stored.ndim == 3 else 255 - stored, orientation,
                               tolerance + 12)
            else:
                np.testing.assert_array_equal(pixels, inverted(rgb_of(reading.read(source))))  # as the API reads it
                assert_upright(pixels, inverted(stored), orientation, tolerance)


@pytest.mark.parametrize("orientation", [3, 6])
def test_metadata_written_back_carries_orientation_1(tmp_path, orientation):
    source = tmp_path / "in.jpg"
    source.write_bytes(case_bytes("jpeg", orientation))
    image, metadata = reading.read_with_metadata(source)
    for ext in (".jpg", ".png", ".webp", ".tif"):
        out = writing.write(tmp_path / f"out{ext}", image, metadata=metadata)
        with Image.open(out) as second:
            assert second.getexif().get(TAG, 1) == 1, ext
            assert_upright(np.asarray(second.convert("RGB")), RGB, orientation, 16)
        if ext == ".tif":
            with tifffile.TiffFile(out) as tif:
                assert tif.pages[0].tags.valueof(274, 1) == 1


# --- frames: animations and multi-page TIFF ----------------------------------------------

FRAMES = [stored_rgb(seed) for seed in range(3)]


def animation_bytes(fmt: str, orientation: int) -> bytes:
    buffer = BytesIO()
    first, *rest = (Image.fromarray(frame) for frame in FRAMES)
    options = {"lossless": True} if fmt == "WEBP" else {}
    first.save(buffer, fmt, save_all=True, append_images=rest, exif=exif_of(orientation), duration=40, loop=0,
               **options)
    return buffer.getvalue()


def frames_of(path: Path) -> list[np.ndarray]:
    """Every frame as RGB, read by Pillow (the second reader)."""
    with Image.open(path) as image:
        assert image.getexif().get(TAG, 1) == 1
        out = []
        for index in range(getattr(image, "n_frames", 1)):
            image.seek(index)
            out.append(np.asarray(image.convert("RGB")))
        return out


@pytest.mark.parametrize(("fmt", "ext"), [("PNG", ".png"), ("WEBP", ".webp")])
def test_every_frame_of_an_animation_is_turned_once(tmp_path, fmt, ext):
    sources = []
    for orientation in ORIENTATIONS:
        path = tmp_path / "in" / f"{orientation}{ext}"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(animation_bytes(fmt, orientation))
        assert_upright(read_rgb(path)[..., :3], FRAMES[0], orientation)  # the API reads the first frame
        sources.append(path)
    assert main(["apply", *map(str, sources), "-o", str(tmp_path / "out"), "-f", "invert"]) == 0
    for orientation in ORIENTATIONS:
        frames = frames_of(tmp_path / "out" / f"{orientation}{ext}")
        assert len(frames) == len(FRAMES)
        for frame, stored in zip(frames, FRAMES, strict=True):  # WebP output is lossy at quality 90 (issue 23)
            assert_upright(frame, 255 - stored, orientation, tolerance=8 if ext == ".webp" else 0)


def test_every_page_of_a_multipage_tiff_is_turned_by_its_own_tag(tmp_path):
    pages = {6: FRAMES[0], 3: FRAMES[1], 8: FRAMES[2], 5: stored_rgb(3), 1: stored_rgb(4), 2: stored_rgb(5),
             7: stored_rgb(6), 4: stored_rgb(7)}
    source = tmp_path / "pages.tif"
    with tifffile.TiffWriter(source) as tif:
        for orientation, stored in pages.items():
            tif.write(stored, photometric="rgb", extratags=[(274, "H", 1, orientation, True)])
    assert_upright(read_rgb(source), pages[6], 6)  # the API reads the first page
    out = tmp_path / "out.tif"
    assert main(["apply", str(source), "-o", str(out), "-f", "invert"]) == 0
    with tifffile.TiffFile(out) as tif:  # second readers: tifffile for the tags, Pillow for the LZW pixels
        assert [page.tags.valueof(274, 1) for page in tif.pages] == [1] * len(pages)
    with Image.open(out) as written:
        assert written.n_frames == len(pages)
        for index, (orientation, stored) in enumerate(pages.items()):
            written.seek(index)
            assert_upright(np.asarray(written.convert("RGB")), 255 - stored, orientation)


def test_a_rotated_video_is_turned_once(tmp_path):
    ffmpeg = pytest.importorskip("imageio_ffmpeg", reason="ffmpeg makes the rotated video").get_ffmpeg_exe()
    plain, rotated, out = tmp_path / "plain.mp4", tmp_path / "rotated.mp4", tmp_path / "out.mp4"
    subprocess.run([ffmpeg, "-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=64x32:rate=5", "-t", "1",
                    "-pix_fmt", "yuv420p", str(plain)], check=True, timeout=60)
    # the same stream with a display matrix: shown turned 90 degrees counter-clockwise
    subprocess.run([ffmpeg, "-y", "-loglevel", "error", "-display_rotation", "90", "-i", str(plain), "-c", "copy",
                    str(rotated)], check=True, timeout=60)
    assert main(["apply", str(rotated), "-o", str(out), "-f", "invert"]) == 0
    stored = cv2.VideoCapture(str(plain)).read()[1].astype(int)
    capture = cv2.VideoCapture(str(out))
    assert capture.get(cv2.CAP_PROP_ORIENTATION_META) == 0  # no rotation left for a player to apply
    frame = capture.read()[1].astype(int)
    assert frame.shape == (64, 32, 3)
    assert np.abs(255 - frame - np.rot90(stored, 1)).mean() < 8  # lossy twice; turned the other way: ~195


def exif_block(order: str, orientation: int) -> bytes:
    """A TIFF-structured EXIF block built field by field: Make, Orientation, Software (the tag is not first)."""
    entries = [(0x010F, 2, 4, b"Cam\0"), (TAG, 3, 1, struct.pack(f"{order}HH", orientation, 0)),
               (0x0131, 2, 4, b"Sw1\0")]
    return (b"II" if order == "<" else b"MM") + struct.pack(f"{order}HIH", 42, 8, len(entries)) + b"".join(
        struct.pack(f"{order}HHI", tag, kind, count) + value for tag, kind, count, value in entries) + b"\0" * 4


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("orientation", ORIENTATIONS)
def test_reset_reads_and_rewrites_the_tag_in_either_byte_order(order, orientation):
    from cvfilters.io.orientation import reset

    block = exif_block(order, orientation)
    for prefix in (b"", b"Exif\0\0"):
        assert reset(prefix + block) == (orientation, exif_block(order, 1))
    exif = Image.Exif()  # a second reader of the rewritten block
    exif.load(b"Exif\0\0" + reset(block)[1])
    assert exif[TAG] == 1 and exif[0x010F] == "Cam" and exif[0x0131] == "Sw1"
    assert reset(b"XX" + block[2:]) == (1, b"XX" + block[2:])  # no byte order mark: left alone
    assert reset(block[:6]) == (1, block[:6])  # too short


def test_reset_reads_only_the_entries_of_the_first_ifd():
    from cvfilters.io.orientation import reset

    for order in "<>":
        # one entry (Make), then a next-IFD offset and data that look like an Orientation entry of 6
        fake = struct.pack(f"{order}HHI", TAG, 3, 1) + struct.pack(f"{order}HH", 6, 0)
        block = (b"II" if order == "<" else b"MM") + struct.pack(f"{order}HIH", 42, 8, 1) + \
            struct.pack(f"{order}HHI", 0x010F, 2, 4) + b"Cam\0" + fake + b"\0" * 16
        assert reset(block) == (1, block), order


def test_requested_prefers_the_header_and_falls_back_to_the_decoder():
    from cvfilters.io.orientation import requested

    six, three = exif_block(">", 6), exif_block("<", 3)
    assert requested(None, six) == 6  # no EXIF in the header (OpenCV's block)
    assert requested(b"", six) == 6  # an empty one neither
    assert requested(three, six) == 3  # the header's (AVIF: irot/imir) wins
    assert requested(None, None) == 1


def pillow_orientation(block: bytes) -> int | None:
    """The Orientation Pillow reads from an EXIF block (None where it finds none): the independent reader."""
    exif = Image.Exif()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pillow warns of the cut-short blocks below
        exif.load(b"Exif\0\0" + block)
    return exif.get(TAG)


def ifd_block(order: str, entries: list[bytes], tail: bytes = b"\0" * 4) -> bytes:
    """A TIFF-structured EXIF block of ``entries`` (12 bytes each, or cut short) then ``tail``."""
    return (b"II" if order == "<" else b"MM") + struct.pack(f"{order}HIH", 42, 8, len(entries)) + \
        b"".join(entries) + tail


@pytest.mark.parametrize("order", ["<", ">"])
def test_an_orientation_entry_ending_the_block_is_read(order: str) -> None:
    """Catches a scan that stops one byte early and misses an entry with no next-IFD offset after it."""
    from cvfilters.io.orientation import reset

    block = ifd_block(order, [struct.pack(f"{order}HHIHH", TAG, 3, 1, 6, 0)], tail=b"")
    assert pillow_orientation(block) == 6
    assert reset(block)[0] == 6


@pytest.mark.parametrize("order", ["<", ">"])
def test_entries_are_read_at_their_12_byte_steps(order: str) -> None:
    """Catches a scan that looks at every byte and takes a value that merely looks like an Orientation
    entry (a Make of 4 undefined bytes ``12 01 03 00``) for the real one after it."""
    from cvfilters.io.orientation import reset

    make = struct.pack(f"{order}HHI", 0x010F, 7, 4) + struct.pack(f"{order}HH", TAG, 3)
    block = ifd_block(order, [make, struct.pack(f"{order}HHIHH", TAG, 3, 1, 6, 0)])
    assert pillow_orientation(block) == 6
    assert reset(block) == (6, ifd_block(order, [make, struct.pack(f"{order}HHIHH", TAG, 3, 1, 1, 0)]))


@pytest.mark.parametrize("order", ["<", ">"])
def test_an_entry_cut_short_by_the_block_end_is_not_read(order: str) -> None:
    """Catches a scan that reads past the block: an Orientation entry cut to 9 bytes is no tag (Pillow
    skips it) and the block is handed back unchanged, not lengthened by a rewritten value."""
    from cvfilters.io.orientation import reset

    make = struct.pack(f"{order}HHI", 0x010F, 2, 4) + b"Cam\0"
    block = ifd_block(order, [make, struct.pack(f"{order}HHIH", TAG, 3, 1, 6)[:9]], tail=b"")
    assert pillow_orientation(block) is None
    assert reset(block) == (1, block)
