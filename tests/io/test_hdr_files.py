"""EXR and Radiance HDR files keep float values above 1 (issue #27).

EXR is checked against the OpenEXR bindings as a second reader and writer; HDR against the
RGBE precision (8-bit mantissas sharing the exponent of the largest channel).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import ImageTooLargeError, TruncatedImageError

OpenEXR = pytest.importorskip("OpenEXR", reason="EXR needs the OpenEXR bindings (cvfilters[colour])")

RNG = np.random.default_rng(27)
HDR = (RNG.random((24, 32, 3)) * 8.0 - 0.5).astype(np.float32)  # -0.5 .. 7.5


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_exr_round_trip_keeps_every_value(tmp_path: Path, channels: int) -> None:
    image = HDR[..., 0] if channels == 1 else HDR if channels == 3 else np.dstack([HDR, HDR[..., :1] / 8])
    path = tmp_path / "scene.exr"
    cvf.write(path, image)
    np.testing.assert_array_equal(cvf.read(path), image)
    planes = OpenEXR.File(str(path), separate_channels=True).channels()
    if channels == 1:
        np.testing.assert_array_equal(planes["Y"].pixels, image)
    else:
        np.testing.assert_array_equal(planes["R"].pixels, image[..., 2])  # BGR in, R named R in the file
        np.testing.assert_array_equal(planes["B"].pixels, image[..., 0])


def test_exr_written_by_openexr_reads_as_bgr(tmp_path: Path) -> None:
    rgb = HDR[..., ::-1].astype(np.float16)
    path = tmp_path / "half.exr"
    header = {"compression": OpenEXR.PIZ_COMPRESSION, "type": OpenEXR.scanlineimage}
    OpenEXR.File(header, {"RGB": np.ascontiguousarray(rgb)}).write(str(path))
    image = cvf.read(path, channel_order="rgb")
    assert image.dtype == np.float32
    np.testing.assert_array_equal(image, rgb.astype(np.float32))


def test_exr_pixel_limit_and_damage(tmp_path: Path) -> None:
    path = tmp_path / "scene.exr"
    cvf.write(path, HDR)
    with pytest.raises(ImageTooLargeError):
        cvf.read(path, max_pixels=100)
    cut = tmp_path / "cut.exr"
    cut.write_bytes(path.read_bytes()[:300])
    with pytest.raises(TruncatedImageError, match="cut.exr"):
        cvf.read(cut)


def test_radiance_hdr_keeps_values_above_one(tmp_path: Path) -> None:
    path = tmp_path / "scene.hdr"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cvf.write(path, HDR)
    assert any("negative" in str(w.message) for w in caught)
    back = cvf.read(path)
    positive = np.maximum(HDR, 0)
    assert back.max() > 7
    bound = positive.max(axis=2, keepdims=True) / 128 + 1e-6  # one step of the shared-exponent mantissa
    assert np.all(np.abs(back - positive) <= bound)


def test_cli_filters_exr_keeping_hdr_light(tmp_path: Path) -> None:
    source, target = tmp_path / "in.exr", tmp_path / "out.exr"
    cvf.write(source, np.full((16, 16, 3), 4.0, np.float32))
    done = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(source), "-o", str(target),
                           "-f", "gaussian_blur:sigma=2 | resize:scale=0.5", "--linear", "--backend", "cpu"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(cvf.read(target), 4.0, rtol=1e-4)
