"""The operations the suite measures, each as raw cv2, cvfilters and the peer libraries.

A *factory* takes the input image (numpy array, or ``cv2.UMat`` for raw cv2 on OpenCL)
and its shape and returns a zero-argument callable: constants (masks, kernels, PIL or
libvips images) are built outside the timed call.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from common import imagemagick

import cvfilters as cvf
from cvfilters.filters.feather import vignette_factor

Factory = Callable[[Any, tuple[int, ...]], Callable[[], Any]]

SHARPEN3 = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
# A non-separable 5x5 sharpen (a Laplacian-of-Gaussian-like ring; sums to 1, symmetric
# so Pillow's flipped Kernel gives the same result).
SHARPEN5 = np.array([[0, 0, -1, 0, 0], [0, -1, -2, -1, 0], [-1, -2, 17, -2, -1], [0, -1, -2, -1, 0],
                     [0, 0, -1, 0, 0]], np.float32)
BILATERAL = (9, 75.0, 75.0)  # d, sigmaColor (levels), sigmaSpace (px) of the raw cv2 call
# cvfilters' bilateral takes sigma_color as a fraction of full scale and caps sigma_space
# at 16 px. With d=9 the window is fixed (radius 4), so sigma_space 16 vs 75 changes the
# weights by under 3% and not the cost.
CVF_BILATERAL = {"d": 9, "sigma_color": 75.0 / 255.0, "sigma_space": 16.0}
# cvfilters' cartoon with the classic recipe's settings: 7 bilateral passes at half scale,
# median 7, mean adaptive threshold block 9 C 2 (sensitivity 1), 1 px outlines, no quantizing.
CARTOON_MATCHED = {"passes": 7, "quantize": "none", "sensitivity": 1.0, "thickness": 1}


def vignette_mask(height: int, width: int, channels: int = 3) -> np.ndarray:
    """cvfilters' default vignette factor (float32), repeated over the channels."""
    flt = cvf.get_filter("vignette")
    factor = vignette_factor(width, height, flt.param("center").default, flt.param("radius").default,
                             flt.param("intensity").default)
    return np.ascontiguousarray(np.repeat(factor[:, :, None], channels, axis=2)) if channels > 1 else factor


def _like(image: Any, array: np.ndarray) -> Any:
    """A constant on the same side as ``image`` (a UMat for a UMat)."""
    return cv2.UMat(array) if isinstance(image, cv2.UMat) else array


# ----------------------------------------------------------------------------- raw cv2
def raw_pixellate(img: Any, shape: tuple[int, ...], size: int = 16) -> Any:
    height, width = shape[:2]
    grid_w, grid_h = -(-width // size), -(-height // size)
    small = cv2.resize(img, (grid_w, grid_h), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (width, height), interpolation=cv2.INTER_NEAREST)


def raw_cartoon(img: Any, shape: tuple[int, ...]) -> Any:
    """The classic OpenCV cartoon recipe (PEERS.md): half scale, 7 bilateral, median, adaptive threshold."""
    height, width = shape[:2]
    small = cv2.resize(img, (round(width * 0.5), round(height * 0.5)), interpolation=cv2.INTER_AREA)
    for _ in range(7):
        small = cv2.bilateralFilter(small, 9, 20, 7)
    colour = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    gray = cv2.medianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), 7)
    edges = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 9, 2)
    return cv2.bitwise_and(colour, colour, mask=edges)


def _raw_vignette(img: Any, shape: tuple[int, ...]) -> Callable[[], Any]:
    mask = _like(img, vignette_mask(shape[0], shape[1], 3 if len(shape) == 3 else 1))
    return lambda: cv2.multiply(img, mask, dtype=cv2.CV_8U)


def _raw_clahe(img: Any, shape: tuple[int, ...]) -> Callable[[], Any]:
    clahe = cv2.createCLAHE(2.0, (8, 8))
    return lambda: clahe.apply(img)


RAW: dict[str, Factory] = {
    "gaussian": lambda img, s: lambda: cv2.GaussianBlur(img, (0, 0), 3),
    "box": lambda img, s: lambda: cv2.blur(img, (5, 5)),
    "conv3": lambda img, s: lambda: cv2.filter2D(img, -1, SHARPEN3),
    "conv5": lambda img, s: lambda: cv2.filter2D(img, -1, SHARPEN5),
    # The OpenCV tutorial idiom for |d/dx| of an 8-bit image.
    "sobel": lambda img, s: lambda: cv2.convertScaleAbs(cv2.Sobel(img, cv2.CV_16S, 1, 0, ksize=3)),
    "invert": lambda img, s: lambda: cv2.bitwise_not(img),
    "flip": lambda img, s: lambda: cv2.flip(img, 1),
    "pixellate": lambda img, s: lambda: raw_pixellate(img, s),
    "vignette": _raw_vignette,
    "equalize": lambda img, s: lambda: cv2.equalizeHist(img),
    "clahe": _raw_clahe,
    "bilateral": lambda img, s: lambda: cv2.bilateralFilter(img, *BILATERAL),
    "cartoon": lambda img, s: lambda: raw_cartoon(img, s),
}


@dataclass(frozen=True)
class Op:
    key: str
    label: str
    filter: str
    params: dict[str, Any] = field(default_factory=dict)
    gray: bool = False

    def raw(self, img: Any, shape: tuple[int, ...]) -> Callable[[], Any]:
        return RAW[self.key](img, shape)


OPS: dict[str, Op] = {op.key: op for op in (
    Op("gaussian", "Gaussian blur, sigma 3", "gaussian_blur", {"sigma": 3}),
    Op("box", "box blur 5x5", "box_blur", {"size": 5}),
    Op("conv3", "3x3 convolution (sharpen)", "convolve", {"kernel": SHARPEN3}),
    Op("conv5", "5x5 convolution", "convolve", {"kernel": SHARPEN5}),
    Op("sobel", "Sobel |d/dx| (raw: CV_16S + convertScaleAbs)", "sobel", {}),
    Op("invert", "invert", "invert", {}),
    Op("flip", "flip horizontal", "flip", {}),
    Op("pixellate", "pixellate, 16 px cells", "pixellate", {"size": 16}),
    Op("vignette", "vignette (multiply by a radial mask)", "vignette", {}),
    Op("equalize", "equalize (gray)", "equalize", {}, gray=True),
    Op("clahe", "CLAHE 2.0, 8x8 (gray)", "clahe", {"clip_limit": 2.0, "tiles": 8}, gray=True),
    Op("bilateral", "bilateral d=9, 75, 75", "bilateral", CVF_BILATERAL),
    Op("cartoon", "cartoon recipe (cvf: `cartoon:passes=7,quantize=none,sensitivity=1,thickness=1`)",
       "cartoon", CARTOON_MATCHED),
)}
OVERHEAD_OPS = ("gaussian", "box", "conv3", "conv5", "sobel", "invert", "flip", "pixellate", "vignette",
                "equalize", "clahe", "bilateral")
PEER_OPS = ("gaussian", "conv3", "conv5", "equalize", "clahe", "bilateral", "pixellate", "vignette", "cartoon")


# ----------------------------------------------------------------------------- scikit-image / scipy / numpy
def _sk_cartoon(img: np.ndarray, shape: tuple[int, ...]) -> Callable[[], Any]:
    from scipy import ndimage
    from skimage import color, filters, restoration, transform

    def run() -> np.ndarray:
        small = transform.rescale(img, 0.5, channel_axis=-1, anti_aliasing=True)
        for _ in range(7):
            small = restoration.denoise_bilateral(small, win_size=9, sigma_color=20 / 255, sigma_spatial=7,
                                                  channel_axis=-1)
        colour = transform.resize(small, shape[:2], order=1)
        gray = ndimage.median_filter((color.rgb2gray(img[..., ::-1]) * 255).astype(np.uint8), size=7)
        edges = gray > filters.threshold_local(gray, 9, method="mean", offset=2)
        return (colour * edges[..., None] * 255).astype(np.uint8)

    return run


def _sk(key: str, img: np.ndarray, shape: tuple[int, ...]) -> Callable[[], Any] | None:
    from scipy import ndimage
    from skimage import exposure, restoration, transform

    height, width = shape[:2]
    if key == "gaussian":
        return lambda: ndimage.gaussian_filter(img, sigma=(3, 3, 0))
    if key in ("conv3", "conv5"):
        kernel = (SHARPEN3 if key == "conv3" else SHARPEN5)[:, :, None]
        return lambda: ndimage.correlate(img, kernel)
    if key == "equalize":
        return lambda: exposure.equalize_hist(img)
    if key == "clahe":
        return lambda: exposure.equalize_adapthist(img, kernel_size=(height // 8, width // 8), clip_limit=0.01)
    if key == "bilateral":
        return lambda: restoration.denoise_bilateral(img, win_size=9, sigma_color=75 / 255, sigma_spatial=75,
                                                     channel_axis=-1)
    if key == "pixellate":
        def pix() -> np.ndarray:
            means = transform.downscale_local_mean(img, (16, 16, 1))
            return np.repeat(np.repeat(means, 16, axis=0), 16, axis=1)[:height, :width].astype(np.uint8)
        return pix
    if key == "vignette":
        mask = vignette_mask(height, width)
        return lambda: (img * mask).astype(np.uint8)
    if key == "cartoon":
        return _sk_cartoon(img, shape)
    return None


SK_LABEL = {"gaussian": "scipy.ndimage", "conv3": "scipy.ndimage", "conv5": "scipy.ndimage", "vignette": "numpy"}


# ----------------------------------------------------------------------------- Pillow
def _pil(key: str, img: np.ndarray, shape: tuple[int, ...]) -> Callable[[], Any] | None:
    from PIL import Image, ImageChops, ImageFilter, ImageOps

    height, width = shape[:2]
    pil = Image.fromarray(img)
    if key == "gaussian":
        return lambda: pil.filter(ImageFilter.GaussianBlur(3))
    if key in ("conv3", "conv5"):
        matrix = SHARPEN3 if key == "conv3" else SHARPEN5
        kernel = ImageFilter.Kernel(matrix.shape, matrix.flatten().tolist(), scale=1)
        return lambda: pil.filter(kernel)
    if key == "equalize":
        return lambda: ImageOps.equalize(pil)
    if key == "pixellate":
        grid = (-(-width // 16) * 16, -(-height // 16) * 16)
        return lambda: pil.reduce(16).resize(grid, Image.NEAREST).crop((0, 0, width, height))
    if key == "vignette":
        mask = Image.fromarray(np.round(vignette_mask(height, width) * 255).astype(np.uint8))
        return lambda: ImageChops.multiply(pil, mask)
    return None


# ----------------------------------------------------------------------------- pyvips
def pyvips_module() -> Any | None:
    try:
        import pyvips
    except Exception:  # noqa: BLE001 - OSError when libvips is missing, ImportError when pyvips is
        return None
    pyvips.cache_set_max(0)  # the operation cache would return earlier results
    return pyvips


def _vips(key: str, img: np.ndarray, shape: tuple[int, ...]) -> Callable[[], Any] | None:
    pyvips = pyvips_module()
    if pyvips is None:
        return None
    height, width = shape[:2]
    image = pyvips.Image.new_from_array(img)
    done = pyvips.Image.write_to_memory  # libvips is lazy: writing to memory runs the pipeline
    if key == "gaussian":
        return lambda: done(image.gaussblur(3))
    if key in ("conv3", "conv5"):
        mask = pyvips.Image.new_from_array((SHARPEN3 if key == "conv3" else SHARPEN5).tolist(), scale=1)
        return lambda: done(image.conv(mask, precision="integer"))
    if key == "equalize":
        return lambda: done(image.hist_equal())
    if key == "pixellate":
        return lambda: done(image.shrink(16, 16, ceil=True).zoom(16, 16).crop(0, 0, width, height))
    if key == "vignette":
        mask = pyvips.Image.new_from_array(vignette_mask(height, width, 1))
        return lambda: done((image * mask).cast("uchar"))
    return None


# ----------------------------------------------------------------------------- ImageMagick
MAGICK_ARGS: dict[str, Callable[[int, int], list[str]]] = {
    "gaussian": lambda w, h: ["-blur", "0x3"],
    "conv3": lambda w, h: ["-convolve", ",".join(str(int(v)) for v in SHARPEN3.flat)],
    "conv5": lambda w, h: ["-convolve", ",".join(str(int(v)) for v in SHARPEN5.flat)],
    "equalize": lambda w, h: ["-equalize"],
    "pixellate": lambda w, h: ["-scale", f"{-(-w // 16)}x{-(-h // 16)}!", "-scale",
                               f"{-(-w // 16) * 16}x{-(-h // 16) * 16}!", "-crop", f"{w}x{h}+0+0"],
    "vignette": lambda w, h: ["{mask}", "-compose", "multiply", "-composite"],
}


def magick() -> str | None:
    """ImageMagick's ``convert``, or None where the name is missing or another program's."""
    return imagemagick()[0]


def magick_files(img: np.ndarray, gray: np.ndarray, folder: Path) -> dict[str, Path]:
    """The test images as ImageMagick's MPC (a memory-mapped pixel cache: no decoding)."""
    folder.mkdir(parents=True, exist_ok=True)
    height, width = img.shape[:2]
    arrays = {"colour": img, "gray": gray,
              "mask": np.round(vignette_mask(height, width, 1) * 255).astype(np.uint8)}
    files = {}
    for name, array in arrays.items():
        ppm, mpc = folder / f"{name}.{'ppm' if array.ndim == 3 else 'pgm'}", folder / f"{name}.mpc"
        cv2.imwrite(str(ppm), array)
        subprocess.run([magick(), str(ppm), str(mpc)], check=True, capture_output=True)
        files[name] = mpc
    return files


def magick_command(key: str, files: dict[str, Path], gray: bool, width: int, height: int) -> list[str] | None:
    """``convert IN.mpc ARGS null:`` (null: discards the result: no encoding), or the read-only baseline."""
    source = str(files["gray" if gray else "colour"])
    if key == "read":
        return [magick(), source, "null:"]
    if key not in MAGICK_ARGS:
        return None
    args = [str(files["mask"]) if a == "{mask}" else a for a in MAGICK_ARGS[key](width, height)]
    return [magick(), source, *args, "null:"]


def run_command(command: list[str]) -> Callable[[], Any]:
    return lambda: subprocess.run(command, check=True, capture_output=True)


PEER_FACTORIES = {"scikit-image": _sk, "Pillow": _pil, "pyvips": _vips}
