"""cvfilters.io.regions, tiff_regions and zarr_regions: the storage details an output keeps or
chooses, and the edges of reading.

Files are made by tifffile or zarr; what the modules write is read back with tifffile, zarr
or Pillow (second readers), and every expected tag, chunk or message is written out by hand.
"""

from __future__ import annotations

import errno
import os
import queue
import struct
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tifffile
from PIL import Image

from cvfilters.core.arrays import swap_rb
from cvfilters.core.errors import ImageReadError, ImageWriteError, TruncatedImageError
from cvfilters.engine import tiles
from cvfilters.io import regions, tiff_regions, zarr_regions

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
pytest.importorskip("imagecodecs", reason="Zstandard TIFFs need imagecodecs")


def _data(height: int, width: int, channels: int = 3, dtype: Any = np.uint8, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (height, width) if channels == 1 else (height, width, channels)
    return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)


def _copy(source: Any, sink: Any, size: int) -> None:
    height, width = source.shape[:2]
    for y in range(0, height, size):
        for x in range(0, width, size):
            sink.write(y, x, source.read(y, min(y + size, height), x, min(x + size, width)))


def _count_loads(source: tiff_regions.TiffSource) -> list[int]:
    """The segment indices ``source`` decodes from now on, in order."""
    loads: list[int] = []
    load = source._load

    def counted(index: int) -> np.ndarray:
        loads.append(index)
        return load(index)

    source._load = counted  # type: ignore[method-assign]
    return loads


def _patch_short(path: Path, code: int, value: int, data: np.ndarray) -> None:
    """Write ``data`` and overwrite the SHORT value of its tag ``code`` in place (little-endian)."""
    tifffile.imwrite(path, data)
    with tifffile.TiffFile(path) as tif:
        offset = tif.pages.first.tags[code].valueoffset
    with open(path, "r+b") as file:
        file.seek(offset)
        file.write(struct.pack("<H", value))


# ---------------------------------------------------------------- names and refusals
def test_names_are_matched_in_any_case() -> None:
    assert tiff_regions.is_tiff("scan.TIF") and tiff_regions.is_tiff("scan.Tiff")
    assert not tiff_regions.is_tiff("scan.tif.png")
    assert zarr_regions.is_zarr("a/b.ZARR") and not zarr_regions.is_zarr("b.zarr.tif")
    assert regions.streamable("photo.PNG") == ".PNG is decoded whole"
    assert regions.streamable("README") == "a file without extension is decoded whole"


@pytest.mark.parametrize(("make", "why"), [
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8, 2), np.uint8), photometric="minisblack", planarconfig="contig",
                                extrasamples=["unassalpha"]), "2 samples per pixel"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8, 4), np.uint8), photometric="separated"), "photometric SEPARATED"),
    (lambda p: tifffile.imwrite(p, np.zeros((2, 16, 16), np.uint8), volumetric=True, tile=(16, 16)),
     "a volume (ImageDepth > 1)"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8), np.int8)), "sample type int8"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8), np.uint16), bitspersample=12), "12 bits per sample"),
    (lambda p: _patch_short(p, 339, 5, np.zeros((8, 8), np.int8)), "sample type None"),  # complex int: no dtype
    (lambda p: tifffile.imwrite(p, np.zeros((2, 8, 8), np.uint8), photometric="minisblack", planarconfig="separate",
                                extrasamples=["unassalpha"]), "planar (separate) samples"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8, 4), np.uint8), photometric="rgb", extrasamples=["assocalpha"]),
     "associated (premultiplied) alpha"),
    (lambda p: _patch_short(p, 259, 65000, np.zeros((8, 8), np.uint8)),
     "compression 65000 needs imagecodecs (pip install \"cvfilters[streaming]\")"),
])
def test_more_unstreamable_tiffs_are_named(tmp_path: Path, make: Any, why: str) -> None:
    path = tmp_path / "x.tif"
    make(path)
    assert regions.streamable(path) == why
    with pytest.raises(ImageReadError) as caught:
        tiff_regions.TiffSource(path)
    assert str(caught.value) == f"{path}: cannot be streamed: {why}"


def test_four_samples_of_unspecified_meaning_stream(tmp_path: Path) -> None:
    data = _data(9, 7, 4)
    tifffile.imwrite(tmp_path / "x.tif", data, photometric="rgb", extrasamples=["unspecified"])
    assert regions.streamable(tmp_path / "x.tif") is None
    with tiff_regions.TiffSource(tmp_path / "x.tif") as source, \
            regions.open_sink(tmp_path / "o.tif", source.shape, source.dtype, source=source) as sink:
        np.testing.assert_array_equal(source.read(0, 9, 0, 7), data[..., [2, 1, 0, 3]])
        _copy(source, sink, 4)
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        assert tuple(tif.pages.first.extrasamples) == (0,)  # kept, not turned into alpha
        np.testing.assert_array_equal(tif.asarray(), data)


# ---------------------------------------------------------------- reading
def test_big_endian_files_read_right(tmp_path: Path) -> None:
    data = _data(30, 11, 1, np.uint16)
    layouts: list[tuple[str, dict[str, Any]]] = [("strips.tif", {"rowsperstrip": 7}),
                                                 ("tiles.tif", {"tile": (16, 16), "compression": "zlib"})]
    for name, options in layouts:
        tifffile.imwrite(tmp_path / name, data, byteorder=">", **options)
        with tiff_regions.TiffSource(tmp_path / name) as source:
            assert source.dtype == np.dtype(np.uint16) and source.dtype.byteorder in "=|"
            np.testing.assert_array_equal(source.read(3, 29, 2, 11), data[3:29, 2:11])


def test_uncompressed_strips_are_read_in_pieces_across_strips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiff_regions, "PIECE_BYTES", 3 * 23 * 3)  # pieces of 3 rows, strips of 10
    data = _data(31, 23)
    tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", rowsperstrip=10)
    with tiff_regions.TiffSource(tmp_path / "in.tif") as source:
        for y0, y1 in ((0, 31), (8, 12), (9, 10), (10, 11), (29, 31), (2, 25)):
            np.testing.assert_array_equal(source.read(y0, y1, 1, 22), data[y0:y1, 1:22, ::-1])


def test_plain_strips_are_read_in_pieces_of_the_bound_and_compressed_strips_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An uncompressed strip is read PIECE_BYTES at a time (here one row: pieces of two rows, or whole
    strips, would hold more in memory); a compressed one can only be decoded whole."""
    monkeypatch.setattr(tiff_regions, "PIECE_BYTES", 23 * 3)  # one row of 23 RGB pixels
    data = _data(30, 23)
    for compression, pieces in ((None, 30), ("zlib", 3)):
        tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", rowsperstrip=10, compression=compression)
        with tiff_regions.TiffSource(tmp_path / "in.tif") as source:
            loads = _count_loads(source)
            np.testing.assert_array_equal(source.read(0, 30, 0, 23), data[..., ::-1])
            assert len(loads) == pieces


def test_each_segment_is_decoded_once_in_a_row_major_pass(tmp_path: Path) -> None:
    data = _data(100, 90)
    tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", tile=(32, 32), compression="zstd")
    for cache in (None, 1):  # the default, and the least: two rows of tiles
        with tiff_regions.TiffSource(tmp_path / "in.tif", cache_bytes=cache) as source:
            loads = _count_loads(source)
            out = np.concatenate([np.concatenate([source.read(y, min(y + 20, 100), x, min(x + 20, 90))
                                                  for x in range(0, 90, 20)], axis=1) for y in range(0, 100, 20)])
            np.testing.assert_array_equal(out, data[..., ::-1])
            assert sorted(loads) == list(range(12))  # 4 rows of 3 tiles, each once


def test_uncompressed_strips_are_read_once_with_the_least_cache(tmp_path: Path) -> None:
    data = _data(40, 30, 1, np.uint16)
    tifffile.imwrite(tmp_path / "in.tif", data, rowsperstrip=8, byteorder=">")
    with tiff_regions.TiffSource(tmp_path / "in.tif", cache_bytes=1) as source:  # room for two strips
        loads = _count_loads(source)
        for y in range(0, 40, 6):  # tiles 6 rows high cross the strips of 8
            for x in range(0, 30, 10):
                np.testing.assert_array_equal(source.read(y, min(y + 6, 40), x, x + 10), data[y : y + 6, x : x + 10])
        assert loads == [0, 1, 2, 3, 4]


def test_fewer_strips_than_the_image_needs_is_a_truncation(tmp_path: Path) -> None:
    path = tmp_path / "few.tif"
    data = _data(30, 7, 1)
    tifffile.imwrite(path, data, rowsperstrip=10)  # 3 strips; the file is made to list 2
    with tifffile.TiffFile(path) as tif:
        entries = [tif.pages.first.tags[code].offset for code in (273, 279)]
    with open(path, "r+b") as file:
        for entry in entries:
            file.seek(entry + 4)  # the count of a classic TIFF directory entry
            file.write(struct.pack("<I", 2))
    with tiff_regions.TiffSource(path) as source:
        np.testing.assert_array_equal(source.read(0, 20, 0, 7), data[:20])
        with pytest.raises(TruncatedImageError) as caught:
            source.read(15, 30, 0, 7)
    assert str(caught.value) == f"{path}: TIFF has fewer strips than its size needs"


def test_a_small_cache_decodes_again_and_grows_on_request(tmp_path: Path) -> None:
    data = _data(64, 64)
    tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", tile=(16, 16), compression="zlib")
    with tiff_regions.TiffSource(tmp_path / "in.tif", cache_bytes=1) as source:
        loads = _count_loads(source)
        source.read(0, 64, 0, 64)  # 16 tiles; the last two rows of them (8) stay
        source.read(0, 16, 0, 16)  # the first tile again, in place of tile 8
        assert len(loads) == 17 and loads[-1] == 0
        source.set_cache_bytes(16 * 16 * 16 * 3)  # room for all 16
        source.set_cache_bytes(1)  # never shrinks
        source.read(0, 64, 0, 64)
        assert sorted(loads[17:]) == [1, 2, 3, 4, 5, 6, 7, 8]
        source.read(0, 64, 0, 64)
        assert len(loads) == 25


def test_a_closed_source_refuses_reads(tmp_path: Path) -> None:
    tifffile.imwrite(tmp_path / "in.tif", _data(8, 8), photometric="rgb")
    source = tiff_regions.TiffSource(tmp_path / "in.tif")
    source.close()
    source.close()  # twice is fine
    with pytest.raises(OSError):
        source.read(0, 8, 0, 8)


# ---------------------------------------------------------------- writing TIFF
def test_a_sink_without_a_layout_writes_plain_strips_of_about_a_mebibyte(tmp_path: Path) -> None:
    data = _data(1000, 600)
    with tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype) as sink:
        _copy(tiles.ArraySource(data), sink, 256)
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        page = tif.pages.first
        assert (page.compression, page.predictor, page.photometric, page.is_tiled) == (1, 1, 2, False)
        assert page.rowsperstrip == 2**20 // (600 * 3) == 582 and not tif.is_bigtiff
        assert 305 not in page.tags and 270 not in page.tags  # no Software, no tifffile shape note
        np.testing.assert_array_equal(page.asarray(), data[..., ::-1])


def test_strips_over_the_bound_are_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiff_regions, "MAX_STRIP_BYTES", 40 * 3 * 10 + 5)  # 10 rows and a bit
    data = _data(45, 40)
    tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", compression="zlib")  # one strip
    with tiff_regions.TiffSource(tmp_path / "in.tif") as source, \
            regions.open_sink(tmp_path / "o.tif", source.shape, source.dtype, source=source) as sink:
        _copy(source, sink, 16)
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        assert tif.pages.first.rowsperstrip == 10 and tif.pages.first.compression == 8
        np.testing.assert_array_equal(tif.asarray(), data)


@pytest.mark.parametrize(("shape", "layout", "photometric", "extras"), [
    ((9, 7), tiff_regions.TiffLayout(photometric=2), 1, ()),  # colour in, grey out
    ((9, 7, 3), tiff_regions.TiffLayout(photometric=1), 2, ()),  # grey in, colour out
    ((9, 7, 4), tiff_regions.TiffLayout(), 2, (2,)),  # alpha without a layout: unassociated
    ((9, 7, 3), tiff_regions.TiffLayout(extrasamples=(0,)), 2, ()),
])
def test_the_photometric_and_alpha_follow_the_output(tmp_path: Path, shape: tuple[int, ...],
                                                     layout: tiff_regions.TiffLayout, photometric: int,
                                                     extras: tuple[int, ...]) -> None:
    data = _data(shape[0], shape[1], shape[2] if len(shape) == 3 else 1)
    with tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype, layout) as sink:
        _copy(tiles.ArraySource(data), sink, 4)
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        page = tif.pages.first
        assert (page.photometric, tuple(page.extrasamples or ())) == (photometric, extras)
        stored = data[..., [2, 1, 0, 3][: shape[2]]] if len(shape) == 3 else data
        np.testing.assert_array_equal(page.asarray(), stored)


def test_a_jpeg_rgb_output_keeps_rgb_and_streams_again(tmp_path: Path) -> None:
    """tifffile's JPEG default is YCbCr with 2 x 2 chroma subsampling: the photometric would change
    and the streaming reader (grey or RGB only) would refuse the sink's own output."""
    data = np.kron(np.arange(12, dtype=np.uint8).reshape(2, 2, 3) * 20, np.ones((32, 32, 1), np.uint8))
    layout = tiff_regions.TiffLayout(compression=7, photometric=2, tile=(32, 32))
    with tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype, layout) as sink:
        _copy(tiles.ArraySource(data), sink, 16)
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        page = tif.pages.first
        assert (page.compression, page.photometric) == (7, 2)
        assert page.tags.valueof(530) in (None, (1, 1))  # no chroma subsampling
    with Image.open(tmp_path / "o.tif") as image:  # a second reader: flat blocks, JPEG near exact
        assert np.abs(np.asarray(image.convert("RGB"), int) - data[..., ::-1]).max() <= 4
    assert regions.streamable(tmp_path / "o.tif") is None


def test_a_predictor_is_dropped_without_compression(tmp_path: Path) -> None:
    data = _data(9, 7)
    layout = tiff_regions.TiffLayout(predictor=2)
    with tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype, layout) as sink:
        _copy(tiles.ArraySource(data), sink, 9)
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        assert (tif.pages.first.compression, tif.pages.first.predictor) == (1, 1)


def test_dates_artists_and_centimetres_are_kept(tmp_path: Path) -> None:
    data = _data(9, 7)
    tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", resolution=(40, 20), resolutionunit="CENTIMETER",
                     datetime="2024:01:02 03:04:05", metadata=None, extratags=[(315, "s", 0, "A. Painter", True)])
    with tiff_regions.TiffSource(tmp_path / "in.tif") as source, \
            regions.open_sink(tmp_path / "o.tif", source.shape, source.dtype, source=source) as sink:
        _copy(source, sink, 5)
    with Image.open(tmp_path / "o.tif") as image:
        assert image.tag_v2[306] == "2024:01:02 03:04:05" and image.tag_v2[315] == "A. Painter"
        assert image.tag_v2[296] == 3 and (float(image.tag_v2[282]), float(image.tag_v2[283])) == (40.0, 20.0)
        assert 270 not in image.tag_v2  # no description was given: none is made up


def test_the_writers_shape_note_is_not_carried(tmp_path: Path) -> None:
    tifffile.imwrite(tmp_path / "in.tif", _data(9, 7), photometric="rgb")  # tifffile notes {"shape": [9, 7, 3]}
    with tifffile.TiffFile(tmp_path / "in.tif") as tif:
        assert tif.pages.first.tags.valueof(270).startswith('{"shape"')
    with tiff_regions.TiffSource(tmp_path / "in.tif") as source, \
            regions.open_sink(tmp_path / "o.tif", (9, 7), source.dtype, source=source) as sink:  # now grey
        assert source.layout.tags == {305: "tifffile.py"}
        sink.write(0, 0, np.zeros((9, 7), np.uint8))
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        assert 270 not in tif.pages.first.tags


def test_bigtiff_only_past_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(10, 10, dtype=np.uint16)
    for bound, big in ((600, False), (599, True)):  # 600 bytes of samples, 300 samples
        monkeypatch.setattr(tiff_regions, "BIGTIFF_ABOVE", bound)
        with tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype) as sink:
            _copy(tiles.ArraySource(data), sink, 10)
        with tifffile.TiffFile(tmp_path / "o.tif") as tif:
            assert tif.is_bigtiff == big


def test_a_writer_that_fails_is_a_write_error_and_leaves_nothing(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tifffile, "TiffWriter", refuse)
    (tmp_path / "o.tif").write_bytes(b"old")
    data = _data(40, 8)
    with pytest.raises(ImageWriteError, match="o.tif: cannot be written: .*No space left on device"), \
            tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype,
                                  tiff_regions.TiffLayout(rowsperstrip=1)) as sink:
        for y in range(40):
            sink.write(y, 0, data[y : y + 1])
    assert (tmp_path / "o.tif").read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["o.tif"]


def test_an_abort_while_the_writer_is_behind_returns_and_leaves_nothing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = swap_rb

    def slow(band: np.ndarray) -> np.ndarray:  # the writer thread's first band waits for the abort
        release.wait(10)
        return real(band)

    monkeypatch.setattr(tiff_regions, "swap_rb", slow)
    data = _data(40, 8)
    sink = tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype, tiff_regions.TiffLayout(rowsperstrip=10))
    for y in range(0, 30, 10):  # one band taken by the writer, two waiting in the queue (full)
        sink.write(y, 0, data[y : y + 10])
    timer = threading.Timer(0.2, release.set)
    timer.start()
    aborting = threading.Thread(target=sink.abort, daemon=True)  # a hung abort must not hold the process
    aborting.start()
    aborting.join(20)
    timer.cancel()
    release.set()
    assert not aborting.is_alive()  # the queue was emptied: the writer saw the end and stopped
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("target", ["o.tif", "o.zarr"])
def test_a_failed_folder_sync_is_the_error_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    target: str) -> None:
    from cvfilters.core import atomic

    def fail(folder: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(atomic, "fsync_directory", fail)
    data = _data(9, 7)
    with pytest.raises(OSError) as caught, regions.open_sink(tmp_path / target, data.shape, data.dtype) as sink:
        _copy(tiles.ArraySource(data), sink, 9)
    assert caught.value.errno == errno.EIO  # not a second error from the clean-up


def test_a_sink_makes_its_folders_and_offers_again_a_band_the_full_queue_did_not_take(tmp_path: Path) -> None:
    """A writer slower than the half second a band waits for the queue: the band is offered again, not lost;
    the target's missing folders are made."""
    data = _data(40, 8)
    target = tmp_path / "new" / "folders" / "o.tif"  # made by the sink
    sink = tiff_regions.TiffSink(target, data.shape, data.dtype, tiff_regions.TiffLayout(rowsperstrip=10))
    put = sink._queue.put
    refused: list[Any] = []

    def full_once(item: Any, block: bool = True, timeout: float | None = None) -> None:
        if not refused:
            refused.append(item)
            raise queue.Full
        put(item, block, timeout)

    sink._queue.put = full_once  # type: ignore[method-assign]
    with sink:
        _copy(tiles.ArraySource(data), sink, 10)
    assert refused and np.array_equal(tifffile.imread(target), data[..., ::-1])


def test_large_outputs_reach_the_disk_while_they_are_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiff_regions, "SYNC_BYTES", 7 * 10 * 3 * 2)  # every two bands of 10 rows
    synced: list[int] = []
    sync = os.fdatasync

    def counted(fd: int) -> None:  # the file's own descriptor, synced for real
        synced.append(fd)
        sync(fd)

    monkeypatch.setattr(os, "fdatasync", counted)
    data = _data(60, 7)
    layout = tiff_regions.TiffLayout(rowsperstrip=10)
    with tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype, layout) as sink:
        _copy(tiles.ArraySource(data), sink, 10)
    assert len(synced) == 3
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "o.tif"), data[..., ::-1])


# ---------------------------------------------------------------- Zarr
def test_a_zarr_array_object_is_a_source(tmp_path: Path) -> None:
    data = _data(12, 10, 4)
    array = zarr.create_array(store=str(tmp_path / "in.zarr"), shape=data.shape, dtype=data.dtype, chunks=(5, 5, 4))
    array[:] = data
    source = zarr_regions.ZarrSource(array)
    assert source.shape == (12, 10, 4) and source.dtype == np.uint8 and "in.zarr" in str(source.path)
    np.testing.assert_array_equal(source.read(2, 11, 1, 9), data[2:11, 1:9, [2, 1, 0, 3]])


def test_a_missing_zarr_input_is_named_and_not_created(tmp_path: Path) -> None:
    with pytest.raises(ImageReadError) as caught:
        zarr_regions.ZarrSource(tmp_path / "missing.zarr")
    assert str(caught.value).startswith(f"{tmp_path / 'missing.zarr'}: not a readable Zarr array (FileNotFoundError: ")
    assert os.listdir(tmp_path) == []


def test_an_array_like_without_a_store_is_named_zarr_array() -> None:
    with pytest.raises(ImageReadError) as caught:
        zarr_regions.ZarrSource(np.zeros((4, 4, 2), np.uint8))
    assert str(caught.value).startswith("zarr array: a Zarr array of shape (4, 4, 2) is not an image")


@pytest.mark.parametrize(("shape", "dtype", "fragment"), [
    ((4, 4, 2), np.uint8, "a Zarr array of shape (4, 4, 2) is not an image ((H, W) or (H, W, C), C in 1, 3, 4)"),
    ((0, 4), np.uint8, "a Zarr array of shape (0, 4) is not an image"),
    ((4,), np.uint8, "a Zarr array of shape (4,) is not an image"),
    ((4, 4), np.int32, "Zarr dtype int32 is not supported (uint8, uint16, int16, float32)"),
])
def test_zarr_arrays_that_are_not_images_are_named(tmp_path: Path, shape: tuple[int, ...], dtype: Any,
                                                   fragment: str) -> None:
    zarr.create_array(store=str(tmp_path / "x.zarr"), shape=shape, dtype=dtype)
    with pytest.raises(ImageReadError) as caught:
        regions.open_source(tmp_path / "x.zarr")
    assert str(caught.value).startswith(f"{tmp_path / 'x.zarr'}: {fragment}")


@pytest.mark.parametrize("dtype", [np.uint16, np.int16, np.float32])
def test_zarr_depths_and_one_channel_arrays_read(tmp_path: Path, dtype: Any) -> None:
    data = (np.arange(6 * 5 * 1).reshape(6, 5, 1) * 3 - 20).astype(dtype)
    zarr.create_array(store=str(tmp_path / "x.zarr"), shape=data.shape, dtype=dtype)[:] = data
    source = regions.open_source(tmp_path / "x.zarr")
    assert source.shape == (6, 5, 1) and source.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(source.read(1, 6, 0, 4).reshape(5, 4), data[1:6, :4, 0])


def test_a_zarr_sink_takes_its_defaults_or_the_inputs_storage(tmp_path: Path) -> None:
    data = _data(700, 30)
    with regions.open_sink(tmp_path / "o.zarr", data.shape, data.dtype) as sink:
        _copy(tiles.ArraySource(data), sink, 100)
    out = zarr.open_array(str(tmp_path / "o.zarr"), mode="r")
    assert out.chunks == (512, 30, 3) and out.metadata.zarr_format == 3
    np.testing.assert_array_equal(out[:], data[..., ::-1])
    like = zarr.create_array(store=str(tmp_path / "in.zarr"), shape=(20, 20, 3), dtype=np.uint8, chunks=(8, 6, 3),
                             compressors=numcodecs.Blosc(cname="lz4"), zarr_format=2)
    small = data[:20, :20]
    like_source = zarr_regions.ZarrSource(like)
    with regions.open_sink(tmp_path / "o2.zarr", small.shape, small.dtype, source=like_source) as sink:
        _copy(tiles.ArraySource(small), sink, 7)
    out = zarr.open_array(str(tmp_path / "o2.zarr"), mode="r")
    assert out.chunks == (8, 6, 3) and out.metadata.zarr_format == 2
    assert out.compressors[0].cname == "lz4"
    np.testing.assert_array_equal(out[:], small[..., ::-1])
    with regions.open_sink(tmp_path / "o3.zarr", small.shape, small.dtype, chunk=16) as sink:
        _copy(tiles.ArraySource(small), sink, 7)
    assert zarr.open_array(str(tmp_path / "o3.zarr"), mode="r").chunks == (16, 16, 3)
    grey = data[:600, :3, 0]
    with zarr_regions.ZarrSink(tmp_path / "o4.zarr", grey.shape, grey.dtype) as direct:  # its own default: 512
        _copy(tiles.ArraySource(grey), direct, 100)
    assert zarr.open_array(str(tmp_path / "o4.zarr"), mode="r").chunks == (512, 3)


def test_a_tiff_output_of_a_zarr_input_is_plain_and_the_reverse(tmp_path: Path) -> None:
    data = _data(9, 7)
    zarr.create_array(store=str(tmp_path / "in.zarr"), shape=data.shape, dtype=data.dtype, chunks=(4, 4, 3))[:] = data
    source = regions.open_source(tmp_path / "in.zarr")
    with regions.open_sink(tmp_path / "o.tif", source.shape, source.dtype, source=source) as sink:
        _copy(source, sink, 4)
    with tifffile.TiffFile(tmp_path / "o.tif") as tif:
        assert (tif.pages.first.compression, tif.pages.first.is_tiled) == (1, False)
        np.testing.assert_array_equal(tif.asarray(), data)
    tifffile.imwrite(tmp_path / "in.tif", data, photometric="rgb", tile=(16, 16), compression="zlib")
    with tiff_regions.TiffSource(tmp_path / "in.tif") as tiff, \
            regions.open_sink(tmp_path / "o.zarr", tiff.shape, tiff.dtype, source=tiff) as sink:
        _copy(tiff, sink, 4)
    out = zarr.open_array(str(tmp_path / "o.zarr"), mode="r")
    assert out.chunks == (9, 7, 3)
    np.testing.assert_array_equal(out[:], data)


def test_write_zarr_writes_rgb_chunks_and_replaces_atomically(tmp_path: Path) -> None:
    data = _data(20, 9, 4)
    (tmp_path / "o.zarr").write_bytes(b"a file in the way")
    zarr_regions.write_zarr(tmp_path / "o.zarr", data, chunk=8)
    out = zarr.open_array(str(tmp_path / "o.zarr"), mode="r")
    assert out.chunks == (8, 8, 4)
    np.testing.assert_array_equal(out[:], data[..., [2, 1, 0, 3]])
    zarr_regions.write_zarr(tmp_path / "o.zarr", data[..., 0])
    out = zarr.open_array(str(tmp_path / "o.zarr"), mode="r")
    assert out.chunks == (20, 9)
    np.testing.assert_array_equal(out[:], data[..., 0])
    assert sorted(os.listdir(tmp_path)) == ["o.zarr"]
    with pytest.raises(ImageWriteError, match="x.zarr: cannot be written as a Zarr array"):
        zarr_regions.write_zarr(tmp_path / "x.zarr", np.zeros((2, 2), object))  # no Zarr data type
    assert sorted(os.listdir(tmp_path)) == ["o.zarr"]


def test_write_zarr_default_chunks_new_folders_and_a_failed_move(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(600, 3, 1)
    zarr_regions.write_zarr(tmp_path / "a" / "b" / "o.zarr", data)
    out = zarr.open_array(str(tmp_path / "a" / "b" / "o.zarr"), mode="r")
    assert out.chunks == (512, 3)
    np.testing.assert_array_equal(out[:], data)

    def refuse(source: Path, target: Path) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(zarr_regions, "replace_directory", refuse)
    with pytest.raises(ImageWriteError, match="x.zarr: cannot be written as a Zarr array: .*Input/output error"):
        zarr_regions.write_zarr(tmp_path / "x.zarr", data)
    assert sorted(os.listdir(tmp_path)) == ["a"]  # the temporary array is removed


def test_replace_directory_keeps_the_old_target_when_the_move_fails(tmp_path: Path) -> None:
    old = tmp_path / "t.zarr"
    old.mkdir()
    (old / "chunk").write_bytes(b"old")
    with pytest.raises(FileNotFoundError):
        zarr_regions.replace_directory(tmp_path / "missing", old)
    assert (old / "chunk").read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["t.zarr"]
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "link.zarr"
    link.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "chunk").write_bytes(b"new")
    zarr_regions.replace_directory(tmp_path / "new", link)
    assert not link.is_symlink() and (link / "chunk").read_bytes() == b"new"
    assert (tmp_path / "elsewhere").is_dir()  # the link's target is not removed
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "link.zarr", "t.zarr"]


def test_stored_bytes_counts_nested_chunk_files(tmp_path: Path) -> None:
    (tmp_path / "a.zarr" / "c" / "0").mkdir(parents=True)
    (tmp_path / "a.zarr" / "zarr.json").write_bytes(b"{}")
    (tmp_path / "a.zarr" / "c" / "0" / "0").write_bytes(b"1234567")
    assert regions.stored_bytes(tmp_path / "a.zarr") == 9
