"""TIFF and BigTIFF read and written in pieces: the region source and sink of
:mod:`cvfilters.io.regions` for TIFF files.

* **TIFF and BigTIFF**, stripped or tiled, any compression tifffile decodes (imagecodecs
  for LZW, JPEG, Zstandard, WebP ...). The file's segments (strips, tiles; uncompressed
  strips cut into pieces of a few MiB read with ``pread``) are decoded once each and kept in
  a small cache that holds a band of the image, so neighbouring tiles and halos never decode
  a segment twice in a row-major pass. Files the streaming reader does not take (several
  pages, orientation other than 1, palette, CMYK, YCbCr other than JPEG's, associated alpha,
  odd bit depths, planar layout) are reported by :func:`streamable` and are decoded whole by
  the caller.
* The TIFF sink keeps the input's compression, predictor, photometric (a YCbCr JPEG input
  is written as RGB JPEG without chroma subsampling), tiling (tile shape,
  or rows per strip up to :data:`MAX_STRIP_BYTES` a strip), resolution, ICC profile,
  description, software, date, artist and copyright; it writes BigTIFF when the image
  exceeds 4 GiB (or the input was BigTIFF). The EXIF sub-IFD is not carried.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cvfilters.core import atomic
from cvfilters.core.arrays import swap_rb
from cvfilters.core.errors import ImageReadError, ImageWriteError, TruncatedImageError
from cvfilters.core.types import StrPath
from cvfilters.io.formats import SAMPLE_RANGES
from cvfilters.io.quiet import tifffile_logger_quiet
from cvfilters.io.region_sinks import Bands, Committable

TIFF_EXTENSIONS = frozenset({".tif", ".tiff"})
MAX_STRIP_BYTES = 8 * 2**20  # an output strip of more is cut into strips of about this size
PIECE_BYTES = 4 * 2**20  # uncompressed strips are read in pieces of about this size
CACHE_BYTES = 64 * 2**20  # decoded segments kept by default (at least two rows of them)
SYNC_BYTES = 64 * 2**20  # the TIFF writer flushes to disk every this many bytes
BIGTIFF_ABOVE = 2**32 - 2**25  # tifffile's own threshold: offsets past 4 GiB need BigTIFF
_RGB, _MINISBLACK, _YCBCR = 2, 1, 6
_CONTIG = 1
_UNASSOCIATED, _UNSPECIFIED = 2, 0
_JPEG = 7
_STRIP_CODECS = frozenset({1, 5, 8, 32946, 32773, 34925, 50000})  # none, LZW, Deflate, PackBits, LZMA, Zstd
_KEPT_TAGS = {"ImageDescription": 270, "Software": 305, "DateTime": 306, "Artist": 315, "Copyright": 33432}


def is_tiff(path: StrPath) -> bool:
    """Whether ``path`` names a TIFF file (by its extension)."""
    return Path(path).suffix.lower() in TIFF_EXTENSIONS


# ---------------------------------------------------------------- segment cache
class _SegmentCache:
    """Decoded segments by index, least recently used dropped beyond ``capacity`` bytes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[int, NDArray[Any]] = OrderedDict()
        self._bytes = 0

    def get(self, index: int, load: Callable[[int], NDArray[Any]]) -> NDArray[Any]:
        item = self._items.get(index)
        if item is not None:
            self._items.move_to_end(index)
            return item
        item = load(index)
        self._items[index] = item
        self._bytes += item.nbytes
        while self._bytes > self.capacity and len(self._items) > 1:
            _, dropped = self._items.popitem(last=False)
            self._bytes -= dropped.nbytes
        return item


# ---------------------------------------------------------------- TIFF
@dataclass(frozen=True)
class TiffLayout:
    """How a TIFF stores its image, and the tags an output keeps."""

    compression: int = 1
    predictor: int = 1
    photometric: int = _RGB
    tile: tuple[int, int] | None = None
    rowsperstrip: int = 0
    extrasamples: tuple[int, ...] = ()
    bigtiff: bool = False
    resolution: tuple[Any, Any, int] | None = None
    iccprofile: bytes | None = None
    tags: dict[int, str] = field(default_factory=dict)


def streamable(path: StrPath) -> str | None:
    """Why the TIFF at ``path`` cannot be read in pieces, or None when it can.

    Not streamable: TIFFs with several pages, an orientation other than 1, a planar
    (separate) layout, a photometric other than grey or RGB, associated alpha, or samples
    that are not 8-, 16- or 32-bit integers of cvfilters' depths or float32. Raises the read
    errors of the file (missing, not a TIFF).
    """
    with _open_tiff(path) as tif:
        return _unstreamable(tif)


@contextlib.contextmanager
def _open_tiff(path: StrPath) -> Iterator[Any]:
    import tifffile

    try:
        with tifffile_logger_quiet():
            tif = tifffile.TiffFile(path)
    except FileNotFoundError:
        from cvfilters.core.errors import FileMissingError

        raise FileMissingError(path) from None
    except (tifffile.TiffFileError, ValueError, OSError) as exc:
        raise ImageReadError(path, f"not a readable TIFF ({exc})") from None
    try:
        yield tif
    finally:
        tif.close()


def _unstreamable(tif: Any) -> str | None:
    page = tif.pages.first
    samples = page.samplesperpixel
    extras = tuple(page.extrasamples or ())
    orientation = page.tags.valueof(274) or 1
    checks = [
        (len(tif.pages) > 1, f"{len(tif.pages)} pages (decoded frame by frame)"),
        (orientation != 1, f"orientation {orientation}"),
        (page.imagedepth != 1, "a volume (ImageDepth > 1)"),
        (samples > 1 and page.planarconfig != _CONTIG, "planar (separate) samples"),
        (samples not in (1, 3, 4), f"{samples} samples per pixel"),
        (samples == 1 and page.photometric != _MINISBLACK, f"photometric {page.photometric.name}"),
        (samples > 1 and page.photometric != _RGB and not (page.photometric == _YCBCR and page.compression == _JPEG),
         f"photometric {page.photometric.name}"),  # the JPEG decoder turns YCbCr into RGB
        (samples == 4 and extras not in ((_UNASSOCIATED,), (_UNSPECIFIED,)), "associated (premultiplied) alpha"),
        (np.dtype(page.dtype) not in SAMPLE_RANGES if page.dtype is not None else True, f"sample type {page.dtype}"),
        (page.bitspersample not in (8, 16, 32), f"{page.bitspersample} bits per sample"),
    ]
    return next((why for bad, why in checks if bad), None) or _codec_missing(int(page.compression))


def _codec_missing(compression: int) -> str | None:
    """Why tifffile cannot decode and encode this compression here (imagecodecs missing), or None."""
    import tifffile

    try:
        tifffile.TIFF.DECOMPRESSORS[compression]
        if compression != 1:
            tifffile.TIFF.COMPRESSORS[compression]
    except (KeyError, ValueError, ImportError, NotImplementedError):
        return f"compression {compression} needs imagecodecs (pip install \"cvfilters[streaming]\")"
    return None


def _layout(tif: Any) -> TiffLayout:
    page = tif.pages.first
    tags = {code: page.tags.valueof(code) for code in _KEPT_TAGS.values() if page.tags.valueof(code)}
    tags = {code: value for code, value in tags.items() if isinstance(value, str)}
    if tags.get(270, "").startswith("{\"shape\""):  # tifffile's own shape note, rewritten by the writer
        del tags[270]
    xres, yres, unit = page.tags.valueof(282), page.tags.valueof(283), page.tags.valueof(296)
    return TiffLayout(
        compression=int(page.compression), predictor=int(page.predictor), photometric=int(page.photometric),
        tile=(page.tilelength, page.tilewidth) if page.is_tiled else None,
        rowsperstrip=0 if page.is_tiled else int(page.rowsperstrip),
        extrasamples=tuple(int(v) for v in page.extrasamples or ()), bigtiff=tif.is_bigtiff,
        resolution=(xres, yres, int(unit) if unit is not None else 2) if xres and yres else None,
        iccprofile=page.iccprofile, tags=tags)


class TiffSource:
    """The first page of a TIFF or BigTIFF file as a region source (BGR(A) order).

    Parameters
    ----------
    path : str or os.PathLike
    cache_bytes : int, optional
        Decoded segments kept (default :data:`CACHE_BYTES`, and always at least two rows of
        segments); a row-major pass over tiles of height T needs about T + halo rows.

    Raises
    ------
    ImageReadError
        Not a TIFF, or not one this reader streams (:func:`streamable` says why).
    """

    def __init__(self, path: StrPath, *, cache_bytes: int | None = None) -> None:
        self.path = Path(path)
        with _open_tiff(path) as tif:
            reason = _unstreamable(tif)
            if reason is not None:
                raise ImageReadError(path, f"cannot be streamed: {reason}")
            page = tif.pages.first
            self.layout = _layout(tif)
            # tifffile builds a page's decoder on first use, and for JPEG reads the file then (its
            # ``is_jfif``): built here, while the file is open
            self._decode = page.decode
            self._byteorder = tif.byteorder
            self._offsets = tuple(int(v) for v in page.dataoffsets)
            self._counts = tuple(int(v) for v in page.databytecounts)
            self._jpegtables = page.jpegtables
            height, width, samples = page.imagelength, page.imagewidth, page.samplesperpixel
        self.dtype: np.dtype[Any] = np.dtype(page.dtype)
        self.shape: tuple[int, ...] = (height, width) if samples == 1 else (height, width, samples)
        self._samples = samples
        self._pixel = samples * self.dtype.itemsize
        if self.layout.tile is not None:
            self._seg_rows, self._seg_cols = self.layout.tile
        elif self.layout.compression == 1:
            self._seg_rows = max(1, min(self.layout.rowsperstrip, PIECE_BYTES // (width * self._pixel)))
            self._seg_cols = width
        else:
            self._seg_rows, self._seg_cols = min(self.layout.rowsperstrip, height), width
        self._across = -(-width // self._seg_cols)
        row_of_segments = self._seg_rows * self._across * self._seg_cols * self._pixel
        self._cache = _SegmentCache(max(cache_bytes or CACHE_BYTES, 2 * row_of_segments))
        self._lock = threading.Lock()
        self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        self._size = os.fstat(self._fd).st_size

    def close(self) -> None:
        """Close the file (reads raise afterwards)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> TiffSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_cache_bytes(self, capacity: int) -> None:
        """Keep at least ``capacity`` bytes of decoded segments (a band of the planned tiles)."""
        self._cache.capacity = max(self._cache.capacity, capacity)

    def read(self, y0: int, y1: int, x0: int, x1: int) -> NDArray[Any]:
        out = np.empty((y1 - y0, x1 - x0, self._samples), self.dtype)
        with self._lock:
            for row in range(y0 // self._seg_rows, -(-y1 // self._seg_rows)):
                for col in range(x0 // self._seg_cols, -(-x1 // self._seg_cols)):
                    segment = self._cache.get(row * self._across + col, self._load)
                    top, left = row * self._seg_rows, col * self._seg_cols
                    a, b = max(y0, top), min(y1, top + segment.shape[0])
                    c, d = max(x0, left), min(x1, left + segment.shape[1])
                    out[a - y0 : b - y0, c - x0 : d - x0] = segment[a - top : b - top, c - left : d - left]
        block = out[..., 0] if self._samples == 1 else out
        return swap_rb(block)

    def _pread(self, offset: int, count: int) -> bytes:
        data = os.pread(self._fd, count, offset)
        if len(data) != count:
            raise TruncatedImageError(self.path, f"TIFF data ends at {self._size} bytes, before the image does")
        return data

    def _load(self, index: int) -> NDArray[Any]:
        """Segment ``index`` of the grid, decoded: (rows, cols, samples), clipped to the image."""
        height, width = self.shape[:2]
        if self.layout.tile is None and self.layout.compression == 1:
            return self._uncompressed_rows(index * self._seg_rows, min(height, (index + 1) * self._seg_rows))
        if index >= len(self._offsets):
            raise TruncatedImageError(self.path, "TIFF has fewer segments than its size needs")
        data = self._pread(self._offsets[index], self._counts[index])
        try:
            decoded, _, _ = self._decode(data, index, jpegtables=self._jpegtables)
        except Exception as exc:  # noqa: BLE001  (any codec failure is damaged data)
            raise TruncatedImageError(self.path, f"segment {index} cannot be decoded ({exc})") from None
        if decoded is None:
            raise TruncatedImageError(self.path, f"segment {index} is missing")
        row, col = divmod(index, self._across)
        rows = min(self._seg_rows, height - row * self._seg_rows)
        cols = min(self._seg_cols, width - col * self._seg_cols)
        return np.asarray(decoded).reshape(decoded.shape[-3:])[:rows, :cols]

    def _uncompressed_rows(self, y0: int, y1: int) -> NDArray[Any]:
        """Rows ``y0:y1`` of an uncompressed stripped image, read straight from the file."""
        width = self.shape[1]
        row_bytes = width * self._pixel
        rps = self.layout.rowsperstrip
        parts = []
        for strip in range(y0 // rps, -(-y1 // rps)):
            a, b = max(y0, strip * rps), min(y1, (strip + 1) * rps)
            if strip >= len(self._offsets):
                raise TruncatedImageError(self.path, "TIFF has fewer strips than its size needs")
            parts.append(self._pread(self._offsets[strip] + (a - strip * rps) * row_bytes, (b - a) * row_bytes))
        stored = self.dtype.newbyteorder(self._byteorder)
        rows = np.frombuffer(b"".join(parts) if len(parts) > 1 else parts[0], stored)
        return rows.reshape(y1 - y0, width, self._samples).astype(self.dtype, copy=False)


class TiffSink(Committable):
    """Writes a TIFF (BigTIFF past 4 GiB) from row-major tiles, a band at a time.

    Parameters
    ----------
    target : str or os.PathLike
    shape, dtype
        Of the output image: (H, W) or (H, W, C) with C in 1, 3, 4; BGR(A) order.
    layout : TiffLayout, optional
        The input's storage (see the module notes); by default uncompressed strips of
        about 1 MiB.
    """

    def __init__(self, target: StrPath, shape: tuple[int, ...], dtype: np.dtype[Any],
                 layout: TiffLayout | None = None) -> None:
        import tifffile

        self.target = Path(target)
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        layout = layout or TiffLayout()
        samples = 1 if len(shape) == 2 else shape[2]
        row_bytes = shape[1] * samples * self.dtype.itemsize
        self._tile = layout.tile
        self._compression = layout.compression
        if self._tile is None and layout.compression not in _STRIP_CODECS:
            self._tile = (256, 256)  # strips would have to be encoded here; tifffile encodes tiles itself
        if self._tile is not None:
            rows = self._tile[0]
        else:
            rows = layout.rowsperstrip or 2**20 // row_bytes
            rows = max(1, min(rows, MAX_STRIP_BYTES // row_bytes, shape[0]))
        self._rows = rows
        self._queue: queue.Queue[tuple[int, NDArray[Any]] | None] = queue.Queue(maxsize=2)
        self._bands = Bands(self.shape, self.dtype, rows, self._put)
        self._error: BaseException | None = None
        self._file: Any = None
        self._flushed_bytes = 0
        self._temporary = atomic.temporary_name(self.target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        photometric = layout.photometric if samples > 1 else _MINISBLACK
        if samples > 1 and photometric != _RGB:
            photometric = _RGB
        extras = layout.extrasamples if samples == 4 and layout.extrasamples else ((_UNASSOCIATED,) if samples == 4
                                                                                     else ())
        options: dict[str, Any] = {
            "shape": self.shape, "dtype": self.dtype, "photometric": photometric,
            "compression": self._compression if self._compression != 1 else None,
            "predictor": layout.predictor if layout.predictor > 1 and self._compression != 1 else None,
            "extrasamples": extras or None, "metadata": None, "iccprofile": layout.iccprofile,
            "description": layout.tags.get(270), "software": layout.tags.get(305) or False,
            "datetime": layout.tags.get(306),
            "extratags": [(code, "s", 0, layout.tags[code], True) for code in (315, 33432) if code in layout.tags],
        }
        if self._compression == _JPEG and samples > 1:
            # tifffile's JPEG default is YCbCr with 2 x 2 chroma subsampling: the photometric would change
            options.update(subsampling=(1, 1), compressionargs={"outcolorspace": "RGB"})
        if layout.resolution is not None:
            xres, yres, unit = layout.resolution
            options["resolution"] = (xres, yres)
            options["resolutionunit"] = unit
        if self._tile is not None:
            options["tile"] = self._tile
        else:
            options["rowsperstrip"] = rows
        bigtiff = layout.bigtiff or int(np.prod(self.shape)) * self.dtype.itemsize > BIGTIFF_ABOVE
        self._options = options
        self._predictor = tifffile.TIFF.PREDICTORS[layout.predictor] if options["predictor"] else None
        self._encoder = tifffile.TIFF.COMPRESSORS[self._compression] if self._compression != 1 else None
        self._writer = threading.Thread(target=self._write_file, args=(bigtiff,), daemon=True,
                                        name="cvfilters-tiff-writer")
        self._writer.start()

    def write(self, y0: int, x0: int, block: NDArray[Any]) -> None:
        self._bands.write(y0, x0, block)

    def _put(self, y0: int, band: NDArray[Any]) -> None:
        while True:
            if self._error is not None:
                raise ImageWriteError(self.target, f"cannot be written: {self._error}")
            try:
                self._queue.put((y0, band), timeout=0.5)
                return
            except queue.Full:
                continue

    def _chunks(self) -> Iterator[Any]:
        samples = 1 if len(self.shape) == 2 else self.shape[2]
        while True:
            item = self._queue.get()
            if item is None:
                return
            band = swap_rb(item[1]).reshape(item[1].shape[0], self.shape[1], samples)
            self._flushed_bytes += band.nbytes
            if self._flushed_bytes >= SYNC_BYTES and self._file is not None:
                os.fdatasync(self._file.fileno())  # the disk works while tiles compute; commit's fsync is short
                self._flushed_bytes = 0
            encoder, tile = self._encoder, self._tile
            if tile is None and encoder is None:
                yield band  # uncompressed strips are written contiguously, from arrays of any height
                continue
            if tile is None and encoder is not None:
                for top in range(0, band.shape[0], self._rows):
                    strip = np.ascontiguousarray(band[top : top + self._rows])
                    if self._predictor is not None:
                        strip = self._predictor(strip, axis=-2)
                    yield encoder(strip)
                continue
            assert tile is not None
            th, tw = tile
            for top in range(0, band.shape[0], th):
                rows = band[top : top + th]
                if rows.shape[0] < th:
                    rows = np.concatenate([rows, np.zeros((th - rows.shape[0], *rows.shape[1:]), rows.dtype)])
                for left in range(0, self.shape[1], tw):
                    piece = rows[:, left : left + tw]
                    if piece.shape[1] < tw:
                        piece = np.concatenate([piece, np.zeros((th, tw - piece.shape[1], samples), piece.dtype)],
                                               axis=1)
                    yield np.ascontiguousarray(piece)

    def _write_file(self, bigtiff: bool) -> None:
        import tifffile

        try:
            with open(self._temporary, "xb") as self._file, tifffile.TiffWriter(self._file, bigtiff=bigtiff) as writer:
                writer.write(self._chunks(), **self._options)
        except BaseException as exc:  # noqa: BLE001  (handed to the thread that writes tiles)
            self._error = exc
            with contextlib.suppress(queue.Empty):
                while True:
                    self._queue.get_nowait()

    def commit(self) -> None:
        """Finish the file and rename it onto the target."""
        try:
            self._bands.finish()
            self._queue.put(None)
            self._writer.join()
            if self._error is not None:
                raise ImageWriteError(self.target, f"cannot be written: {self._error}")
            atomic.fsync_file(self._temporary)
            os.replace(self._temporary, self.target)
            atomic.fsync_directory(self.target.parent)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Stop writing and remove the temporary file; the target is left as it was."""
        if self._writer.is_alive():
            self._error = self._error or RuntimeError("aborted")
            with contextlib.suppress(queue.Empty):
                while True:
                    self._queue.get_nowait()
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)
            self._writer.join()
        with contextlib.suppress(OSError):
            os.unlink(self._temporary)
