"""Tiny image-to-image ONNX models for tests and the ``dnn_style`` example: nothing is downloaded.

Usage: ``python scripts/tiny_onnx.py`` rewrites ``fixtures/tiny-style.onnx`` (the example
model of ``dnn_style``: a 1x1 convolution mixing the colours, a bias and a tanh, on
-1..1 values in NCHW RGB order). Tests build other models with the same functions.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "tiny-style.onnx"
OPSET = 13
# The example model: a cool, contrasty colour mix (rows: output R, G, B; columns: input R, G, B).
EXAMPLE_WEIGHTS = np.array([[1.1, 0.2, -0.1], [0.1, 1.2, 0.1], [-0.1, 0.3, 1.4]], np.float32)
EXAMPLE_BIAS = np.array([-0.1, 0.0, 0.15], np.float32)


def conv_model(kernel: np.ndarray, bias: np.ndarray, *, tanh: bool = True, layout: str = "nchw") -> bytes:
    """A serialised ONNX model: ``tanh(conv(x, kernel) + bias)`` (zero padding keeps the size).

    ``kernel`` has shape (out_channels, in_channels, k, k) with odd k; ``layout`` "nhwc"
    wraps the convolution in transposes so the model takes and returns N, H, W, C.
    """
    kernel = np.asarray(kernel, np.float32)
    k = kernel.shape[-1]
    channels_in, channels_out = kernel.shape[1], kernel.shape[0]
    nodes, first, last = [], "input", "output"
    spatial = ["height", "width"]
    if layout == "nhwc":
        nodes.append(helper.make_node("Transpose", ["input"], ["x_nchw"], perm=[0, 3, 1, 2]))
        first = "x_nchw"
    conv_out = "conv" if tanh or layout == "nhwc" else last
    nodes.append(helper.make_node("Conv", [first, "weight", "bias"], [conv_out], kernel_shape=[k, k],
                                  pads=[k // 2] * 4))
    activated = conv_out
    if tanh:
        activated = "activated" if layout == "nhwc" else last
        nodes.append(helper.make_node("Tanh", [conv_out], [activated]))
    if layout == "nhwc":
        nodes.append(helper.make_node("Transpose", [activated], [last], perm=[0, 2, 3, 1]))
    shape_in = [1, channels_in, *spatial] if layout == "nchw" else [1, *spatial, channels_in]
    shape_out = [1, channels_out, *spatial] if layout == "nchw" else [1, *spatial, channels_out]
    graph = helper.make_graph(
        nodes, "tiny_style",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape_in)],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape_out)],
        initializer=[numpy_helper.from_array(kernel, "weight"),
                     numpy_helper.from_array(np.asarray(bias, np.float32), "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="cvfilters-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def example_model() -> bytes:
    """The bytes of ``fixtures/tiny-style.onnx``."""
    return conv_model(EXAMPLE_WEIGHTS[:, :, None, None], EXAMPLE_BIAS)


def main() -> int:
    FIXTURE.write_bytes(example_model())
    print(f"{FIXTURE}: {FIXTURE.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
