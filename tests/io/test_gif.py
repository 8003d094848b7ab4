"""The GIF writer read back by a second reader: Pillow opens the bytes :class:`GifWriter` wrote.

Frames are built so that the exact path (at most 256 colours, 255 with transparency) and the
quantized path are told apart by what Pillow reads: exact pixels for the first (no tolerance),
the transparent pixels exactly where alpha < 128 (GIF89a: one transparent index per frame) for
both. Durations are in centiseconds in the Graphic Control Extension, the loop count in the
NETSCAPE2.0 application extension, the disposal method in bits 2-4 of its packed byte.
"""

from __future__ import annotations

from io import BytesIO

import numpy as np
from PIL import Image, ImageSequence

from cvfilters.io.gif import GifWriter, palettise


def write(frames: list[np.ndarray], durations: list[int | None] | None = None, **options: object) -> bytes:
    buffer = BytesIO()
    writer = GifWriter(buffer, (frames[0].shape[1], frames[0].shape[0]), **options)  # type: ignore[arg-type]
    for index, frame in enumerate(frames):
        writer.add(frame, None if durations is None else durations[index])
    writer.close()
    return buffer.getvalue()


def read_rgba(data: bytes) -> list[np.ndarray]:
    """Every frame as Pillow composes it, RGBA."""
    with Image.open(BytesIO(data)) as gif:
        return [np.asarray(frame.convert("RGBA")).copy() for frame in ImageSequence.Iterator(gif)]


def distinct_colours(count: int, seed: int) -> np.ndarray:
    """``count`` distinct random RGB colours, (count, 3) uint8."""
    rng = np.random.default_rng(seed)
    packed = rng.choice(1 << 24, size=count, replace=False)
    return np.stack([(packed >> 16) & 255, (packed >> 8) & 255, packed & 255], axis=1).astype(np.uint8)


def test_grey_frames_come_back_as_equal_rgb_and_opaque() -> None:
    grey = np.arange(16 * 12, dtype=np.uint8).reshape(12, 16)  # 0..191: half of it below alpha's 128
    (got,) = read_rgba(write([grey]))
    for channel in range(3):
        np.testing.assert_array_equal(got[..., channel], grey)
    assert (got[..., 3] == 255).all()  # a grey frame has no alpha: nothing is transparent


def test_alpha_127_is_transparent_and_128_opaque() -> None:
    bgra = np.zeros((4, 6, 4), np.uint8)
    bgra[..., :3] = (10, 20, 30)
    bgra[..., 3] = 255
    bgra[0, :, 3], bgra[1, :, 3] = 127, 128
    (got,) = read_rgba(write([bgra]))
    assert (got[0, :, 3] == 0).all()
    assert (got[1:, :, 3] == 255).all() and (got[1:, :, :3] == (30, 20, 10)).all()


def test_256_colours_without_alpha_are_stored_exactly() -> None:
    colours = distinct_colours(256, 1)
    rgb = colours.reshape(16, 16, 3)
    (got,) = read_rgba(write([np.ascontiguousarray(rgb[..., ::-1])]))
    np.testing.assert_array_equal(got[..., :3], rgb)
    assert (got[..., 3] == 255).all()


def test_255_visible_colours_and_hidden_ones_are_stored_exactly() -> None:
    colours = distinct_colours(255 + 20, 2)
    shown, hidden = colours[:255], colours[255:]
    rgb = np.zeros((16, 20, 3), np.uint8)
    rgb.reshape(-1, 3)[:255] = shown
    rgb.reshape(-1, 3)[255:] = hidden[np.arange(320 - 255) % len(hidden)]
    alpha = np.full((16, 20), 255, np.uint8)
    alpha.reshape(-1)[255:] = 0  # the hidden colours lie under alpha 0 only
    bgra = np.dstack([rgb[..., ::-1], alpha])
    (got,) = read_rgba(write([bgra]))
    np.testing.assert_array_equal(got[..., 3], alpha)
    np.testing.assert_array_equal(got.reshape(-1, 4)[:255, :3], shown)  # no colour lost to the hidden ones


def test_a_quantized_frame_with_alpha_keeps_its_transparency_exactly() -> None:
    rng = np.random.default_rng(3)
    bgra = rng.integers(0, 256, (32, 32, 4), dtype=np.uint8)  # ~1000 colours: quantized to 255
    (got,) = read_rgba(write([bgra]))
    np.testing.assert_array_equal(got[..., 3] == 0, bgra[..., 3] < 128)  # no visible pixel on the transparent index
    shown = bgra[..., 3] >= 128
    error = np.abs(got[..., :3].astype(int) - bgra[..., 2::-1].astype(int))[shown]
    assert error.mean() < 40  # 255 median-cut colours for uniform noise: about 20 levels off on average


def test_palettise_does_not_dither_unless_asked() -> None:
    rng = np.random.default_rng(4)
    photo = rng.integers(0, 256, (24, 24, 3), dtype=np.uint8)
    plain, palette, transparent = palettise(photo)
    assert transparent is None and palette.dtype == np.uint8 and palette.shape[1] == 3
    np.testing.assert_array_equal(plain, palettise(photo, dither=False)[0])
    assert not np.array_equal(plain, palettise(photo, dither=True)[0])


def test_palettise_returns_a_uint8_palette_for_few_colours() -> None:
    image = np.zeros((2, 2, 3), np.uint8)
    image[0, 0] = (1, 2, 3)
    indices, palette, transparent = palettise(image)
    assert transparent is None and indices.dtype == np.uint8 and palette.dtype == np.uint8
    np.testing.assert_array_equal(palette[indices], image[..., ::-1])


def test_durations_loop_and_disposal_as_pillow_reads_them() -> None:
    red = np.zeros((4, 6, 3), np.uint8)
    red[..., 2] = 255
    blue = np.zeros((4, 6, 3), np.uint8)
    blue[..., 0] = 255
    data = write([red, blue, red], [120, 2004, None], loop=3)
    assert data[:6] == b"GIF89a" and data[6:10] == bytes([6, 0, 4, 0]) and data[-1:] == b"\x3b"
    with Image.open(BytesIO(data)) as gif:
        assert gif.n_frames == 3 and gif.info["loop"] == 3
        durations, disposals = [], []
        for frame in ImageSequence.Iterator(gif):
            durations.append(frame.info.get("duration"))
            disposals.append(frame.disposal_method)
            assert "transparency" not in frame.info
    assert durations == [120, 2000, 0]  # centiseconds: 2004 ms rounds to 200
    assert disposals == [1, 1, 1]  # opaque frames: left in place


def test_frames_with_alpha_are_disposed_to_the_background() -> None:
    dot = np.zeros((4, 6, 4), np.uint8)
    dot[1, 2] = (255, 0, 0, 255)
    other = np.zeros((4, 6, 4), np.uint8)
    other[2, 4] = (0, 255, 0, 255)
    data = write([dot, other], [50, 50])
    with Image.open(BytesIO(data)) as gif:
        disposals = [frame.disposal_method for frame in ImageSequence.Iterator(gif)]
    assert disposals == [2, 2]
    first, second = read_rgba(data)
    assert first[1, 2, 3] == 255 and second[1, 2, 3] == 0  # frame 0's dot is gone under frame 1
    assert tuple(second[2, 4]) == (0, 255, 0, 255)


def test_no_loop_extension_when_loop_is_none_and_the_count_is_capped() -> None:
    frame = np.zeros((2, 2, 3), np.uint8)
    assert b"NETSCAPE2.0" not in write([frame], loop=None)
    capped = write([frame], loop=70000)
    start = capped.index(b"NETSCAPE2.0") + 11
    assert capped[start : start + 5] == b"\x03\x01\xff\xff\x00"  # 65535, the 16-bit field's largest


def test_an_all_transparent_frame_reads_back_transparent() -> None:
    clear = np.zeros((3, 5, 4), np.uint8)
    clear[..., :3] = 90  # a colour under alpha 0: no visible colour, the transparent index is 0
    (got,) = read_rgba(write([clear]))
    assert (got[..., 3] == 0).all()


def gradient(height: int = 64, width: int = 64) -> np.ndarray:
    """A BGR ramp of 4096 colours: more than a GIF frame holds, so it is quantized."""
    y, x = np.mgrid[0:height, 0:width]
    return np.stack([(x + y) * 2, y * 4, x * 4], axis=2).astype(np.uint8)


def pillow_quantized(bgr: np.ndarray, dither: Image.Dither) -> np.ndarray:
    """Pillow's median cut to 256 colours, mapped with ``dither``, as RGB."""
    picture = Image.fromarray(np.ascontiguousarray(bgr[..., ::-1]))
    reduced = picture.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    if dither != Image.Dither.NONE:
        reduced = picture.quantize(palette=reduced, dither=dither)
    return np.asarray(reduced.convert("RGB"))


def test_a_default_gif_loops_forever_and_is_not_dithered() -> None:
    """Catches a default of one loop (the NETSCAPE count 1) or dithering nobody asked for."""
    bgr = gradient()
    data = write([bgr])
    with Image.open(BytesIO(data)) as gif:
        assert gif.info["loop"] == 0
    (got,) = read_rgba(data)
    np.testing.assert_array_equal(got[..., :3], pillow_quantized(bgr, Image.Dither.NONE))


def test_dither_true_reaches_every_frame() -> None:
    """Catches the writer's ``dither`` not passed to the palette step (frames left undithered)."""
    bgr = gradient()
    (got,) = read_rgba(write([bgr], dither=True))
    dithered = pillow_quantized(bgr, Image.Dither.FLOYDSTEINBERG)
    assert not np.array_equal(dithered, pillow_quantized(bgr, Image.Dither.NONE))  # the frame tells them apart
    np.testing.assert_array_equal(got[..., :3], dithered)


def test_the_screen_descriptor_declares_no_global_table_background_or_aspect() -> None:
    """Catches a non-zero packed byte, background index or pixel aspect ratio in the logical screen
    descriptor (GIF89a: bytes 10-12; an aspect byte N makes readers stretch pixels to (N+15)/64)."""
    data = write([np.zeros((2, 3, 3), np.uint8)])
    assert data[10:13] == b"\x00\x00\x00"
    with Image.open(BytesIO(data)) as gif:
        assert "aspect" not in gif.info


def test_a_gif_40000_pixels_wide_is_written() -> None:
    """Catches the screen size packed as signed 16-bit (struct error above 32767; GIF allows 65535)."""
    row = np.full((1, 40000, 3), (30, 20, 10), np.uint8)
    (got,) = read_rgba(write([row]))
    assert got.shape == (1, 40000, 4) and (got[..., :3] == (10, 20, 30)).all()


def test_a_duration_past_the_gif_limit_is_capped_at_655350_ms() -> None:
    """Catches the cap on centiseconds set one past 65535 (struct error for a long still)."""
    data = write([np.zeros((2, 2, 3), np.uint8)], [700_000])
    with Image.open(BytesIO(data)) as gif:
        assert gif.info["duration"] == 655_350


def test_palettise_returns_a_uint8_palette_with_a_transparent_entry() -> None:
    """Catches the transparent entry appended as float64 (the documented uint8 palette turned float)."""
    bgra = np.zeros((2, 2, 4), np.uint8)
    bgra[0, 0] = (3, 2, 1, 255)
    indices, palette, transparent = palettise(bgra)
    assert palette.dtype == np.uint8 and transparent == 1 and len(palette) == 2
    assert indices[0, 0] == 0 and (indices.reshape(-1)[1:] == 1).all()
    np.testing.assert_array_equal(palette[0], (1, 2, 3))
