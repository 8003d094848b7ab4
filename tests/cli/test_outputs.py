"""Outputs users expect: checked standard output, metadata at any size, sensible defaults.

Independent references: ImageMagick's ``identify`` for a JPEG's quality (skipped without it),
Pillow for the ICC profile read back, tifffile for TIFF compression, ``os.stat`` for modes.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]


def cvfilters(*args: object, stdout: object = None) -> subprocess.CompletedProcess[bytes]:
    """The command in this process, or in a new one writing to ``stdout`` (an open file) when given."""
    if stdout is None:
        return run_cli(*args, cwd=ROOT, text=False)
    return subprocess.run([sys.executable, "-m", "cvfilters", *map(str, args)], stdout=stdout,  # type: ignore[call-overload]
                          stderr=subprocess.PIPE, cwd=ROOT, timeout=120)


def photo(height: int = 120, width: int = 160) -> np.ndarray:
    from skimage import data

    return np.ascontiguousarray(cv2.resize(data.chelsea(), (width, height))[..., ::-1])


# ---------------------------------------------------------------- checked standard output
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full to fill")
@pytest.mark.parametrize("command", [["info", "lut"], ["apply", "IN", "-o", "-", "--format", "png", "-f", "invert"]])
def test_a_full_disk_on_standard_output_is_one_error_and_exit_1(tmp_path: Path, command: list[str]) -> None:
    cv2.imwrite(str(tmp_path / "in.png"), photo())
    args = [str(tmp_path / "in.png") if arg == "IN" else arg for arg in command]
    with open("/dev/full", "wb") as full:
        proc = cvfilters(*args, stdout=full)
    lines = [line for line in proc.stderr.decode().splitlines() if line.strip()]
    assert proc.returncode == 1 and len(lines) == 1 and "No space left on device" in lines[0], lines
    assert "standard output" in lines[0] and "internal error" not in lines[0]


def test_a_closed_pipe_is_an_error_for_an_image_and_quiet_for_a_listing(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "in.png"), (np.random.default_rng(0).random((400, 400, 3)) * 255).astype(np.uint8))
    image = subprocess.Popen([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in.png"), "-o", "-",
                              "--format", "png", "-f", "invert"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=ROOT)
    assert image.stdout is not None and image.stderr is not None
    image.stdout.read(100)
    image.stdout.close()  # the reader goes away after 100 bytes of a 480 KB image
    errors = image.stderr.read().decode().splitlines()
    image.stderr.close()
    assert image.wait(120) == 1 and len(errors) == 1 and "Broken pipe" in errors[0], errors
    listing = subprocess.run(f"{sys.executable} -m cvfilters list | head -1", shell=True, capture_output=True,
                             text=True, cwd=ROOT, timeout=120)
    assert listing.stdout.count("\n") == 1 and listing.stderr == ""  # was "internal error: BrokenPipeError"


# ---------------------------------------------------------------- metadata at any size
def test_an_icc_profile_over_64_kb_reaches_a_jpeg(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    icc = b"\0\3\r\0" + bytes(rng.integers(0, 256, 200_000, dtype=np.uint8))  # 200 KB (opaque to both ends)
    Image.fromarray(photo()[..., ::-1]).save(tmp_path / "in.png", icc_profile=icc)
    proc = cvfilters("apply", tmp_path / "in.png", "-o", tmp_path / "out.jpg", "-f", "invert")
    assert proc.returncode == 0, proc.stderr  # was "OpenCV refused the image"
    with Image.open(tmp_path / "out.jpg") as out:  # Pillow joins the APP2 segments
        assert out.info.get("icc_profile") == icc
        assert np.abs(np.asarray(out).astype(int) - (255 - photo()[..., ::-1])).mean() < 3


def test_xmp_over_64_kb_is_dropped_with_one_warning_and_the_pixels_written(tmp_path: Path) -> None:
    xmp = b'<x:xmpmeta xmlns:x="adobe:ns:meta/">' + b"a" * 100_000 + b"</x:xmpmeta>"
    ok, encoded = cv2.imencodeWithMetadata(".png", photo(), [cv2.IMAGE_METADATA_XMP], [np.frombuffer(xmp + b"\0",
                                                                                                       np.uint8)])
    assert ok
    (tmp_path / "in.png").write_bytes(encoded.tobytes())
    proc = cvfilters("apply", tmp_path / "in.png", "-o", tmp_path / "out.jpg", "-f", "invert")
    warnings = [line for line in proc.stderr.decode().splitlines() if line.strip()]
    assert proc.returncode == 0 and len(warnings) == 1 and "XMP" in warnings[0], warnings
    assert cv2.imread(str(tmp_path / "out.jpg")) is not None


# ---------------------------------------------------------------- output defaults
def test_webp_output_is_lossy_at_90_unless_lossless(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "in.jpg"), photo(300, 400), [cv2.IMWRITE_JPEG_QUALITY, 90])
    lossy = cvfilters("apply", tmp_path / "in.jpg", "-o", tmp_path / "lossy.webp", "-f", "invert")
    exact = cvfilters("apply", tmp_path / "in.jpg", "-o", tmp_path / "exact.webp", "-f", "invert", "--lossless")
    assert lossy.returncode == exact.returncode == 0
    assert (tmp_path / "lossy.webp").stat().st_size * 3 < (tmp_path / "exact.webp").stat().st_size
    with Image.open(tmp_path / "exact.webp") as out:
        want = 255 - cv2.imread(str(tmp_path / "in.jpg"))[..., ::-1]
        np.testing.assert_array_equal(np.asarray(out.convert("RGB")), want)


@pytest.mark.parametrize("quality", [60, 83])
def test_jpeg_to_jpeg_keeps_the_input_quality(tmp_path: Path, quality: int) -> None:
    cv2.imwrite(str(tmp_path / "in.jpg"), photo(), [cv2.IMWRITE_JPEG_QUALITY, quality])
    proc = cvfilters("apply", tmp_path / "in.jpg", "-o", tmp_path / "out.jpg", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "out.jpg") as out:  # the luminance table, as libjpeg scales it at that quality
        table = out.quantization[0]  # type: ignore[attr-defined]
    ok, reference = cv2.imencode(".jpg", photo(), [cv2.IMWRITE_JPEG_QUALITY, quality])
    with Image.open(BytesIO(reference.tobytes())) as ref:
        assert table == ref.quantization[0]  # type: ignore[attr-defined]
    if shutil.which("identify"):
        estimate = subprocess.run(["identify", "-format", "%Q", str(tmp_path / "out.jpg")], capture_output=True,
                                  text=True)
        assert int(estimate.stdout) == quality  # ImageMagick's estimate agrees


def test_png_to_jpeg_is_quality_90(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "in.png"), photo())
    assert cvfilters("apply", tmp_path / "in.png", "-o", tmp_path / "out.jpg", "-f", "invert").returncode == 0
    ok, reference = cv2.imencode(".jpg", 255 - photo(), [cv2.IMWRITE_JPEG_QUALITY, 90])
    with Image.open(tmp_path / "out.jpg") as out, Image.open(BytesIO(reference.tobytes())) as ref:
        assert out.quantization == ref.quantization  # type: ignore[attr-defined]


@pytest.mark.parametrize(("source", "kept"), [("none", 1), ("zlib", 8)])
def test_tiff_output_keeps_the_input_compression_else_none(tmp_path: Path, source: str, kept: int) -> None:
    tifffile = pytest.importorskip("tifffile")
    tifffile.imwrite(tmp_path / "in.tif", photo()[..., ::-1], photometric="rgb",
                     compression=None if source == "none" else source)
    cv2.imwrite(str(tmp_path / "in.png"), photo())
    for name in ("in.tif", "in.png"):
        proc = cvfilters("apply", tmp_path / name, "-o", tmp_path / f"{name}.out.tif", "-f", "invert")
        assert proc.returncode == 0, proc.stderr
    with tifffile.TiffFile(tmp_path / "in.tif.out.tif") as same, tifffile.TiffFile(tmp_path / "in.png.out.tif") as png:
        assert same.pages[0].compression == kept and png.pages[0].compression == 1  # was always LZW (5)


def test_a_conflicting_output_suffix_and_format_is_a_usage_error(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "in.png"), photo())
    proc = cvfilters("apply", tmp_path / "in.png", "-o", tmp_path / "out.png", "--format", "jpg", "-f", "invert")
    assert proc.returncode == 2 and b"--format" in proc.stderr and not (tmp_path / "out.png").exists()
    same = cvfilters("apply", tmp_path / "in.png", "-o", tmp_path / "out.jpeg", "--format", "jpg", "-f", "invert")
    assert same.returncode == 0, same.stderr  # .jpeg and jpg are one format


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_a_replaced_output_keeps_its_mode_as_cp_does(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "in.png"), photo())
    cv2.imwrite(str(tmp_path / "out.png"), photo())
    os.chmod(tmp_path / "out.png", 0o600)
    proc = cvfilters("apply", tmp_path / "in.png", "-o", tmp_path / "out.png", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "out.png").st_mode) == 0o600  # was 0o644: readable by everyone
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "out.png")), 255 - photo())


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_symlinked_output_is_written_through_the_link_as_cp_does(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "in.png"), photo())
    (tmp_path / "real").mkdir()
    cv2.imwrite(str(tmp_path / "real" / "out.png"), photo())
    (tmp_path / "link.png").symlink_to(tmp_path / "real" / "out.png")
    proc = cvfilters("apply", tmp_path / "in.png", "-o", tmp_path / "link.png", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "link.png").is_symlink()  # the link stays a link
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "real" / "out.png")), 255 - photo())


def test_a_lossless_webp_stays_lossless(tmp_path: Path) -> None:
    image = (np.random.default_rng(5).random((40, 60, 3)) * 255).astype(np.uint8)
    Image.fromarray(image).save(tmp_path / "in.webp", lossless=True)  # Pillow's encoder
    proc = cvfilters("apply", tmp_path / "in.webp", "-o", tmp_path / "out.webp", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "out.webp") as out:
        np.testing.assert_array_equal(np.asarray(out.convert("RGB")), 255 - image)
