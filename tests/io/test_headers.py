"""cvfilters.io.headers: sizes from text headers, JPEG scans and TIFF layouts, before any decoding (issue 24)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from cvfilters.core.errors import ImageTooLargeError, UnsupportedDepthError
from cvfilters.io import headers
from cvfilters.io import images as cio


@pytest.mark.parametrize("ext", [".hdr", ".pfm", ".pam"])
@pytest.mark.parametrize(("height", "width"), [(3, 5), (17, 2)])
def test_raw_size_equals_what_opencv_decodes(tmp_path: Path, ext: str, height: int, width: int) -> None:
    image = np.random.default_rng(0).random((height, width, 3)).astype(np.float32)
    path = tmp_path / f"x{ext}"
    assert cv2.imwrite(str(path), image if ext != ".pam" else (image * 255).astype(np.uint8))
    data = path.read_bytes()
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)  # the reference: OpenCV itself
    assert headers.raw_size(data) == (decoded.shape[1], decoded.shape[0]) == (width, height)
    assert cio.probe(path) == (width, height)


def test_radiance_orientations_and_bad_headers() -> None:
    assert headers.raw_size(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+X 640 -Y 480\n") == (640, 480)
    assert headers.raw_size(b"#?RGBE\n\n-Y 480 +X 640\n") == (640, 480)
    with pytest.raises(headers.HeaderError):
        headers.raw_size(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\nnonsense\n")
    with pytest.raises(headers.HeaderError):
        headers.raw_size(b"PF\nx y\n")
    with pytest.raises(headers.HeaderError):
        headers.raw_size(b"P7\nDEPTH 3\nENDHDR\n")
    assert headers.raw_size(b"\x89PNG\r\n") is None


def test_a_header_over_the_pixel_limit_is_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "bomb.hdr"
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 20000 +X 20000\n" + b"\x02\x02\x4e\x20" * 16)
    with pytest.raises(ImageTooLargeError, match="20000x20000 = 400000000 pixels exceeds the limit"):
        cio.read(path)


def test_jpeg_scans_are_counted_from_the_first_scan() -> None:
    image = (np.random.default_rng(0).random((32, 32, 3)) * 255).astype(np.uint8)
    baseline = cv2.imencode(".jpg", image)[1].tobytes()
    progressive = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
    assert headers.jpeg_scans(baseline) == 1
    assert headers.jpeg_scans(progressive) == 10  # libjpeg's jpeg_simple_progression for YCbCr
    assert headers.jpeg_scans(b"\xff\xd8\xff\xe1\x00\x04\xff\xda") == 1  # an FF DA inside EXIF before the scan counts


@pytest.mark.parametrize(("dtype", "shape", "problem"), [
    (np.float16, (8, 8, 3), "16-bit floating-point samples"),
    (np.complex64, (8, 8), "complex samples (64-bit)"),
    (np.uint8, (8, 8, 5), "5 samples per pixel"),
])
def test_tiff_layouts_opencv_cannot_decode_are_named(tmp_path: Path, dtype: type, shape: tuple[int, ...],
                                                     problem: str) -> None:
    tifffile = pytest.importorskip("tifffile")
    path = tmp_path / "x.tif"
    extra = {"photometric": "minisblack", "extrasamples": [0] * 4} if shape[-1] == 5 else {}
    tifffile.imwrite(path, np.zeros(shape, dtype), **extra)
    with pytest.raises(UnsupportedDepthError) as caught:
        cio.read(path)
    assert str(caught.value).startswith(f"{path}: unsupported pixel layout: {problem} (cvfilters reads")


def test_tiff_layouts_opencv_decodes_are_not_flagged(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    for dtype, shape in ((np.uint8, (4, 4, 3)), (np.uint16, (4, 4)), (np.float32, (4, 4, 4))):
        tifffile.imwrite(tmp_path / "ok.tif", np.zeros(shape, dtype))
        assert headers.tiff_layout_problem((tmp_path / "ok.tif").read_bytes()) is None
