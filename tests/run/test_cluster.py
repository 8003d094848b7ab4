"""One image across a Dask cluster (:mod:`cvfilters.run.cluster`): its bands, their overlap, the client.

Band layouts are written out by hand; images taller than one band (so the bands' overlap
matters) are compared with OpenCV run on the whole image (``cv2.blur``, ``cv2.equalizeHist``)
and with the local tiled run (the cluster's contract: bit for bit the local result), read
back with zarr. The cluster is a two-worker ``LocalCluster`` in this process.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import tifffile

import cvfilters
from cvfilters.core.errors import UsageError
from cvfilters.run import cluster

zarr = pytest.importorskip("zarr")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def local_cluster() -> Any:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as running:
        yield running


@pytest.fixture(scope="module")
def client(local_cluster: Any) -> Any:
    with distributed.Client(local_cluster) as connected:
        yield connected


def _texture(height: int, width: int, channels: int = 1) -> np.ndarray:
    """Smooth waves plus noise in 40..200 (uint8): blurs, equalisation and normalisation change every band."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    planes = [np.sin(xx / 7 + k) * np.cos(yy / 11 - k) for k in range(channels)]
    noise = np.random.default_rng(3).normal(0, 0.05, (height, width, channels))
    image = np.clip((np.dstack(planes) + 1) / 2 + noise, 0, 1)
    return np.rint(40 + image * 160).astype(np.uint8).squeeze()


def _zarr(path: Path) -> np.ndarray:
    return np.asarray(zarr.open_array(str(path), mode="r")[:])


def test_bands_span_the_image_without_a_sliver() -> None:
    assert cluster._bands(100, 256) == [(0, 100)]
    assert cluster._bands(256, 256) == [(0, 256)]
    assert cluster._bands(301, 256) == [(0, 301)]  # 45 rows left: fewer than half a band, merged
    assert cluster._bands(512, 256) == [(0, 256), (256, 512)]
    assert cluster._bands(600, 256) == [(0, 256), (256, 600)]
    assert cluster._bands(700, 256) == [(0, 256), (256, 512), (512, 700)]  # 188 rows: a band of its own
    assert cluster._bands(640, 256) == [(0, 256), (256, 512), (512, 640)]  # exactly half a band stays


def test_describe_names_the_scheduler_address(local_cluster: Any, client: Any) -> None:
    assert cluster.describe("tcp://head:8786") == "Dask scheduler tcp://head:8786"
    assert cluster.describe(client) == f"Dask scheduler {local_cluster.scheduler_address}"


def test_client_from_an_address_is_made_here_and_a_client_is_kept(local_cluster: Any, client: Any) -> None:
    assert cluster._client(client) == (client, False)
    made, owned = cluster._client(local_cluster.scheduler_address)
    try:
        assert owned and made is not client
        assert made.scheduler.address == local_cluster.scheduler_address
    finally:
        made.close()


def test_an_unreachable_scheduler_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheduler that cannot be reached (the connection's own error stands in for a 10 s wait)."""

    class Unreachable:
        def __init__(self, address: Any = None, **_: Any) -> None:
            raise OSError(f"Timed out trying to connect to {address}")

    monkeypatch.setattr(distributed, "Client", Unreachable)
    with pytest.raises(UsageError) as caught:
        cluster._client("tcp://head:8786")
    assert str(caught.value) == "--scheduler tcp://head:8786: cannot connect (Timed out trying to connect to " \
                                "tcp://head:8786)"


def test_without_dask_the_scheduler_option_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `from distributed import ...` raises ImportError
    with pytest.raises(UsageError) as caught:
        cluster._client("tcp://head:8786")
    assert str(caught.value) == '--scheduler needs Dask: pip install "cvfilters[dask]"'


def test_bands_overlap_by_what_the_filters_need(tmp_path: Path, client: Any) -> None:
    """600 rows: two bands; a 7 x 7 box blur then a histogram equalisation equal OpenCV's on the whole image."""
    image = _texture(600, 64)
    source = tmp_path / "in.tif"
    tifffile.imwrite(source, image, rowsperstrip=50, compression="zlib")
    cvfilters.stream_file(source, tmp_path / "out.zarr", "box_blur:size=7 | equalize", tile_size=64,
                          scheduler=client)
    expected = cv2.equalizeHist(cv2.blur(image, (7, 7), borderType=cv2.BORDER_REFLECT_101))
    np.testing.assert_array_equal(_zarr(tmp_path / "out.zarr"), expected)


@pytest.mark.parametrize("spec", ["gaussian_blur:sigma=2 | unsharp_mask", "rotate:angle=10", "normalize"])
def test_a_tall_colour_image_gives_the_local_result(tmp_path: Path, local_cluster: Any, spec: str) -> None:
    """Three bands and a scheduler given by its address (a client made, used and closed here)."""
    image = _texture(700, 48, 3)
    source = tmp_path / "in.tif"
    tifffile.imwrite(source, image[..., ::-1], photometric="rgb", rowsperstrip=64)
    cvfilters.stream_file(source, tmp_path / "local.zarr", spec, tile_size=64)
    cvfilters.stream_file(source, tmp_path / "cluster.zarr", spec, tile_size=64,
                          scheduler=local_cluster.scheduler_address)
    np.testing.assert_array_equal(_zarr(tmp_path / "cluster.zarr"), _zarr(tmp_path / "local.zarr"))
    assert np.abs(_zarr(tmp_path / "cluster.zarr").astype(int) - image[..., ::-1]).max() > 10  # it ran
