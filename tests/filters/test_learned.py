"""dnn_style with tiny ONNX models built here (the ``onnx`` package): the same arithmetic in numpy."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters import learned
from tests.conftest import DTYPES, FIXTURES, full_scale, photo

pytest.importorskip("onnx")


def _tiny_onnx():  # scripts/tiny_onnx.py builds the models (and the fixture)
    spec = importlib.util.spec_from_file_location("tiny_onnx", FIXTURES.parent / "scripts" / "tiny_onnx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


TINY = _tiny_onnx()
LUMA = np.array([0.114, 0.587, 0.299])


def write_model(path: Path, kernel: np.ndarray, bias: np.ndarray, **options) -> str:
    path.write_bytes(TINY.conv_model(kernel, bias, **options))
    return str(path)


def pointwise_reference(bgr: np.ndarray, weights: np.ndarray, bias: np.ndarray, low: float, high: float,
                        rgb: bool = True) -> np.ndarray:
    """tanh(W x + b) on values scaled to [low, high], in RGB (or BGR) order, back to 0..1 BGR."""
    x = (bgr[..., ::-1] if rgb else bgr) * (high - low) + low
    y = np.tanh(x @ weights.T + bias)
    out = np.clip((y - low) / (high - low), 0, 1)
    return out[..., ::-1] if rgb else out


def test_example_fixture_is_the_builders_output() -> None:
    assert (FIXTURES / "tiny-style.onnx").read_bytes() == TINY.example_model(), "run: python scripts/tiny_onnx.py"


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_pointwise_model_matches_numpy(backend: str, dtype: type) -> None:
    image = photo(24, 32, 3, dtype)
    out = cvf.apply(image, "dnn_style", model=str(FIXTURES / "tiny-style.onnx"), backend=backend)
    values = image.astype(np.float64) / full_scale(dtype)
    expected = pointwise_reference(values, TINY.EXAMPLE_WEIGHTS.astype(np.float64), TINY.EXAMPLE_BIAS, -1.0, 1.0)
    tolerance = 0.5 / full_scale(dtype) + 1e-5 if np.dtype(dtype).kind == "u" else 1e-5
    np.testing.assert_allclose(out.astype(np.float64) / full_scale(dtype), expected, atol=tolerance)


@pytest.mark.parametrize(("input_range", "low", "high"), [("0..1", 0.0, 1.0), ("0..255", 0.0, 255.0)])
def test_range_layout_and_channel_order(tmp_path: Path, input_range: str, low: float, high: float) -> None:
    weights = np.array([[0.6, 0.3, 0.0], [0.0, 0.9, 0.2], [0.1, 0.0, 0.8]], np.float32) / (high or 1)
    bias = np.array([0.1, 0.0, 0.2], np.float32) * high
    image = photo(16, 20, 3, np.float32)
    for layout in ("nchw", "nhwc"):
        for order in ("rgb", "bgr"):
            model = write_model(tmp_path / f"{layout}.onnx", weights[:, :, None, None], bias, layout=layout,
                                tanh=False)
            out = cvf.apply(image, "dnn_style", model=model, input_range=input_range, tensor_layout=layout,
                            model_order=order, backend="cpu")
            x = (image[..., ::-1] if order == "rgb" else image).astype(np.float64) * (high - low) + low
            y = np.clip((x @ weights.T.astype(np.float64) + bias - low) / (high - low), 0, 1)
            np.testing.assert_allclose(out, y[..., ::-1] if order == "rgb" else y, atol=2e-5)


def test_gray_and_alpha(backend: str) -> None:
    model = str(FIXTURES / "tiny-style.onnx")
    gray = photo(12, 14, 1, np.float32)
    out = cvf.apply(gray, "dnn_style", model=model, backend=backend)
    colour = pointwise_reference(np.repeat(gray[..., None], 3, axis=2).astype(np.float64),
                                 TINY.EXAMPLE_WEIGHTS.astype(np.float64), TINY.EXAMPLE_BIAS, -1.0, 1.0)
    np.testing.assert_allclose(out, colour @ LUMA, atol=1e-4)
    rgba = photo(12, 14, 4, np.uint8)
    np.testing.assert_array_equal(cvf.apply(rgba, "dnn_style", model=model, backend=backend)[..., 3], rgba[..., 3])


def test_tiling_equals_the_whole_image_for_a_pointwise_model() -> None:
    image = photo(45, 70, 3, np.float32)
    model = str(FIXTURES / "tiny-style.onnx")
    whole = cvf.apply(image, "dnn_style", model=model, max_side=0, backend="cpu")
    for max_side, overlap in [(16, 0), (20, 4), (33, 8)]:
        tiled = cvf.apply(image, "dnn_style", model=model, max_side=max_side, overlap=overlap, backend="cpu")
        np.testing.assert_allclose(tiled, whole, atol=1e-6)


def test_tiling_is_close_for_a_3x3_model(tmp_path: Path) -> None:
    kernel = np.random.default_rng(0).normal(0, 0.3, (3, 3, 3, 3)).astype(np.float32)
    model = write_model(tmp_path / "conv3.onnx", kernel, np.zeros(3, np.float32))
    image = photo(40, 64, 3, np.float32)
    whole = cvf.apply(image, "dnn_style", model=model, max_side=0, backend="cpu")
    # numpy/scipy reference of the untiled 3x3 model: correlation with zero padding
    x = image[..., ::-1].astype(np.float64) * 2 - 1
    y = np.stack([sum(ndimage.correlate(x[..., i], kernel[o, i].astype(np.float64), mode="constant")
                      for i in range(3)) for o in range(3)], axis=-1)
    np.testing.assert_allclose(whole, np.clip((np.tanh(y) + 1) / 2, 0, 1)[..., ::-1], atol=1e-5)
    tiled = cvf.apply(image, "dnn_style", model=model, max_side=24, overlap=2, backend="cpu")
    np.testing.assert_allclose(tiled, whole, atol=1e-5)  # the overlap covers the 1 px receptive radius
    seams = cvf.apply(image, "dnn_style", model=model, max_side=24, overlap=0, backend="cpu")
    assert 0 < np.abs(seams - whole).max() and np.abs(seams - whole).mean() < 0.02  # close, not equal


def test_size_multiple_pads_and_crops_back(tmp_path: Path) -> None:
    image = photo(13, 17, 3, np.float32)
    model = str(FIXTURES / "tiny-style.onnx")
    np.testing.assert_allclose(cvf.apply(image, "dnn_style", model=model, size_multiple=8, backend="cpu"),
                               cvf.apply(image, "dnn_style", model=model, backend="cpu"), atol=1e-6)


def test_net_is_cached_per_file_and_reloaded_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    write_model(path, np.eye(3, dtype=np.float32)[:, :, None, None], np.zeros(3, np.float32))
    first = learned.load_net(str(path))
    assert learned.load_net(str(path)) is first
    write_model(path, 0.5 * np.eye(3, dtype=np.float32)[:, :, None, None], np.zeros(3, np.float32))
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    assert learned.load_net(str(path)) is not first


def test_bad_model_files_name_the_parameter(tmp_path: Path) -> None:
    with pytest.raises(cvf.ParameterError, match=r"^dnn_style: model=.*nope.onnx cannot be read"):
        Pipeline.parse(f"dnn_style:model={tmp_path / 'nope.onnx'}")
    junk = tmp_path / "junk.onnx"
    junk.write_text("not a model")
    with pytest.raises(cvf.ParameterError, match=r"^dnn_style: model=.*junk.onnx is not an ONNX model"):
        Pipeline.parse(f"dnn_style:model={junk}")
    with pytest.raises(cvf.ParameterError, match="must exceed twice the overlap"):
        Pipeline.parse(f"dnn_style:model={FIXTURES / 'tiny-style.onnx'},max_side=64,overlap=32")


def test_dnn_target_follows_the_backend() -> None:
    assert learned.dnn_target("cpu") == "cpu"
    assert learned.dnn_target("cuda") in ("cuda", "cpu")  # cuda only where cv2.dnn lists it
