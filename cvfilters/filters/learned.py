"""Learned styles: a user's image-to-image ONNX model (CartoonGAN, AnimeGAN, fast neural style) through ``cv2.dnn``.

Nothing is downloaded: ``dnn_style:model=@style.onnx`` runs the file it is given. The
declared pre- and post-processing (value range, tensor layout, channel order, a size
multiple) turns the image into the model's input tensor and its output back into an
image of the input's size, channels and dtype; images larger than ``max_side`` are cut
into overlapping tiles so memory stays bounded. The network is read once per file
(path and modification time) and ``cv2.dnn`` target and backend follow cvfilters'
backend: CUDA on ``cuda``, OpenCL on ``opencl`` (where ``cv2.dnn.getAvailableTargets``
lists them), the CPU otherwise. OpenCV 5.1's new dnn engine still runs every model on
the CPU whatever is asked ("Targets are not supported by the new graph engine for
now"), so today the request only takes effect on builds whose engine honours it. The
pixels go through the host (one counted download and upload per step on a device
backend); ``cv2.dnn`` moves them to its own target.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context
from cvfilters.core.errors import ParameterError
from cvfilters.core.files import FileRefused, shown
from cvfilters.filters._shared.model_files import check_model
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import whole
from cvfilters.registry.params import Param

FILTER = "dnn_style"
EXAMPLE = "fixtures/tiny-style.onnx"  # shown by `cvfilters info dnn_style`; relative to a checkout of the repository
RANGES = {"0..255": (0.0, 255.0), "0..1": (0.0, 1.0), "-1..1": (-1.0, 1.0)}
_TARGETS = {
    "cpu": (cv2.dnn.DNN_BACKEND_OPENCV, cv2.dnn.DNN_TARGET_CPU),
    "opencl": (cv2.dnn.DNN_BACKEND_OPENCV, cv2.dnn.DNN_TARGET_OPENCL),
    "cuda": (cv2.dnn.DNN_BACKEND_CUDA, cv2.dnn.DNN_TARGET_CUDA),
}
NET_CACHE = 8
MAX_MODEL_OUTPUT = 1 << 30  # bytes of the output tensor of one forward pass
PROBE_SIDE = 16


@dataclass(eq=False)
class LoadedNet:
    """A ``cv2.dnn`` network and the lock that keeps one forward pass at a time on it."""

    net: Any
    path: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    growth: dict[tuple[Codec, int], float] = field(default_factory=dict)


def _stamp(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError as exc:
        raise ParameterError(FILTER, "model", f"={shown(path)} cannot be read ({exc.strerror or exc})") from None


@lru_cache(maxsize=NET_CACHE)
def _read(path: str, stamp: int, target: str) -> LoadedNet:
    try:
        check_model(path)
    except FileRefused as exc:
        raise ParameterError(FILTER, "model", f"={shown(path)} {exc.reason}") from None
    try:
        net = cv2.dnn.readNetFromONNX(path)
    except cv2.error as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unreadable"
        raise ParameterError(FILTER, "model", f"={shown(path)} is not an ONNX model OpenCV can read "
                             f"({shown(reason)})") from None
    if target != "cpu":
        _prefer(net, *_TARGETS[target])
    return LoadedNet(net, path)


def _prefer(net: Any, backend: int, device: int) -> None:
    """Ask for a dnn backend and target; OpenCV 5.1's new engine ignores it (CPU only) and would log a warning."""
    logging = cv2.utils.logging
    level = logging.getLogLevel()
    logging.setLogLevel(logging.LOG_LEVEL_ERROR)
    try:
        net.setPreferableBackend(backend)
        net.setPreferableTarget(device)
    finally:
        logging.setLogLevel(level)


def load_net(path: str, target: str = "cpu") -> LoadedNet:
    """The network of an ONNX file for a cvfilters backend, read once per path, modification time and target."""
    return _read(os.path.abspath(path), _stamp(path), target)


def dnn_target(backend_name: str) -> str:
    """The ``cv2.dnn`` target for a cvfilters backend: cuda and opencl where OpenCV lists them, else cpu."""
    if backend_name in ("cuda", "opencl"):
        backend, device = _TARGETS[backend_name]
        if device in np.asarray(cv2.dnn.getAvailableTargets(backend)).ravel().tolist():
            return backend_name
    return "cpu"


# ------------------------------------------------------------------ tensors
@dataclass(frozen=True)
class Codec:
    """How images become the model's tensors and back (the declared pre/post-processing)."""

    input_range: str
    layout: str
    channel_order: str

    def encode(self, bgr: np.ndarray) -> np.ndarray:
        """A float32 BGR tile (0..1) as the model's 1-image input tensor."""
        low, high = RANGES[self.input_range]
        values = bgr[..., ::-1] if self.channel_order == "rgb" else bgr
        values = values * (high - low) + low
        tensor = values.transpose(2, 0, 1) if self.layout == "nchw" else values
        return np.ascontiguousarray(tensor[None], dtype=np.float32)

    def decode(self, tensor: np.ndarray) -> np.ndarray:
        """The model's output tensor as a float32 BGR tile, clipped to 0..1."""
        array = np.asarray(tensor, dtype=np.float32)
        if array.ndim != 4 or array.shape[0] != 1 or array.shape[1 if self.layout == "nchw" else 3] not in (1, 3):
            raise ParameterError(FILTER, "model", f"gives a tensor of shape {array.shape}; an image-to-image model "
                                 f"returns 1 x 3 x H x W (layout=nchw) or 1 x H x W x 3 (nhwc)")
        values = array[0].transpose(1, 2, 0) if self.layout == "nchw" else array[0]
        if values.shape[2] == 1:
            values = np.repeat(values, 3, axis=2)
        low, high = RANGES[self.input_range]
        values = (values - low) / (high - low)
        values = values[..., ::-1] if self.channel_order == "rgb" else values
        return np.clip(values, 0.0, 1.0)


def run_model(loaded: LoadedNet, codec: Codec, bgr: np.ndarray, size_multiple: int) -> np.ndarray:
    """One forward pass on a float32 BGR image (0..1); the result has the image's height and width.

    The image is padded (reflected) to a multiple of ``size_multiple`` on each side and
    the result cropped back; an output of another size is resized to the input's (area).
    """
    height, width = bgr.shape[:2]
    pad_h, pad_w = (-height) % size_multiple, (-width) % size_multiple
    padded = cv2.copyMakeBorder(bgr, 0, pad_h, 0, pad_w, cv2.BORDER_REFLECT_101) if pad_h or pad_w else bgr
    with loaded.lock:
        loaded.net.setInput(codec.encode(padded))
        out = codec.decode(loaded.net.forward())
    if out.shape[:2] != padded.shape[:2]:
        out = cv2.resize(out, (padded.shape[1], padded.shape[0]), interpolation=cv2.INTER_AREA)
    return out[:height, :width]


def output_growth(loaded: LoadedNet, codec: Codec, size_multiple: int) -> float:
    """How many output values the model gives per input value, from one pass on a small probe (cached).

    The probe is the smallest multiple of ``size_multiple`` of at least :data:`PROBE_SIDE` px.
    """
    key = (codec, size_multiple)
    if key not in loaded.growth:
        side = size_multiple * -(-PROBE_SIDE // size_multiple)
        with loaded.lock:
            loaded.net.setInput(codec.encode(np.zeros((side, side, 3), np.float32)))
            loaded.growth[key] = float(np.asarray(loaded.net.forward()).size) / (side * side * 3)
    return loaded.growth[key]


def check_output(loaded: LoadedNet, codec: Codec, size_multiple: int, height: int, width: int) -> None:
    """Refuse a pass on a ``height x width`` piece whose output tensor would exceed :data:`MAX_MODEL_OUTPUT`."""
    padded = (height + (-height) % size_multiple) * (width + (-width) % size_multiple) * 3
    growth = output_growth(loaded, codec, size_multiple)
    need = padded * growth * 4
    if need > MAX_MODEL_OUTPUT:
        raise ParameterError(FILTER, "model", f"={shown(loaded.path)} gives {growth:g} output values per input "
                             f"value: a {width}x{height} piece needs {need / 2**30:.1f} GiB of output, more than "
                             f"{MAX_MODEL_OUTPUT >> 30} GiB (lower max_side)")


def tiles(length: int, side: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of the cores that cut ``length`` pixels into pieces of at most ``side``, evenly."""
    count = -(-length // side)
    edges = np.linspace(0, length, count + 1).round().astype(int)
    yield from zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)


def run_tiled(loaded: LoadedNet, codec: Codec, bgr: np.ndarray, size_multiple: int, max_side: int,
              overlap: int) -> np.ndarray:
    """:func:`run_model` on tiles of at most ``max_side`` px (0: the whole image at once).

    Each tile is the core plus ``overlap`` px of its neighbours on every side (cut at the
    image's edges); only the core of each result is kept, so a model whose receptive
    field reaches at most ``overlap`` px gives the untiled result exactly, and others
    differ only near the seams.
    """
    height, width = bgr.shape[:2]
    if max_side == 0 or max(height, width) <= max_side:
        check_output(loaded, codec, size_multiple, height, width)
        return run_model(loaded, codec, bgr, size_multiple)
    check_output(loaded, codec, size_multiple, min(height, max_side), min(width, max_side))
    core = max(1, max_side - 2 * overlap)
    out = np.empty_like(bgr)
    for y0, y1 in tiles(height, core):
        for x0, x1 in tiles(width, core):
            top, left = max(0, y0 - overlap), max(0, x0 - overlap)
            piece = bgr[top:min(height, y1 + overlap), left:min(width, x1 + overlap)]
            result = run_model(loaded, codec, piece, size_multiple)
            out[y0:y1, x0:x1] = result[y0 - top:y1 - top, x0 - left:x1 - left]
    return out


# ------------------------------------------------------------------ the filter
def _check(params: dict[str, Any]) -> str | None:
    load_net(params["model"])  # raises ParameterError naming the file
    if params["max_side"] and params["max_side"] <= 2 * params["overlap"]:
        return f"max_side={params['max_side']} must exceed twice the overlap ({params['overlap']} px)"
    return None


@register(
    FILTER,
    footprint=whole('a neural network runs on the whole (resized) image'),
    category="learned",
    summary="A learned style: apply a user's image-to-image ONNX model (CartoonGAN, AnimeGAN, ...) via cv2.dnn.",
    params=[
        Param("model", "path", None, required=True, example=EXAMPLE,
              help="the .onnx file (@file.onnx or a path): 1 image in, 1 image out, the same size"),
        Param("input_range", "choice", "-1..1", choices=tuple(RANGES),
              help="value range of the model's input and output: -1..1 (GAN styles with a tanh output), "
                   "0..1, or 0..255 (PyTorch fast neural style)"),
        Param("tensor_layout", "choice", "nchw", choices=("nchw", "nhwc"),
              help="tensor layout: nchw (PyTorch exports) or nhwc (TensorFlow exports)"),
        Param("model_order", "choice", "rgb", choices=("rgb", "bgr"),
              help="channel order the model expects: rgb or bgr"),
        Param("size_multiple", "int", 1, min=1, max=256, unit="px",
              help="the model needs sides that are multiples of this (GANs often 4, 8 or 32): the image is "
                   "padded by reflection and the result cropped back"),
        Param("max_side", "int", 1024, min=0, max=16384, unit="px",
              help="larger images run in tiles of at most this side (memory); 0 = always the whole image"),
        Param("overlap", "int", 32, min=0, max=1024, unit="px",
              help="context each tile takes from its neighbours; at least the model's receptive radius "
                   "makes tiling invisible"),
    ],
    check=_check,
)
def dnn_style(ctx: Context, img: Any, *, model: str, input_range: str, tensor_layout: str, model_order: str,
              size_multiple: int, max_side: int, overlap: int) -> Any:
    """``out = decode(net(encode(in)))`` with ``cv2.dnn.readNetFromONNX(model)``.

    ``encode`` scales 0..1 values to ``input_range``, reorders B, G, R to
    ``model_order`` and lays the tile out as ``tensor_layout`` (1 x 3 x H x W or 1 x H x W x 3,
    float32); ``decode`` undoes all three on the output (assumed in the same range and
    layout, clipped). Images whose longer side exceeds ``max_side`` run in overlapping
    tiles (see ``overlap``); ``size_multiple`` pads each run by reflection. Gray images go
    in as (v, v, v) and come back as the BT.601 luma; alpha passes through; the dtype is
    kept (uint8, uint16 and float32). The network is read once per file (path and
    modification time); cv2.dnn is asked for its CUDA target on the cuda backend and
    OpenCL on the opencl backend (OpenCV 5.1's engine runs on the CPU regardless).
    """
    spec = ctx.info
    loaded = load_net(model, dnn_target(ctx.backend.name))
    codec = Codec(input_range, tensor_layout, model_order)

    def compute(host: np.ndarray) -> np.ndarray:
        values = host.reshape(spec.height, spec.width, spec.channels).astype(np.float32) / np.float32(spec.max_value)
        bgr = np.repeat(values, 3, axis=2) if spec.channels == 1 else values
        out = run_tiled(loaded, codec, np.ascontiguousarray(bgr), size_multiple, max_side, overlap)
        if spec.channels == 1:
            out = cv2.cvtColor(out, cv2.COLOR_BGR2GRAY)
        if spec.dtype == np.float32:
            return out.astype(np.float32)
        return np.rint(out * spec.max_value).astype(spec.dtype)

    return ctx.backend.on_host(img, compute, "dnn_style (cv2.dnn, pixels via host)")


__all__ = ["Codec", "check_output", "dnn_style", "dnn_target", "load_net", "output_growth", "run_model", "run_tiled",
           "tiles"]
