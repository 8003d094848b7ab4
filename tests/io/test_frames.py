"""Animations and multi-page TIFFs keep every frame, its duration and the loop count.

Files are written by Pillow (an encoder independent of OpenCV's) with distinct flat-colour
frames and distinct durations; results are read back by Pillow too, so a frame that was
dropped, repeated, reordered or left unfiltered shows, and so does a lost duration or loop.
"""

from __future__ import annotations

import subprocess
import zlib
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from PIL import Image, ImageSequence

from cvfilters.core.errors import ImageTooLargeError, TruncatedImageError
from cvfilters.io import apng, decoders
from cvfilters.io import frames as frames_io
from tests import cli_runner, makefiles

ROOT = Path(__file__).resolve().parents[2]
DURATIONS = [100, 200, 300, 400]


def apply(*args: object) -> subprocess.CompletedProcess[str]:
    return cli_runner.run_cli("apply", *args, cwd=ROOT)


def pillow_frames(path: Path) -> tuple[list[np.ndarray], list[int], int | None]:
    """BGR frames, per-frame durations (ms) and the loop as Pillow reads them."""
    with Image.open(path) as image:
        frames, durations = [], []
        for frame in ImageSequence.Iterator(image):
            frames.append(np.asarray(frame.convert("RGB"))[..., ::-1].copy())
            durations.append(int(frame.info.get("duration", 0)))
        return frames, durations, image.info.get("loop")


@pytest.mark.parametrize("ext", [".gif", ".webp", ".png"], ids=["gif", "webp", "apng"])
def test_every_frame_is_filtered_and_timing_kept(tmp_path: Path, ext: str) -> None:
    frames = makefiles.animation(tmp_path / f"in{ext}", durations=DURATIONS, loop=3)
    proc = apply(tmp_path / f"in{ext}", "-o", tmp_path / f"out{ext}", "-f", "invert", "--lossless")
    assert proc.returncode == 0, proc.stderr
    got, durations, loop = pillow_frames(tmp_path / f"out{ext}")
    assert len(got) == len(frames)
    for want, have in zip(frames, got, strict=True):  # a few flat colours: exact in every format, GIF too
        np.testing.assert_array_equal(have, 255 - want)
    assert [have.mean() for have in got] != [got[0].mean()] * len(got)  # frames stay distinct
    if ext != ".webp":  # Pillow reports no per-frame WebP durations; OpenCV's reader checks them below
        assert durations == DURATIONS
    assert loop == 3
    ok, decoded = cv2.imreadanimation(str(tmp_path / f"out{ext}"))
    assert ok and [int(d) for d in decoded.durations] == DURATIONS


def test_animated_avif_keeps_every_frame_and_duration(tmp_path: Path) -> None:
    frames = makefiles.frames_bgr(3, (32, 32))
    images = [Image.fromarray(f[..., ::-1]) for f in frames]
    images[0].save(tmp_path / "in.avif", save_all=True, append_images=images[1:], duration=[70, 80, 90], quality=100)
    proc = apply(tmp_path / "in.avif", "-o", tmp_path / "out.avif", "-f", "invert", "--quality", "100")
    assert proc.returncode == 0, proc.stderr
    ok, decoded = cv2.imreadanimation(str(tmp_path / "out.avif"))
    assert ok and [int(d) for d in decoded.durations] == [70, 80, 90]
    for want, have in zip(frames, decoded.frames, strict=True):  # lossy both ways: means per frame
        assert np.abs(have[..., :3].astype(int) - (255 - want)).mean() < 12


def test_frames_option_selects_a_range(tmp_path: Path) -> None:
    frames = makefiles.animation(tmp_path / "in.png", count=5, durations=[10, 20, 30, 40, 50])
    proc = apply(tmp_path / "in.png", "-o", tmp_path / "out.png", "-f", "invert", "--frames", "1:4")
    assert proc.returncode == 0, proc.stderr
    got, durations, _ = pillow_frames(tmp_path / "out.png")
    assert durations == [20, 30, 40]
    for want, have in zip(frames[1:4], got, strict=True):
        np.testing.assert_array_equal(have, 255 - want)
    past_the_end = apply(tmp_path / "in.png", "-o", tmp_path / "none.png", "-f", "invert", "--frames", "7:9")
    errors = [line for line in past_the_end.stderr.splitlines() if line.strip()]
    assert past_the_end.returncode == 1 and len(errors) == 1 and "selects none of its 5 frames" in errors[0]
    assert not (tmp_path / "none.png").exists()


@pytest.mark.parametrize("ext", [".jpg", ".bmp"])
def test_an_animation_into_a_still_format_keeps_the_first_frame_with_one_warning(tmp_path: Path, ext: str) -> None:
    frames = makefiles.animation(tmp_path / "in.gif")
    proc = apply(tmp_path / "in.gif", "-o", tmp_path / f"out{ext}", "-f", "invert")
    warnings = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 0
    assert len(warnings) == 1 and "only the first of 4" in warnings[0] and f"out{ext}" in warnings[0], warnings
    still = cv2.imread(str(tmp_path / f"out{ext}"))
    error = np.abs(still.astype(int) - (255 - frames[0]))
    assert (error.mean() <= 8 and np.median(error) <= 2) if ext == ".jpg" else error.max() == 0


def test_multi_page_tiff_keeps_its_pages_and_depth(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    pages = [rng.integers(0, 65536, (6, 8), dtype=np.uint16) for _ in range(3)]
    Image.fromarray(pages[0]).save(tmp_path / "in.tif", save_all=True,
                                   append_images=[Image.fromarray(p) for p in pages[1:]])
    proc = apply(tmp_path / "in.tif", "-o", tmp_path / "out.tif", "-f", "invert")
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    with Image.open(tmp_path / "out.tif") as out:
        got = [np.asarray(page).astype(np.uint16) for page in ImageSequence.Iterator(out)]
    assert len(got) == 3
    for want, have in zip(pages, got, strict=True):
        np.testing.assert_array_equal(have, 65535 - want)


def test_timed_frames_into_tiff_pages_warn_that_durations_go(tmp_path: Path) -> None:
    frames = makefiles.animation(tmp_path / "in.webp")
    proc = apply(tmp_path / "in.webp", "-o", tmp_path / "out.tif", "-f", "invert")
    assert proc.returncode == 0 and "durations" in proc.stderr and "TIFF pages" in proc.stderr
    ok, pages = cv2.imreadmulti(str(tmp_path / "out.tif"), flags=cv2.IMREAD_UNCHANGED)
    assert ok and len(pages) == len(frames)
    np.testing.assert_array_equal(pages[2], 255 - frames[2])


def test_gif_frames_have_alpha_only_where_the_file_has_transparency(tmp_path: Path) -> None:
    makefiles.animation(tmp_path / "in.gif")
    data = (tmp_path / "in.gif").read_bytes()
    header = decoders.parse_header(data)
    assert header is not None and frames_io.is_multiframe(header)
    with frames_io.read_frames(data) as reader:
        got = [frame.image for frame in reader]
    assert reader.info.count == 4 and len(got) == 4 and all(frame.shape[2] == 3 for frame in got)


def test_the_pixel_limit_applies_to_each_frame_and_refuses_fast(tmp_path: Path) -> None:
    makefiles.animation(tmp_path / "in.gif", count=4)  # 4 frames of 12 x 16 = 192 pixels each
    with pytest.raises(ImageTooLargeError, match="16x12 = 192 pixels exceeds the limit of 191"):
        frames_io.read_frames(tmp_path / "in.gif", max_pixels=191)
    with frames_io.read_frames(tmp_path / "in.gif", max_pixels=192) as reader:  # frames stream: not 4 x 192
        assert sum(1 for _ in reader) == 4


def test_the_pixel_limit_applies_to_every_page_of_a_tiff_before_it_is_decoded(tmp_path: Path) -> None:
    """TIFF pages have sizes of their own: a small first page must not let a huge later one through."""
    import tifffile

    with tifffile.TiffWriter(tmp_path / "pages.tif") as tif:
        tif.write(np.zeros((5, 5), np.uint8))
        tif.write(np.zeros((10, 12), np.uint8))
    with frames_io.read_frames(tmp_path / "pages.tif", max_pixels=50) as reader:
        pages = iter(reader)
        assert next(pages).image.shape == (5, 5)
        with pytest.raises(ImageTooLargeError, match=r"page 1: 12x10 = 120 pixels exceeds the limit of 50"):
            next(pages)
    with frames_io.read_frames(tmp_path / "pages.tif", max_pixels=120) as reader:
        assert [frame.image.shape for frame in reader] == [(5, 5), (10, 12)]


def test_a_still_gif_and_png_are_not_animations(tmp_path: Path) -> None:
    frame = makefiles.frames_bgr(1)[0]
    Image.fromarray(frame[..., ::-1]).save(tmp_path / "still.gif")
    cv2.imwrite(str(tmp_path / "still.png"), frame)
    for name in ("still.gif", "still.png"):
        assert not frames_io.is_multiframe(decoders.parse_header((tmp_path / name).read_bytes()))


# ---------------------------------------------------------------- issue 23: GIFs that look right
def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR in dB by its formula (numpy), 8-bit peak."""
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def test_a_photo_to_gif_is_within_35_db_of_the_exact_result(tmp_path: Path) -> None:
    from skimage import data

    photo = np.ascontiguousarray(data.chelsea()[..., ::-1])
    cv2.imwrite(str(tmp_path / "cat.png"), photo)
    proc = apply(tmp_path / "cat.png", "-o", tmp_path / "cat.gif", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "cat.gif") as gif:  # Pillow, a second reader
        got = np.asarray(gif.convert("RGB"))[..., ::-1]
    assert psnr(got, 255 - photo) >= 35  # OpenCV's encoder: 21.4 dB
    dithered = apply(tmp_path / "cat.png", "-o", tmp_path / "dither.gif", "-f", "invert", "--dither")
    assert dithered.returncode == 0, dithered.stderr
    with Image.open(tmp_path / "dither.gif") as gif:
        other = np.asarray(gif.convert("RGB"))[..., ::-1]
    assert not np.array_equal(other, got) and psnr(other, 255 - photo) >= 30  # dithered: other pixels, still close


def test_flat_grey_frames_inverted_come_back_exact_and_untinted(tmp_path: Path) -> None:
    greys = [40, 90, 140, 190]
    images = [Image.new("L", (16, 12), grey).convert("RGB") for grey in greys]
    images[0].save(tmp_path / "grey.gif", save_all=True, append_images=images[1:], duration=100, loop=0)
    proc = apply(tmp_path / "grey.gif", "-o", tmp_path / "out.gif", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    got, _, _ = pillow_frames(tmp_path / "out.gif")
    assert [tuple(int(v) for v in frame[0, 0]) for frame in got] == [(255 - g,) * 3 for g in greys]  # was tinted


def test_gif_transparency_is_kept(tmp_path: Path) -> None:
    rgba = np.zeros((12, 16, 4), np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, 255
    rgba[:6, :, 3] = 0  # top half transparent
    frames = [Image.fromarray(rgba), Image.fromarray(rgba[::-1].copy())]
    frames[0].save(tmp_path / "holes.png", save_all=True, append_images=frames[1:], duration=50)
    proc = apply(tmp_path / "holes.png", "-o", tmp_path / "holes.gif", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "holes.gif") as gif:
        got = [np.asarray(frame.convert("RGBA")).copy() for frame in ImageSequence.Iterator(gif)]
    assert len(got) == 2
    np.testing.assert_array_equal(got[0][..., 3], rgba[..., 3])
    np.testing.assert_array_equal(got[1][..., 3], rgba[::-1, :, 3])  # frame 1's holes show no frame 0
    assert tuple(got[0][8, 0, :3]) == (55, 255, 255)


# ---------------------------------------------------------------- issue 23: frames are first-class images
def write_apng_16bit(path: Path, frames: list[np.ndarray], plays: int = 0) -> None:
    """A 16-bit RGB APNG built chunk by chunk from zlib-compressed rows (no image library involved)."""
    import struct
    import zlib

    height, width = frames[0].shape[:2]
    compressed: dict[bytes, bytes] = {}  # frames that repeat are compressed once
    parts = []
    for frame in frames:
        rows = frame.astype(">u2").reshape(height, width * 3).view(np.uint8)
        raw = np.hstack([np.zeros((height, 1), np.uint8), rows]).tobytes()
        data = compressed.get(raw) or compressed.setdefault(raw, zlib.compress(raw))
        parts.append(makefiles.ApngFrame(data, width, height, delay=40))
    ihdr = struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0)
    path.write_bytes(makefiles.apng_bytes(ihdr, parts, plays))


def test_a_16_bit_apng_stays_16_bit(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    rgb = [rng.integers(0, 65536, (6, 8, 3), dtype=np.uint16) for _ in range(3)]
    write_apng_16bit(tmp_path / "deep.png", rgb)
    with frames_io.read_frames(tmp_path / "deep.png") as reader:
        read = [frame.image for frame in reader]
    for want, have in zip(rgb, read, strict=True):
        np.testing.assert_array_equal(have, want[..., ::-1])  # BGR, every bit
    proc = apply(tmp_path / "deep.png", "-o", tmp_path / "out.png", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    with frames_io.read_frames(tmp_path / "out.png") as reader:
        out = list(reader)
    assert [frame.duration for frame in out] == [40, 40, 40]
    for want, have in zip(rgb, out, strict=True):
        assert have.image.dtype == np.uint16
        np.testing.assert_array_equal(have.image, 65535 - want[..., ::-1])
    ok, first = cv2.imdecode(np.fromfile(tmp_path / "out.png", np.uint8), cv2.IMREAD_UNCHANGED), True
    assert first is not None and ok.dtype == np.uint16  # the default image, to a plain PNG reader


def test_palette_tiff_pages_come_out_in_colour(tmp_path: Path) -> None:
    palette = Image.new("P", (8, 6))
    palette.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255] + [0] * 759)
    pages = []
    for index in range(3):
        page = palette.copy()
        page.paste(index, (0, 0, 8, 6))
        pages.append(page)
    pages[0].save(tmp_path / "pal.tif", save_all=True, append_images=pages[1:])
    proc = apply(tmp_path / "pal.tif", "-o", tmp_path / "out.tif", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "out.tif") as out:
        got = [np.asarray(page.convert("RGB"))[0, 0].tolist() for page in ImageSequence.Iterator(out)]
    assert got == [[0, 255, 255], [255, 0, 255], [255, 255, 0]]  # inverted red, green, blue; not grey


# ---------------------------------------------------------------- issue 23: frames stream, none are cut
def apng_chunks(path: Path, wanted: tuple[int, ...]) -> tuple[int, int, dict[int, bytes]]:
    """An APNG walked chunk by chunk (no image library): acTL's frame count, the number of fcTL
    chunks, and the inflated pixel data of the frames at the indices ``wanted``."""
    import struct
    import zlib

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, declared, controls = 8, -1, 0
    parts: dict[int, bytes] = {}
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        payload = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"acTL":
            declared = struct.unpack(">I", payload[:4])[0]
        elif kind == b"fcTL":
            controls += 1
        elif kind in (b"IDAT", b"fdAT") and controls - 1 in wanted:
            parts[controls - 1] = parts.get(controls - 1, b"") + (payload if kind == b"IDAT" else payload[4:])
    return declared, controls, {index: zlib.decompress(part) for index, part in parts.items()}


def test_40000_frames_are_all_kept(tmp_path: Path) -> None:
    values = np.arange(40_000) % 4096
    frames = [np.full((1, 1, 3), value, np.uint16) for value in values]
    write_apng_16bit(tmp_path / "long.png", frames)
    with frames_io.read_frames(tmp_path / "long.png") as reader:
        count = frames_io.write_frames(tmp_path / "copy.png", (f.replace(65535 - f.image) for f in reader),
                                       like=reader.info)
    assert count == 40_000  # OpenCV's animation reader stopped at 32,767
    # The copy checked chunk by chunk rather than decoded whole again (the read above is the reader's
    # test): 40,000 frames declared and present, frames 32,767 and 39,999 as written. Each is one
    # 16-bit pixel after its row's filter byte, which no PNG filter changes for a row's first pixel.
    declared, controls, pixels = apng_chunks(tmp_path / "copy.png", (32_767, 39_999))
    assert declared == controls == 40_000
    for index in (32_767, 39_999):
        assert len(pixels[index]) == 7 and int.from_bytes(pixels[index][1:3], "big") == 65535 - values[index]


def test_3000_tiff_pages_are_read_page_by_page(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    with tifffile.TiffWriter(tmp_path / "pages.tif") as writer:
        for index in range(3000):
            writer.write(np.full((8, 8), index % 251, np.uint8), contiguous=False)
    with frames_io.read_frames(tmp_path / "pages.tif", frames=(10, None)) as reader:
        firsts = [int(frame.image[0, 0]) for frame in reader]
    assert reader.info.count == 3000 and firsts == [index % 251 for index in range(10, 3000)]


def test_memory_does_not_grow_with_the_frame_count(tmp_path: Path) -> None:
    import tracemalloc

    rng = np.random.default_rng(2)

    def peak(count: int) -> int:
        # palette frames (random colours): Pillow writes them as they are, where RGB frames of noise
        # took it 40 ms each to quantize; the reader still gives 128 x 128 BGR frames, all different
        tile = rng.integers(0, 256, (128, 128), dtype=np.uint8)
        palette = rng.integers(0, 256, 768, dtype=np.uint8).tobytes()
        frames = [Image.frombytes("P", (128, 128), np.roll(tile, index, axis=1).tobytes()) for index in range(count)]
        for frame in frames:
            frame.putpalette(palette)
        frames[0].save(tmp_path / f"n{count}.gif", save_all=True, append_images=frames[1:])
        del frames
        tracemalloc.start()  # numpy's and Python's allocations (Pillow's C buffers are not traced)
        with frames_io.read_frames(tmp_path / f"n{count}.gif") as reader:
            frames_io.write_frames(tmp_path / f"o{count}.png", (f.replace(255 - f.image) for f in reader),
                                   like=reader.info)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(4), peak(120)
    assert large < small + 4 * 128 * 128 * 3  # 116 more frames held would add 5.7 MB


def test_a_still_image_is_one_frame_read_by_the_still_rules(tmp_path: Path) -> None:
    deep = np.random.default_rng(4).integers(0, 65536, (5, 7, 3), dtype=np.uint16)
    cv2.imwrite(str(tmp_path / "still.png"), deep)
    with frames_io.read_frames(tmp_path / "still.png") as reader:
        got = list(reader)
    assert len(got) == 1 and got[0].duration is None
    np.testing.assert_array_equal(got[0].image, deep)


# ---------------------------------------------------------------- TIFF page layouts, read in-process
PAGE = np.random.default_rng(7).integers(0, 256, (5, 7, 4)).astype(np.uint8)  # not square: no axis swap goes unseen
GREY_PAGE = PAGE[..., 0]
FLOAT_PAGE = GREY_PAGE.astype(np.float32) / 255
EIGHT_BIT_MAP = np.array([np.arange(256), 255 - np.arange(256), np.full(256, 255)], np.uint16)  # max 255, not 65535
TIFF_KINDS = {  # name: (two pages of this, tifffile's write options, the BGR(A) frame expected, built by hand)
    "planar-rgb": (np.moveaxis(PAGE[..., :3], -1, 0), {"photometric": "rgb", "planarconfig": "separate"},
                   PAGE[..., 2::-1]),
    "rgba": (PAGE, {"photometric": "rgb", "extrasamples": ("unassalpha",)}, PAGE[..., [2, 1, 0, 3]]),
    "grey-alpha": (PAGE[..., :2], {"photometric": "minisblack", "extrasamples": ("unassalpha",)},
                   np.dstack([PAGE[..., 0]] * 3 + [PAGE[..., 1]])),
    "miniswhite-8-bit": (GREY_PAGE, {"photometric": "miniswhite"}, 255 - GREY_PAGE),
    "miniswhite-float": (FLOAT_PAGE, {"photometric": "miniswhite"}, -FLOAT_PAGE),
    "bilevel": (GREY_PAGE > 127, {"photometric": "minisblack"}, np.where(GREY_PAGE > 127, 255, 0).astype(np.uint8)),
    "float64": (FLOAT_PAGE.astype(np.float64), {"photometric": "minisblack"}, FLOAT_PAGE),
    "palette-8-bit-map": (GREY_PAGE, {"photometric": "palette", "colormap": EIGHT_BIT_MAP},
                          np.dstack([np.full_like(GREY_PAGE, 255), 255 - GREY_PAGE, GREY_PAGE])),
}


@pytest.mark.parametrize("kind", list(TIFF_KINDS))
def test_tiff_pages_of_every_layout_read_as_opencv_frames(tmp_path: Path, kind: str) -> None:
    """Planar samples, RGBA order, grey + alpha, min-is-white (8-bit and float), 1-bit pages, float64
    (after a first 8-bit page) and an 8-bit colour map each come out as the BGR(A), grey or float32
    frame built by hand, exact:
    catches samples left first, RGBA left in RGB order or its alpha dropped, min-is-white inverted by
    the wrong formula, bilevel or float64 pages left at a depth OpenCV filters do not take, and an
    8-bit colour map shifted as if 16-bit."""
    pages, options, want = TIFF_KINDS[kind]
    with tifffile.TiffWriter(tmp_path / "in.tif") as tiff:
        tiff.write(GREY_PAGE)  # a first page Pillow parses (it refuses a float64 one)
        for _ in range(2):
            tiff.write(pages, **options)
    with frames_io.read_frames(tmp_path / "in.tif") as reader:
        got = [frame.image for frame in reader]
    assert len(got) == 3
    for frame in got[1:]:
        assert frame.dtype == want.dtype and frame.shape == want.shape
        np.testing.assert_array_equal(frame, want)


def test_a_tiff_range_never_decodes_the_page_after_it(tmp_path: Path) -> None:
    """``frames=(0, 1)`` of a small page then a huge one gives the small page: a reader that went on to
    the next page would refuse the file for a page it was not asked for."""
    with tifffile.TiffWriter(tmp_path / "in.tif") as tiff:
        tiff.write(np.zeros((4, 4), np.uint8))
        tiff.write(np.zeros((100, 100), np.uint8))
    with frames_io.read_frames(tmp_path / "in.tif", frames=(0, 1), max_pixels=50) as reader:
        got = [frame.image.shape for frame in reader]
    assert got == [(4, 4)]


def test_a_gif_range_starts_at_its_first_frame(tmp_path: Path) -> None:
    """``frames=(2, 4)`` of a GIF gives frames 2 and 3 as Pillow reads them, not frames 0 and 1."""
    makefiles.animation(tmp_path / "in.gif", count=5)
    want, _, _ = pillow_frames(tmp_path / "in.gif")
    with frames_io.read_frames(tmp_path / "in.gif", frames=(2, 4)) as reader:
        got = [frame.image for frame in reader]
    assert len(got) == 2
    for have, expected in zip(got, want[2:4], strict=True):
        np.testing.assert_array_equal(have, expected)


def test_cmyk_tiff_pages_read_as_bgr_as_pillow_converts_them(tmp_path: Path) -> None:
    """CMYK pages were passed on as four raw channels, which everything downstream reads as BGRA."""
    import tifffile

    inks = np.random.default_rng(8).integers(0, 256, (6, 7, 4), dtype=np.uint8)
    with tifffile.TiffWriter(tmp_path / "cmyk.tif") as tif:
        tif.write(inks, photometric="separated")
        tif.write(inks[::-1], photometric="separated")
    with Image.open(tmp_path / "cmyk.tif") as image:
        expected = []
        for page in ImageSequence.Iterator(image):
            expected.append(np.asarray(page.convert("RGB"))[..., ::-1].astype(int))
    with frames_io.read_frames(tmp_path / "cmyk.tif") as reader:
        got = [frame.image for frame in reader]
    assert [frame.shape for frame in got] == [(6, 7, 3)] * 2
    for frame, reference in zip(got, expected, strict=True):
        assert np.abs(frame.astype(int) - reference).max() <= 1  # Pillow rounds (255 - c)(255 - k) / 255 its way
    deep = np.array([[[65535, 0, 0, 0], [0, 0, 65535, 0], [0, 0, 0, 0], [0, 0, 0, 65535], [1, 1, 1, 32768]]],
                    np.uint16)
    tifffile.imwrite(tmp_path / "deep.tif", np.stack([deep, deep]), photometric="separated")
    with frames_io.read_frames(tmp_path / "deep.tif") as reader:
        first = next(iter(reader)).image
    # cyan, yellow, white, black, then 65534 * 32767 / 65535 = 32766.500008 rounded, in B, G, R: 16-bit inks stay
    # 16-bit (no reader here decodes 16-bit CMYK)
    assert first.dtype == np.uint16
    np.testing.assert_array_equal(first, [[[65535, 65535, 0], [0, 65535, 65535], [65535] * 3, [0, 0, 0], [32767] * 3]])


def test_a_transparent_gif_reads_as_bgra_with_its_holes(tmp_path: Path) -> None:
    """A GIF with a transparent index gives BGRA frames whose alpha and colour are Pillow's RGBA
    reordered: catches the transparency test lost (alpha dropped, or RGBA converted as RGB)."""
    rgba = np.zeros((12, 16, 4), np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, 255
    rgba[:6, :, 3] = 0
    images = [Image.fromarray(rgba), Image.fromarray(rgba[::-1].copy())]
    images[0].save(tmp_path / "holes.gif", save_all=True, append_images=images[1:], duration=50, disposal=2)
    with Image.open(tmp_path / "holes.gif") as gif:
        want = [np.asarray(frame.convert("RGBA"))[..., [2, 1, 0, 3]] for frame in ImageSequence.Iterator(gif)]
    with frames_io.read_frames(tmp_path / "holes.gif") as reader:
        got = [frame.image for frame in reader]
    assert len(got) == 2 and want[0][0, 0, 3] == 0 and want[0][8, 0, 3] == 255
    for have, expected in zip(got, want, strict=True):
        np.testing.assert_array_equal(have, expected)


def test_an_rgba_webp_animation_reads_as_bgra(tmp_path: Path) -> None:
    """An animated WebP with alpha (Pillow mode RGBA) gives BGRA frames equal to Pillow's, exact (lossless)."""
    rgba = np.random.default_rng(3).integers(0, 256, (2, 6, 8, 4)).astype(np.uint8)
    images = [Image.fromarray(frame) for frame in rgba]
    images[0].save(tmp_path / "a.webp", save_all=True, append_images=images[1:], duration=50, lossless=True)
    with frames_io.read_frames(tmp_path / "a.webp") as reader:
        got = [frame.image for frame in reader]
    assert len(got) == 2
    for have, expected in zip(got, rgba, strict=True):
        np.testing.assert_array_equal(have, expected[..., [2, 1, 0, 3]])


def test_jpeg_tiff_pages_read_in_their_colours(tmp_path: Path) -> None:
    """JPEG-compressed pages are stored as YCbCr (photometric 6), which tifffile decodes to RGB: they
    came out with red and blue swapped (only photometric RGB pages were reordered). Pillow's pages,
    reordered, are the reference (another JPEG decoder: within 2 levels)."""
    y, x = np.mgrid[0:16, 0:24]
    rgb = np.dstack([np.full_like(x, 200), x * 8, y * 4 + 20]).astype(np.uint8)  # red, smooth: little JPEG loss
    with tifffile.TiffWriter(tmp_path / "jpeg.tif") as tiff:
        for page in (rgb, rgb[::-1]):
            tiff.write(page, photometric="rgb", compression="jpeg")
    with tifffile.TiffFile(tmp_path / "jpeg.tif") as tiff:
        assert [page.photometric for page in tiff.pages] == [6, 6]  # YCbCr
    want, _, _ = pillow_frames(tmp_path / "jpeg.tif")
    with frames_io.read_frames(tmp_path / "jpeg.tif") as reader:
        got = [frame.image for frame in reader]
    assert len(got) == 2 and abs(int(want[0][0, 0, 2]) - 200) <= 4  # Pillow's red is red
    for have, expected in zip(got, want, strict=True):
        assert np.abs(have.astype(int) - expected).max() <= 2


def test_a_16_bit_colour_map_whose_largest_entry_is_256_is_scaled_to_8_bits(tmp_path: Path) -> None:
    """TIFF colour maps are 16-bit: an entry of 256 is 8-bit 1 (Pillow's ``entry // 256``). A map whose
    largest entry is exactly 256 was taken for an 8-bit one and 256 wrapped to 0."""
    colormap = np.zeros((3, 256), np.uint16)
    colormap[0, 1], colormap[1, 2], colormap[2, 3] = 256, 256, 128  # index 1 red 1, 2 green 1, 3 blue 0.5
    indices = np.array([[0, 1, 2, 3]], np.uint8)
    with tifffile.TiffWriter(tmp_path / "dark.tif") as tiff:
        for _ in range(2):
            tiff.write(indices, photometric="palette", colormap=colormap)
    with frames_io.read_frames(tmp_path / "dark.tif") as reader:
        got = [frame.image for frame in reader]
    assert len(got) == 2
    for frame in got:  # B, G, R
        np.testing.assert_array_equal(frame, [[[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0]]])


def test_a_grey_gif_animation_reads_as_bgra_grey_with_its_holes(tmp_path: Path) -> None:
    """Pillow opens a GIF whose palette is the 256 greys in order as mode L: its frames must still be
    converted to RGBA before reordering (OpenCV's RGBA to BGRA of a one-channel array makes an opaque
    alpha: the transparent grey 0 was lost). GIF keeps 256 greys exactly."""
    greys = [np.tile(np.arange(0, 256, 8, dtype=np.uint8), (4, 1)), np.full((4, 32), 77, np.uint8)]
    images = [Image.fromarray(grey) for grey in greys]
    images[0].save(tmp_path / "grey.gif", save_all=True, append_images=images[1:], duration=50, optimize=False,
                   transparency=0, disposal=2)
    with Image.open(tmp_path / "grey.gif") as gif:
        assert gif.mode == "L"
    with frames_io.read_frames(tmp_path / "grey.gif") as reader:
        got = [frame.image for frame in reader]
    assert len(got) == 2
    for have, grey in zip(got, greys, strict=True):
        np.testing.assert_array_equal(have, np.dstack([grey] * 3 + [np.where(grey == 0, 0, 255).astype(np.uint8)]))


# ---------------------------------------------------------------- damaged frames: the decoder's reason, one line
def test_a_cut_apng_names_the_chunk_cut_short(tmp_path: Path) -> None:
    """An APNG cut inside its last frame's data is a TruncatedImageError ending with the decoder's
    one-line reason: catches the reason replaced by its type name or by "None", or a line index past
    the only line (an IndexError escaping instead)."""
    makefiles.animation(tmp_path / "in.png", count=3)
    data = (tmp_path / "in.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[:data.rindex(b"fdAT") + 20])
    with pytest.raises(TruncatedImageError) as caught, frames_io.read_frames(tmp_path / "cut.png") as reader:
        list(reader)
    cause = "image data is truncated or corrupt (a fdAT chunk is cut short)"
    assert str(caught.value) == f"{tmp_path / 'cut.png'}: {cause}"


@pytest.mark.parametrize(("error", "reason"), [
    (EOFError(), "EOFError"),  # no message: the type's name
    (cv2.error("OpenCV(5.1.0) color.cpp:199: error: (-2:Unspecified error)\n> Invalid number of channels:\n"
               ">     'scn' is 1\n\n"), ">     'scn' is 1"),  # several lines: the last that is not blank
])
def test_a_decoder_error_is_told_by_its_last_line_or_its_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               error: Exception, reason: str) -> None:
    """A decoder failing with no message, or with OpenCV's several lines, ends the one-line error
    with its type's name or its last non-blank line (the decoder made to fail: no file found here does
    either). Catches "NoneType" for the name, and an IndexError on an empty message."""
    makefiles.animation(tmp_path / "in.png", count=2)

    def failing(file: object) -> Iterator[tuple[np.ndarray, int]]:
        raise error
        yield  # a generator, as apng.frames is

    monkeypatch.setattr(apng, "frames", failing)
    with pytest.raises(TruncatedImageError) as caught, frames_io.read_frames(tmp_path / "in.png") as reader:
        list(reader)
    assert str(caught.value).endswith(f"image data is truncated or corrupt ({reason})")


def test_a_tiff_whose_next_page_lies_past_its_end_is_its_one_page(tmp_path: Path) -> None:
    """One page whose next-page pointer runs past the file: one page, as tifffile and libtiff read it.

    Counting the pointer as a second page announced two frames and gave one (silently).
    """
    pixels = np.arange(60, dtype=np.uint8).reshape(4, 5, 3)
    tifffile.imwrite(tmp_path / "in.tif", pixels, photometric="rgb")
    data = bytearray((tmp_path / "in.tif").read_bytes())
    ifd = int.from_bytes(data[4:8], "little")
    pointer = ifd + 2 + 12 * int.from_bytes(data[ifd:ifd + 2], "little")  # after the IFD's entries
    data[pointer:pointer + 4] = (len(data) + 1000).to_bytes(4, "little")
    (tmp_path / "in.tif").write_bytes(bytes(data))
    with frames_io.read_frames(tmp_path / "in.tif") as reader:
        got = [frame.image for frame in reader]
        assert reader.info.count == 1
    assert len(got) == 1
    np.testing.assert_array_equal(got[0], pixels[..., ::-1])


def test_an_animation_with_fewer_frames_than_its_header_counts_is_refused(tmp_path: Path) -> None:
    """An APNG whose acTL counts three frames and holds two: the reader that announced three fails naming
    the file, its frame number counted from the file's first frame (it gave two and said nothing)."""
    makefiles.animation(tmp_path / "in.png", count=2)
    data = bytearray((tmp_path / "in.png").read_bytes())
    at = data.index(b"acTL")
    data[at + 4:at + 8] = (3).to_bytes(4, "big")
    data[at + 12:at + 16] = zlib.crc32(bytes(data[at:at + 12])).to_bytes(4, "big")
    (tmp_path / "in.png").write_bytes(bytes(data))
    for start in (0, 1):
        with pytest.raises(TruncatedImageError) as caught, \
                frames_io.read_frames(tmp_path / "in.png", frames=(start, None)) as reader:
            assert reader.info.count == 3
            list(reader)
        assert str(caught.value) == (f"{tmp_path / 'in.png'}: image data is truncated or corrupt (frame 2 of the 3 "
                                     "its header counts is missing)")
