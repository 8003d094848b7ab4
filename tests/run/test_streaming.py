"""One image in bounded memory (:mod:`cvfilters.run.streaming`): the bomb guard, the tile side a default
plan takes, when a decoded image goes through tiles, and what ``stream_file`` passes on.

Every expected number is worked out by hand in the test (the engine's working memory is
``workers * 6 * side^2 * channels * 4`` bytes for a chain of point steps; a whole-image run needs
``pixels * channels * (2 * itemsize + 12)``); image results are checked against numpy (``255 - x``)
and read back with tifffile, OpenCV and Pillow.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import tifffile
from PIL import Image

import cvfilters
from cvfilters.core import machine
from cvfilters.core.errors import ImageTooLargeError, OutputExistsError, OverwriteInputError, ResourceLimitError
from cvfilters.engine import tiles
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import tiff_regions
from cvfilters.run import streaming

MIB = 2**20
GIB = 2**30


def _noise(height: int, width: int, channels: int = 3) -> np.ndarray:
    return np.random.default_rng(5).integers(0, 256, (height, width, channels), np.uint8)


# ---------------------------------------------------------------- the bomb guard
def _bytes_file(path: Path, size: int) -> Path:
    path.write_bytes(b"x" * size)
    return path


def test_a_claim_over_1100_times_the_stored_bytes_is_refused(tmp_path: Path) -> None:
    one = _bytes_file(tmp_path / "one.tif", 1)
    streaming.check_claimed(one, (1, 1100), np.dtype(np.uint8), 1000)  # 1100:1 exactly: taken
    with pytest.raises(ImageTooLargeError):
        streaming.check_claimed(one, (1, 1101), np.dtype(np.uint8), 1000)
    with pytest.raises(ImageTooLargeError):  # an empty file counts as one byte, not as none
        streaming.check_claimed(_bytes_file(tmp_path / "empty.tif", 0), (1, 1101), np.dtype(np.uint8), 1000)


def test_the_bomb_message_gives_the_claim_and_the_ratio(tmp_path: Path) -> None:
    four = _bytes_file(tmp_path / "four.tif", 4)
    with pytest.raises(ImageTooLargeError) as caught:  # uint16: 2 bytes a pixel, 9000 from 4 on disk
        streaming.check_claimed(four, (3, 1500), np.dtype(np.uint16), 1000)
    assert caught.value.path == str(four)
    assert caught.value.detail == ("1500x3 = 4500 pixels exceeds the limit of 1000, and 9000 decoded bytes from 4 on "
                                   "disk (2250:1) look like a decompression bomb (set --max-pixels to accept it)")
    streaming.check_claimed(four, (2, 1500), np.dtype(np.uint8), 1000)  # 3000 bytes from 4: 750:1, plausible


def test_the_bomb_guard_counts_a_colour_claims_samples_and_spares_one_at_the_limit(tmp_path: Path) -> None:
    """Width x height against the limit (a colour image's channels are not pixels), its bytes counted
    with every channel, and a claim of exactly ``limit`` pixels never refused, whatever its ratio."""
    one = _bytes_file(tmp_path / "one.tif", 1)
    streaming.check_claimed(one, (1, 1101), np.dtype(np.uint8), 1101)  # 1101:1 but not over the limit
    streaming.check_claimed(one, (1, 1000, 3), np.dtype(np.uint8), 1000)  # 3000:1, 1000 pixels: taken
    with pytest.raises(ImageTooLargeError) as caught:
        streaming.check_claimed(one, (1, 1001, 3), np.dtype(np.uint8), 1000)
    assert "3003 decoded bytes from 1 on disk (3003:1)" in caught.value.detail


# ---------------------------------------------------------------- the default tile side
@pytest.mark.parametrize(("spec", "workers", "tile_size", "side"), [
    ("invert", 1, None, 512),  # 6 * 512^2 * 3 * 4 = 18.9 MB: within 32 MiB
    ("invert", 2, None, 256),  # 37.7 MB over 32 MiB: halved once
    ("invert", 8, None, 256),  # never below 256
    ("invert", 2, 512, 512),  # asked for
    ("invert | detail_enhance", 2, None, 512),  # a whole-image step dominates: no halving
])
def test_a_default_plan_halves_its_tile_within_32_mib(spec: str, workers: int, tile_size: int | None,
                                                      side: int) -> None:
    plan = streaming.plan_for(Pipeline.parse(spec), (2000, 2000, 3), np.dtype(np.uint8), budget=GIB,
                              tile_size=tile_size, workers=workers)
    assert (plan.tile_size, plan.workers) == (side, workers)


# ---------------------------------------------------------------- whole or tiles
def test_a_decoded_image_goes_through_tiles_over_its_working_memory() -> None:
    gray = np.zeros((10, 20), np.uint8)  # 200 pixels x (2 + 12) bytes
    assert not streaming.too_large_for_whole(gray, 2800) and streaming.too_large_for_whole(gray, 2799)
    colour = np.zeros((10, 20, 3), np.uint16)  # 600 samples x (4 + 12) bytes
    assert not streaming.too_large_for_whole(colour, 9600) and streaming.too_large_for_whole(colour, 9599)
    # without a budget's say, above 256 MiB: 4096 x 4096 float32 needs 320 MiB, half of it 160 MiB
    assert streaming.too_large_for_whole(np.broadcast_to(np.float32(0), (4096, 4096)), 2**40)
    assert not streaming.too_large_for_whole(np.broadcast_to(np.float32(0), (2048, 4096)), 2**40)


def _header(path: Path, dtype: Any, channels: int, width: int, height: int) -> Path:
    """A TIFF whose header claims ``width`` x ``height`` (its one strip holds 2 x 3 pixels)."""
    shape = (2, 3, channels) if channels > 1 else (2, 3)
    tifffile.imwrite(path, np.zeros(shape, dtype), photometric="rgb" if channels > 1 else "minisblack")
    with tifffile.TiffFile(path, mode="r+") as tif:
        tif.pages[0].tags["ImageWidth"].overwrite(width)
        tif.pages[0].tags["ImageLength"].overwrite(height)
    return path


@pytest.mark.parametrize(("dtype", "channels", "width", "height", "mode", "large"), [
    (np.uint8, 1, 4096, 4097, "L", False),  # 16.78 M pixels x 14 bytes = 235 MB
    (np.uint16, 1, 4096, 4096, "I;16", False),  # x 16 bytes = 2^28 exactly: not over
    (np.uint16, 1, 4096, 4097, "I;16", True),
    (np.int32, 1, 4096, 3277, "I", True),  # 13.42 M pixels x 20 bytes = 268.45 MB
    (np.float32, 1, 4096, 3277, "F", True),
    (np.float32, 1, 4096, 3000, "F", False),  # 12.29 M x 20 = 245.8 MB
    (np.uint8, 3, 2528, 2528, "RGB", False),  # 6.39 M x 3 x 14 = 268.41 MB
    (np.uint8, 3, 2529, 2528, "RGB", True),  # 268.52 MB
])
def test_a_header_promising_over_256_mib_of_working_memory_is_large(
        tmp_path: Path, dtype: Any, channels: int, width: int, height: int, mode: str, large: bool) -> None:
    path = _header(tmp_path / "claim.tif", dtype, channels, width, height)
    with Image.open(path) as image:  # what Pillow reads from the header
        assert (image.mode, image.size) == (mode, (width, height))
    assert streaming.large_by_header(path) is large


def test_an_unreadable_header_is_not_large(tmp_path: Path) -> None:
    assert streaming.large_by_header(_bytes_file(tmp_path / "notes.tif", 100)) is False
    assert streaming.large_by_header(tmp_path / "missing.png") is False


# ---------------------------------------------------------------- stream_file's options
def test_stream_file_replaces_its_target_by_default_and_runs_the_workers_asked(tmp_path: Path) -> None:
    image = _noise(40, 30)
    source, target = tmp_path / "in.png", tmp_path / "out.tif"
    cv2.imwrite(str(source), image)
    cvfilters.stream_file(source, target, "invert")
    plan = cvfilters.stream_file(source, target, "flip", workers=3)  # no overwrite= given
    assert plan.workers == 3
    np.testing.assert_array_equal(tifffile.imread(target), image[:, ::-1, ::-1])  # the second run's, in RGB


def test_stream_file_passes_the_pixel_limit_on(tmp_path: Path) -> None:
    pytest.importorskip("imagecodecs", reason="Zstandard TIFFs need imagecodecs")
    bomb = tmp_path / "bomb.tif"
    tifffile.imwrite(bomb, np.zeros((1024, 1024), np.uint8), compression="zstd", tile=(1024, 1024))
    assert bomb.stat().st_size * 1100 < 1024 * 1024
    with pytest.raises(ImageTooLargeError, match="decompression bomb"):
        cvfilters.stream_file(bomb, tmp_path / "out.tif", "invert", max_pixels=1000)
    assert not (tmp_path / "out.tif").exists()
    cvfilters.stream_file(bomb, tmp_path / "out.tif", "invert")  # the default limit: 1 M pixels are fine
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "out.tif"), np.full((1024, 1024), 255, np.uint8))


def test_stream_file_passes_the_jpeg_quality_on(tmp_path: Path) -> None:
    source = tmp_path / "in.png"
    cv2.imwrite(str(source), _noise(32, 32))
    cvfilters.stream_file(source, tmp_path / "out.jpg", "invert", quality=25)
    with Image.open(tmp_path / "out.jpg") as jpeg:
        # libjpeg scales its luminance table by 5000 / quality percent below 50: DC 16 -> 32 at 25
        assert jpeg.quantization[0][0] == 32


# ---------------------------------------------------------------- an array in memory
def test_process_array_plans_within_its_budget() -> None:
    image = _noise(50, 70)
    out, plan = streaming.process_array(image, Pipeline.parse("invert"), budget=MIB, workers=1)
    # 6 * side^2 * 3 * 4 bytes within 1 MiB: 128 needs 1.18 MB, 64 takes 0.29 MB
    assert plan.tile_size == 64
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, 255 - image)
    _, forced = streaming.process_array(image, Pipeline.parse("invert"), budget=MIB, tile_size=32, workers=1)
    assert forced.tile_size == 32


def _record_tiles(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], set[str]]:
    """The tile sides the engine cuts, and the names of the threads running its blocks."""
    sides: list[int] = []
    threads: set[str] = set()
    tile_rects, run_block = tiles.tile_rects, tiles.run_block

    def recorded_rects(height: int, width: int, side: int) -> Any:
        sides.append(side)
        return tile_rects(height, width, side)

    def recorded_block(*args: Any) -> Any:
        threads.add(threading.current_thread().name)
        return run_block(*args)

    monkeypatch.setattr(tiles, "tile_rects", recorded_rects)
    monkeypatch.setattr(tiles, "run_block", recorded_block)
    return sides, threads


def test_process_array_runs_the_tiles_it_planned_on_every_core_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    sides, threads = _record_tiles(monkeypatch)
    monkeypatch.setattr(machine, "cores", lambda: 2)
    image = _noise(30, 300)  # two tiles of 256 columns
    out, plan = streaming.process_array(image, Pipeline.parse("invert"), budget=GIB)
    assert (plan.workers, plan.tile_size) == (2, 256)  # two workers: 37.7 MB at 512 px, halved
    assert sides and set(sides) == {256}  # the tiles that ran are the plan's
    assert threads and all(name.startswith("cvfilters-tile") for name in threads)  # on the pool's threads
    assert out.dtype == np.uint8  # the halved plan's output stays the input's type
    np.testing.assert_array_equal(out, 255 - image)


# ---------------------------------------------------------------- run: its paths and what --explain says
def _rgb_tiff(path: Path, bgr: np.ndarray, **options: Any) -> Path:
    tifffile.imwrite(path, bgr[..., ::-1], photometric="rgb", **options)
    return path


def test_a_tiff_streams_to_a_tiff_in_planned_tiles_keeping_its_storage(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The explain lines name the TIFF path, the tiles cut are the plan's (16 px forced) on two pool
    threads, and the output keeps the input's Deflate strips of 8 rows."""
    image = _noise(40, 30)
    source, target = _rgb_tiff(tmp_path / "in.tif", image, compression="zlib", rowsperstrip=8), tmp_path / "out.tif"
    sides, threads = _record_tiles(monkeypatch)
    done = streaming.run(source, target, Pipeline.parse("invert"), budget=64 * MIB, tile_size=16, workers=2)
    assert (done.plan.tile_size, done.plan.workers) == (16, 2)
    assert done.lines[:2] == [f"source: {source} 40x30x3 uint8 (TIFF, read in pieces)", "memory budget: 64 MiB"]
    assert done.lines[-1] == f"target: {target} (written in pieces)"
    assert set(sides) == {16} and threads and all(name.startswith("cvfilters-tile") for name in threads)
    out = tifffile.imread(target)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, 255 - image[..., ::-1])
    with tifffile.TiffFile(target) as tif:
        assert (tif.pages.first.compression, tif.pages.first.rowsperstrip) == (8, 8)  # 8: Deflate


def test_a_zarr_streams_to_a_zarr_and_a_tiff_to_a_zarr_in_tile_chunks(tmp_path: Path) -> None:
    """A Zarr input is named as such and its chunks are kept; a TIFF's Zarr output takes the tile as chunk."""
    zarr = pytest.importorskip("zarr")
    image = _noise(40, 30)
    array = zarr.create_array(store=str(tmp_path / "in.zarr"), shape=image.shape, dtype=np.uint8, chunks=(10, 20, 3))
    array[:] = image[..., ::-1]
    done = streaming.run(tmp_path / "in.zarr", tmp_path / "out.zarr", Pipeline.parse("invert"), budget=64 * MIB,
                         tile_size=16, workers=1)
    assert done.lines[0] == f"source: {tmp_path / 'in.zarr'} 40x30x3 uint8 (Zarr, read in pieces)"
    assert done.lines[-1] == f"target: {tmp_path / 'out.zarr'} (written in pieces)"
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert (out.chunks, out.dtype) == ((10, 20, 3), np.uint8)
    np.testing.assert_array_equal(out[:], 255 - image[..., ::-1])
    streaming.run(_rgb_tiff(tmp_path / "in.tif", image), tmp_path / "tiff.zarr", Pipeline.parse("invert"),
                  budget=64 * MIB, tile_size=16, workers=1)
    assert zarr.open_array(str(tmp_path / "tiff.zarr"), mode="r").chunks == (16, 16, 3)
    cv2.imwrite(str(tmp_path / "in.png"), image)  # decoded whole, written to Zarr whole
    done = streaming.run(tmp_path / "in.png", tmp_path / "png.zarr", Pipeline.parse("invert"), budget=64 * MIB,
                         workers=1)
    assert done.lines[-1] == f"target: {tmp_path / 'png.zarr'} (encoded whole)"
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "png.zarr"), mode="r")[:], 255 - image[..., ::-1])


@pytest.mark.parametrize("suffix", [".png", ".tif"])
def test_a_decoded_image_runs_in_planned_tiles_and_is_encoded_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    suffix: str) -> None:
    """A PNG is decoded whole and its result encoded whole (a TIFF target too), cut in the plan's tiles."""
    image = _noise(40, 30)
    source, target = tmp_path / "in.png", tmp_path / f"out{suffix}"
    cv2.imwrite(str(source), image)
    sides, threads = _record_tiles(monkeypatch)
    done = streaming.run(source, target, Pipeline.parse("invert"), budget=64 * MIB, tile_size=16, workers=2)
    assert done.lines[0] == f"source: {source} 40x30x3 uint8 (decoded whole, processed by tiles)"
    assert done.lines[-1] == f"target: {target} (encoded whole)"
    assert set(sides) == {16} and threads and all(name.startswith("cvfilters-tile") for name in threads)
    np.testing.assert_array_equal(cv2.imread(str(target), cv2.IMREAD_UNCHANGED), 255 - image)


def test_a_decoded_image_and_its_result_must_fit_the_budget(tmp_path: Path) -> None:
    """A 1024 x 512 gray PNG (512 KiB) and its result take 1 MiB: taken at exactly 1 MiB, refused one byte
    under it with both sizes and the file's name; the pixel limit applies to the decode."""
    source = tmp_path / "in.png"
    cv2.imwrite(str(source), np.full((512, 1024), 7, np.uint8))
    streaming.run(source, tmp_path / "out.png", Pipeline.parse("invert"), budget=MIB, workers=1)
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "out.png"), cv2.IMREAD_UNCHANGED), 248)
    with pytest.raises(ResourceLimitError) as caught:
        streaming.run(source, tmp_path / "no.png", Pipeline.parse("invert"), budget=MIB - 1, workers=1)
    assert caught.value.path == str(source)
    assert caught.value.detail == ("the decoded image and its result take 1 MiB, over the memory budget of 1 MiB "
                                   "(--memory)")
    with pytest.raises(ImageTooLargeError):
        streaming.run(source, tmp_path / "no.png", Pipeline.parse("invert"), budget=MIB, max_pixels=1000)
    assert not (tmp_path / "no.png").exists()


def test_a_tiff_the_reader_cannot_stream_or_a_tiff_named_png_is_decoded_whole(tmp_path: Path) -> None:
    """Planar (separate) samples are not streamed: the whole-image reader takes them; a file is a TIFF
    to the streaming reader by its extension only."""
    image = _noise(40, 30)
    planar = tmp_path / "planar.tif"
    tifffile.imwrite(planar, np.moveaxis(image[..., ::-1], 2, 0), photometric="rgb", planarconfig="separate")
    assert streaming.wanted(planar) is False
    done = streaming.run(planar, tmp_path / "out.png", Pipeline.parse("invert"), budget=64 * MIB, workers=1)
    assert done.lines[0].endswith("(decoded whole, processed by tiles)")
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "out.png")), 255 - image)
    assert streaming.wanted(_rgb_tiff(tmp_path / "named.png", image)) is False


def test_run_refuses_an_existing_target_or_its_own_input_naming_the_target(tmp_path: Path) -> None:
    """Without overwrite an existing target is an error naming it; the input is never the output."""
    source = _rgb_tiff(tmp_path / "in.tif", _noise(20, 20))
    target = _bytes_file(tmp_path / "out.tif", 3)
    with pytest.raises(OutputExistsError) as exists:
        streaming.run(source, target, Pipeline.parse("invert"), budget=64 * MIB, workers=1, overwrite=False)
    with pytest.raises(OverwriteInputError) as itself:
        streaming.run(source, source, Pipeline.parse("invert"), budget=64 * MIB, workers=1)
    assert (exists.value.path, itself.value.path) == (str(target), str(source))
    assert target.read_bytes() == b"xxx"


def test_a_decoded_image_keeps_its_icc_profile_in_a_file_and_on_standard_output(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """The source's ICC profile reaches the encoded output; standard output gets the chosen format at the
    quality asked (libjpeg's DC quantiser 16 -> 32 at quality 25), and the explain line says so."""
    from PIL import ImageCms

    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    image = _noise(32, 32)
    source = tmp_path / "in.png"
    Image.fromarray(image[..., ::-1]).save(source, icc_profile=icc)
    streaming.run(source, tmp_path / "out.png", Pipeline.parse("invert"), budget=64 * MIB, workers=1)
    with Image.open(tmp_path / "out.png") as out:
        assert out.info.get("icc_profile") == icc
    capsysbinary.readouterr()
    done = streaming.run(source, "-", Pipeline.parse("invert"), budget=64 * MIB, workers=1, quality=25,
                         stdout_format=".jpg")
    assert done.lines[-1] == "target: standard output (encoded whole)"
    with Image.open(io.BytesIO(capsysbinary.readouterr().out)) as jpeg:
        assert (jpeg.format, jpeg.size, jpeg.quantization[0][0]) == ("JPEG", (32, 32), 32)
        assert jpeg.info.get("icc_profile") == icc


def test_a_streamed_tiff_keeps_two_bands_of_tile_rows_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's cache holds two bands of tiles grown by the halo: a 4 px box reads 2 rows above and 1
    below, so 16 px tiles need 19 rows of 30 x 3 uint16 samples, twice over (too small a cache decodes
    strips again)."""
    asked: list[int] = []
    monkeypatch.setattr(tiff_regions.TiffSource, "set_cache_bytes", lambda self, capacity: asked.append(capacity))
    source = _rgb_tiff(tmp_path / "in.tif", _noise(40, 30).astype(np.uint16) * 257)
    streaming.run(source, tmp_path / "out.tif", Pipeline.parse("box_blur:size=4"), budget=64 * MIB, tile_size=16,
                  workers=1)
    assert asked == [2 * 19 * 30 * 3 * 2]
