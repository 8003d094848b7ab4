"""How :func:`cvfilters.io.apng.frames` composites each frame (``fcTL``: region, dispose, blend).

The APNGs are built here chunk by chunk (rows zlib-compressed with filter 0, no image library)
so that every ``fcTL`` field is the test's; the expected canvases are worked out by hand, and
Pillow's own reading of the same file is a second reference. Colours are plain 0/255 and alphas
0 or 255, so that every reader gets the same bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from io import BytesIO

import numpy as np
import pytest
from PIL import Image

from cvfilters.io import apng
from tests import makefiles

RED, BLUE, GREEN, WHITE = (255, 0, 0, 255), (0, 0, 255, 255), (0, 255, 0, 255), (255, 255, 255, 255)
CLEAR = (9, 9, 9, 0)  # transparent; its colour should never show


@dataclass(frozen=True)
class Part:
    """One frame: its pixels (rows of RGB(A) samples or palette indices) and its fcTL fields."""

    pixels: np.ndarray
    x: int = 0
    y: int = 0
    dispose: int = 0
    blend: int = 0


def apng_file(size: tuple[int, int], colour_type: int, parts: list[Part], extra: tuple[bytes, ...] = (),
              header: bool = True) -> bytes:
    """An 8-bit APNG of ``size`` (width, height), its frames' data in IDAT then fdAT chunks."""
    width, height = size
    frames = []
    for part in parts:
        rows = part.pixels.reshape(part.pixels.shape[0], -1).astype(np.uint8)
        data = zlib.compress(np.hstack([np.zeros((rows.shape[0], 1), np.uint8), rows]).tobytes())
        frames.append(makefiles.ApngFrame(data, part.pixels.shape[1], part.pixels.shape[0], part.x, part.y, 50,
                                          part.dispose, part.blend))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0) if header else None
    return makefiles.apng_bytes(ihdr, frames, extra=extra)


def fill(height: int, width: int, colour: tuple[int, ...]) -> np.ndarray:
    return np.tile(np.array(colour, np.uint8), (height, width, 1))


def read(data: bytes) -> list[np.ndarray]:
    """The reader's frames in RGB(A) order (BGR(A) reversed by slicing)."""
    return [np.concatenate([frame[..., 2::-1], frame[..., 3:]], axis=2) for frame, _ in apng.frames(BytesIO(data))]


def pillow(data: bytes) -> list[np.ndarray]:
    with Image.open(BytesIO(data)) as png:
        out = []
        for index in range(png.n_frames):
            png.seek(index)
            out.append(np.asarray(png.convert("RGBA")).copy())
        return out


def test_dispose_previous_puts_back_what_the_frame_covered() -> None:
    """A frame disposed to "previous" (2) is gone before the next one, and the canvas under it is
    back; frames disposed to "none" (0) stay (the first frame too: it is not taken back to empty)."""
    parts = [Part(fill(4, 6, RED)), Part(fill(2, 2, BLUE), 1, 1, dispose=2), Part(fill(1, 1, GREEN), 4, 2),
             Part(fill(1, 1, WHITE), 0, 0)]
    data = apng_file((6, 4), 6, parts)
    expected = [fill(4, 6, RED)]
    expected.append(expected[0].copy())
    expected[1][1:3, 1:3] = BLUE
    expected.append(expected[0].copy())
    expected[2][2, 4] = GREEN  # the blue square is gone, the red under it back
    expected.append(expected[2].copy())
    expected[3][0, 0] = WHITE  # the green dot stays: it was not disposed
    got = read(data)
    assert len(got) == 4 and all(frame.dtype == np.uint8 for frame in got)
    for index, (want, have, theirs) in enumerate(zip(expected, got, pillow(data), strict=True)):
        np.testing.assert_array_equal(have, want, err_msg=f"frame {index}")
        np.testing.assert_array_equal(theirs, want, err_msg=f"Pillow, frame {index}")


def test_blending_over_keeps_the_canvas_under_transparent_pixels() -> None:
    """A frame blended "over" (1) shows the canvas through its transparent pixels; one blended as
    "source" (0) replaces them, transparent pixels included."""
    patch = fill(2, 3, BLUE)
    patch[0, 1] = patch[1, 2] = CLEAR
    data = apng_file((6, 4), 6, [Part(fill(4, 6, RED)), Part(patch, 2, 1, blend=1), Part(patch, 0, 2, blend=0)])
    over = fill(4, 6, RED)
    over[1:3, 2:5] = BLUE
    over[1, 3] = over[2, 4] = RED
    got, theirs = read(data), pillow(data)
    np.testing.assert_array_equal(got[1], over)
    np.testing.assert_array_equal(theirs[1], over)
    source = over.copy()
    source[2:4, 0:3] = patch
    for frame in (got[2], theirs[2]):
        np.testing.assert_array_equal(frame[..., 3], source[..., 3])
        np.testing.assert_array_equal(frame[..., :3][source[..., 3] > 0], source[..., :3][source[..., 3] > 0])


def test_an_rgb_first_frame_blended_over_comes_out_bgra() -> None:
    """An RGB file whose first frame blends over the empty canvas: the frames are BGRA (as the
    reader's docstring says for frames that blend over), uint8, the colours exact and opaque."""
    first = np.dstack([np.arange(6 * 4).reshape(4, 6) * 10, np.full((4, 6), 7), np.full((4, 6), 200)])
    data = apng_file((6, 4), 2, [Part(first, blend=1), Part(first[:2, :3][:, ::-1], 3, 2)])
    got = read(data)
    assert [(frame.shape, frame.dtype) for frame in got] == [((4, 6, 4), np.dtype(np.uint8))] * 2
    np.testing.assert_array_equal(got[0], np.dstack([first, np.full((4, 6), 255)]))
    np.testing.assert_array_equal(got[0], pillow(data)[0])
    second = got[0].copy()
    second[2:4, 3:6] = got[0][:2, :3][:, ::-1]
    np.testing.assert_array_equal(got[1], second)


def test_palette_frames_with_transparency_take_the_palette_and_its_alphas() -> None:
    """An indexed file (PLTE and tRNS chunks, both carried into every frame): each index becomes
    its palette colour with its own alpha."""
    plte = makefiles.png_chunk(b"PLTE", bytes([255, 0, 0, 0, 255, 0, 0, 0, 255]))
    trns = makefiles.png_chunk(b"tRNS", bytes([255, 0, 128]))
    indices = np.array([[0, 1, 2, 0], [2, 2, 1, 0]], np.uint8)
    data = apng_file((4, 2), 3, [Part(indices), Part(indices[::-1])], extra=(plte, trns))
    palette = np.array([(255, 0, 0, 255), (0, 255, 0, 0), (0, 0, 255, 128)], np.uint8)
    got = read(data)
    np.testing.assert_array_equal(got[0], palette[indices])
    np.testing.assert_array_equal(got[1], palette[indices[::-1]])
    np.testing.assert_array_equal(pillow(data)[0], palette[indices])


@pytest.mark.parametrize(("x", "y", "width", "height"), [(3, 0, 4, 2), (0, 3, 2, 2), (5, 3, 2, 2)],
                         ids=["right", "below", "both"])
def test_a_frame_past_the_canvas_edge_is_refused(x: int, y: int, width: int, height: int) -> None:
    """A frame reaching past the right or the bottom edge (or both) is an error naming the fault."""
    data = apng_file((6, 4), 6, [Part(fill(4, 6, RED)), Part(fill(height, width, BLUE), x, y)])
    with pytest.raises(apng.ApngError, match="^a frame lies outside the canvas$"):
        list(apng.frames(BytesIO(data)))


def test_a_frame_before_any_ihdr_is_refused() -> None:
    data = apng_file((6, 4), 6, [Part(fill(4, 6, RED))], header=False)
    with pytest.raises(apng.ApngError, match="^no IHDR before the first frame$"):
        list(apng.frames(BytesIO(data)))


def test_frame_data_that_is_not_a_png_stream_is_refused() -> None:
    """Frame data that does not inflate to the frame's rows is an error, not a missing frame."""
    data = apng_file((6, 4), 6, [Part(fill(4, 6, RED))])
    start = data.index(b"IDAT") + 4
    broken = data[: start - 8] + makefiles.png_chunk(b"IDAT", b"not deflate data") + data[data.index(b"IEND") - 4 :]
    with pytest.raises(apng.ApngError, match="^a frame cannot be decoded$"):
        list(apng.frames(BytesIO(broken)))
