"""Big images from the command line and from Python: TIFF and Zarr streamed file to file, the memory
budget, the pixel limit as a bomb guard, and one image across a Dask cluster.

Every expected result is the pipeline run on the whole image in memory (the reference the tiled
engine must equal bit for bit), read back with a second reader (tifffile, zarr, OpenCV).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import tifffile

import cvfilters
from cvfilters.core.errors import ImageTooLargeError, OutputExistsError, OverwriteInputError, UsageError
from cvfilters.run import streaming
from tests.cli_runner import run_cli

zarr = pytest.importorskip("zarr")
pytest.importorskip("imagecodecs", reason="LZW and Zstandard TIFFs need imagecodecs")

HEIGHT, WIDTH = 301, 257
CHAIN = "gaussian_blur:sigma=2 | invert | unsharp_mask"


def _photo(channels: int = 3, dtype: Any = np.uint8) -> np.ndarray:
    """A smooth picture with texture (BGR), so blurs and sharpening change it measurably."""
    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float32)
    planes = [np.sin(xx / 17 + k) * np.cos(yy / 23 - k) for k in range(channels)]
    image = (np.dstack(planes) + 1) / 2 + np.random.default_rng(1).normal(0, 0.03, (HEIGHT, WIDTH, channels))
    image = np.clip(image, 0, 1)
    if np.dtype(dtype).kind == "f":
        return image.astype(np.float32)
    return np.rint(image * np.iinfo(dtype).max).astype(dtype)


def _whole(image: np.ndarray, spec: str) -> np.ndarray:
    return cvfilters.Pipeline.parse(spec)(image, backend="cpu")


def _tiff(path: Path, bgr: np.ndarray, **options: Any) -> Path:
    tifffile.imwrite(path, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), photometric="rgb", **options)
    return path


def test_cli_tiff_to_tiff_streams_and_keeps_compression(tmp_path: Path) -> None:
    image = _photo()
    source = _tiff(tmp_path / "in.tif", image, compression="lzw", predictor=True, rowsperstrip=19)
    out = tmp_path / "out.tif"
    proc = run_cli("apply", source, "-o", out, "-f", CHAIN, "--tile-size", 64, "--memory", "512M", "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "read in pieces" in proc.stderr and "tiles: 64" in proc.stderr and "halo" in proc.stderr
    assert "memory budget: 512 MiB" in proc.stderr
    np.testing.assert_array_equal(tifffile.imread(out), cv2.cvtColor(_whole(image, CHAIN), cv2.COLOR_BGR2RGB))
    with tifffile.TiffFile(out) as tif:
        page = tif.pages.first
        assert (page.compression, page.predictor, page.rowsperstrip) == (5, 2, 19)


def test_cli_zarr_in_and_out(tmp_path: Path) -> None:
    image = _photo(channels=4, dtype=np.uint16)
    array = zarr.create_array(store=str(tmp_path / "in.zarr"), shape=image.shape, dtype=image.dtype,
                              chunks=(100, 128, 4))
    array[:] = cv2.cvtColor(image, cv2.COLOR_BGRA2RGBA)  # Zarr holds RGB(A), as image files do
    proc = run_cli("apply", tmp_path / "in.zarr", "-o", tmp_path / "out.zarr", "-f", CHAIN, "--tile-size", 96)
    assert proc.returncode == 0, proc.stderr
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.chunks == (100, 128, 4)
    np.testing.assert_array_equal(out[:], cv2.cvtColor(_whole(image, CHAIN), cv2.COLOR_BGRA2RGBA))
    proc = run_cli("apply", tmp_path / "out.zarr", "-o", tmp_path / "back.png", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "back.png"), cv2.IMREAD_UNCHANGED),
                                  _whole(_whole(image, CHAIN), "invert"))


def test_cli_replaces_an_existing_zarr_output_and_never_its_input(tmp_path: Path) -> None:
    image = _photo()
    source = _tiff(tmp_path / "in.tif", image)
    old = zarr.create_array(store=str(tmp_path / "out.zarr"), shape=(2, 2), dtype=np.uint8)
    old[:] = 1
    proc = run_cli("apply", source, "-o", tmp_path / "out.zarr", "-f", "invert")  # a named output, not a folder
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "out.zarr"), mode="r")[:],
                                  255 - cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
    proc = run_cli("apply", tmp_path / "out.zarr", "-o", tmp_path / "out.zarr", "-f", "invert")
    assert proc.returncode == 2 and "never overwrites its inputs" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.tif", "out.zarr"]


def test_cli_decoded_image_through_tiles_equals_whole(tmp_path: Path) -> None:
    image = _photo()
    cv2.imwrite(str(tmp_path / "in.png"), image)
    proc = run_cli("apply", tmp_path / "in.png", "-o", tmp_path / "out.png", "-f", CHAIN, "--tile-size", 50,
                   "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "tiles: 50" in proc.stderr
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "out.png")), _whole(image, CHAIN))


def test_cli_dry_run_of_a_zarr_input(tmp_path: Path) -> None:
    zarr.create_array(store=str(tmp_path / "in.zarr"), shape=(40, 30, 3), dtype=np.uint8)
    proc = run_cli("apply", tmp_path / "in.zarr", "-o", tmp_path / "out.tif", "-f", "invert", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "30x40, read in pieces" in proc.stdout and not (tmp_path / "out.tif").exists()


@pytest.mark.parametrize(("args", "fragment"), [
    (["--memory", "lots"], "--memory 'lots' is not a size"),
    (["--memory", "1M"], "below the smallest budget"),
    (["--tile-size", "3"], "--tile-size"),
])
def test_cli_bad_budget_options_are_usage_errors(tmp_path: Path, args: list[str], fragment: str) -> None:
    source = _tiff(tmp_path / "in.tif", _photo())
    proc = run_cli("apply", source, "-o", tmp_path / "out.tif", "-f", "invert", *args)
    assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr
    assert not (tmp_path / "out.tif").exists()


def test_pixel_limit_is_a_bomb_guard_for_streamed_inputs(tmp_path: Path) -> None:
    noise = np.random.default_rng(0).integers(0, 256, (HEIGHT, WIDTH, 3), np.uint8)
    honest = _tiff(tmp_path / "honest.tif", noise, compression="zlib")
    bomb = tmp_path / "bomb.tif"
    tifffile.imwrite(bomb, np.zeros((4000, 4000), np.uint8), compression="zstd", tile=(1024, 1024))
    assert bomb.stat().st_size * streaming.MAX_EXPANSION < 4000 * 4000
    proc = run_cli("apply", honest, "-o", tmp_path / "ok.tif", "-f", "invert", "--max-pixels", 1000)
    assert proc.returncode == 0, proc.stderr  # over the pixel limit, but its bytes are really there
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "ok.tif"), 255 - noise[..., ::-1])
    proc = run_cli("apply", bomb, "-o", tmp_path / "no.tif", "-f", "invert", "--max-pixels", 1000)
    assert proc.returncode == 1 and "bomb.tif" in proc.stderr and "decompression bomb" in proc.stderr
    assert not (tmp_path / "no.tif").exists()
    with pytest.raises(ImageTooLargeError, match="exceeds the limit of 1000"):
        streaming.check_claimed(bomb, (4000, 4000), np.dtype(np.uint8), 1000)
    streaming.check_claimed(bomb, (4000, 4000), np.dtype(np.uint8), 4000 * 4000)  # within the limit: fine


def test_python_stream_file(tmp_path: Path) -> None:
    image = _photo()
    source = _tiff(tmp_path / "in.tif", image, tile=(64, 64), compression="zlib")
    plan = cvfilters.stream_file(source, tmp_path / "out.tif", CHAIN, memory="256M", tile_size=100, workers=2)
    assert plan.tile_size == 100 and plan.out_shape == image.shape
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "out.tif"),
                                  cv2.cvtColor(_whole(image, CHAIN), cv2.COLOR_BGR2RGB))
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        assert tif.pages.first.is_tiled and (tif.pages.first.tilelength, tif.pages.first.tilewidth) == (64, 64)
    cvfilters.stream_file(source, tmp_path / "out.zarr", "gaussian_blur", sigma=3)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "out.zarr"), mode="r")[:],
                                  cv2.cvtColor(_whole(image, "gaussian_blur:sigma=3"), cv2.COLOR_BGR2RGB))
    with pytest.raises(OutputExistsError):
        cvfilters.stream_file(source, tmp_path / "out.tif", "invert", overwrite=False)
    with pytest.raises(OverwriteInputError):
        cvfilters.stream_file(source, source, "invert")
    with pytest.raises(UsageError, match="--memory"):
        cvfilters.stream_file(source, tmp_path / "x.tif", "invert", memory="nonsense")
    assert not (tmp_path / "x.tif").exists()


def test_a_whole_image_decode_over_the_budget_is_refused(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "in.png"), np.zeros((4096, 4096, 4), np.uint8))  # 64 MiB decoded
    with pytest.raises(cvfilters.ImageError, match="over the memory budget"):
        cvfilters.stream_file(tmp_path / "in.png", tmp_path / "out.png", "invert", memory="64M")
    assert not (tmp_path / "out.png").exists()


def test_a_whole_image_step_over_the_budget_is_refused_naming_the_file(tmp_path: Path) -> None:
    source = tmp_path / "big.tif"
    tifffile.imwrite(source, np.zeros((3000, 3000, 3), np.uint8), photometric="rgb", compression="zlib")
    proc = run_cli("apply", source, "-o", tmp_path / "out.tif", "-f", "detail_enhance", "--memory", "64M")
    assert proc.returncode == 1, proc.stderr
    assert f"{source}: whole-image step" in proc.stderr and "memory budget" in proc.stderr
    assert not (tmp_path / "out.tif").exists()


# ---------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def client() -> Any:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


@pytest.mark.parametrize("spec", [CHAIN, "equalize", "gaussian_blur:sigma=4 | clahe"])
def test_dask_cluster_gives_the_local_result_bit_for_bit(tmp_path: Path, client: Any, spec: str) -> None:
    image = _photo()
    source = _tiff(tmp_path / "in.tif", image, rowsperstrip=32, compression="zlib")
    cvfilters.stream_file(source, tmp_path / "local.zarr", spec, tile_size=64)
    cvfilters.stream_file(source, tmp_path / "cluster.zarr", spec, tile_size=64, scheduler=client)
    local = zarr.open_array(str(tmp_path / "local.zarr"), mode="r")[:]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "cluster.zarr"), mode="r")[:], local)
    np.testing.assert_array_equal(local, cv2.cvtColor(_whole(image, spec), cv2.COLOR_BGR2RGB))


def test_dask_refuses_what_it_cannot_distribute(tmp_path: Path, client: Any) -> None:
    source = _tiff(tmp_path / "in.tif", _photo())
    with pytest.raises(UsageError, match="Zarr"):
        cvfilters.stream_file(source, tmp_path / "out.tif", "invert", scheduler=client)
    with pytest.raises(UsageError, match="keep the image size"):
        cvfilters.stream_file(source, tmp_path / "out.zarr", "resize:scale=0.5", scheduler=client)
    assert not (tmp_path / "out.zarr").exists()
