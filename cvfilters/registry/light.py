"""Linear light: run filters that mix light on linear values, then encode back.

A filter declared ``linear=True`` (:func:`cvfilters.registry.catalog.register`) averages,
interpolates or sums pixel values: blurs, resizing, warps, sharpening, pixellation. On
gamma-encoded values that darkens edges (a blurred black and white checkerboard is 128,
not the 188 that encodes half the light). With a :class:`~cvfilters.core.transfer.Transfer`
(``linear=True`` on a run, ``--linear``), runs of consecutive such steps see float32
linear values: colour is decoded once before the run and encoded once after it, alpha is
only scaled to 0..1 (it is a coverage, not light). Everything else works on the encoded
values, as OpenCV's results do.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.transfer import Transfer
from cvfilters.core.types import Image

_F32 = np.dtype(np.float32)
LABEL = "linear light"


def decode(ctx: Context, image: Image, transfer: Transfer) -> Image:
    """``image`` (of ``ctx.info``) as float32 linear light: colour decoded, alpha scaled to 0..1."""
    scale = np.float32(ctx.info.max_value)
    colour = 3 if ctx.info.channels == 4 else ctx.info.channels

    def compute(array: np.ndarray) -> np.ndarray:
        unit = array.astype(np.float32) / scale
        if unit.ndim == 3 and unit.shape[2] > colour:
            unit[..., :colour] = transfer.decode(unit[..., :colour])
            return unit
        return transfer.decode(unit)

    return ctx.backend.on_host(image, compute, LABEL)


def encode(ctx: Context, image: Image, dtype: np.dtype, transfer: Transfer) -> Image:
    """Linear float32 ``image`` (of ``ctx.info``) encoded back as ``dtype`` (rounded and saturated for integers)."""
    scale = np.float32(1.0 if dtype == _F32 else float(np.iinfo(dtype).max))
    colour = 3 if ctx.info.channels == 4 else ctx.info.channels

    def compute(array: np.ndarray) -> np.ndarray:
        out = np.array(array, np.float32)
        if out.ndim == 3 and out.shape[2] > colour:
            out[..., :colour] = transfer.encode(out[..., :colour])
        else:
            out = transfer.encode(out)
        if dtype == _F32:
            return out
        np.nan_to_num(out, copy=False)
        return np.clip(np.rint(out * scale), 0, scale).astype(dtype)

    return ctx.backend.on_host(image, compute, LABEL)


def run_linear(ctx: Context, image: Image, transfer: Transfer,
               body: Callable[[Context, Image], tuple[Image, ImageInfo]]) -> tuple[Image, ImageInfo]:
    """``body`` run on the linear float32 form of ``image``; its result encoded back to ``ctx.info``'s dtype."""
    linear = decode(ctx, image, transfer)
    out, spec = body(ctx.with_info(dtype=_F32), linear)
    return encode(Context(ctx.backend, spec), out, ctx.info.dtype, transfer), spec.with_(dtype=ctx.info.dtype)
