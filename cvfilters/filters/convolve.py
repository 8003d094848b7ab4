"""Custom operators: convolution with any kernel, and the named operators built on it.

Kernels are data. The built-in kernels are declared once, in :data:`KERNELS` (fixed
matrices) and a few builders for parametric families (:func:`derivative_kernel`,
:func:`gaussian_kernel`, :func:`emboss_kernel`, :func:`line_kernel`). Every operator,
``convolve`` with a user's kernel as much as ``sobel`` or ``motion_blur``, runs them
through one generic path, :func:`correlate`:

- the kernel is made odd-sized so its anchor is its centre (see :func:`prepare_kernel`);
- a rank-1 kernel (singular values ``s2 <= 1e-6 * s1``) of at least 3 x 3 runs as two
  1-D passes (``sep_filter2d``), anything else as one 2-D pass (``filter2d``);
- ``border=wrap``, which OpenCV's filters reject, pads and crops (``with_border``).

Depth policy: filters compute in float32. A result stored in an integer image is
rounded to nearest and saturated to ``[0, full scale]`` (so negative responses become
0); float32 results are stored as computed, negative values included. Operators whose
response is signed either store its absolute value (``absolute=true``, what
``cv2.convertScaleAbs`` does) or add a mid-grey ``bias`` of 0.5.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from cvfilters.backends import auto_gaussian_ksize
from cvfilters.core.context import Context
from cvfilters.filters._shared.common import border_param
from cvfilters.filters._shared.correlation import gaussian_blurred, prepare_kernel, respond
from cvfilters.filters._shared.kernels import (
    EMBOSS_LIGHT,
    KernelData,
    derivative_kernel,
    emboss_kernel,
    kernel,
    laplacian_kernel,
)
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import square
from cvfilters.registry.params import Param


# ----------------------------------------------------------------------------- convolve
def _check_convolve(params: dict[str, Any]) -> str | None:
    total = sum(map(sum, params["kernel"]))
    if params["normalize"] and not (1e-12 <= abs(total) < float("inf")):
        return "normalize=true needs a kernel whose values do not sum to 0 and whose sum is finite"
    return None


@register(
    footprint=square(lambda p, spec: max(np.shape(p["kernel"])) // 2 + 1),
    linear=True,
    category="convolve",
    summary="Correlate or convolve with any 2-D kernel, plus bias and scale.",
    params=[
        Param("kernel", "kernel", None, required=True, example=((0, -1, 0), (-1, 5, -1), (0, -1, 0)),
              help="2-D matrix: [[0,-1,0],[-1,5,-1],[0,-1,0]], or @file (.txt/.csv rows, .npy, .json)"),
        Param("mode", "choice", "correlate", choices=("correlate", "convolve"),
              help="correlate applies the kernel as written (cv2.filter2D); convolve flips it in x and y first"),
        Param("normalize", "bool", False, help="divide the kernel by the sum of its values"),
        Param("bias", "float", 0.0, min=-1.0, max=1.0, unit="fraction of full scale",
              help="added after filtering: 0.5 is 128 for uint8, 32768 for uint16, 0.5 for float32"),
        Param("scale", "float", 1.0, min=-1000.0, max=1000.0, help="multiplies the kernel (after normalize)"),
        Param("absolute", "bool", False,
              help="store |response| (then add bias) instead of clipping negative responses to 0"),
        border_param(),
    ],
    alpha="premultiply",
    check=_check_convolve,
)
def convolve(ctx: Context, img: Any, *, kernel: KernelData, mode: str, normalize: bool, bias: float,
             scale: float, absolute: bool, border: str) -> Any:
    """``out = saturate(scale * (kernel (*) in) + bias * full_scale)``.

    ``(*)`` is correlation with ``mode=correlate`` (what ``cv2.filter2D`` computes,
    ``out(x, y) = sum k(i, j) * in(x + i - ax, y + j - ay)``, the kernel applied as
    written) or true convolution with ``mode=convolve`` (the kernel flipped in x and y
    first, as ``scipy.ndimage.convolve``). The anchor ``(ax, ay)`` is the kernel's centre
    ``(w // 2, h // 2)``; for an even side under ``mode=convolve`` it is that of the
    flipped kernel, ``w // 2 - 1``. Pixels outside the image come from the ``border``
    mode. ``normalize`` divides the kernel by its sum before ``scale``.

    Depth: computed in float32. Integer images round and saturate, so negative
    responses become 0; for signed output add ``bias=0.5`` (mid-grey is zero) or set
    ``absolute=true`` (``out = saturate(|scale * (kernel (*) in)| + bias)``). Float32
    images keep negative values. Rank-1 kernels (3 x 3 and up) run as two 1-D passes.
    """
    matrix = prepare_kernel(kernel, mode=mode, normalize=normalize)
    return respond(ctx, img, (matrix,), border, output="absolute" if absolute else "clip", scale=scale, bias=bias)


# ----------------------------------------------------------------------------- derivatives
def _check_sobel(params: dict[str, Any]) -> str | None:
    if params["magnitude"]:
        return None
    if params["dx"] + params["dy"] == 0:
        return "dx + dy must be at least 1 (or set magnitude=true)"
    if params["ksize"] > 1 and max(params["dx"], params["dy"]) >= params["ksize"]:
        return f"derivative order {max(params['dx'], params['dy'])} needs ksize > order"
    return None


@register(
    footprint=square(lambda p, spec: p["ksize"] // 2 + 1),
    unbounded=True,
    category="convolve",
    summary="Sobel derivative (absolute value) or gradient magnitude.",
    params=[
        Param("dx", "int", 1, min=0, max=2, help="order of the derivative in x"),
        Param("dy", "int", 0, min=0, max=2, help="order of the derivative in y"),
        Param("ksize", "int", 3, min=1, max=7, odd=True, unit="px",
              help="aperture: 1 (no smoothing, [-1,0,1]), 3, 5 or 7"),
        Param("magnitude", "bool", False, help="sqrt(Gx^2 + Gy^2) of the first derivatives; dx, dy are ignored"),
        Param("scale", "float", 1.0, min=0.0, max=1000.0, help="multiplies the result before saturation"),
        border_param(),
    ],
    alpha="premultiply",
    check=_check_sobel,
)
def sobel(ctx: Context, img: Any, *, dx: int, dy: int, ksize: int, magnitude: bool, scale: float,
          border: str) -> Any:
    """``out = saturate(scale * |D * in|)``, D the Sobel kernel of ``cv2.Sobel(dx, dy, ksize)``.

    With ``magnitude=true``: ``saturate(scale * sqrt((Sx * in)^2 + (Sy * in)^2))`` of the
    first derivatives. The kernels are binomial smoothing times repeated differences
    (``[1,2,1]`` x ``[-1,0,1]`` for ksize 3), computed in float32; the absolute value
    keeps one convention for every dtype (like ``cv2.convertScaleAbs``).
    """
    if magnitude:
        kernels = (derivative_kernel(1, 0, ksize), derivative_kernel(0, 1, ksize))
        return respond(ctx, img, kernels, border, output="magnitude", scale=scale)
    return respond(ctx, img, (derivative_kernel(dx, dy, ksize),), border, output="absolute", scale=scale)


def _gradient_params(default_scale: float = 1.0) -> list[Param]:
    return [
        Param("direction", "choice", "magnitude", choices=("magnitude", "x", "y"),
              help="x: |d/dx| (vertical edges), y: |d/dy| (horizontal edges), magnitude: sqrt(Gx^2 + Gy^2)"),
        Param("scale", "float", default_scale, min=0.0, max=1000.0, help="multiplies the result before saturation"),
        border_param(),
    ]


def _gradient(ctx: Context, img: Any, name: str, direction: str, scale: float, border: str) -> Any:
    if direction == "magnitude":
        return respond(ctx, img, (kernel(f"{name}_x"), kernel(f"{name}_y")), border, output="magnitude", scale=scale)
    return respond(ctx, img, (kernel(f"{name}_{direction}"),), border, output="absolute", scale=scale)


@register(category="convolve", summary="Scharr derivative: rotation-accurate 3x3 gradient (absolute or magnitude).",
          footprint=square(lambda p, spec: 1), params=_gradient_params(0.25), alpha="premultiply", unbounded=True)
def scharr(ctx: Context, img: Any, *, direction: str, scale: float, border: str) -> Any:
    """``out = saturate(scale * |G|)`` with ``Gx = [[-3,0,3],[-10,0,10],[-3,0,3]] * in``, ``Gy`` its transpose.

    ``|G|`` is ``|Gx|``, ``|Gy|`` or ``sqrt(Gx^2 + Gy^2)`` (``direction``); the same
    kernel as ``cv2.Scharr``, so a step of height h gives 16 h (the default scale 0.25 brings
    that to Sobel's 4 h).
    """
    return _gradient(ctx, img, "scharr", direction, scale, border)


@register(category="convolve", summary="Prewitt derivative: unweighted 3x3 gradient (absolute or magnitude).",
          footprint=square(lambda p, spec: 1), params=_gradient_params(), alpha="premultiply", unbounded=True)
def prewitt(ctx: Context, img: Any, *, direction: str, scale: float, border: str) -> Any:
    """``out = saturate(scale * |G|)`` with ``Gx = [[-1,0,1],[-1,0,1],[-1,0,1]] * in``, ``Gy`` its transpose.

    ``|G|`` is ``|Gx|``, ``|Gy|`` or ``sqrt(Gx^2 + Gy^2)`` (``direction``); a step of
    height h gives 3 h.
    """
    return _gradient(ctx, img, "prewitt", direction, scale, border)


@register(
    footprint=square(lambda p, spec: max(1, p["ksize"] // 2)),
    unbounded=True,
    category="convolve",
    summary="Laplacian (sum of second derivatives), absolute or signed.",
    params=[
        Param("ksize", "int", 1, min=1, max=7, odd=True, unit="px",
              help="aperture: 1 is [[0,1,0],[1,-4,1],[0,1,0]]; 3, 5, 7 add Sobel smoothing (cv2.Laplacian)"),
        Param("scale", "float", 2.0, min=0.0, max=1000.0, help="multiplies the response"),
        Param("absolute", "bool", True, help="store |response|; false clips negative responses (use bias=0.5)"),
        Param("bias", "float", 0.0, min=-1.0, max=1.0, unit="fraction of full scale",
              help="added after scaling; 0.5 shows the signed response around mid-grey"),
        border_param(),
    ],
    alpha="premultiply",
)
def laplacian(ctx: Context, img: Any, *, ksize: int, scale: float, absolute: bool, bias: float, border: str) -> Any:
    """``out = saturate(|scale * (L * in)| + bias)`` (or without ``|.|`` when ``absolute=false``).

    ``L`` is ``cv2.Laplacian``'s kernel: ``[[0,1,0],[1,-4,1],[0,1,0]]`` for ksize 1,
    else ``d2/dx2 + d2/dy2`` of the Sobel kernels of that aperture
    (``[[2,0,2],[0,-8,0],[2,0,2]]`` for 3). ``bias`` is a fraction of full scale.
    """
    return respond(ctx, img, (laplacian_kernel(ksize),), border, output="absolute" if absolute else "clip",
                   scale=scale, bias=bias)


@register(
    footprint=square(lambda p, spec: 1),
    unbounded=True,
    category="convolve",
    summary="Edges: gradient magnitude per channel, like Core Image's CIEdges.",
    params=[
        Param("intensity", "float", 2.0, min=0.0, max=100.0,
              help="multiplies the gradient magnitude; 1 maps a step of height h to about h"),
        border_param(),
    ],
    alpha="premultiply",
)
def edges(ctx: Context, img: Any, *, intensity: float, border: str) -> Any:
    """``out = saturate(intensity * sqrt(Gx^2 + Gy^2))``, ``Gx, Gy`` the 3x3 Sobel derivatives / 4.

    Dividing Sobel by 4 (its smoothing weights sum to 4) makes a step edge of height
    ``h`` respond with ``h``; each channel keeps its own edges, so colour edges stay
    coloured on black.
    """
    kernels = (derivative_kernel(1, 0, 3) / 4.0, derivative_kernel(0, 1, 3) / 4.0)
    return respond(ctx, img, kernels, border, output="magnitude", scale=intensity)


# ----------------------------------------------------------------------------- enhancement
@register(
    footprint=square(lambda p, spec: 1),
    unbounded=True,
    category="convolve",
    summary="Emboss: grey relief lit from a direction (GIMP/Pillow style, any angle); colour on request.",
    params=[
        Param("intensity", "float", 1.0, min=0.0, max=10.0, help="height of the relief; 0 gives flat mid-grey"),
        Param("angle", "float", EMBOSS_LIGHT, min=-360.0, max=360.0, unit="deg",
              help="direction the light comes from, counter-clockwise from +x (0 right, 90 top, 135 top-left)"),
        Param("color", "bool", False,
              help="emboss every colour channel on its own (colour fringes, Pillow's EMBOSS) instead of the "
                   "luma (a grey relief, GIMP's emboss)"),
        border_param(),
    ],
    alpha="premultiply",
)
def emboss(ctx: Context, img: Any, *, intensity: float, angle: float, color: bool, border: str) -> Any:
    """``out = saturate(0.5 * full_scale + intensity * (E * Y))``, copied into B, G and R.

    ``Y`` is the BT.601 luma (``cv2.COLOR_BGR2GRAY``), so the relief is grey whatever
    the colours; ``color=true`` embosses each channel instead (``E * in`` per channel).
    ``E(dx, dy) = (dy sin(angle) - dx cos(angle)) / sqrt(2)`` over the 3 x 3
    neighbourhood: at 135 degrees ``[[-1,-.5,0],[-.5,0,.5],[0,.5,1]]`` (``KERNELS["emboss"]``).
    Flat areas turn mid-grey, slopes facing the light brighter, the others darker.
    The channel count is kept; alpha is embossed with the colour (premultiplied).
    """
    def relief(spec_ctx: Context, image: Any) -> Any:
        return respond(spec_ctx, image, (emboss_kernel(angle),), border, output="clip", scale=intensity, bias=0.5)

    if color or ctx.info.channels == 1:
        return relief(ctx, img)
    be, gray_ctx = ctx.backend, ctx.with_info(channels=1)
    planes = be.split(img)
    grey = relief(gray_ctx, be.cvt_color(be.merge(planes[:3]), cv2.COLOR_BGR2GRAY))
    return be.merge([grey] * 3 + [relief(gray_ctx, plane) for plane in planes[3:]])


@register(
    footprint=square(lambda p, spec: 1),
    linear=True,
    category="convolve",
    summary="Sharpen with the 3x3 Laplacian kernel: in - amount * Laplacian(in).",
    params=[
        Param("amount", "float", 1.0, min=0.0, max=10.0,
              help="strength; 1 is the classic [[0,-1,0],[-1,5,-1],[0,-1,0]] kernel, 0 the identity"),
        border_param(),
    ],
    alpha="premultiply",
)
def sharpen(ctx: Context, img: Any, *, amount: float, border: str) -> Any:
    """``out = saturate((I - amount * L) * in)``, ``L = [[0,1,0],[1,-4,1],[0,1,0]]``.

    With ``amount=1`` the kernel is ``[[0,-1,0],[-1,5,-1],[0,-1,0]]``.
    """
    matrix = np.pad(kernel("identity"), 1) - amount * kernel("laplacian")
    return respond(ctx, img, (matrix,), border, output="clip")


@register(
    footprint=square(lambda p, spec: auto_gaussian_ksize(p["radius"], spec.dtype) // 2),
    linear=True,
    category="convolve",
    summary="Unsharp mask: add back amount x (image - Gaussian blur) where it exceeds a threshold.",
    params=[
        Param("radius", "float", 2.0, min=0.1, max=100.0, unit="px", help="standard deviation of the Gaussian blur"),
        Param("amount", "float", 1.0, min=0.0, max=10.0, help="strength; 1 doubles the local contrast (100 %)"),
        Param("threshold", "float", 0.0, min=0.0, max=1.0, unit="fraction of full scale",
              help="only differences |in - blur| larger than this are sharpened (0 = everywhere)"),
        border_param(),
    ],
    alpha="premultiply",
)
def unsharp_mask(ctx: Context, img: Any, *, radius: float, amount: float, threshold: float, border: str) -> Any:
    """``out = saturate(in + amount * (in - G * in) * [|in - G * in| > threshold])``.

    ``G`` is a Gaussian of standard deviation ``radius`` (the classic unsharp mask of
    GIMP and Photoshop), run through the generic kernel path as two 1-D passes;
    ``threshold`` is a fraction of full scale, compared per channel.
    """
    be = ctx.backend
    # The image and its float32 blur are mixed in float by add_weighted (no float copy of the image).
    blurred = gaussian_blurred(ctx, img, radius, border)
    if threshold == 0.0:
        return be.add_weighted(img, 1.0 + amount, blurred, -amount, 0.0, dtype=ctx.info.dtype)
    detail = be.add_weighted(img, 1.0, blurred, -1.0, dtype=np.float32)
    mask = be.threshold(be.abs_convert(detail, np.float32), threshold * ctx.info.max_value, 1.0, cv2.THRESH_BINARY)
    return be.add_weighted(img, 1.0, be.multiply(detail, mask), amount, 0.0, dtype=ctx.info.dtype)


@register(
    footprint=square(lambda p, spec: auto_gaussian_ksize(p["radius"], spec.dtype) // 2),
    unbounded=True,
    category="convolve",
    summary="High pass: image minus its Gaussian blur, around mid-grey (Photoshop's High Pass).",
    params=[
        Param("radius", "float", 3.0, min=0.1, max=100.0, unit="px", help="standard deviation of the Gaussian blur"),
        border_param(),
    ],
    alpha="premultiply",
)
def high_pass(ctx: Context, img: Any, *, radius: float, border: str) -> Any:
    """``out = saturate(in - G * in + 0.5 * full_scale)``, ``G`` a Gaussian of sigma ``radius``.

    Detail smaller than about ``radius`` stays, flat areas turn mid-grey.
    """
    blurred = gaussian_blurred(ctx, img, radius, border)
    return ctx.backend.add_weighted(img, 1.0, blurred, -1.0, 0.5 * ctx.info.max_value, dtype=ctx.info.dtype)
