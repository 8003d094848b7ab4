"""Tests of cvfilters.io.regions, tiff_regions and zarr_regions: TIFF, BigTIFF and Zarr read and
written in pieces.

Each file is made here by tifffile or zarr, and every result is checked with a second reader
(cv2.imread for the BGR order, tifffile and Pillow for the stored samples and tags), never
with the module's own reader.
"""

from __future__ import annotations

import errno
import os
import struct
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import tifffile
from PIL import Image

from cvfilters.core.errors import FileMissingError, ImageReadError, ImageWriteError, TruncatedImageError
from cvfilters.engine import tiles
from cvfilters.io import region_sinks, regions, tiff_regions, zarr_regions

zarr = pytest.importorskip("zarr")
pytest.importorskip("imagecodecs", reason="LZW, Zstandard and JPEG TIFFs need imagecodecs")

HEIGHT, WIDTH = 203, 157  # odd, and not a multiple of any strip, tile or chunk below


def _rgb(dtype: Any = np.uint8, channels: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.random((HEIGHT, WIDTH, channels), np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, (HEIGHT, WIDTH, channels), dtype=dtype, endpoint=True)


LAYOUTS = {  # name -> tifffile.imwrite options
    "uncompressed strips": {"rowsperstrip": 37},
    "one strip": {},
    "lzw + predictor strips": {"compression": "lzw", "predictor": True, "rowsperstrip": 16},
    "deflate tiles": {"compression": "zlib", "tile": (64, 48)},
    "zstd tiles": {"compression": "zstd", "tile": (32, 32)},
    "packbits strips": {"compression": "packbits", "rowsperstrip": 5},
    "strips of one row": {"rowsperstrip": 1},
    "bigtiff strips": {"bigtiff": True, "rowsperstrip": 50},
}


def _copy_by_tiles(source: Any, sink: Any, size: int) -> None:
    height, width = source.shape[:2]
    for y in range(0, height, size):
        for x in range(0, width, size):
            sink.write(y, x, source.read(y, min(y + size, height), x, min(x + size, width)))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tiff_regions_match_a_second_reader(tmp_path: Path, layout: str) -> None:
    data = _rgb()
    path = tmp_path / "in.tif"
    tifffile.imwrite(path, data, photometric="rgb", **LAYOUTS[layout])
    expected = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)  # BGR, decoded by libtiff
    if expected is None:  # OpenCV's libtiff lacks Zstandard: tifffile decodes it
        expected = tifffile.imread(path)[..., ::-1]
    assert expected.shape == data.shape
    with regions.open_source(path) as source:
        assert source.shape == data.shape and source.dtype == np.uint8
        for y0, y1, x0, x1 in [(0, HEIGHT, 0, WIDTH), (5, 77, 13, 156), (HEIGHT - 3, HEIGHT, WIDTH - 1, WIDTH),
                               (36, 38, 0, 1), (100, 203, 47, 49)]:
            np.testing.assert_array_equal(source.read(y0, y1, x0, x1), expected[y0:y1, x0:x1])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tiff_written_by_tiles_keeps_pixels_and_storage(tmp_path: Path, layout: str) -> None:
    data = _rgb()
    path, out = tmp_path / "in.tif", tmp_path / "out.tif"
    tifffile.imwrite(path, data, photometric="rgb", **LAYOUTS[layout])
    with tiff_regions.TiffSource(path) as source, \
            regions.open_sink(out, source.shape, source.dtype, source=source) as sink:
        _copy_by_tiles(source, sink, 41)
    np.testing.assert_array_equal(tifffile.imread(out), data)
    np.testing.assert_array_equal(np.asarray(Image.open(out)), data)  # Pillow, a third reader
    with tifffile.TiffFile(path) as before, tifffile.TiffFile(out) as after:
        a, b = before.pages.first, after.pages.first
        assert (b.compression, b.predictor, b.photometric, b.is_tiled) == (a.compression, a.predictor,
                                                                           a.photometric, a.is_tiled)
        assert (b.tilelength, b.tilewidth) == (a.tilelength, a.tilewidth)
        if not a.is_tiled:
            assert b.rowsperstrip == min(a.rowsperstrip, HEIGHT)
        assert after.is_bigtiff == before.is_bigtiff


@pytest.mark.parametrize(("dtype", "channels"), [(np.uint16, 3), (np.uint8, 4), (np.float32, 1), (np.int16, 1),
                                                 (np.uint16, 1)])
def test_tiff_depths_and_channels_round_trip(tmp_path: Path, dtype: Any, channels: int) -> None:
    data = _rgb(dtype, channels)
    stored = data[..., 0] if channels == 1 else data
    path, out = tmp_path / "in.tif", tmp_path / "out.tif"
    extra = {"extrasamples": ["unassalpha"]} if channels == 4 else {}
    tifffile.imwrite(path, stored, photometric="rgb" if channels > 1 else "minisblack", compression="zlib",
                     rowsperstrip=20, **extra)
    with tiff_regions.TiffSource(path) as source, \
            regions.open_sink(out, source.shape, source.dtype, source=source) as sink:
        assert source.dtype == np.dtype(dtype)
        if channels > 1:  # BGR(A) as OpenCV reads it
            np.testing.assert_array_equal(source.read(3, 40, 7, 90), stored[3:40, 7:90][..., [2, 1, 0, 3][:channels]])
        _copy_by_tiles(source, sink, 64)
    np.testing.assert_array_equal(tifffile.imread(out), stored)
    if channels == 4:
        with tifffile.TiffFile(out) as tif:
            assert tuple(tif.pages.first.extrasamples) == (2,)  # unassociated alpha, as the input


def test_tiff_metadata_is_kept(tmp_path: Path) -> None:
    from PIL import ImageCms

    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    path, out = tmp_path / "in.tif", tmp_path / "out.tif"
    tifffile.imwrite(path, _rgb(), photometric="rgb", resolution=(300, 300), resolutionunit="INCH",
                     iccprofile=icc, description="a scan", software="scanner 1.0", metadata=None,
                     extratags=[(33432, "s", 0, "(c) someone", True)])
    with tiff_regions.TiffSource(path) as source, \
            regions.open_sink(out, source.shape, source.dtype, source=source) as sink:
        _copy_by_tiles(source, sink, 100)
    with Image.open(out) as image:  # Pillow reads the tags back
        assert image.info["icc_profile"] == icc
        assert image.info["dpi"] == pytest.approx((300, 300))
        assert image.tag_v2[270] == "a scan" and image.tag_v2[305] == "scanner 1.0"
        assert image.tag_v2[33432] == "(c) someone"


def test_bigtiff_past_the_classic_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiff_regions, "BIGTIFF_ABOVE", 1000)  # a 4 GiB file is too big for a test
    out = tmp_path / "out.tif"
    data = _rgb()
    with tiff_regions.TiffSink(out, data.shape, data.dtype) as sink:
        _copy_by_tiles(tiles.ArraySource(data), sink, 64)
    with tifffile.TiffFile(out) as tif:
        assert tif.is_bigtiff
        np.testing.assert_array_equal(tif.asarray(), data[..., ::-1])  # written from BGR tiles: stored RGB


def test_strips_of_a_codec_tifffile_encodes_only_by_tiles_are_written_tiled(tmp_path: Path) -> None:
    path, out = tmp_path / "in.tif", tmp_path / "out.tif"
    data = _rgb()
    tifffile.imwrite(path, data, photometric="rgb", compression="webp", compressionargs={"lossless": True},
                     rowsperstrip=16)
    with tiff_regions.TiffSource(path) as source, \
            regions.open_sink(out, source.shape, source.dtype, source=source) as sink:
        _copy_by_tiles(source, sink, 50)
    with tifffile.TiffFile(out) as tif:
        assert tif.pages.first.compression == 50001 and tif.pages.first.is_tiled
        np.testing.assert_array_equal(tif.asarray(), data)


@pytest.mark.parametrize(("make", "why"), [
    (lambda p: tifffile.imwrite(p, np.zeros((2, 8, 8), np.uint8)), "2 pages"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8, 3), np.uint8), photometric="rgb",
                                extratags=[(274, "H", 1, 6, True)]), "orientation 6"),
    (lambda p: tifffile.imwrite(p, np.zeros((3, 8, 8), np.uint8), photometric="rgb", planarconfig="separate"),
     "planar"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8), np.uint8), photometric="miniswhite"), "MINISWHITE"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8, 4), np.uint8), photometric="rgb", extrasamples=["assocalpha"]),
     "associated"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8), np.float64)), "sample type float64"),
    (lambda p: tifffile.imwrite(p, np.zeros((8, 8), np.uint8), photometric="palette",
                                colormap=np.zeros((3, 256), np.uint16)), "PALETTE"),
])
def test_unstreamable_tiffs_are_named(tmp_path: Path, make: Any, why: str) -> None:
    path = tmp_path / "x.tif"
    make(path)
    reason = regions.streamable(path)
    assert reason is not None and why in reason
    with pytest.raises(ImageReadError, match="cannot be streamed"):
        tiff_regions.TiffSource(path)


def test_streamable_formats(tmp_path: Path) -> None:
    path = tmp_path / "a.tif"
    tifffile.imwrite(path, _rgb(), photometric="rgb")
    assert regions.streamable(path) is None
    assert regions.streamable(tmp_path / "a.zarr") is None
    assert "decoded whole" in (regions.streamable(tmp_path / "a.png") or "")
    bad = tmp_path / "bad.tif"
    bad.write_bytes(b"not a tiff at all")
    with pytest.raises(ImageReadError, match="bad.tif: not a readable TIFF"):
        regions.streamable(bad)


def test_a_missing_tiff_is_a_missing_file_error_naming_it(tmp_path: Path) -> None:
    """A TIFF that is not there: the batch's "no such file" error with its path, not a TypeError."""
    missing = tmp_path / "gone.tif"
    for open_it in (regions.streamable, tiff_regions.TiffSource):
        with pytest.raises(FileMissingError, match=r"gone\.tif: no such file"):
            open_it(missing)


def test_truncated_tiff_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.tif"
    tifffile.imwrite(path, _rgb(), photometric="rgb", rowsperstrip=10)
    with tifffile.TiffFile(path) as tif:
        last = int(tif.pages.first.dataoffsets[-1])
    with open(path, "r+b") as file:
        file.truncate(last + 10)
    with tiff_regions.TiffSource(path) as source:
        source.read(0, 10, 0, WIDTH)  # the first strips are intact
        with pytest.raises(TruncatedImageError, match="cut.tif"):
            source.read(0, HEIGHT, 0, WIDTH)


def test_a_failed_write_leaves_the_target_alone(tmp_path: Path) -> None:
    out = tmp_path / "out.tif"
    out.write_bytes(b"old")
    data = _rgb()
    with pytest.raises(RuntimeError, match="stop"), tiff_regions.TiffSink(out, data.shape, data.dtype) as sink:
        sink.write(0, 0, data[:64])
        raise RuntimeError("stop")
    assert out.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.tif"]  # no temporary file left


def test_incomplete_output_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out.tif"
    data = _rgb()
    with pytest.raises(ValueError, match="rows written"), tiff_regions.TiffSink(out, data.shape, data.dtype) as sink:
        sink.write(0, 0, data[:64])
    assert not out.exists()


def test_tiles_out_of_order_are_refused(tmp_path: Path) -> None:
    data = _rgb()
    with pytest.raises(ValueError, match="row-major"), tiff_regions.TiffSink(tmp_path / "o.tif", data.shape,
                                                                         data.dtype) as sink:
        sink.write(0, 0, data[:100])
        sink.write(100, 0, data[100:])
        sink.write(0, 0, data[:100])


def test_strips_of_one_huge_strip_are_cut(tmp_path: Path) -> None:
    path, out = tmp_path / "in.tif", tmp_path / "out.tif"
    tifffile.imwrite(path, _rgb(), photometric="rgb")  # one strip of the whole image
    with tiff_regions.TiffSource(path) as source:
        sink = tiff_regions.TiffSink(out, source.shape, source.dtype, tiff_regions.TiffLayout(rowsperstrip=HEIGHT))
        with sink:
            _copy_by_tiles(source, sink, 64)
    with tifffile.TiffFile(out) as tif:
        assert tif.pages.first.rowsperstrip == HEIGHT  # fits MAX_STRIP_BYTES: kept
    assert tiff_regions.MAX_STRIP_BYTES // (WIDTH * 3) > HEIGHT


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_round_trip_keeps_chunks_and_attributes(tmp_path: Path, zarr_format: int) -> None:
    data = _rgb()
    array = zarr.create_array(store=str(tmp_path / "in.zarr"), shape=data.shape, dtype=data.dtype,
                              chunks=(50, 64, 3), zarr_format=zarr_format)
    array[:] = data
    array.attrs["scan"] = "page 1"
    with regions.open_sink(tmp_path / "out.zarr", data.shape, data.dtype,
                           source=regions.open_source(tmp_path / "in.zarr")) as sink:
        source = regions.open_source(tmp_path / "in.zarr")
        np.testing.assert_array_equal(source.read(10, 60, 3, 100), data[10:60, 3:100, ::-1])  # BGR
        _copy_by_tiles(source, sink, 77)
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    np.testing.assert_array_equal(out[:], data)
    assert out.chunks == (50, 64, 3) and out.attrs["scan"] == "page 1"
    assert out.metadata.zarr_format == zarr_format


def test_zarr_output_replaces_an_existing_array_only_on_success(tmp_path: Path) -> None:
    data = _rgb(channels=1)[..., 0]
    target = tmp_path / "out.zarr"
    old = zarr.create_array(store=str(target), shape=(4, 4), dtype=np.uint8)
    old[:] = 7
    with pytest.raises(RuntimeError), zarr_regions.ZarrSink(target, data.shape, data.dtype) as sink:
        sink.write(0, 0, data[:10])
        raise RuntimeError("stop")
    assert zarr.open_array(str(target), mode="r").shape == (4, 4)
    with zarr_regions.ZarrSink(target, data.shape, data.dtype, chunk=64) as sink:
        _copy_by_tiles(tiles.ArraySource(data), sink, 64)
    np.testing.assert_array_equal(zarr.open_array(str(target), mode="r")[:], data)
    assert sorted(os.listdir(tmp_path)) == ["out.zarr"]


def test_zarr_inputs_that_are_not_images(tmp_path: Path) -> None:
    zarr.create_array(store=str(tmp_path / "cube.zarr"), shape=(4, 4, 4, 4), dtype=np.uint8)
    with pytest.raises(ImageReadError, match="not an image"):
        regions.open_source(tmp_path / "cube.zarr")
    zarr.create_array(store=str(tmp_path / "f64.zarr"), shape=(4, 4), dtype=np.float64)
    with pytest.raises(ImageReadError, match="float64"):
        regions.open_source(tmp_path / "f64.zarr")
    with pytest.raises(ImageReadError, match="missing.zarr"):
        regions.open_source(tmp_path / "missing.zarr")


@pytest.mark.parametrize("dtype", [np.uint16, np.float32])
def test_zarr_sink_keeps_the_type_asked_for(tmp_path: Path, dtype: Any) -> None:
    data = _rgb(dtype)
    with regions.open_sink(tmp_path / "out.zarr", data.shape, np.dtype(dtype)) as sink:
        _copy_by_tiles(tiles.ArraySource(data), sink, 64)
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.dtype == dtype
    np.testing.assert_array_equal(out[:], data[..., ::-1])  # the sink takes BGR and stores RGB


def test_zarr_sink_in_a_read_only_folder_is_a_write_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    with pytest.raises((ImageWriteError, PermissionError)):
        zarr_regions.ZarrSink(folder / "x.zarr", (4, 4), np.dtype(np.uint8))


def test_stored_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.zarr").mkdir()
    (tmp_path / "a.zarr" / "c").write_bytes(b"12345")
    (tmp_path / "a.zarr" / "d").write_bytes(b"123")
    assert regions.stored_bytes(tmp_path / "a.zarr") == 8
    assert regions.stored_bytes(tmp_path / "a.zarr" / "c") == 5


# ---------------------------------------------------------------- edges (the split's mutation run)
def _rename_tags(path: Path, codes: tuple[int, ...]) -> None:
    """Give the tags ``codes`` of the first page unknown codes (65000, ...), as if they were absent."""
    with tifffile.TiffFile(path) as tif:
        entries = [tif.pages.first.tags[code].offset for code in codes]
    with open(path, "r+b") as file:
        for n, entry in enumerate(entries):
            file.seek(entry)
            file.write(struct.pack("<H", 65000 + n))


def _split_jpeg(jpeg: bytes) -> tuple[bytes, bytes]:
    """A JPEG as its tables (SOI, DQT, DHT, EOI) and the abbreviated stream without them."""
    tables, rest, pos = [b"\xff\xd8"], [b"\xff\xd8"], 2
    while jpeg[pos : pos + 2] != b"\xff\xda":
        end = pos + 2 + struct.unpack(">H", jpeg[pos + 2 : pos + 4])[0]
        (tables if jpeg[pos : pos + 2] in (b"\xff\xdb", b"\xff\xc4") else rest).append(jpeg[pos:end])
        pos = end
    return b"".join(tables) + b"\xff\xd9", b"".join(rest) + jpeg[pos:]


def test_an_rgb_jpeg_tiff_with_shared_tables_streams(tmp_path: Path) -> None:
    """Abbreviated JPEG tiles and a JPEGTables tag, as libtiff writes them; read back as tifffile reads them."""
    imagecodecs = pytest.importorskip("imagecodecs")
    data = np.kron(np.arange(12, dtype=np.uint8).reshape(2, 2, 3) * 20, np.ones((16, 16, 1), np.uint8))
    split = [_split_jpeg(imagecodecs.jpeg_encode(np.ascontiguousarray(data[y : y + 16, x : x + 16]), level=95,
                                                 colorspace="RGB", outcolorspace="RGB"))
             for y in (0, 16) for x in (0, 16)]
    assert len({tables for tables, _ in split}) == 1
    path = tmp_path / "jpeg.tif"
    tifffile.imwrite(path, iter([tile for _, tile in split]), shape=data.shape, dtype=np.uint8, photometric="rgb",
                     compression="jpeg", compressionargs={"outcolorspace": "rgb"}, subsampling=(1, 1), tile=(16, 16),
                     jpegtables=split[0][0])
    expected = tifffile.imread(path)
    assert np.abs(expected.astype(int) - data).max() <= 4  # flat blocks: JPEG is near exact
    assert regions.streamable(path) is None
    with tiff_regions.TiffSource(path) as source:  # the file is closed after opening: the decoder was built
        block = source.read(5, 30, 3, 29)
    assert block.dtype == np.uint8
    np.testing.assert_array_equal(block, expected[5:30, 3:29, ::-1])


def test_a_ycbcr_jpeg_tiff_streams_as_rgb(tmp_path: Path) -> None:
    """JPEG TIFFs are YCbCr with subsampled chroma by default (tifffile, libvips, libtiff): tifffile's decoder
    returns RGB, so they stream; the output keeps JPEG and says RGB."""
    pytest.importorskip("imagecodecs")
    data = _rgb()
    path, out = tmp_path / "ycc.tif", tmp_path / "o.tif"
    tifffile.imwrite(path, data, photometric="rgb", compression="jpeg", tile=(32, 32))
    with tifffile.TiffFile(path) as tif:
        assert (tif.pages.first.photometric, tif.pages.first.tags.valueof(530)) == (6, (2, 2))
        expected = tif.asarray()
    assert regions.streamable(path) is None
    with tiff_regions.TiffSource(path) as source:
        np.testing.assert_array_equal(source.read(7, 60, 5, 90), expected[7:60, 5:90, ::-1])
        with regions.open_sink(out, source.shape, source.dtype, source=source) as sink:
            _copy_by_tiles(source, sink, 50)
    with tifffile.TiffFile(out) as tif:
        assert (tif.pages.first.compression, tif.pages.first.photometric) == (7, 2)
        assert np.abs(tif.asarray().astype(int) - expected).mean() < 2  # one more JPEG generation


def test_uncompressed_ycbcr_is_not_streamed(tmp_path: Path) -> None:
    path = tmp_path / "ycc.tif"
    tifffile.imwrite(path, np.zeros((8, 8, 3), np.uint8), photometric="ycbcr")
    assert "photometric YCBCR" in (regions.streamable(path) or "")


def test_damaged_segments_are_named(tmp_path: Path) -> None:
    data = _rgb()
    path = tmp_path / "t.tif"
    tifffile.imwrite(path, data, photometric="rgb", compression="zlib", tile=(64, 64))  # 4 x 3 tiles
    with tifffile.TiffFile(path) as tif:
        page = tif.pages.first
        first, counts = int(page.dataoffsets[0]), [page.tags[code].offset for code in (324, 325)]
    raw = path.read_bytes()
    garbled, short, cut = tmp_path / "garbled.tif", tmp_path / "short.tif", tmp_path / "cut.tif"
    garbled.write_bytes(raw[:first] + b"\xff" * 16 + raw[first + 16 :])
    short.write_bytes(raw)
    with open(short, "r+b") as file:
        for entry in counts:
            file.seek(entry + 4)  # the count of a classic directory entry: 11 tiles listed of 12
            file.write(struct.pack("<I", 11))
    cut.write_bytes(raw[: len(raw) - 200])  # tifffile writes the tiles after the directory
    with tiff_regions.TiffSource(garbled) as source, pytest.raises(TruncatedImageError) as caught:
        source.read(0, 10, 0, 10)
    assert str(caught.value).startswith(f"{garbled}: segment 0 cannot be decoded (")
    with tiff_regions.TiffSource(short) as source:
        np.testing.assert_array_equal(source.read(128, 192, 0, 64), data[128:192, :64, ::-1])
        with pytest.raises(TruncatedImageError) as caught:
            source.read(192, HEIGHT, 128, WIDTH)  # tile 11
    assert str(caught.value) == f"{short}: TIFF has fewer segments than its size needs"
    with tiff_regions.TiffSource(cut) as source, pytest.raises(TruncatedImageError) as caught:
        source.read(0, HEIGHT, 0, WIDTH)
    assert str(caught.value) == f"{cut}: TIFF data ends at {len(raw) - 200} bytes, before the image does"


@pytest.mark.parametrize(("absent", "resolution", "unit"), [
    ((296,), (300, 1), 2),  # no unit: inches, the TIFF default
    ((282, 283), (1, 1), 1),  # no resolution: the writer's default (1/1, no unit)
    ((283,), (1, 1), 1),  # half a resolution is none
])
def test_missing_resolution_tags_take_the_tiff_defaults(tmp_path: Path, absent: tuple[int, ...],
                                                        resolution: tuple[int, int], unit: int) -> None:
    data = _rgb()
    path, out = tmp_path / "in.tif", tmp_path / "out.tif"
    tifffile.imwrite(path, data, photometric="rgb", resolution=(300, 300), resolutionunit="centimeter")
    _rename_tags(path, absent)
    with tiff_regions.TiffSource(path) as source, tiff_regions.TiffSink(out, source.shape, source.dtype,
                                                                       source.layout) as sink:
        _copy_by_tiles(source, sink, 64)
    with tifffile.TiffFile(out) as tif:
        tags = tif.pages.first.tags
        assert (tags.valueof(282), tags.valueof(283), tags.valueof(296)) == (resolution, resolution, unit)
    np.testing.assert_array_equal(tifffile.imread(out), data)


def test_a_codec_tifffile_decodes_but_cannot_encode_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ccitt.tif"
    tifffile.imwrite(path, np.zeros((8, 8), np.uint8))
    with tifffile.TiffFile(path) as tif:
        value = tif.pages.first.tags[259].valueoffset
    with open(path, "r+b") as file:
        file.seek(value)
        file.write(struct.pack("<H", 2))  # CCITT RLE: tifffile has its decoder, not its encoder
    assert regions.streamable(path) == 'compression 2 needs imagecodecs (pip install "cvfilters[streaming]")'


def test_a_writer_failing_after_the_last_band_is_reported_by_commit(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def write_then_fail(self: Any, data: Any, **kwargs: Any) -> None:
        for _ in data:  # every band taken: the error is seen only by commit
            pass
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tifffile.TiffWriter, "write", write_then_fail)
    data = _rgb()
    target = tmp_path / "o.tif"
    with pytest.raises(ImageWriteError) as caught, tiff_regions.TiffSink(target, data.shape, data.dtype) as sink:
        _copy_by_tiles(tiles.ArraySource(data), sink, 64)
    assert str(caught.value) == f"{target}: cannot be written: [Errno 28] No space left on device"
    assert os.listdir(tmp_path) == []


def test_a_failing_writer_prints_no_traceback_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer thread hands its error to commit and empties the queue quietly: no "Exception in thread"."""
    uncaught: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", uncaught.append)
    def fail(self: Any, data: Any, **kwargs: Any) -> None:
        next(iter(data))  # one band taken, others waiting in the queue
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tifffile.TiffWriter, "write", fail)
    data = _rgb()
    with pytest.raises(ImageWriteError, match="No space left on device"), \
            tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype) as sink:
        _copy_by_tiles(tiles.ArraySource(data), sink, 64)
    assert uncaught == []


def test_a_writer_failing_with_bands_waiting_is_reported_by_commit(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Bands still queued when the writer fails are dropped: else commit's end mark waits on a full queue."""
    release = threading.Event()

    def fail_later(self: Any, data: Any, **kwargs: Any) -> None:
        release.wait(10)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tifffile.TiffWriter, "write", fail_later)
    data = _rgb()[:20]
    sink = tiff_regions.TiffSink(tmp_path / "o.tif", data.shape, data.dtype, tiff_regions.TiffLayout(rowsperstrip=10))
    for y in (0, 10):  # both bands queued: the queue (of two) is full
        sink.write(y, 0, data[y : y + 10])
    release.set()
    errors: list[str] = []

    def commit() -> None:
        try:
            sink.commit()
        except ImageWriteError as exc:
            errors.append(str(exc))

    committing = threading.Thread(target=commit, daemon=True)  # a hung commit must not hold the process
    committing.start()
    committing.join(20)
    assert not committing.is_alive()
    assert errors == [f"{tmp_path / 'o.tif'}: cannot be written: [Errno 28] No space left on device"]
    assert os.listdir(tmp_path) == []


def test_a_closed_source_has_no_descriptor_even_descriptor_0(tmp_path: Path) -> None:
    path = tmp_path / "in.tif"
    tifffile.imwrite(path, _rgb(), photometric="rgb")
    source = tiff_regions.TiffSource(path)
    source.close()
    with pytest.raises(OSError) as caught:  # not another file's bytes
        source.read(0, 8, 0, 8)
    assert caught.value.errno == errno.EBADF
    saved = os.dup(0)
    try:
        os.close(0)  # the next file opened takes descriptor 0
        source = tiff_regions.TiffSource(path)
        source.read(0, 8, 0, 8)
        source.close()
        with pytest.raises(OSError):
            os.fstat(0)
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def test_bands_refuse_a_tile_above_the_rows_written_and_count_the_rows_missing() -> None:
    flushed: list[tuple[int, np.ndarray]] = []
    data = np.arange(40, dtype=np.uint16).reshape(10, 4)
    bands = region_sinks.Bands((10, 4), np.dtype(np.uint16), 4, lambda y0, band: flushed.append((y0, band.copy())))
    bands.write(0, 0, data[:3, :2])
    bands.write(0, 2, data[:3, 2:])  # 3 complete rows: under one chunk, nothing flushed
    with pytest.raises(ValueError, match="tile at row 2 arrives after its rows were written"):
        bands.write(2, 0, data[2:5])
    bands.write(3, 0, data[3:6])
    with pytest.raises(ValueError) as caught:
        bands.finish()
    assert str(caught.value) == "the output has 6 of 10 rows written"
    assert [y0 for y0, _ in flushed] == [0]
    np.testing.assert_array_equal(flushed[0][1], data[:4])


def test_a_zarr_sink_makes_its_folders_and_names_an_array_it_cannot_create(tmp_path: Path) -> None:
    data = _rgb(channels=1)[..., 0]
    target = tmp_path / "a" / "b" / "out.zarr"
    with zarr_regions.ZarrSink(target, data.shape, data.dtype, chunk=64) as sink:
        _copy_by_tiles(tiles.ArraySource(data), sink, 64)
    np.testing.assert_array_equal(zarr.open_array(str(target), mode="r")[:], data)
    with pytest.raises(ImageWriteError) as caught:
        zarr_regions.ZarrSink(tmp_path / "o.zarr", (4, 4), np.dtype(object))
    assert str(caught.value).startswith(f"{tmp_path / 'o.zarr'}: cannot be created as a Zarr array: ")


def test_an_old_array_that_cannot_be_removed_does_not_fail_the_output(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    data = _rgb(channels=1)[..., 0]
    target = tmp_path / "out.zarr"
    zarr.create_array(store=str(target), shape=(4, 4), dtype=np.uint8)[:] = 7
    sink = zarr_regions.ZarrSink(target, data.shape, data.dtype, chunk=64)
    _copy_by_tiles(tiles.ArraySource(data), sink, 64)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "rmdir", refuse)  # the old array's folders stay
    sink.commit()
    monkeypatch.undo()
    np.testing.assert_array_equal(zarr.open_array(str(target), mode="r")[:], data)
