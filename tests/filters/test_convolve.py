"""convolve and the named operators against scipy.ndimage, cv2 and numpy formulas.

Kernels are written out here (or taken from cv2) independently of the table in
cvfilters.filters.convolve, so a wrong entry there fails.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.backends import BORDERS, get_backend
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters._shared import correlation, kernels
from tests.conftest import photo

SCIPY_MODE = {"reflect101": "mirror", "replicate": "nearest", "reflect": "reflect", "wrap": "wrap",
              "constant": "constant"}
SOBEL_X = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], np.float64)
SCHARR_X = np.array([[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]], np.float64)
PREWITT_X = np.array([[-1, 0, 1]] * 3, np.float64)
LAPLACIAN_1 = np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], np.float64)
LAPLACIAN_3 = np.array([[2, 0, 2], [0, -8, 0], [2, 0, 2]], np.float64)
SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float64)
EMBOSS_135 = np.array([[-1, -0.5, 0], [-0.5, 0, 0.5], [0, 0.5, 1]], np.float64)


def correlate(image: np.ndarray, kernel: np.ndarray, border: str = "reflect101") -> np.ndarray:
    """scipy's correlation of each channel in float64."""
    values = image.astype(np.float64)
    if values.ndim == 2:
        return ndimage.correlate(values, kernel, mode=SCIPY_MODE[border], cval=0.0)
    return np.dstack([ndimage.correlate(values[..., c], kernel, mode=SCIPY_MODE[border], cval=0.0)
                      for c in range(values.shape[2])])


def gaussian(image: np.ndarray, sigma: float, ksize: int, border: str = "reflect101") -> np.ndarray:
    """scipy's Gaussian over the two image axes, truncated to a ksize x ksize kernel."""
    values = image.astype(np.float64)
    sigmas = (sigma, sigma) + (0.0,) * (values.ndim - 2)
    return ndimage.gaussian_filter(values, sigmas, mode=SCIPY_MODE[border], truncate=(ksize // 2) / sigma)


# ----------------------------------------------------------------------------- presets vs scipy
PRESET_CASES = [
    ("sobel", {"dx": 1, "dy": 0}, lambda img, b: np.abs(correlate(img, SOBEL_X, b))),
    ("sobel", {"dx": 0, "dy": 1, "scale": 0.5}, lambda img, b: 0.5 * np.abs(correlate(img, SOBEL_X.T, b))),
    ("sobel", {"magnitude": True}, lambda img, b: np.hypot(correlate(img, SOBEL_X, b), correlate(img, SOBEL_X.T, b))),
    ("scharr", {"direction": "x", "scale": 1.0}, lambda img, b: np.abs(correlate(img, SCHARR_X, b))),
    ("scharr", {}, lambda img, b: 0.25 * np.hypot(correlate(img, SCHARR_X, b), correlate(img, SCHARR_X.T, b))),
    ("prewitt", {"direction": "y"}, lambda img, b: np.abs(correlate(img, PREWITT_X.T, b))),
    ("prewitt", {}, lambda img, b: np.hypot(correlate(img, PREWITT_X, b), correlate(img, PREWITT_X.T, b))),
    ("laplacian", {"scale": 1.0}, lambda img, b: np.abs(correlate(img, LAPLACIAN_1, b))),
    ("laplacian", {"ksize": 3, "scale": 1.0, "absolute": False, "bias": 0.5},
     lambda img, b: correlate(img, LAPLACIAN_3, b) + 0.5),
    ("laplacian", {"ksize": 3}, lambda img, b: 2.0 * np.abs(correlate(img, LAPLACIAN_3, b))),  # scale 2 by default
    ("edges", {"intensity": 1.5},
     lambda img, b: 1.5 * np.hypot(correlate(img, SOBEL_X / 4, b), correlate(img, SOBEL_X.T / 4, b))),
    ("emboss", {"color": True}, lambda img, b: 0.5 + correlate(img, EMBOSS_135, b)),
    ("emboss", {}, lambda img, b: np.repeat(0.5 + correlate(img @ [0.114, 0.587, 0.299], EMBOSS_135, b)[..., None],
                                            3, axis=2)),
    ("sharpen", {}, lambda img, b: correlate(img, SHARPEN, b)),
    ("sharpen", {"amount": 0.5}, lambda img, b: correlate(img, np.pad([[1.0]], 1) - 0.5 * LAPLACIAN_1, b)),
]


@pytest.mark.parametrize(("name", "params", "reference"), PRESET_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(PRESET_CASES)])
@pytest.mark.parametrize("border", list(BORDERS))
def test_preset_matches_scipy(name: str, params: dict, reference, border: str) -> None:
    image = photo(23, 29, 3, np.float32)
    out = cvf.apply(image, name, border=border, backend="cpu", **params)
    np.testing.assert_allclose(out, reference(image, border), atol=2e-5)


@pytest.mark.parametrize("name", ["sobel", "laplacian", "emboss", "sharpen", "edges"])
def test_preset_on_device_matches_scipy(backend: str, name: str) -> None:
    case = next(c for c in PRESET_CASES if c[0] == name)
    image = photo(20, 26, 3, np.float32)
    out = cvf.apply(image, name, backend=backend, **case[1])
    np.testing.assert_allclose(out, case[2](image, "reflect101"), atol=2e-5)


@pytest.mark.parametrize(("order", "ksize"), [(o, k) for k in (1, 3, 5, 7) for o in (0, 1, 2) if k == 1 or o < k])
def test_sobel_taps_equal_cv2_deriv_kernels(order: int, ksize: int) -> None:
    expected = cv2.getDerivKernels(order, 0 if order else 1, ksize)[0].ravel()  # x taps of dx=order
    np.testing.assert_array_equal(kernels.derivative_taps(order, ksize), expected)


@pytest.mark.parametrize(("dx", "dy", "ksize"), [(1, 0, 1), (0, 2, 1), (1, 1, 3), (2, 1, 5), (1, 0, 7)])
def test_sobel_equals_cv2_sobel(dx: int, dy: int, ksize: int) -> None:
    image = photo(30, 34, 1, np.float32)
    out = cvf.apply(image, "sobel", dx=dx, dy=dy, ksize=ksize, backend="cpu")
    expected = np.abs(cv2.Sobel(image, cv2.CV_64F, dx, dy, ksize=ksize))
    np.testing.assert_allclose(out, expected, atol=5e-5 * max(1.0, expected.max()))


@pytest.mark.parametrize("ksize", [1, 3, 5, 7])
def test_laplacian_equals_cv2_laplacian(ksize: int) -> None:
    image = photo(30, 34, 3, np.float32)
    out = cvf.apply(image, "laplacian", ksize=ksize, scale=1.0, absolute=False, backend="cpu")
    expected = cv2.Laplacian(image.astype(np.float64), cv2.CV_64F, ksize=ksize)
    np.testing.assert_allclose(out, expected, atol=5e-5 * max(1.0, np.abs(expected).max()))


def test_emboss_angle_rotates_the_light() -> None:
    # Written independently: the derivative along the light direction, GPUImage's kernel halved at 135.
    for angle in (0.0, 90.0, 135.0, 200.0):
        theta = math.radians(angle)
        expected = np.array([[(dy * math.sin(theta) - dx * math.cos(theta)) / math.sqrt(2) for dx in (-1, 0, 1)]
                             for dy in (-1, 0, 1)])
        np.testing.assert_allclose(kernels.emboss_kernel(angle), expected, atol=1e-12)
    np.testing.assert_allclose(kernels.emboss_kernel(135.0), EMBOSS_135, atol=1e-12)
    # A bright square lit from the top-left: its top-left edges are bright, bottom-right ones dark.
    square = np.zeros((21, 21), np.float32)
    square[6:15, 6:15] = 0.4
    out = cvf.apply(square, "emboss", backend="cpu")
    assert out[10, 6] > 0.6 and out[6, 10] > 0.6 and out[10, 14] < 0.4 and out[14, 10] < 0.4
    assert out[10, 10] == pytest.approx(0.5) and out[0, 0] == pytest.approx(0.5)
    opposite = cvf.apply(square, "emboss", angle=-45.0, backend="cpu")
    np.testing.assert_allclose(opposite - 0.5, -(out - 0.5), atol=1e-6)
    np.testing.assert_allclose(cvf.apply(square, "emboss", intensity=0.0, backend="cpu"), 0.5)


def test_emboss_of_bgra_embosses_alpha_beside_the_grey_relief(backend: str) -> None:
    """BGRA under the premultiply policy: the grey relief of the premultiplied colour's luma and the
    relief of alpha itself (both 0.5 + E * x, clipped to 0..1), then divided by that alpha. Catches
    an alpha plane dropped, or embossed with the wrong arguments, on the grey (color=false) path."""
    image = photo(20, 26, 4, np.float32)
    out = cvf.apply(image, "emboss", intensity=2.0, backend=backend)
    assert out.shape == image.shape
    alpha = np.clip(0.5 + 2.0 * correlate(image[..., 3], EMBOSS_135), 0.0, 1.0)
    luma = (image[..., :3] * image[..., 3:]) @ [0.114, 0.587, 0.299]
    grey = np.clip(0.5 + 2.0 * correlate(luma, EMBOSS_135), 0.0, 1.0)
    np.testing.assert_allclose(out[..., 3], alpha, atol=1e-5)
    shown = alpha > 0.05  # the straight colour of a nearly transparent pixel is ill-conditioned
    straight = np.clip(grey / np.maximum(alpha, 1e-12), 0.0, 1.0)
    for c in range(3):
        np.testing.assert_allclose(out[..., c][shown], straight[shown], atol=1e-4)


def test_sobel_uint8_matches_rounded_float_reference() -> None:
    image = photo(25, 31, 3, np.uint8)
    out = cvf.apply(image, "sobel", magnitude=True, scale=0.25, backend="cpu")
    expected = np.clip(np.round(0.25 * np.hypot(correlate(image, SOBEL_X), correlate(image, SOBEL_X.T))), 0, 255)
    assert np.abs(out.astype(np.float64) - expected).max() <= 1


# ----------------------------------------------------------------------------- unsharp mask, high pass
@pytest.mark.parametrize(("radius", "amount", "threshold"), [(2.0, 1.0, 0.0), (1.3, 2.5, 0.04), (1.5, 2.0, 1.0)])
def test_unsharp_mask_formula(radius: float, amount: float, threshold: float) -> None:
    image = photo(33, 41, 3, np.float32)
    out = cvf.apply(image, "unsharp_mask", radius=radius, amount=amount, threshold=threshold, backend="cpu")
    blurred = gaussian(image, radius, int(round(8 * radius + 1)) | 1)
    detail = image - blurred
    expected = image + amount * detail * (np.abs(detail) > threshold)
    close = np.abs(np.abs(detail) - threshold) > 1e-5  # pixels at the threshold may go either way
    np.testing.assert_allclose(out[close], expected[close], atol=2e-5)


def test_unsharp_mask_uint16_threshold_and_saturation() -> None:
    image = photo(30, 30, 1, np.uint16)
    out = cvf.apply(image, "unsharp_mask", radius=1.5, amount=3.0, threshold=0.02, backend="cpu")
    blurred = gaussian(image, 1.5, int(round(8 * 1.5 + 1)) | 1)
    detail = image - blurred
    expected = np.clip(np.round(image + 3.0 * detail * (np.abs(detail) > 0.02 * 65535)), 0, 65535)
    close = np.abs(np.abs(detail) - 0.02 * 65535) > 0.5
    assert np.abs(out[close].astype(np.float64) - expected[close]).max() <= 1
    assert (out == 65535).any() and (out == 0).any()  # saturated both ways


@pytest.mark.parametrize("threshold", [0.0, 0.04])
def test_unsharp_mask_of_uint8_on_every_backend(backend: str, threshold: float) -> None:
    """uint8 in, uint8 out, rounded, on every backend: the float32 blur is mixed with the 8-bit image
    into an 8-bit result (OpenCL refuses arithmetic on two depths without an output depth)."""
    image = photo(30, 38, 3, np.uint8)
    out = cvf.apply(image, "unsharp_mask", radius=1.5, amount=1.5, threshold=threshold, backend=backend)
    assert out.dtype == np.uint8
    detail = image - gaussian(image, 1.5, int(round(1.5 * 3 * 2 + 1)) | 1)  # uint8's kernel: 6 sigma + 1
    expected = np.clip(np.round(image + 1.5 * detail * (np.abs(detail) > threshold * 255)), 0, 255)
    close = np.abs(np.abs(detail) - threshold * 255) > 1e-3  # pixels at the threshold may go either way
    assert np.abs(out[close].astype(np.float64) - expected[close]).max() <= 1  # float32 sums round x.5 either way


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_high_pass_formula(backend: str, dtype: type) -> None:
    image = photo(30, 38, 3, dtype)
    out = cvf.apply(image, "high_pass", radius=2.5, backend=backend)
    full = 255.0 if dtype == np.uint8 else 1.0
    ksize = int(round(2.5 * (3 if dtype == np.uint8 else 4) * 2 + 1)) | 1
    expected = image.astype(np.float64) - gaussian(image, 2.5, ksize) + 0.5 * full
    if dtype == np.uint8:  # exact but at ties: float32 sums may round x.5 either way
        off = np.abs(out - np.clip(np.round(expected), 0, 255))
        tie = np.abs(expected - np.floor(expected) - 0.5) < 1e-3
        assert off.max() <= 1 and not off[~tie].any()  # a kernel wider than uint8's 6 sigma + 1 fails
    else:
        np.testing.assert_allclose(out, expected, atol=2e-5)



@pytest.mark.parametrize("border", ["reflect101", "constant", "replicate"])
@pytest.mark.parametrize("spec", ["unsharp_mask:radius=2", "unsharp_mask:radius=3,threshold=0.03",
                                  "high_pass:radius=4"])
def test_tall_images_follow_the_whole_images_formula(spec: str, border: str) -> None:
    """A tall image (where a seam between pieces of rows would show) against scipy at three borders."""
    image = photo(549, 29, 3, np.float32)
    out = cvf.apply(image, f"{spec},border={border}", backend="cpu")
    name, _, args = spec.partition(":")
    params = dict(arg.split("=") for arg in args.split(","))
    radius, threshold = float(params["radius"]), float(params.get("threshold", 0))
    blurred = gaussian(image, radius, int(round(8 * radius + 1)) | 1, border)
    detail = image.astype(np.float64) - blurred
    if name == "high_pass":
        expected = detail + 0.5
    else:
        expected = image + detail * (np.abs(detail) > threshold)
    close = np.abs(np.abs(detail) - threshold) > 1e-5
    np.testing.assert_allclose(out[close], expected[close], atol=2e-5)

# ----------------------------------------------------------------------------- convolve: modes, depth, separability
@pytest.mark.parametrize("mode", ["correlate", "convolve"])
@pytest.mark.parametrize("shape", [(2, 2), (3, 4), (4, 1), (1, 6)])
def test_even_kernels_anchor_like_scipy(mode: str, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    kernel = rng.normal(size=shape)
    image = photo(17, 19, 1, np.float32)
    out = cvf.apply(image, "convolve", kernel=kernel, mode=mode, border="wrap", backend="cpu")
    scipy_fn = ndimage.correlate if mode == "correlate" else ndimage.convolve
    np.testing.assert_allclose(out, scipy_fn(image.astype(np.float64), kernel, mode="wrap"), atol=2e-5)
    if mode == "correlate":  # and OpenCV's own anchor for even kernels
        expected = cv2.filter2D(image, -1, kernel.astype(np.float32), borderType=cv2.BORDER_REFLECT_101)
        np.testing.assert_allclose(cvf.apply(image, "convolve", kernel=kernel, backend="cpu"), expected, atol=2e-5)


def test_uint8_negative_responses_clip_absolute_or_bias() -> None:
    image = np.zeros((5, 8), np.uint8)
    image[:, 4:] = 100
    step = [[-1, 1]]  # x difference: +100 at the rising edge; as a falling edge -100 in convolve mode
    clipped = cvf.apply(image, "convolve", kernel=step, mode="convolve", backend="cpu")
    absolute = cvf.apply(image, "convolve", kernel=step, mode="convolve", absolute=True, backend="cpu")
    signed = cvf.apply(image, "convolve", kernel=step, mode="convolve", bias=0.5, backend="cpu")
    expected = ndimage.convolve(image.astype(np.float64), np.array([[-1.0, 1.0]]), mode="mirror")
    assert expected.min() == -100  # the test image does produce a negative response
    np.testing.assert_array_equal(clipped, np.clip(expected, 0, 255))
    np.testing.assert_array_equal(absolute, np.abs(expected))
    np.testing.assert_array_equal(signed, np.clip(np.round(expected + 127.5), 0, 255))
    floats = cvf.apply(image.astype(np.float32) / 255, "convolve", kernel=step, mode="convolve", backend="cpu")
    np.testing.assert_allclose(floats, expected / 255, atol=1e-6)  # float32 keeps negative values
    with_bias = cvf.apply(image, "convolve", kernel=step, mode="convolve", absolute=True, bias=0.1, backend="cpu")
    np.testing.assert_array_equal(with_bias, np.clip(np.round(np.abs(expected) + 25.5), 0, 255))


def test_uint8_absolute_response_of_a_large_integer_kernel_does_not_overflow() -> None:
    """|sum| * 255 above int16's range: 180 * 255 = 45900 must not saturate at 32767 on the way."""
    image = photo(20, 24, 3, np.uint8)
    kernel = np.full((3, 3), 20.0)
    out = cvf.apply(image, "convolve", kernel=kernel, absolute=True, scale=1 / 180, backend="cpu")
    expected = np.clip(np.round(np.abs(correlate(image, kernel)) / 180), 0, 255)
    assert np.abs(out.astype(np.float64) - expected).max() <= 1 and out.max() > 200


SEPARABLE = {
    "gaussian7": np.outer(cv2.getGaussianKernel(7, 1.5), cv2.getGaussianKernel(7, 1.5)),
    "sobel5": np.outer([1, 4, 6, 4, 1], [-1, -2, 0, 2, 1]).astype(np.float64),
    "box3x9": np.full((3, 9), 1 / 27),
    "asym5": np.outer([0.5, -1, 2, 0, 1], [3, 0, -1, 0.25, 1]),
}


class Spy:
    """Counts the calls of backend primitives while delegating to them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, be, *names: str) -> None:
        self.calls = dict.fromkeys(names, 0)
        for name in names:
            original = getattr(be, name)

            def wrapper(*args, _name=name, _original=original, **kwargs):
                self.calls[_name] += 1
                return _original(*args, **kwargs)

            monkeypatch.setattr(be, name, wrapper)


@pytest.mark.parametrize("name", list(SEPARABLE))
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.uint16])
def test_separable_path_equals_2d_path(monkeypatch, name: str, dtype: type) -> None:
    kernel = SEPARABLE[name]
    assert correlation.separate(correlation.prepare_kernel(kernel)) is not None
    image = photo(37, 43, 3, dtype)
    spy = Spy(monkeypatch, get_backend("cpu"), "sep_filter2d", "filter2d")
    for border in ("reflect101", "wrap", "constant"):
        out = cvf.apply(image, "convolve", kernel=kernel, bias=0.1, border=border, backend="cpu")
        # the 2-D reference: cv2.filter2D itself (wrap by padding, which filter2D lacks)
        reference_input = image if border != "wrap" else cv2.copyMakeBorder(image, 9, 9, 9, 9, cv2.BORDER_WRAP)
        cv_border = cv2.BORDER_REFLECT_101 if border == "wrap" else BORDERS[border]
        full = float(np.iinfo(dtype).max) if dtype != np.float32 else 1.0
        expected = cv2.filter2D(reference_input, -1, kernel.astype(np.float32), delta=0.1 * full,
                                borderType=cv_border)
        if border == "wrap":
            expected = expected[9:-9, 9:-9]
        tolerance = 1e-5 if dtype == np.float32 else 1
        assert np.abs(out.astype(np.float64) - expected).max() <= tolerance
    assert spy.calls == {"sep_filter2d": 3, "filter2d": 0}


def test_non_separable_kernels_run_in_2d(monkeypatch) -> None:
    spy = Spy(monkeypatch, get_backend("cpu"), "sep_filter2d", "filter2d")
    image = photo(20, 20, 1, np.float32)
    nearly = SEPARABLE["gaussian7"] + np.eye(7) * 1e-4  # rank 7, although close to rank 1
    for kernel in (LAPLACIAN_3, nearly, np.zeros((5, 5)), np.ones((1, 9)), np.array([[1, 2, 0], [0, 1, 3]])):
        cvf.apply(image, "convolve", kernel=kernel, backend="cpu")
    assert spy.calls == {"sep_filter2d": 0, "filter2d": 5}
    assert correlation.separate(correlation.prepare_kernel(nearly)) is None
    for scale in (5e-4, 2e3):  # rank 3 at any scale: the tolerance is relative to the first singular value
        assert correlation.separate(correlation.prepare_kernel(scale * np.eye(3))) is None


def test_separable_detection_tolerates_float32_rounding() -> None:
    g = cv2.getGaussianKernel(15, 3.0).astype(np.float32)
    kernel = (g @ g.T).astype(np.float32)  # each entry rounded to float32
    kx, ky = correlation.separate(correlation.prepare_kernel(kernel))
    np.testing.assert_allclose(ky @ kx, kernel, atol=1e-8)


def test_convolve_device_separable_and_2d(backend: str) -> None:
    image = photo(24, 30, 3, np.uint8)
    for kernel in (SEPARABLE["sobel5"], LAPLACIAN_3):
        out = cvf.apply(image, "convolve", kernel=kernel, bias=0.5, scale=0.1, backend=backend)
        expected = np.clip(np.round(0.1 * correlate(image, kernel) + 127.5), 0, 255)
        assert np.abs(out - expected).max() <= 1


def test_info_documents_correlation_convolution_and_borders() -> None:
    info = cvf.get_filter("convolve").info()
    text = info["description"].lower()
    assert "correlation" in text and "convolution" in text and "flipped" in text and "anchor" in text
    border = next(p for p in info["params"] if p["name"] == "border")
    assert set(border["choices"]) == set(BORDERS)
    for name in BORDERS:
        assert name in border["help"]


def test_presets_share_the_generic_path(monkeypatch) -> None:
    """Presets are data run by correlate(): patching it sees every built-in operator."""
    seen = []
    original = correlation.correlate

    def spy(ctx, img, matrix, border, **kwargs):
        seen.append(np.asarray(matrix).shape)
        return original(ctx, img, matrix, border, **kwargs)

    monkeypatch.setattr(correlation, "correlate", spy)
    image = photo(12, 12, 1, np.float32)
    for name in ("sobel", "scharr", "prewitt", "laplacian", "edges", "emboss", "sharpen", "unsharp_mask",
                 "high_pass", "motion_blur"):
        before = len(seen)
        Pipeline([(name, {})])(image, backend="cpu")
        assert len(seen) > before, name


# ---------------------------------------------------------------- from mutation survivors
def test_prepare_kernel_scales_flips_and_pads_even_sides() -> None:
    k = [[1.0, 2.0], [3.0, 4.0]]
    # correlate: padded after the last tap (anchor w // 2); convolve: flipped, padded before the first
    np.testing.assert_array_equal(correlation.prepare_kernel(k, scale=2.0), [[2, 4, 0], [6, 8, 0], [0, 0, 0]])
    np.testing.assert_array_equal(correlation.prepare_kernel(k, mode="convolve"), [[0, 0, 0], [0, 4, 3], [0, 2, 1]])
    np.testing.assert_allclose(correlation.prepare_kernel([[1.0, 3.0, 4.0]], normalize=True, scale=0.5),
                               [[0.0625, 0.1875, 0.25]])
    assert correlation.prepare_kernel(k).dtype == np.float32


def test_uint8_integer_kernel_beyond_int16_is_exact() -> None:
    """|kernel| * 255 above 32767 must not go through int16 (it would saturate at 32767)."""
    image = np.array([[0, 100, 200, 255]], np.uint8)
    out = cvf.apply(image, "convolve", kernel=[[150]], scale=1 / 150, backend="cpu")
    np.testing.assert_array_equal(out, image)
    small = cvf.apply(image, "convolve", kernel=[[128]], scale=1 / 128, backend="cpu")  # 128 * 255 fits
    np.testing.assert_array_equal(small, image)


def test_normalize_takes_any_nonzero_sum() -> None:
    image = photo(9, 11, 1, np.float32)
    out = cvf.apply(image, "convolve", kernel=[[0.25, 0.25, 0.25]], normalize=True, border="replicate",
                    backend="cpu")
    np.testing.assert_allclose(out, ndimage.uniform_filter1d(image.astype(np.float64), 3, axis=1, mode="nearest"),
                               atol=1e-6)
    with pytest.raises(cvf.ParameterError) as caught:
        cvf.get_filter("convolve").resolve({"kernel": [[1, -1]], "normalize": True})
    assert str(caught.value) == ("convolve: normalize=true needs a kernel whose values do not sum to 0 and whose sum "
                                 "is finite")
    with pytest.raises(cvf.ParameterError) as caught:
        cvf.get_filter("sobel").resolve({"dx": 0, "dy": 0})
    assert str(caught.value) == "sobel: dx + dy must be at least 1 (or set magnitude=true)"


def test_normalize_refuses_an_overflowing_sum_and_takes_one_of_1e_12() -> None:
    convolve = cvf.get_filter("convolve")
    huge = [[1e308, 1e308]]  # finite values whose sum is inf: dividing by it would zero the kernel
    assert convolve.resolve({"kernel": huge})["kernel"] == ((1e308, 1e308),)
    with pytest.raises(cvf.ParameterError, match="whose sum is finite"):
        convolve.resolve({"kernel": huge, "normalize": True})
    with pytest.raises(cvf.ParameterError, match="do not sum to 0"):
        convolve.resolve({"kernel": [[0.1, 0.2, -0.3]], "normalize": True})  # 5.6e-17, rounding residue
    # 1e-12 is the smallest sum taken as not 0; the kernel divided by it is the identity
    image = photo(5, 6, 1, np.float32)
    out = cvf.apply(image, "convolve", kernel=[[1e-12]], normalize=True, backend="cpu")
    np.testing.assert_allclose(out, image, rtol=1e-6)


@pytest.mark.parametrize(("args", "scale"), [((), 1.0), ((0.25,), 0.25)])
def test_gradient_params_are_declared_as_the_help_says(args: tuple[float, ...], scale: float) -> None:
    # _gradient_params runs once at import (scharr and prewitt); called here, its declaration is
    # checked against `cvfilters info prewitt` (default scale 1) and `info scharr` (0.25)
    from cvfilters.filters.convolve import _gradient_params

    direction, scale_param, border = (p.describe() for p in _gradient_params(*args))
    assert direction == {"name": "direction", "type": "choice", "default": "magnitude",
                         "choices": ["magnitude", "x", "y"], "unit": "", "required": False,
                         "help": "x: |d/dx| (vertical edges), y: |d/dy| (horizontal edges), "
                                 "magnitude: sqrt(Gx^2 + Gy^2)"}
    assert scale_param == {"name": "scale", "type": "float", "default": scale, "min": 0.0, "max": 1000.0,
                           "unit": "", "required": False, "help": "multiplies the result before saturation"}
    assert (border["name"], border["default"]) == ("border", "reflect101")


@pytest.mark.parametrize(("name", "kx"), [("prewitt", [[-1, 0, 1]] * 3), ("scharr", [[-3, 0, 3], [-10, 0, 10],
                                                                                      [-3, 0, 3]])])
def test_gradient_direction_x_is_scaled(name: str, kx: list[list[int]]) -> None:
    image = photo(12, 14, 1, np.float32)
    out = cvf.apply(image, name, direction="x", scale=0.5, border="replicate", backend="cpu")
    expected = np.abs(ndimage.correlate(image.astype(np.float64), np.array(kx, float), mode="nearest")) * 0.5
    np.testing.assert_allclose(out, expected, atol=1e-5)  # float32 is not clipped


def test_sobel_scale_multiplies_the_absolute_response() -> None:
    y, x = np.mgrid[0:4, 0:5]
    image = (10 * x + y * y).astype(np.float32)  # Sobel dx = 8 * 10 = 80 inside (see test_filters_oracles)
    out = cvf.apply(image, "sobel", dx=1, dy=0, scale=0.25, backend="cpu")
    np.testing.assert_allclose(out[:, 1:4], 20.0, atol=1e-4)
