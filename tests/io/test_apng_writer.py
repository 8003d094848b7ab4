"""The APNG writer (:class:`cvfilters.io.apng.ApngWriter`) checked from outside the file.

Pillow reads every frame, duration, loop count, disposal, blend and ICC profile; the chunks are
walked here with ``struct`` (lengths, CRCs by ``zlib.crc32``, sequence numbers, ``acTL`` and
``fcTL`` fields as the APNG specification lays them out). Pixels are compared with the arrays
written, exactly (PNG is lossless), in RGB order by slicing.
"""

from __future__ import annotations

import struct
import zlib
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms

from cvfilters.io import apng
from cvfilters.io import frames as frames_io
from cvfilters.io.frames import Frame

RNG = np.random.default_rng(2608)
SIGNATURE = b"\x89PNG\r\n\x1a\n"  # PNG specification, 5.2
IEND = b"\0\0\0\0IEND\xaeB`\x82"  # an empty IEND chunk and its CRC, as every PNG ends


def noise(shape: tuple[int, ...], dtype: type = np.uint8) -> np.ndarray:
    return RNG.integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """``(type, payload)`` of every chunk after the signature; each chunk's CRC is checked."""
    assert data[:8] == SIGNATURE
    out, position = [], 8
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        payload = data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + payload), kind
        out.append((kind, payload))
        position += 12 + length
    assert position == len(data)
    return out


def payloads(data: bytes, kind: bytes) -> list[bytes]:
    return [payload for name, payload in chunks(data) if name == kind]


def write(images: list[np.ndarray], durations: list[int | None], **options: object) -> bytes:
    """An APNG written with :class:`ApngWriter` into memory."""
    buffer = BytesIO()
    writer = apng.ApngWriter(buffer, **options)  # type: ignore[arg-type]
    for image, duration in zip(images, durations, strict=True):
        writer.add(image, duration)
    writer.close()
    return buffer.getvalue()


def pillow_frames(data: bytes) -> tuple[list[np.ndarray], list[dict[str, object]]]:
    """Every frame as Pillow decodes it (its own mode) and the frame's info (duration, disposal...)."""
    images, infos = [], []
    with Image.open(BytesIO(data)) as png:
        for index in range(png.n_frames):
            png.seek(index)
            images.append(np.asarray(png).copy())
            infos.append(dict(png.info))
    return images, infos


def rgb(image: np.ndarray) -> np.ndarray:
    """BGR(A) to RGB(A) by slicing (grey as it is)."""
    return image if image.ndim == 2 else np.concatenate([image[..., 2::-1], image[..., 3:]], axis=2)


def test_frames_durations_and_chunks_are_what_the_apng_specification_asks() -> None:
    """Every frame reads back exactly, with its duration (100 ms when none is given, 40 s over the
    signed 16-bit range), never disposed or blended; ``acTL`` counts the frames and plays forever
    by default, the sequence numbers run 0, 1, 2... through ``fcTL`` and ``fdAT``, and the file
    ends with an empty ``IEND``. The frames are large enough for OpenCV to split their data over
    more than one chunk."""
    images = [noise((64, 64, 3)) for _ in range(3)]
    data = write(images, [40, None, 40_000])
    walked = chunks(data)
    kinds = [kind for kind, _ in walked]
    assert kinds[0] == b"IHDR" and kinds.index(b"acTL") < kinds.index(b"IDAT") and kinds[-1] == b"IEND"
    assert data.endswith(IEND)
    assert struct.unpack(">II", payloads(data, b"acTL")[0]) == (3, 0)  # frames, plays (0: forever)
    controls = [struct.unpack(">IIIIIHHBB", payload) for payload in payloads(data, b"fcTL")]
    assert [control[1:] for control in controls] == [(64, 64, 0, 0, delay, 1000, 0, 0) for delay in (40, 100, 40_000)]
    numbers = [struct.unpack(">I", payload[:4])[0] for kind, payload in walked if kind in (b"fcTL", b"fdAT")]
    assert numbers == list(range(len(numbers))) and len(numbers) > 2 * 3  # several fdAT chunks a frame
    assert kinds.count(b"IDAT") > 1 and kinds.index(b"fdAT") > max(i for i, kind in enumerate(kinds) if kind == b"IDAT")
    got, infos = pillow_frames(data)
    assert [(info["duration"], info["disposal"], info["blend"], info["loop"]) for info in infos] == [
        (40, 0, 0, 0), (100, 0, 0, 0), (40_000, 0, 0, 0)]
    for want, have in zip(images, got, strict=True):
        np.testing.assert_array_equal(have, rgb(want))
    ours = list(apng.frames(BytesIO(data)))  # the reader puts the split chunks back together
    for want, (have, _) in zip(images, ours, strict=True):
        np.testing.assert_array_equal(have, want)


@pytest.mark.parametrize("plays", [1, 5])
def test_the_loop_count_is_the_plays_asked_for(plays: int) -> None:
    """``plays`` reaches ``acTL`` and Pillow's loop (not the default forever)."""
    data = write([noise((4, 5, 3))] * 2, [10, 10], plays=plays)
    assert struct.unpack(">II", payloads(data, b"acTL")[0]) == (2, plays)
    assert pillow_frames(data)[1][0]["loop"] == plays


def test_16_bit_frames_stay_16_bit() -> None:
    """Grey and BGRA uint16 frames are written at bit depth 16 (IHDR) with every bit: Pillow reads
    the grey ones as I;16 exactly, and the reader gives back the BGRA ones."""
    grey = [noise((5, 7), np.uint16) for _ in range(2)]
    data = write(grey, [30, 30])
    assert struct.unpack(">IIBB", payloads(data, b"IHDR")[0][:10]) == (7, 5, 16, 0)  # depth 16, grey
    got, _ = pillow_frames(data)
    for want, have in zip(grey, got, strict=True):
        np.testing.assert_array_equal(have, want)
    bgra = [noise((5, 7, 4), np.uint16) for _ in range(2)]
    data = write(bgra, [30, 30])
    assert struct.unpack(">IIBB", payloads(data, b"IHDR")[0][:10]) == (7, 5, 16, 6)  # depth 16, RGBA
    for want, (have, _) in zip(bgra, apng.frames(BytesIO(data)), strict=True):
        assert have.dtype == np.uint16
        np.testing.assert_array_equal(have, want)


def test_the_icc_profile_is_an_iccp_chunk_before_the_frames() -> None:
    """The profile is stored as PNG's ``iCCP`` says (a name, a NUL, method 0, the zlib-compressed
    profile) ahead of the image data, and Pillow hands back the same bytes."""
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    data = write([noise((4, 4, 3))] * 2, [50, 50], icc=icc)
    kinds = [kind for kind, _ in chunks(data)]
    assert kinds.index(b"iCCP") < kinds.index(b"IDAT")
    (iccp,) = payloads(data, b"iCCP")
    name, rest = iccp.split(b"\0", 1)
    assert 1 <= len(name) <= 79 and rest[0] == 0 and zlib.decompress(rest[1:]) == icc
    assert pillow_frames(data)[1][0]["icc_profile"] == icc
    assert b"iCCP" not in [kind for kind, _ in chunks(write([noise((4, 4, 3))], [50]))]  # none unless asked


def gradient() -> np.ndarray:
    """A smooth 64x64 BGR picture: deflate shrinks it far below its raw rows."""
    ramp = np.arange(64, dtype=np.uint8) * 4
    return np.dstack([np.tile(ramp, (64, 1)), np.tile(ramp[:, None], (1, 64)), np.full((64, 64), 128, np.uint8)])


def test_compression_0_stores_the_rows_and_the_default_compresses() -> None:
    """``compression=0`` reaches OpenCV's encoder: the data is at least the 64 raw rows (a filter
    byte and 64 x 3 samples each); with no ``compression`` it is deflated well below that; 9 is no
    larger than the default. Each reads back exactly."""
    image = gradient()
    raw = 64 * (1 + 64 * 3)
    sizes = {}
    for level in (0, None, 9):
        data = write([image, image], [20, 20], compression=level)
        sizes[level] = sum(len(payload) for payload in payloads(data, b"IDAT"))
        for have in pillow_frames(data)[0]:
            np.testing.assert_array_equal(have, rgb(image))
    assert sizes[0] >= raw > 4 * sizes[None] and sizes[9] <= sizes[None]


@pytest.mark.parametrize("second", [(4, 6, 3), (5, 5, 3), (4, 5, 4), (4, 5)], ids=["wider", "taller", "bgra", "grey"])
def test_a_frame_unlike_the_first_is_refused_with_the_reason(second: tuple[int, ...]) -> None:
    """A frame of another size or another number of channels than the first cannot join the APNG."""
    writer = apng.ApngWriter(BytesIO())
    writer.add(noise((4, 5, 3)), 10)
    with pytest.raises(apng.ApngError, match="^frames differ in size, depth or channels$"):
        writer.add(noise(second), 10)
    with pytest.raises(apng.ApngError, match="^frames differ in size, depth or channels$"):
        writer.add(noise((4, 5, 3), np.uint16), 10)  # another depth


def test_a_frame_opencv_cannot_encode_is_an_apng_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where OpenCV's encoder reports failure (``False``), the caller gets the reason, not a
    confusing error from the empty buffer later."""
    monkeypatch.setattr(cv2, "imencode", lambda *args: (False, np.zeros(0, np.uint8)))
    with pytest.raises(apng.ApngError, match="^OpenCV cannot encode a frame as PNG$"):
        apng.ApngWriter(BytesIO()).add(noise((4, 4, 3)), 10)


def test_write_frames_gives_a_frame_with_no_duration_100_ms(tmp_path: Path) -> None:
    """Through :func:`write_frames`: frames without a duration show 100 ms, the others theirs;
    ``loop=3`` is three plays."""
    images = [noise((6, 8, 3)) for _ in range(3)]
    frames_io.write_frames(tmp_path / "out.png", [Frame(images[0]), Frame(images[1], 250), Frame(images[2])], loop=3)
    data = (tmp_path / "out.png").read_bytes()
    assert struct.unpack(">II", payloads(data, b"acTL")[0]) == (3, 3)
    assert [struct.unpack(">HH", payload[20:24]) for payload in payloads(data, b"fcTL")] == [
        (100, 1000), (250, 1000), (100, 1000)]
    got, infos = pillow_frames(data)
    assert [info["duration"] for info in infos] == [100, 250, 100]
    for want, have in zip(images, got, strict=True):
        np.testing.assert_array_equal(have, rgb(want))


def test_frames_longer_than_65_5_s_keep_their_duration() -> None:
    """``fcTL``'s delay is a 16-bit numerator over a 16-bit denominator (seconds): a frame over
    65,535 ms is written as another fraction, not cut to 65.535 s (11 hours as 40000/1); Pillow's
    reading (the fraction in ms) is within 0.5 ms and the reader gives back the milliseconds. Over
    65,535 s (the largest fraction there is), the frame shows 65,535 s."""
    durations = [65_535, 65_536, 70_001, 600_000, 40_000_000]
    data = write([noise((3, 4, 3))] * 6, [*durations, 100_000_000])
    for payload, duration in zip(payloads(data, b"fcTL"), durations, strict=False):
        numerator, denominator = struct.unpack(">HH", payload[20:24])
        assert denominator > 0 and abs(1000 * numerator / denominator - duration) < 0.5, (numerator, denominator)
    assert struct.unpack(">HH", payloads(data, b"fcTL")[-1][20:24]) == (65535, 1)
    read = [info["duration"] for info in pillow_frames(data)[1]]
    assert [abs(have - want) < 0.5 for have, want in zip(read, durations, strict=False)] == [True] * 5  # type: ignore[operator]
    assert [duration for _, duration in apng.frames(BytesIO(data))] == [*durations, 65_535_000]


def test_closing_a_writer_with_no_frame_is_an_error_and_writes_nothing() -> None:
    """An APNG needs a frame: closing without one says so, rather than leaving a file that is not
    a PNG (an ``acTL`` chunk with no signature), with the whole reason."""
    buffer = BytesIO()
    with pytest.raises(apng.ApngError, match="^no frame was added; an APNG needs at least one$"):
        apng.ApngWriter(buffer).close()
    assert buffer.getvalue() == b""
