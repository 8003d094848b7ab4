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
from cvfilters.core.errors import OutputExistsError, UsageError
from cvfilters.engine import tiles
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import regions
from cvfilters.run import cluster, streaming

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
    assert cluster._bands(451, 301) == [(0, 301), (301, 451)]  # an odd band (tile_size=301): 150 rows stay


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
def test_a_tall_colour_image_gives_the_local_result(tmp_path: Path, local_cluster: Any, client: Any,
                                                    spec: str) -> None:
    """Three bands and a scheduler given by its address (a client made, used and closed here), whose workers
    (not a cluster of their own) run the bands."""
    image = _texture(700, 48, 3)
    source = tmp_path / "in.tif"
    tifffile.imwrite(source, image[..., ::-1], photometric="rgb", rowsperstrip=64)
    cvfilters.stream_file(source, tmp_path / "local.zarr", spec, tile_size=64)
    with distributed.get_task_stream(client) as ran:
        cvfilters.stream_file(source, tmp_path / "cluster.zarr", spec, tile_size=64,
                              scheduler=local_cluster.scheduler_address)
    assert any("read_band" in str(task["key"]) for task in ran.data), [task["key"] for task in ran.data]
    np.testing.assert_array_equal(_zarr(tmp_path / "cluster.zarr"), _zarr(tmp_path / "local.zarr"))
    assert np.abs(_zarr(tmp_path / "cluster.zarr").astype(int) - image[..., ::-1]).max() > 10  # it ran


def _tall_gray(tmp_path: Path, height: int) -> tuple[np.ndarray, Path]:
    image = _texture(height, 64)
    source = tmp_path / "in.tif"
    tifffile.imwrite(source, image, rowsperstrip=50)
    return image, source


def _blur(image: np.ndarray, size: int) -> np.ndarray:
    return cv2.blur(image, (size, size), borderType=cv2.BORDER_REFLECT_101)


@pytest.mark.parametrize(("spec", "height", "opencv"), [
    # a global step first: its statistics read each tile's rows once (not the rows below a tile as well)
    ("equalize | box_blur:size=7", 600, lambda image: _blur(cv2.equalizeHist(image), 7)),
    # an overlap of 256 rows, taller than the 176-row last band of 1200 rows: the bands grow to hold it
    ("box_blur:size=255 | box_blur:size=255", 1200, lambda image: _blur(_blur(image, 255), 255)),
    # the same overlap over two bands of 400 rows (a 144-row second band): one band then holds the image
    ("box_blur:size=255 | box_blur:size=255", 400, lambda image: _blur(_blur(image, 255), 255)),
])
def test_a_tall_gray_image_gives_opencvs_whole_image_result(tmp_path: Path, client: Any, spec: str, height: int,
                                                           opencv: Any) -> None:
    """Each band's overlap and statistics: a bug there changes the rows near a band's edge, or fails the run."""
    image, source = _tall_gray(tmp_path, height)
    cvfilters.stream_file(source, tmp_path / "out.zarr", spec, tile_size=64, scheduler=client)
    np.testing.assert_array_equal(_zarr(tmp_path / "out.zarr"), opencv(image))


@pytest.mark.parametrize(("spec", "height"), [
    ("normalize | equalize", 600), ("unsharp_mask:radius=10", 600),
    # a shift of 200 rows down, then up: an overlap on one side only, over half a band (the bands grow by it)
    ("affine:matrix=[[1,0,0],[0,1,200]]", 1200), ("affine:matrix=[[1,0,0],[0,1,-200]]", 1200),
])
def test_a_tall_gray_image_gives_the_local_result(tmp_path: Path, client: Any, spec: str, height: int) -> None:
    """Two global steps (the second measured on the first's output, with its merged statistics), a halo
    that depends on the image's dtype (a Gaussian's 6 sigma for uint8, 8 sigma otherwise), and overlaps
    above or below a band only."""
    image, source = _tall_gray(tmp_path, height)
    cvfilters.stream_file(source, tmp_path / "local.zarr", spec, tile_size=64)
    cvfilters.stream_file(source, tmp_path / "cluster.zarr", spec, tile_size=64, scheduler=client)
    np.testing.assert_array_equal(_zarr(tmp_path / "cluster.zarr"), _zarr(tmp_path / "local.zarr"))
    assert np.abs(_zarr(tmp_path / "cluster.zarr").astype(int) - image).max() > 10  # it ran


@pytest.mark.parametrize(("target", "spec", "message"), [
    ("out.tif", "invert", "-o {target}: with --scheduler the output is a Zarr array (name it .zarr): the workers "
                          "write its chunks where they are"),
    ("out.zarr", "resize:scale=0.5", "--scheduler runs chains that keep the image size; this one changes it (crop, "
                                     "resize, rotate ...): run it without --scheduler"),
    ("out.zarr", "zoom_blur", "--scheduler: zoom_blur run(s) on the whole image; run this chain without --scheduler"),
    ("out.zarr", "white_balance | invert | zoom_blur", "--scheduler: white_balance, zoom_blur run(s) on the whole "
                                                       "image; run this chain without --scheduler"),
])
def test_a_chain_the_cluster_cannot_run_is_refused_with_the_reason(tmp_path: Path, client: Any, target: str,
                                                                  spec: str, message: str) -> None:
    """The whole message (an output that is not Zarr, a size change, whole-image steps), nothing written."""
    _, source = _tall_gray(tmp_path, 300)
    with pytest.raises(UsageError) as caught:
        cvfilters.stream_file(source, tmp_path / target, spec, tile_size=64, scheduler=client)
    assert str(caught.value) == message.format(target=tmp_path / target)
    assert not (tmp_path / target).exists()


def test_an_existing_target_is_replaced_unless_told_to_keep_it(tmp_path: Path, client: Any) -> None:
    """``cluster.run`` itself: by default (``overwrite=True``) it replaces the target; ``overwrite=False`` keeps it."""
    image, source = _tall_gray(tmp_path, 300)
    target = tmp_path / "out.zarr"
    cvfilters.stream_file(source, target, "box_blur:size=7", tile_size=64)  # an older result
    pipeline = Pipeline.parse("invert")
    stream = regions.open_source(source)
    plan = tiles.plan(pipeline, stream.shape, stream.dtype, tile_size=64)
    cluster.run(pipeline, source, target, stream, plan, scheduler=client)
    np.testing.assert_array_equal(_zarr(target), 255 - image)
    with pytest.raises(OutputExistsError) as caught:
        cluster.run(pipeline, source, target, stream, plan, scheduler=client, overwrite=False)
    assert caught.value.path == str(target)
    np.testing.assert_array_equal(_zarr(target), 255 - image)


def test_an_empty_pipeline_copies_the_image_as_without_a_cluster(tmp_path: Path, client: Any) -> None:
    """No filter: the cluster writes the image unchanged (the file's samples), as ``stream_file`` without one does.

    The pipeline travels to the workers as a pipeline file's dict, which needs a step: it failed with
    "'steps' must be a non-empty list".
    """
    image = _texture(300, 40, 3)
    tifffile.imwrite(tmp_path / "in.tif", image, photometric="rgb")
    cvfilters.stream_file(tmp_path / "in.tif", tmp_path / "out.zarr", Pipeline([]), tile_size=64, scheduler=client)
    cvfilters.stream_file(tmp_path / "in.tif", tmp_path / "local.zarr", Pipeline([]), tile_size=64)
    np.testing.assert_array_equal(_zarr(tmp_path / "out.zarr"), image)
    np.testing.assert_array_equal(_zarr(tmp_path / "local.zarr"), image)


def test_a_streamed_run_on_a_cluster_replaces_an_older_target_and_says_where_it_ran(
        tmp_path: Path, local_cluster: Any, client: Any) -> None:
    """``streaming.run`` with a scheduler: an existing Zarr target is replaced by default, the plan that ran
    comes back, and the explain lines end naming the scheduler."""
    image, source = _tall_gray(tmp_path, 300)
    target = tmp_path / "out.zarr"
    cvfilters.stream_file(source, target, "box_blur:size=7", tile_size=64)  # an older result
    done = streaming.run(source, target, Pipeline.parse("invert"), budget=2**28, tile_size=64, workers=1,
                         scheduler=client)
    assert done.plan.tile_size == 64
    assert done.lines[-1] == f"cluster: Dask scheduler {local_cluster.scheduler_address}; written chunk by chunk"
    np.testing.assert_array_equal(_zarr(target), 255 - image)
