"""One record per file format: every fact about a format in one place, and the facts true.

The records' depths and channels are checked against OpenCV's encoders and decoders called
directly (what comes back from a round trip), and the source tree against keeping a second table.
"""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from cvfilters.io import formats

ROOT = Path(__file__).resolve().parents[2]


def test_every_extension_belongs_to_one_record() -> None:
    seen = [ext for record in formats.IMAGE_FORMATS for ext in record.extensions]
    seen += [ext for record in formats.VIDEO_FORMATS for ext in record.extensions]
    assert len(seen) == len(set(seen))
    assert formats.image_format(".JPG") is formats.image_format(".jpeg") is formats.named("JPEG")


@pytest.mark.parametrize("record", [r for r in formats.IMAGE_FORMATS if cv2.haveImageWriter("x" + r.extensions[0])
                                    and r.name not in ("GIF",)], ids=lambda r: r.name)
def test_declared_depths_and_channels_survive_opencv(record: formats.ImageFormat) -> None:
    for dtype in record.depths:
        for channels in record.channels:
            shape = (64, 64) if channels == 1 else (64, 64, channels)  # JPEG 2000 needs 64 x 64
            image = np.ones(shape, dtype)
            ok, encoded = cv2.imencode(record.extensions[0], image, record.params())
            back = cv2.imdecode(encoded, cv2.IMREAD_UNCHANGED) if ok else None
            assert back is not None and back.dtype == dtype, (record.name, dtype, channels)


def test_no_module_keeps_a_second_table_of_format_facts() -> None:
    """The old tables (``_DEPTHS``, ``_QUALITY``, ``FOURCC`` ...) are gone; ``.webp`` is named once in io."""
    source = {path: path.read_text() for path in (ROOT / "cvfilters" / "io").glob("*.py")}
    webp = {path.name: len(re.findall(r'"\.webp"', text)) for path, text in source.items()}
    assert sum(webp.values()) == 1 and webp["formats.py"] == 1, webp
    for name in ("_DEPTHS", "_CHANNELS", "_QUALITY", "_METADATA_FORMATS", "FOURCC", "_encode_params"):
        assert not any(re.search(rf"\b{name}\b", text) for text in source.values()), name


def test_quality_out_of_range_is_refused() -> None:
    from cvfilters.core.errors import ParameterError

    jpeg = formats.image_format(".jpg")
    assert jpeg is not None and jpeg.params(80) == [cv2.IMWRITE_JPEG_QUALITY, 80]
    assert jpeg.params(1) == [cv2.IMWRITE_JPEG_QUALITY, 1] and jpeg.params(100) == [cv2.IMWRITE_JPEG_QUALITY, 100]
    for bad in (0, 101, 2.5, True):
        with pytest.raises(ParameterError) as info:
            jpeg.params(bad)  # type: ignore[arg-type]
        assert str(info.value).endswith(f"quality must be an integer from 1 to 100, got {bad!r}")


def test_without_lossless_webp_writes_its_default_quality() -> None:
    webp = formats.image_format(".webp")
    assert webp is not None and webp.params() == [cv2.IMWRITE_WEBP_QUALITY, 90]
    assert webp.params(lossless=True) == [cv2.IMWRITE_WEBP_QUALITY, 101]  # OpenCV: above 100 is lossless


def test_compression_out_of_range_is_refused_with_the_whole_message() -> None:
    """Catches the refusal naming another parameter or another action than the write asked for."""
    from cvfilters.core.errors import ParameterError

    png = formats.image_format(".png")
    assert png is not None
    for bad, quality in ((10, None), (-1, None), (None, 0)):
        with pytest.raises(ParameterError) as info:
            png.params(quality, bad)
        name, low, high, value = ("compression", 0, 9, bad) if bad is not None else ("quality", 1, 100, quality)
        assert str(info.value) == f"write: {name} must be an integer from {low} to {high}, got {value!r}"


def test_compression_is_passed_only_where_the_format_takes_it() -> None:
    """Catches a zlib level handed to JPEG's encoder as a flag of None, or a PNG given a level of None."""
    jpeg, png = formats.image_format(".jpg"), formats.image_format(".png")
    assert jpeg is not None and png is not None
    assert jpeg.params(80, 5) == [cv2.IMWRITE_JPEG_QUALITY, 80]
    assert png.params() == [] and png.params(80) == []
    assert png.params(compression=5) == [cv2.IMWRITE_PNG_COMPRESSION, 5]


def test_video_containers_are_found_in_any_case() -> None:
    """Catches the extension looked up as given (``.MP4`` missed) or upper-cased (``.mp4`` missed)."""
    for ext, codec in ((".mp4", "libx264"), (".MP4", "libx264"), (".WebM", "libvpx-vp9"), (".avi", "mjpeg")):
        record = formats.video_format(ext)
        assert record is not None and record.codecs == (codec,), ext
    assert formats.video_format(".png") is None
