"""The OpenEXR bridge, checked with the OpenEXR library reading and writing files directly.

The size check must see the data window's width and height before any pixel is read: a file is
written with an offset window, and one whose header claims more pixels than it holds.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cvfilters.core.errors import ImageWriteError, TruncatedImageError
from cvfilters.io import exr

OpenEXR = pytest.importorskip("OpenEXR", reason="the OpenEXR bindings (cvfilters[colour]) are not installed")


class Refused(Exception):
    pass


def written(tmp_path: Path, channels: dict[str, np.ndarray], window: tuple[tuple[int, int], tuple[int, int]]) -> bytes:
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage,
              "dataWindow": window, "displayWindow": window}
    OpenEXR.File(header, channels).write(str(tmp_path / "in.exr"))
    return (tmp_path / "in.exr").read_bytes()


def test_the_size_check_gets_the_data_windows_width_and_height(tmp_path: Path) -> None:
    data = written(tmp_path, {"Y": np.full((5, 10), 0.5, np.float32)}, ((2, 3), (11, 7)))
    seen: list[tuple[int, int]] = []
    out = exr.decode(data, "in.exr", lambda width, height: seen.append((width, height)))
    assert seen == [(10, 5)] and out.shape == (5, 10) and out.dtype == np.float32


def test_the_size_check_comes_before_the_pixels(tmp_path: Path) -> None:
    data = bytearray(written(tmp_path, {"Y": np.zeros((4, 4), np.float32)}, ((0, 0), (3, 3))))
    at = data.find(b"dataWindow\x00box2i\x00") + len(b"dataWindow\x00box2i\x00") + 4
    data[at:at + 16] = struct.pack("<4i", 0, 0, 9_999, 9_999)  # claims 10^8 pixels it does not hold

    def check(width: int, height: int) -> None:
        raise Refused(f"{width}x{height}")

    with pytest.raises(Refused, match="^10000x10000$"):
        exr.decode(bytes(data), "big.exr", check)


def test_corrupt_data_is_a_truncated_image_named_by_its_file() -> None:
    with pytest.raises(TruncatedImageError) as info:
        exr.decode(exr.MAGIC + b"\x02\x00\x00\x00garbage", "bad.exr", lambda width, height: None)
    assert str(info.value) == "bad.exr: EXR data is truncated or corrupt (OpenEXR cannot read it)"


@pytest.mark.parametrize(("shape", "names"), [((3, 4), {"Y"}), ((3, 4, 1), {"Y"}), ((3, 4, 3), {"B", "G", "R"}),
                                              ((3, 4, 4), {"B", "G", "R", "A"})])
def test_encode_writes_float_channels_with_zip(tmp_path: Path, shape: tuple[int, ...], names: set[str]) -> None:
    image = np.random.default_rng(1).uniform(-0.5, 4.0, shape)  # float64, light above 1 and below 0
    (tmp_path / "out.exr").write_bytes(exr.encode(image, "out.exr"))
    file = OpenEXR.File(str(tmp_path / "out.exr"), separate_channels=True)
    assert file.header()["compression"] == OpenEXR.ZIP_COMPRESSION
    assert file.header()["type"] == OpenEXR.scanlineimage
    channels = file.channels()
    assert set(channels) == names
    planes = image.reshape(3, 4, -1)
    for i, key in enumerate("Y" if names == {"Y"} else "BGRA"[:shape[2]]):
        pixels = np.asarray(channels[key].pixels)
        assert pixels.dtype == np.float32 and np.array_equal(pixels, planes[..., i].astype(np.float32))


def test_an_image_openexr_cannot_write_is_named() -> None:
    with pytest.raises(ImageWriteError, match=r"^out\.exr: cannot be encoded as \.exr: "):
        exr.encode(np.zeros((0, 4), np.float32), "out.exr")


def test_available_follows_the_bindings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert exr.available()
    monkeypatch.setitem(sys.modules, "OpenEXR", None)  # import OpenEXR now raises ImportError
    assert not exr.available()
