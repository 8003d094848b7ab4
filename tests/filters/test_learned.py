"""dnn_style with tiny ONNX models built here (the ``onnx`` package): the same arithmetic in numpy."""

from __future__ import annotations

import errno
import importlib.util
import os
import re
from pathlib import Path

import cv2
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


def conv3_reference(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """A 3x3 ONNX Conv on an H x W x C array: correlation with zero padding (scipy), float64."""
    return np.stack([sum(ndimage.correlate(x[..., i], kernel[o, i].astype(np.float64), mode="constant")
                         for i in range(x.shape[2])) for o in range(kernel.shape[0])], axis=-1)


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


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_a_gray_image_goes_in_as_three_equal_channels_whole_and_in_tiles(tmp_path: Path, layout: str) -> None:
    """uint8 gray through a model that mixes its channels: the luma of the (v, v, v) result, rounded, in tiles too.

    Catches gray handed in as four channels, and float64 values (which the tiles' gray conversion refuses).
    """
    weights = np.array([[0.6, 0.3, 0.0], [0.0, 0.9, 0.2], [0.1, 0.0, 0.8]], np.float32)
    bias = np.array([0.1, 0.0, 0.2], np.float32)
    model = write_model(tmp_path / f"{layout}.onnx", weights[:, :, None, None], bias, layout=layout)
    gray = photo(30, 44, 1, np.uint8)
    colour = pointwise_reference(np.repeat(gray[..., None] / 255.0, 3, axis=2), weights.astype(np.float64), bias,
                                 -1.0, 1.0)
    for max_side, overlap in [(0, 0), (16, 4)]:
        out = cvf.apply(gray, "dnn_style", model=model, tensor_layout=layout, max_side=max_side, overlap=overlap,
                        backend="cpu")
        assert out.dtype == np.uint8 and out.shape == gray.shape
        assert np.abs(out - colour @ LUMA * 255).max() <= 0.5 + 1e-3, (max_side, overlap)


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
    y = conv3_reference(image[..., ::-1].astype(np.float64) * 2 - 1, kernel)
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


def test_a_max_side_just_over_twice_the_overlap_is_accepted() -> None:
    Pipeline.parse(f"dnn_style:model={FIXTURES / 'tiny-style.onnx'},max_side=63,overlap=31")  # 63 > 2 x 31


def test_an_unreadable_model_names_the_systems_reason(tmp_path: Path) -> None:
    missing = tmp_path / "nope.onnx"
    reason = os.strerror(errno.ENOENT)  # "No such file or directory", not Python's "[Errno 2] ... 'path'"
    with pytest.raises(cvf.ParameterError, match=f"^dnn_style: model={re.escape(str(missing))} cannot be read "
                                                 rf"\({re.escape(reason)}\)$"):
        learned.load_net(str(missing))


def test_model_names_in_messages_are_escaped_as_ls_b(tmp_path: Path) -> None:
    junk = tmp_path / "junk\n\033[2J.onnx"  # a newline and a terminal escape in the name
    junk.write_text("not a model")
    for path, problem in [(tmp_path / "nope\n\033[2J.onnx", "cannot be read"), (junk, "is not an ONNX model")]:
        with pytest.raises(cvf.ParameterError) as caught:
            learned.load_net(str(path))
        assert f"{path.name[:4]}\\n\\033[2J.onnx {problem}" in str(caught.value)
        assert str(caught.value).isprintable()


def test_a_broken_model_file_is_refused_in_one_line_naming_the_filter_parameter_and_file(tmp_path: Path) -> None:
    """A model whose weights point outside its folder, or a folder named like a model: one line, the file named.

    Catches a refusal that names another filter or parameter, drops the file, or fails with another error.
    """
    onnx = pytest.importorskip("onnx")
    model = onnx.load_model_from_string(TINY.conv_model(np.eye(3, dtype=np.float32)[:, :, None, None],
                                                        np.zeros(3, np.float32)))
    weight = model.graph.initializer[0]
    weight.ClearField("raw_data")
    weight.ClearField("float_data")
    weight.data_location = onnx.TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "/etc/hostname"
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(model.SerializeToString())
    folder = tmp_path / "style.onnx"
    folder.mkdir()
    for path, problem in [
        (broken, f"external data '/etc/hostname' of tensor '{weight.name}' is not a relative name inside the "
                 "model's folder"),
        (folder, "is a directory, not a regular file"),
    ]:
        with pytest.raises(cvf.ParameterError) as caught:
            Pipeline.parse(f"dnn_style:model={path}")
        assert str(caught.value) == f"dnn_style: model={path} {problem}"
        assert (caught.value.filter_name, caught.value.param) == ("dnn_style", "model")


def test_a_file_opencv_cannot_read_is_refused_with_opencvs_reason(tmp_path: Path) -> None:
    """The refusal quotes what cv2.dnn itself says of the file (not a fixed word in its place)."""
    junk = tmp_path / "junk.onnx"
    junk.write_text("not a model")
    with pytest.raises(cv2.error) as opencv:
        cv2.dnn.readNetFromONNX(str(junk))
    reason = str(opencv.value).strip()
    assert "\n" not in reason and reason
    with pytest.raises(cvf.ParameterError) as caught:
        Pipeline.parse(f"dnn_style:model={junk}")
    assert str(caught.value) == f"dnn_style: model={junk} is not an ONNX model OpenCV can read ({reason})"


def test_the_output_bound_names_the_model_file_dnn_style_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """A piece over the output bound names the file the network was read from (not None, not nothing)."""
    model = str(FIXTURES / "tiny-style.onnx")
    monkeypatch.setattr(learned, "MAX_MODEL_OUTPUT", 1 << 12)  # 4 KiB: a 30 x 16 piece of a 1:1 model is 5.6 KiB
    with pytest.raises(cvf.ParameterError, match=f"^dnn_style: model={re.escape(os.path.abspath(model))} gives 1 "
                                                 "output values per input value: a 30x16 piece needs"):
        cvf.apply(photo(16, 30, 3, np.float32), "dnn_style", model=model, backend="cpu")


def test_on_a_device_cv2_dnn_is_asked_for_its_target_and_the_pixels_make_one_counted_trip(
        device_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """opencl asks the network for OpenCV's OpenCL target, cuda for CUDA (where cv2.dnn lists them); cpu asks nothing.

    Catches the target left at the CPU on a device (or asked of no network), a cpu network forced to OpenCV's
    backend, and a host trip counted without the step's label.
    """
    dnn = cv2.dnn
    listed = {dnn.DNN_BACKEND_OPENCV: (dnn.DNN_TARGET_CPU, dnn.DNN_TARGET_OPENCL),
              dnn.DNN_BACKEND_CUDA: (dnn.DNN_TARGET_CUDA,)}
    monkeypatch.setattr(dnn, "getAvailableTargets", lambda backend: listed.get(backend, ()))
    asked: list[tuple[object, int, int]] = []
    prefer = learned._prefer

    def recorded(net: object, backend: int, target: int) -> None:
        asked.append((net, backend, target))
        prefer(net, backend, target)

    monkeypatch.setattr(learned, "_prefer", recorded)
    model = tmp_path / "style.onnx"  # a file of its own: no network read by another test
    model.write_bytes((FIXTURES / "tiny-style.onnx").read_bytes())
    image = photo(12, 14, 3, np.uint8)
    pipe = Pipeline.parse(f"dnn_style:model={model}")  # the check reads the file for the cpu target
    assert not asked  # the cpu network keeps cv2.dnn's default backend (a build may make it another engine)
    out, report = pipe.run(image, backend=device_backend)
    during = list(asked)
    expected = {"opencl": (dnn.DNN_BACKEND_OPENCV, dnn.DNN_TARGET_OPENCL),
                "cuda": (dnn.DNN_BACKEND_CUDA, dnn.DNN_TARGET_CUDA)}
    net = learned.load_net(str(model), device_backend).net  # the network the run read (cached)
    assert [(n is net, b, t) for n, b, t in during] == [(True, *expected[device_backend])]
    assert report.counters.fallbacks == {"dnn_style (cv2.dnn, pixels via host)": 1}
    assert out.shape == image.shape and out.dtype == np.uint8


def test_dnn_target_follows_the_backend() -> None:
    assert learned.dnn_target("cpu") == "cpu"
    listed = cv2.dnn.getAvailableTargets(cv2.dnn.DNN_BACKEND_OPENCV)  # cv2 asked directly: parity on this machine
    assert learned.dnn_target("opencl") == ("opencl" if cv2.dnn.DNN_TARGET_OPENCL in listed else "cpu")
    assert learned.dnn_target("cuda") in ("cuda", "cpu")  # cuda only where cv2.dnn lists it


def test_dnn_target_asks_cv2_dnn_for_each_backends_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    dnn = cv2.dnn
    listed = {dnn.DNN_BACKEND_OPENCV: (dnn.DNN_TARGET_CPU, dnn.DNN_TARGET_OPENCL),
              dnn.DNN_BACKEND_CUDA: (dnn.DNN_TARGET_CUDA, dnn.DNN_TARGET_CUDA_FP16)}
    monkeypatch.setattr(dnn, "getAvailableTargets", lambda backend: listed.get(backend, ()))
    assert [learned.dnn_target(name) for name in ("cpu", "opencl", "cuda")] == ["cpu", "opencl", "cuda"]
    listed = {dnn.DNN_BACKEND_OPENCV: (dnn.DNN_TARGET_CPU,)}  # a build without OpenCL or CUDA in dnn
    assert [learned.dnn_target(name) for name in ("cpu", "opencl", "cuda")] == ["cpu", "cpu", "cpu"]


def test_prefer_asks_for_the_target_with_opencv_logging_quietened() -> None:
    logging = cv2.utils.logging
    calls = []

    class Net:
        def setPreferableBackend(self, value: int) -> None:
            calls.append(("backend", value, logging.getLogLevel()))

        def setPreferableTarget(self, value: int) -> None:
            calls.append(("target", value, logging.getLogLevel()))

    before = logging.getLogLevel()
    try:
        logging.setLogLevel(logging.LOG_LEVEL_WARNING)
        learned._prefer(Net(), cv2.dnn.DNN_BACKEND_CUDA, cv2.dnn.DNN_TARGET_CUDA)
        assert logging.getLogLevel() == logging.LOG_LEVEL_WARNING  # restored afterwards
    finally:
        logging.setLogLevel(before)
    assert calls == [("backend", cv2.dnn.DNN_BACKEND_CUDA, logging.LOG_LEVEL_ERROR),
                     ("target", cv2.dnn.DNN_TARGET_CUDA, logging.LOG_LEVEL_ERROR)]


# ------------------------------------------------------------------ the pieces, on stand-in or wrapped nets
class FakeNet:
    """Stands in for a cv2.dnn net: keeps each input tensor and answers ``respond(tensor)``."""

    def __init__(self, respond) -> None:
        self.respond = respond
        self.inputs: list[np.ndarray] = []

    def setInput(self, tensor: np.ndarray) -> None:
        self.inputs.append(np.array(tensor))

    def forward(self) -> np.ndarray:
        return self.respond(self.inputs[-1])


class Recorder(FakeNet):
    """A real cv2.dnn net that also keeps the shape of each input it is given."""

    def __init__(self, path: str) -> None:
        net = learned.load_net(path).net
        super().__init__(lambda tensor: (net.setInput(tensor), net.forward())[1])


def test_codec_encodes_a_hand_checked_tile_as_float32() -> None:
    tile = np.array([[[0.0, 0.5, 1.0], [1.0, 0.25, 0.0]]])  # 1 x 2 BGR, float64 on purpose
    tensor = learned.Codec("0..255", "nchw", "rgb").encode(tile)
    assert tensor.dtype == np.float32 and tensor.flags.c_contiguous
    np.testing.assert_array_equal(tensor, [[[[255.0, 0.0]], [[127.5, 63.75]], [[0.0, 255.0]]]])  # R, G, B planes
    np.testing.assert_array_equal(learned.Codec("-1..1", "nhwc", "bgr").encode(tile),
                                  [[[[-1.0, 0.0, 1.0], [1.0, -0.5, -1.0]]]])


def test_codec_decodes_hand_checked_tensors_clipped_and_as_float32() -> None:
    # R, G, B planes of a 1 x 2 output on -1..1: R = (-1, 3), G = (0, 0.5), B = (1, -2)
    tensor = np.array([[[[-1.0, 3.0]], [[0.0, 0.5]], [[1.0, -2.0]]]])
    tile = learned.Codec("-1..1", "nchw", "rgb").decode(tensor)
    assert tile.dtype == np.float32 and tile.shape == (1, 2, 3)
    np.testing.assert_array_equal(tile, [[[1.0, 0.5, 0.0], [0.0, 0.75, 1.0]]])  # BGR, 2 -> 1 and -0.5 -> 0
    gray = learned.Codec("0..255", "nhwc", "rgb").decode(np.array([[[[51.0], [510.0]]]], np.float32))
    assert gray.shape == (1, 2, 3)  # one output channel is gray: the same value in B, G and R
    np.testing.assert_allclose(gray, [[[0.2, 0.2, 0.2], [1.0, 1.0, 1.0]]], atol=1e-7)


@pytest.mark.parametrize(("layout", "shape"), [("nchw", (1, 2, 4, 4)), ("nchw", (2, 3, 4, 4)), ("nchw", (1, 3, 4)),
                                               ("nhwc", (1, 4, 4, 2)), ("nhwc", (1, 4, 4))])
def test_codec_refuses_tensors_that_are_not_one_image(layout: str, shape: tuple[int, ...]) -> None:
    with pytest.raises(cvf.ParameterError) as caught:
        learned.Codec("-1..1", layout, "rgb").decode(np.zeros(shape, np.float32))
    assert str(caught.value) == (f"dnn_style: model gives a tensor of shape {shape}; an image-to-image model returns "
                                 "1 x 3 x H x W (layout=nchw) or 1 x H x W x 3 (nhwc)")
    assert (caught.value.filter_name, caught.value.param) == ("dnn_style", "model")


def test_a_one_channel_model_gives_gray_in_all_three_channels(tmp_path: Path) -> None:
    weights = np.array([[0.299, 0.587, 0.114]], np.float32)  # R, G, B in -> one channel out
    model = write_model(tmp_path / "luma.onnx", weights[:, :, None, None], np.zeros(1, np.float32), tanh=False)
    image = photo(10, 12, 3, np.float32)
    out = cvf.apply(image, "dnn_style", model=model, input_range="0..1", backend="cpu")
    expected = image.astype(np.float64) @ LUMA  # the image is BGR
    np.testing.assert_allclose(out, np.repeat(expected[..., None], 3, axis=2), atol=2e-6)


@pytest.mark.parametrize(("height", "width", "rows", "columns"), [(13, 17, 16, 24), (16, 17, 16, 24), (13, 16, 16, 16)])
def test_run_model_pads_by_reflection_to_the_multiple(tmp_path: Path, height: int, width: int, rows: int,
                                                      columns: int) -> None:
    kernel = np.random.default_rng(1).normal(0, 0.3, (3, 3, 3, 3)).astype(np.float32)
    net = Recorder(write_model(tmp_path / "conv3.onnx", kernel, np.zeros(3, np.float32)))
    image = photo(height, width, 3, np.float32)
    out = learned.run_model(learned.LoadedNet(net), learned.Codec("-1..1", "nchw", "rgb"), image, 8)
    assert [x.shape for x in net.inputs] == [(1, 3, rows, columns)]  # the next multiples of 8
    # OpenCV's BORDER_REFLECT_101 is numpy's "reflect": the pad mirrors the edge without repeating it
    padded = np.pad(image.astype(np.float64), ((0, rows - height), (0, columns - width), (0, 0)), mode="reflect")
    y = np.tanh(conv3_reference(padded[..., ::-1] * 2 - 1, kernel))
    np.testing.assert_allclose(out, ((y + 1) / 2)[..., ::-1][:height, :width], atol=1e-5)


def test_run_model_resizes_an_output_of_another_size_by_area() -> None:
    big = np.random.default_rng(2).random((1, 3, 15, 21)).astype(np.float32)  # 3 x the 5 x 7 input
    net = FakeNet(lambda tensor: big)
    out = learned.run_model(learned.LoadedNet(net), learned.Codec("0..1", "nchw", "bgr"), np.zeros((5, 7, 3)), 1)
    blocks = big[0].transpose(1, 2, 0).astype(np.float64).reshape(5, 3, 7, 3, 3).mean(axis=(1, 3))  # 3 x 3 means
    assert out.shape == (5, 7, 3)
    np.testing.assert_allclose(out, blocks, atol=1e-6)


def test_output_growth_is_measured_on_a_zero_probe_once_per_codec_and_multiple() -> None:
    net = FakeNet(lambda tensor: np.zeros((1, 3, 8, 8), np.float32))  # 192 values whatever the input
    loaded, codec = learned.LoadedNet(net), learned.Codec("0..1", "nchw", "rgb")
    assert learned.output_growth(loaded, codec, 1) == 192 / (16 * 16 * 3)
    assert learned.output_growth(loaded, codec, 12) == 192 / (24 * 24 * 3)  # 24: the multiple of 12 from 16 px
    assert learned.output_growth(loaded, codec, 1) == 192 / (16 * 16 * 3)
    assert [x.shape for x in net.inputs] == [(1, 3, 16, 16), (1, 3, 24, 24)]  # the third call was cached
    assert not any(x.any() for x in net.inputs)
    upscale = FakeNet(lambda tensor: np.zeros((1, 3, 2 * tensor.shape[2], 2 * tensor.shape[3]), np.float32))
    assert learned.output_growth(learned.LoadedNet(upscale), codec, 1) == 4.0  # a 2x model: 4 values per value


def huge_output_net() -> learned.LoadedNet:
    """A model giving 2**24 values for the 16 x 16 x 3 probe: 2**24 / 768 per value; a 64 x 64 piece is 1 GiB."""
    def respond(tensor: np.ndarray) -> np.ndarray:
        assert tensor.shape == (1, 3, 16, 16), "only the probe may run"
        return np.broadcast_to(np.float32(0), (1, 1, 4096, 4096))  # no memory behind it
    return learned.LoadedNet(FakeNet(respond), "m.onnx")


@pytest.mark.parametrize(("multiple", "height", "width", "fits"), [
    (1, 64, 64, True),  # 64 x 64 x 3 x 2**24/768 x 4 bytes = exactly 2**30
    (1, 64, 65, False),
    (8, 57, 64, True),  # padded to 64 x 64
    (8, 49, 80, False),  # padded to 56 x 80 (49 x 80 would fit)
    (8, 80, 49, False),
])
def test_check_output_counts_the_padded_piece(multiple: int, height: int, width: int, fits: bool) -> None:
    loaded, codec = huge_output_net(), learned.Codec("-1..1", "nchw", "rgb")
    if fits:
        learned.check_output(loaded, codec, multiple, height, width)
    else:
        with pytest.raises(cvf.ParameterError, match="GiB of output"):
            learned.check_output(loaded, codec, multiple, height, width)


def test_check_output_message_names_growth_piece_and_sizes() -> None:
    with pytest.raises(cvf.ParameterError) as caught:
        learned.check_output(huge_output_net(), learned.Codec("-1..1", "nchw", "rgb"), 1, 96, 128)
    assert str(caught.value) == ("dnn_style: model=m.onnx gives 21845.3 output values per input value: a 128x96 "
                                 "piece needs 3.0 GiB of output, more than 1 GiB (lower max_side)")
    assert (caught.value.filter_name, caught.value.param) == ("dnn_style", "model")


def test_run_tiled_refuses_a_whole_image_over_the_output_bound() -> None:
    with pytest.raises(cvf.ParameterError, match="a 64x65 piece needs"):
        learned.run_tiled(huge_output_net(), learned.Codec("-1..1", "nchw", "rgb"), np.zeros((65, 64, 3), np.float32),
                          1, 0, 0)


@pytest.mark.parametrize(("height", "width", "max_side", "overlap", "pieces"), [
    (20, 30, 0, 4, [(20, 30)]),  # 0: always the whole image
    (20, 30, 30, 4, [(20, 30)]),  # the longer side equals max_side: one pass
    # cores of 20 (24 - 2 x 2): rows 0-20, 20-40; columns 0-16, 16-32, 32-48, 48-64, each with 2 px around
    (40, 64, 24, 2, [(22, 18), (22, 20), (22, 20), (22, 18)] * 2),
])
def test_run_tiled_cuts_pieces_of_core_plus_overlap(height: int, width: int, max_side: int, overlap: int,
                                                    pieces: list[tuple[int, int]]) -> None:
    net = Recorder(str(FIXTURES / "tiny-style.onnx"))
    image = photo(height, width, 3, np.float32)
    learned.run_tiled(learned.LoadedNet(net), learned.Codec("-1..1", "nchw", "rgb"), image, 1, max_side, overlap)
    assert [x.shape for x in net.inputs] == [(1, 3, 16, 16)] + [(1, 3, *piece) for piece in pieces]  # probe first


def test_run_tiled_keeps_every_piece_within_max_side() -> None:
    net = Recorder(str(FIXTURES / "tiny-style.onnx"))
    learned.run_tiled(learned.LoadedNet(net), learned.Codec("-1..1", "nchw", "rgb"), photo(8, 8, 3, np.float32),
                      1, 5, 2)  # cores of 1 px: 5 - 2 x 2
    assert len(net.inputs) == 1 + 8 * 8 and max(max(x.shape[2:]) for x in net.inputs[1:]) == 5
