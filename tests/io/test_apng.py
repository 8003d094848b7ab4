"""The APNG reader against independent references: files written by Pillow (or built here chunk by
chunk with zlib and struct where Pillow cannot write the case), read by both, or the APNG spec's
blend formula worked in numpy."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from cvfilters.core.errors import TruncatedImageError
from cvfilters.io import apng
from cvfilters.io.frames import read_frames
from tests import makefiles

Chunks = list[tuple[bytes, bytes]]


def test_durations_and_disposal_match_pillows_reading(tmp_path: Path) -> None:
    red = Image.new("RGBA", (6, 4), (255, 0, 0, 255))
    dot = Image.new("RGBA", (6, 4), (0, 0, 0, 0))
    dot.putpixel((2, 1), (0, 0, 255, 255))
    path = tmp_path / "anim.png"
    # 40 s: a delay numerator over 32767 (unsigned in the fcTL chunk); frame 1 disposed to the background
    red.save(path, save_all=True, append_images=[dot], duration=[40_001, 100], disposal=[1, 0], loop=0)
    with path.open("rb") as file:
        ours = list(apng.frames(file))
    assert [duration for _, duration in ours] == [40_001, 100]
    with Image.open(path) as reference:
        for index, (frame, _) in enumerate(ours):
            reference.seek(index)
            expected = cv2.cvtColor(np.asarray(reference.convert("RGBA")), cv2.COLOR_RGBA2BGRA)
            assert frame.shape == expected.shape and np.array_equal(frame, expected), index
    assert ours[1][0][0, 0, 3] == 0  # the red frame was cleared, not kept under the dot


# ---------------------------------------------------------------- files written here and by Pillow
def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def _png(chunks: Chunks) -> bytes:
    """A PNG file of these chunks (IEND included by the caller), CRCs computed here."""
    return b"\x89PNG\r\n\x1a\n" + b"".join(_chunk(kind, payload) for kind, payload in chunks)


def _chunks(data: bytes) -> Chunks:
    """A PNG file's chunks, split by hand (PNG spec: length, type, payload, CRC)."""
    chunks, at = [], 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        chunks.append((kind, data[at + 8:at + 8 + length]))
        at += 12 + length
    return chunks


def _pillow_apng(images: list[Image.Image], **options: object) -> bytes:
    out = BytesIO()
    images[0].save(out, "PNG", save_all=True, append_images=images[1:], **options)
    return out.getvalue()


def _dotted(mode: str, count: int) -> list[Image.Image]:
    """Frames differing from the one before in a pixel or two: Pillow stores each later frame cropped
    to what changed, at an offset."""
    image = Image.new("RGB", (6, 4), (200, 10, 10))
    images = [image]
    for x, y, colour in [(2, 1, (0, 0, 255)), (4, 2, (0, 255, 0)), (5, 3, (90, 90, 90))][:count - 1]:
        image = image.copy()
        image.putpixel((x, y), colour)
        image.putpixel((x - 1, y), colour)
        images.append(image)
    return [image.convert(mode) for image in images]


def _ours(data: bytes) -> list[tuple[np.ndarray, int]]:
    return list(apng.frames(BytesIO(data)))


def _pillows(data: bytes, mode: str) -> list[np.ndarray]:
    """Every frame as Pillow composes it, in ``mode``, in OpenCV's channel order."""
    code = {"RGB": cv2.COLOR_RGB2BGR, "RGBA": cv2.COLOR_RGBA2BGRA}
    out = []
    with Image.open(BytesIO(data)) as image:
        for index in range(image.n_frames):
            image.seek(index)
            array = np.asarray(image.convert(mode))
            out.append(cv2.cvtColor(array, code[mode]) if mode in code else array)
    return out


def _assert_frames(ours: list[tuple[np.ndarray, int]], expected: list[np.ndarray]) -> None:
    assert len(ours) == len(expected)
    for index, ((frame, _), reference) in enumerate(zip(ours, expected, strict=True)):
        assert frame.shape == reference.shape and frame.dtype == np.uint8, index
        assert np.array_equal(frame, reference), index


@pytest.mark.parametrize(("mode", "channels"), [("RGB", "RGB"), ("L", "L")])
def test_cropped_frames_land_on_the_frames_kept_below(mode: str, channels: str) -> None:
    """Frames 2 and 3 are stored cropped at an offset: each must be drawn on the canvas the frames before
    left (not on a blank one), grey staying one channel. Catches a fresh canvas for a later frame and a
    grey canvas read as three channels."""
    data = _pillow_apng(_dotted(mode, 4), duration=[50, 60, 70, 80])
    assert [kind for kind, _ in _chunks(data)].count(b"fdAT") == 3
    ours = _ours(data)
    _assert_frames(ours, _pillows(data, channels))
    assert [duration for _, duration in ours] == [50, 60, 70, 80]


@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_opaque_frames_blended_over_read_as_bgra_with_full_alpha(mode: str) -> None:
    """Blend "over" on the first frame starts a transparent BGRA canvas: grey and BGR frames must be
    widened to BGRA with full alpha before they are laid over it (as Pillow reads them). Catches the
    widening skipped, done on the wrong axis or with an alpha that is not the dtype's maximum."""
    data = _pillow_apng(_dotted(mode, 3), blend=[1, 1, 1], duration=100)
    _assert_frames(_ours(data), _pillows(data, "RGBA"))


def test_palette_frames_with_transparency_match_pillow() -> None:
    """PLTE and tRNS are carried into every frame's PNG: without them no palette frame decodes."""
    data = _pillow_apng(_dotted("P", 3), transparency=0, duration=100)
    assert {b"PLTE", b"tRNS"} <= {kind for kind, _ in _chunks(data)}
    _assert_frames(_ours(data), _pillows(data, "RGBA"))


def test_a_default_image_outside_the_animation_is_not_a_frame() -> None:
    """An IDAT before the first fcTL is the still image for viewers without APNG, no frame (Pillow
    counts it as frame 0, the animation following)."""
    data = _pillow_apng(_dotted("RGB", 3), default_image=True, duration=[40, 50])
    ours = _ours(data)
    _assert_frames(ours, _pillows(data, "RGB")[1:])
    assert [duration for _, duration in ours] == [40, 50]


def test_chunks_after_frame_data_do_not_cut_or_repeat_a_frame() -> None:
    """A tEXt chunk after each frame's data is no end of frame: each frame is composed once."""
    chunks: Chunks = []
    for kind, payload in _chunks(_pillow_apng(_dotted("RGB", 3), duration=100)):
        chunks.append((kind, payload))
        if kind in (b"IDAT", b"fdAT"):
            chunks.append((b"tEXt", b"Comment\0after the frame"))
    data = _png(chunks)
    _assert_frames(_ours(data), _pillows(data, "RGB"))


# ---------------------------------------------------------------- blend over (APNG spec), hand-built
def _idat(pixels: np.ndarray) -> bytes:
    """PNG image data: each row filter type 0, samples big-endian, compressed with zlib."""
    rows = pixels.astype(pixels.dtype.newbyteorder(">")).reshape(pixels.shape[0], -1)
    return zlib.compress(b"".join(b"\0" + row.tobytes() for row in rows))


def _animation(frames: list[tuple[np.ndarray, int, int, int, int]]) -> bytes:
    """An RGBA APNG (8 or 16 bits) of ``(RGBA pixels, x, y, dispose_op, blend_op)`` frames on a canvas
    the size of the first, each shown 100 ms; the first frame's data in IDAT, the others' in fdAT."""
    height, width = frames[0][0].shape[:2]
    depth = frames[0][0].dtype.itemsize * 8
    chunks = [(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, 6, 0, 0, 0)),
              (b"acTL", struct.pack(">II", len(frames), 0))]
    sequence = 0
    for index, (pixels, x, y, dispose, blend) in enumerate(frames):
        control = (sequence, pixels.shape[1], pixels.shape[0], x, y, 1, 10, dispose, blend)
        chunks.append((b"fcTL", struct.pack(">IIIIIHHBB", *control)))
        if index == 0:
            chunks.append((b"IDAT", _idat(pixels)))
        else:
            chunks.append((b"fdAT", struct.pack(">I", sequence + 1) + _idat(pixels)))
            sequence += 1
        sequence += 1
    return _png(chunks + [(b"IEND", b"")])


def _spec_over(source: np.ndarray, below: np.ndarray) -> np.ndarray:
    """The APNG spec's APNG_BLEND_OP_OVER, pixel by pixel as its sample code (straight alpha): source
    alpha 0 leaves the pixel below; full source alpha, or nothing below, takes the source; otherwise
    u = sa * full, v = (full - sa) * da, colour (source * u + below * v) / (u + v), alpha (u + v) / full."""
    full = float(np.iinfo(source.dtype).max)
    out = below.astype(np.float64)
    for index in np.ndindex(source.shape[:2]):
        sa, da = float(source[index][3]), float(below[index][3])
        if sa == full or (sa > 0 and da == 0):
            out[index] = source[index]
        elif sa > 0:
            u, v = sa * full, (full - sa) * da
            out[index][:3] = (source[index][:3] * u + below[index][:3] * v) / (u + v)
            out[index][3] = (u + v) / full
    return out


@pytest.mark.filterwarnings("error")  # 0 / 0 where both alphas are 0 warns on the user's terminal
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_frames_blended_over_partial_alpha_follow_the_apng_spec(dtype: type) -> None:
    """A 2x2 frame at (1, 1) laid "over" a half-transparent first frame at the file's depth: every
    alpha pairing (opaque, partial, none over partial, and nothing over nothing, which stays transparent
    black) against the spec's formula, within one level of rounding. Catches a wrong Porter-Duff term,
    alpha read from the wrong channel, and 0 / 0 computed (a RuntimeWarning) where both alphas are 0."""
    scale = np.iinfo(dtype).max / 255
    first = np.zeros((3, 4, 4), np.float64)
    first[..., 0], first[..., 1], first[..., 2] = 200, 40, 120
    first[..., 3] = [[255, 128, 64, 255], [0, 200, 30, 255], [10, 0, 250, 77]]
    first[2, 1] = 0  # nothing at all below the top frame's transparent pixel
    top = np.array([[[10, 250, 30, 255], [250, 100, 0, 100]],
                    [[90, 60, 220, 180], [255, 255, 255, 0]]], np.float64)
    top[1, 0, 3] = 0  # [1, 0] of the top frame lands on first[2, 1]: nothing over nothing
    first, top = np.rint(first * scale).astype(dtype), np.rint(top * scale).astype(dtype)
    ours = _ours(_animation([(first, 0, 0, 0, 0), (top, 1, 1, 0, 1)]))
    expected = first.astype(np.float64)
    expected[1:3, 1:3] = _spec_over(top, first[1:3, 1:3])
    assert len(ours) == 2 and ours[0][0].dtype == dtype and ours[1][0].dtype == dtype
    assert np.array_equal(ours[0][0], cv2.cvtColor(first, cv2.COLOR_RGBA2BGRA))
    expected_bgra = cv2.cvtColor(expected.astype(np.float32), cv2.COLOR_RGBA2BGRA)
    assert np.abs(ours[1][0].astype(np.float64) - expected_bgra).max() <= 1
    assert np.array_equal(ours[1][0][2, 1], [0, 0, 0, 0])


# ---------------------------------------------------------------- chunk fields, damaged files
def _two_frames(**options: object) -> bytes:
    return _pillow_apng(_dotted("RGB", 2), duration=100, **options)


def _edited(data: bytes, kind: bytes, edit: Callable[[bytes], bytes]) -> bytes:
    """``data`` with every ``kind`` chunk's payload passed through ``edit`` (CRCs recomputed)."""
    return _png([(name, edit(payload) if name == kind else payload) for name, payload in _chunks(data)])


def test_a_zero_delay_denominator_means_hundredths_of_a_second() -> None:
    """The spec (and Pillow): a delay_den of 0 is read as 100, so 7 / 0 is 70 ms (7 / 101 would be 69)."""
    data = _edited(_two_frames(), b"fcTL", lambda payload: payload[:20] + struct.pack(">HH", 7, 0) + payload[24:])
    assert [duration for _, duration in _ours(data)] == [70, 70]
    with Image.open(BytesIO(data)) as image:
        assert image.info["duration"] == 70.0


def test_control_chunks_longer_than_their_fields_are_read_as_pillow_reads_them() -> None:
    """Bytes after an fcTL's 26 and an acTL's 8 are ignored (by Pillow too), not refused."""
    data = _edited(_edited(_two_frames(loop=3), b"fcTL", lambda payload: payload + b"\0\1"),
                   b"acTL", lambda payload: payload + b"\0\1")
    ours = _ours(data)
    _assert_frames(ours, _pillows(data, "RGB"))
    assert [duration for _, duration in ours] == [100, 100]
    with Image.open(BytesIO(data)) as image:
        assert apng.loop_count(BytesIO(data)) == (image.n_frames, image.info["loop"]) == (2, 3)


def test_a_play_count_over_two_to_the_31_reads_unsigned() -> None:
    """num_plays is an unsigned 32-bit field: 3,000,000,000 plays, as Pillow writes and reads them."""
    data = _two_frames(loop=3_000_000_000)
    file = BytesIO(b"leading bytes" + data)
    file.seek(13)
    with Image.open(BytesIO(data)) as image:
        assert apng.loop_count(file) == (image.n_frames, image.info["loop"]) == (2, 3_000_000_000)
    assert file.tell() == 13  # left where it started


def test_a_still_png_is_one_frame_played_forever() -> None:
    """No acTL: one frame, plays 0; an acTL after IDAT comes too late to make an animation (the spec:
    it must precede the first IDAT; Pillow too counts one frame and no loop)."""
    out = BytesIO()
    Image.new("RGB", (3, 2), (1, 2, 3)).save(out, "PNG")
    still = _chunks(out.getvalue())
    late = _png(still[:-1] + [(b"acTL", struct.pack(">II", 4, 5)), still[-1]])
    for data in (out.getvalue(), late):
        assert apng.loop_count(BytesIO(data)) == (1, 0)
        with Image.open(BytesIO(data)) as image:
            assert image.n_frames == 1 and "loop" not in image.info


def test_frames_without_ihdr_are_refused() -> None:
    """No IHDR: the frame has no depth or colour type, refused as such (not a TypeError)."""
    pixels = np.full((2, 3, 4), 255, np.uint8)
    chunks = [(kind, payload) for kind, payload in _chunks(_animation([(pixels, 0, 0, 0, 0)])) if kind != b"IHDR"]
    with pytest.raises(apng.ApngError) as error:
        _ours(_png(chunks))
    assert str(error.value) == "no IHDR before the first frame"


@pytest.mark.parametrize(("damage", "message"), [
    (lambda data: b"GIF89a" + data[6:], "no PNG signature"),
    (lambda data: data[:-12], "ends before IEND"),  # IEND gone
    (lambda data: data[:-12 - 2], "a fdAT chunk is cut short"),  # the last fdAT's CRC half there
    (lambda data: data[:-12 - 4 - 3], "a fdAT chunk is cut short"),  # its data cut
    (lambda data: data[:-12 - 4 - 3].replace(b"fdAT", b"\xffdAT"), "a \ufffddAT chunk is cut short"),
])
def test_damaged_files_are_refused_with_the_whole_message(damage: Callable[[bytes], bytes], message: str) -> None:
    """Each refusal says what is wrong; a chunk type that is no text is shown with U+FFFD for the bad
    byte (a chunk type is 4 bytes of anything in a damaged file)."""
    data = damage(_two_frames())
    with pytest.raises(apng.ApngError) as error:
        _ours(data)
    assert str(error.value) == message


def test_a_frame_control_cut_short_is_refused_as_damage() -> None:
    """A second fcTL of 20 bytes (CRC right): Pillow's header parse sees only the first, so the file reaches
    this reader, which must refuse it with ApngError (read_frames: TruncatedImageError), not let
    struct.error escape (it did: read_frames catches ValueError and the like, not struct.error)."""
    chunks = _chunks(_two_frames())
    second = [index for index, (kind, _) in enumerate(chunks) if kind == b"fcTL"][1]
    chunks[second] = (b"fcTL", chunks[second][1][:20])
    data = _png(chunks)
    with pytest.raises(apng.ApngError) as error:
        _ours(data)
    assert str(error.value) == "a fcTL chunk is shorter than 26 bytes"
    with pytest.raises(TruncatedImageError) as refused:
        list(read_frames(data))
    assert str(refused.value) == "-: image data is truncated or corrupt (a fcTL chunk is shorter than 26 bytes)"


def _grey_rows(pixels: np.ndarray, bits: int) -> bytes:
    """Grey PNG image data at 1 to 16 bits: each row filter type 0, samples under 8 bits packed from the high bit."""
    if bits >= 8:
        return _idat(pixels.astype(np.uint8 if bits == 8 else np.uint16))
    per = 8 // bits
    rows = []
    for row in pixels:
        groups = np.pad(row, (0, -len(row) % per)).reshape(-1, per)
        rows.append(b"\0" + bytes((groups << bits * np.arange(per - 1, -1, -1)).sum(axis=1).tolist()))
    return zlib.compress(b"".join(rows))


def _grey_animation(frames: list[np.ndarray], bits: int, extra: tuple[bytes, ...]) -> bytes:
    ihdr = struct.pack(">IIBBBBB", frames[0].shape[1], frames[0].shape[0], bits, 0, 0, 0, 0)
    return makefiles.apng_bytes(ihdr, [makefiles.ApngFrame(_grey_rows(pixels, bits), pixels.shape[1], pixels.shape[0])
                                       for pixels in frames], extra=extra)


@pytest.mark.parametrize(("bits", "key"), [(1, 1), (4, 3), (8, 3), (16, 1003)])
def test_a_grey_animation_with_a_transparent_key_reads_with_alpha_as_a_still_does(bits: int, key: int) -> None:
    """A grey APNG with a tRNS key: BGRA frames at the file's depth, alpha 0 exactly where a pixel holds the key,
    full elsewhere (OpenCV's decoder drops a grey key; the still reader keeps it). Under 8 bits the key is widened
    like the samples (times 255 at 1 bit, 17 at 4), which catches a key compared unscaled; 1003 needs both bytes."""
    top = 2 ** bits - 1
    first = np.array([[0, key, top, key], [top // 2, key, 0, top]], np.uint16)
    frames = [first, top - first]
    file = _grey_animation(frames, bits, (makefiles.png_chunk(b"tRNS", struct.pack(">H", key)),))
    dtype = np.uint16 if bits == 16 else np.uint8
    full = np.iinfo(dtype).max
    got = [image for image, _ in apng.frames(BytesIO(file))]
    assert len(got) == 2
    for image, pixels in zip(got, frames, strict=True):
        grey = (pixels * (255 // top if bits < 8 else 1)).astype(dtype)
        want = np.dstack([grey, grey, grey, np.where(pixels == key, 0, full).astype(dtype)])
        assert image.dtype == want.dtype
        np.testing.assert_array_equal(image, want)


def test_a_grey_animation_without_a_key_stays_grey_and_a_frame_may_span_chunks() -> None:
    """Grey frames with a gAMA chunk and no tRNS: grey, no invented alpha (a key read from another chunk's
    bytes made one). The second frame's data is split over two fdAT chunks, as encoders split long data."""
    frames = [np.arange(12, dtype=np.uint16).reshape(3, 4) * 20, np.full((3, 4), 77, np.uint16)]
    file = bytearray(_grey_animation(frames, 8, (makefiles.png_chunk(b"gAMA", struct.pack(">I", 45455)),)))
    at = file.index(b"fdAT") - 4
    length = int.from_bytes(file[at:at + 4], "big")
    sequence, data = file[at + 8:at + 12], bytes(file[at + 12:at + 8 + length])
    halves = [makefiles.png_chunk(b"fdAT", sequence + data[:5]),
              makefiles.png_chunk(b"fdAT", (int.from_bytes(sequence, "big") + 1).to_bytes(4, "big") + data[5:])]
    file[at:at + 12 + length] = b"".join(halves)
    got = [image for image, _ in apng.frames(BytesIO(bytes(file)))]
    assert len(got) == 2
    for image, pixels in zip(got, frames, strict=True):
        np.testing.assert_array_equal(image, pixels.astype(np.uint8))
