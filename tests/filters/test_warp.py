"""Warps against independent oracles: scikit-image, numpy, GPUImage's shader formulas.

Coordinates in the oracles are built here, not taken from cvfilters: rotation matrices
from ``cv2.getRotationMatrix2D``, ``skimage.transform.warp``/``swirl`` with the same
matrix or parameters, and GPUImage's GLSL rewritten literally in texture coordinates
(with its aspect-ratio handling) and converted to pixels at the end.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import cv2
import numpy as np
import pytest
from skimage import transform as sk

import cvfilters as cvf
from cvfilters.backends import get_backend
from cvfilters.core.context import ImageInfo
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters.warp import OUTSIDE, warp_kernel
from cvfilters.registry import catalog as registry
from cvfilters.registry.params import Param
from tests.conftest import PARITY_TOLERANCE, photo, visible

# float32 bilinear in OpenCV 5 is computed in single precision from float32 maps:
# against scikit-image's float64 the error is a few 1e-6 of full scale.
FLOAT_TOLERANCE = 2e-5
# GPUImage formula vs the float32 maps, in pixels (float32 resolution at 64 px is 4e-6).
MAP_TOLERANCE = 1e-3


def _interior(map_x: np.ndarray, map_y: np.ndarray, width: int, height: int, margin: float = 1.0) -> np.ndarray:
    """Output pixels whose source (with its 2x2 bilinear footprint) lies inside the image."""
    return (map_x >= margin) & (map_x <= width - 1 - margin) & (map_y >= margin) & (map_y <= height - 1 - margin)


def _source_of(matrix3: np.ndarray, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Source coordinates of every output pixel for a forward 3x3 matrix (independent of cvfilters)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    inv = np.linalg.inv(matrix3)
    w = inv[2, 0] * x + inv[2, 1] * y + inv[2, 2]
    return (inv[0, 0] * x + inv[0, 1] * y + inv[0, 2]) / w, (inv[1, 0] * x + inv[1, 1] * y + inv[1, 2]) / w


def _skimage_warp(image: np.ndarray, matrix3: np.ndarray, transform_cls: type = sk.AffineTransform) -> np.ndarray:
    tform = transform_cls(matrix=matrix3)
    return sk.warp(image.astype(np.float64), tform.inverse, order=1, mode="constant", cval=0.0,
                   preserve_range=True)


# ------------------------------------------------------------------ interpolation modes
def _interpolation_taps(mode: str, frac: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tap offsets and weights (one column per sample) of each interpolation, from the textbook formulas."""
    if mode == "linear":
        return np.array([0, 1]), np.stack([1 - frac, frac])
    if mode == "cubic":  # Keys' cubic convolution with a = -0.75 (OpenCV's INTER_CUBIC), 4 taps
        offsets, a = np.arange(-1, 3), -0.75
        d = np.abs(frac[None] - offsets[:, None])
        near, far = (a + 2) * d**3 - (a + 3) * d**2 + 1, a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
        return offsets, np.where(d <= 1, near, far)
    offsets = np.arange(-3, 5)  # Lanczos-4: sinc(d) sinc(d / 4) over 8 taps, normalised
    d = frac[None] - offsets[:, None]
    weights = np.sinc(d) * np.sinc(d / 4)
    return offsets, weights / weights.sum(axis=0)


def _sample(image: np.ndarray, map_x: np.ndarray, map_y: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """``image`` sampled at the maps, and where the whole footprint lies inside (no border involved).

    Measured on OpenCV 5.1 (float32 image and maps): nearest rounds to the nearest pixel,
    linear and cubic use the exact coordinates, Lanczos-4 quantises them to 1/32 pixel
    (``INTER_TAB_SIZE``); each matches this reference within 3e-7.
    """
    height, width = image.shape
    if mode == "nearest":
        xi, yi = np.rint(map_x).astype(int), np.rint(map_y).astype(int)
        inside = (xi >= 0) & (xi < width) & (yi >= 0) & (yi < height)
        return image[yi.clip(0, height - 1), xi.clip(0, width - 1)], inside
    if mode == "lanczos":
        qx, qy = np.rint(map_x * 32).astype(int), np.rint(map_y * 32).astype(int)
        x0, y0, fx, fy = qx >> 5, qy >> 5, (qx & 31) / 32, (qy & 31) / 32
    else:
        x0, y0 = np.floor(map_x).astype(int), np.floor(map_y).astype(int)
        fx, fy = map_x - x0, map_y - y0
    tx, wx = _interpolation_taps(mode, fx.ravel())
    ty, wy = _interpolation_taps(mode, fy.ravel())
    x0, y0 = x0.ravel(), y0.ravel()
    out = np.zeros(x0.shape)
    for i, dy in enumerate(ty):
        for j, dx in enumerate(tx):
            out += wy[i] * wx[j] * image[(y0 + dy).clip(0, height - 1), (x0 + dx).clip(0, width - 1)]
    inside = (x0 + tx[0] >= 0) & (x0 + tx[-1] < width) & (y0 + ty[0] >= 0) & (y0 + ty[-1] < height)
    return out.reshape(map_x.shape), inside.reshape(map_x.shape)


INTERPOLATION_MODES = ("nearest", "linear", "cubic", "lanczos")


@pytest.mark.parametrize("mode", INTERPOLATION_MODES)
def test_every_interpolation_mode_is_its_own(backend: str, mode: str) -> None:
    """Each mode equals its textbook reference inside the image, and none of the other modes'."""
    y, x = np.mgrid[0:40, 0:48]
    image = (0.5 + 0.25 * np.sin(0.5 * x + 0.3 * y) + 0.2 * np.cos(0.9 * y - 0.4 * x)).astype(np.float32)
    matrix = ((0.93, 0.17, 1.3), (-0.21, 1.04, 0.7))  # no source position falls on a half pixel
    map_x, map_y = _source_of(np.vstack([matrix, [0.0, 0.0, 1.0]]), 48, 40)
    map_x, map_y = (m.astype(np.float32).astype(np.float64) for m in (map_x, map_y))  # the maps are float32
    out = cvf.apply(image, "affine", matrix=matrix, interpolation=mode, backend=backend).astype(np.float64)
    references = {m: _sample(image.astype(np.float64), map_x, map_y, m) for m in INTERPOLATION_MODES}
    expected, inside = references[mode]
    assert inside.sum() > 1000
    np.testing.assert_allclose(out[inside], expected[inside], atol=2e-6 if backend == "cpu" else 1e-4)
    for other, (reference, _) in references.items():
        if other != mode:
            assert np.abs(out - reference)[inside].max() > 2e-3, f"{mode} looks like {other}"


# ------------------------------------------------------------------ rotate / affine / perspective
@pytest.mark.parametrize("angle", [23.0, -71.5])
def test_rotate_matches_skimage_warp(backend: str, angle: float) -> None:
    image = photo(40, 56, 3, np.float32)
    height, width = image.shape[:2]
    matrix3 = np.vstack([cv2.getRotationMatrix2D(((width - 1) / 2, (height - 1) / 2), angle, 1.0), [0, 0, 1]])
    out = cvf.apply(image, "rotate", angle=angle, backend=backend)
    expected = _skimage_warp(image, matrix3)
    inside = _interior(*_source_of(matrix3, width, height), width, height)
    assert inside.mean() > 0.5
    np.testing.assert_allclose(out[inside], expected[inside], atol=FLOAT_TOLERANCE)


def test_affine_matches_skimage_warp(backend: str) -> None:
    image = photo(40, 56, 3, np.float32)
    height, width = image.shape[:2]
    matrix = np.array([[0.9, 0.25, 3.5], [-0.15, 1.1, -2.25]])
    matrix3 = np.vstack([matrix, [0, 0, 1]])
    out = cvf.apply(image, "affine", matrix=matrix, backend=backend)
    expected = _skimage_warp(image, matrix3)
    inside = _interior(*_source_of(matrix3, width, height), width, height)
    assert inside.mean() > 0.5
    np.testing.assert_allclose(out[inside], expected[inside], atol=FLOAT_TOLERANCE)
    # cv2.warpAffine is the reference the parameter is documented against
    cv_out = cv2.warpAffine(image, matrix, (width, height), flags=cv2.INTER_LINEAR)
    np.testing.assert_allclose(out[inside], cv_out[inside], atol=FLOAT_TOLERANCE)


def test_perspective_matches_skimage_projective_warp(backend: str) -> None:
    image = photo(40, 56, 3, np.float32)
    height, width = image.shape[:2]
    matrix3 = np.array([[1.05, 0.1, -2.0], [0.05, 0.95, 1.5], [0.003, -0.002, 1.0]])
    out = cvf.apply(image, "perspective", matrix=matrix3, backend=backend)
    expected = _skimage_warp(image, matrix3, sk.ProjectiveTransform)
    inside = _interior(*_source_of(matrix3, width, height), width, height)
    assert inside.mean() > 0.5
    np.testing.assert_allclose(out[inside], expected[inside], atol=FLOAT_TOLERANCE)


def test_perspective_with_affine_homography_equals_affine(backend: str) -> None:
    image = photo(33, 47, 4, np.uint8)
    matrix = ((0.8, -0.3, 9.0), (0.2, 1.2, -4.0))
    affine = cvf.apply(image, "affine", matrix=matrix, border="reflect", backend=backend)
    perspective = cvf.apply(image, "perspective", matrix=(*matrix, (0.0, 0.0, 1.0)), border="reflect",
                            backend=backend)
    np.testing.assert_array_equal(perspective, affine)


@pytest.mark.parametrize("size", [32, 33])
@pytest.mark.parametrize(("angle", "turns"), [(90, 1), (-90, -1), (180, 2), (270, 3), (-360, 0)])
def test_rotate_right_angles_are_exact(backend: str, size: int, angle: int, turns: int) -> None:
    image = photo(size, size, 3, np.uint8)
    out = cvf.apply(image, "rotate", angle=angle, interpolation="nearest", backend=backend)
    np.testing.assert_array_equal(out, np.rot90(image, turns))


def test_rotate_90_expand_on_a_landscape_image_is_rot90(backend: str) -> None:
    image = photo(30, 44, 1, np.uint16)
    out = cvf.apply(image, "rotate", angle=90, expand=True, interpolation="nearest", backend=backend)
    np.testing.assert_array_equal(out, np.rot90(image))


@pytest.mark.parametrize("angle", [15.0, 30.0, 45.0, 100.0, -123.4, 180.0])
def test_rotate_expand_is_the_bounding_box(angle: float) -> None:
    height, width = 40, 64
    corners = np.array([[-0.5, -0.5], [width - 0.5, -0.5], [width - 0.5, height - 0.5], [-0.5, height - 0.5]])
    moved = cv2.transform(corners[None], cv2.getRotationMatrix2D(((width - 1) / 2, (height - 1) / 2), angle, 1.0))[0]
    extent = moved.max(axis=0) - moved.min(axis=0)
    expected = tuple(int(math.ceil(v - 1e-6)) for v in extent[::-1])  # (height, width)

    white = np.full((height, width, 4), 255, np.uint8)
    out = cvf.apply(white, "rotate", angle=angle, expand=True, interpolation="nearest", backend="cpu")
    assert out.shape[:2] == expected
    covered = out[..., 3] > 0
    # nothing cut off and no margin: the corners of the rotated image reach within a pixel of each side
    # (a corner touches its side at a point, between pixel centres), and all its pixels are there
    assert covered[:2].any() and covered[-2:].any() and covered[:, :2].any() and covered[:, -2:].any()
    assert abs(int(covered.sum()) - width * height) <= 2 * (width + height)
    # expand=false keeps the size
    assert cvf.apply(white, "rotate", angle=angle, backend="cpu").shape == white.shape


def test_rotate_expand_in_a_pipeline_updates_the_size(backend: str) -> None:
    image = photo(30, 44, 3, np.uint8)
    pipe = Pipeline.parse("rotate:angle=90,expand=true,interpolation=nearest | flip:axis=vertical")
    out = pipe(image, backend=backend)
    np.testing.assert_array_equal(out, np.flipud(np.rot90(image)))
    assert cvf.get_filter("rotate").output_info(pipe.steps[0].params, ImageInfo.of(image)).size == (30, 44)


def test_rotate_fills_uncovered_pixels() -> None:
    rotated = cvf.apply(photo(31, 31, 3, np.uint8), "rotate", angle=45, fill=[0.2, 0.4, 0.6], backend="cpu")
    np.testing.assert_array_equal(rotated[0, 0], [153, 102, 51])  # fill is R, G, B; the image B, G, R
    bgra = cvf.apply(photo(31, 31, 4, np.uint16), "rotate", angle=45, backend="cpu")
    np.testing.assert_array_equal(bgra[0, 0], [0, 0, 0, 0])  # default: transparent black
    opaque = cvf.apply(photo(31, 31, 4, np.uint8), "rotate", angle=45, fill=[1.0, 0.0, 0.0], backend="cpu")
    np.testing.assert_array_equal(opaque[0, 0], [0, 0, 255, 255])
    translucent = cvf.apply(photo(31, 31, 4, np.uint8), "rotate", angle=45, fill=[0.2, 0.4, 0.6, 0.5],
                            backend="cpu")
    np.testing.assert_array_equal(translucent[0, 0], [153, 102, 51, 128])  # straight colour, alpha 0.5
    gray = cvf.apply(photo(31, 31, 1, np.float32), "rotate", angle=45, fill=[0.2, 0.4, 0.6], backend="cpu")
    assert gray[0, 0] == pytest.approx(0.299 * 0.2 + 0.587 * 0.4 + 0.114 * 0.6, abs=1e-6)


def test_matrix_parameters_are_validated() -> None:
    with pytest.raises(ParameterError, match="^affine: .*singular"):
        cvf.get_filter("affine").resolve({"matrix": [[1, 2, 0], [2, 4, 0]]})
    with pytest.raises(ParameterError, match="^affine: .*2x3"):
        cvf.get_filter("affine").resolve({"matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]})
    with pytest.raises(ParameterError, match="^perspective: .*3x3"):
        cvf.get_filter("perspective").resolve({"matrix": [[1, 0, 0], [0, 1, 0]]})
    with pytest.raises(ParameterError, match="^rotate: interpolation="):
        cvf.get_filter("rotate").resolve({"interpolation": "bilinear"})


# ------------------------------------------------------------------ swirl vs scikit-image
@pytest.mark.parametrize(("center", "radius", "strength", "rotation"),
                         [((0.5, 0.5), 0.75, 5.0, 0.0), ((0.4, 0.55), 0.6, -3.0, 20.0)])
def test_swirl_matches_skimage(backend: str, center: tuple[float, float], radius: float, strength: float,
                               rotation: float) -> None:
    image = photo(48, 64, 3, np.float32)
    height, width = image.shape[:2]
    out = cvf.apply(image, "swirl", center=center, radius=radius, strength=strength, rotation=rotation,
                    backend=backend)
    expected = sk.swirl(image.astype(np.float64), center=(center[0] * width - 0.5, center[1] * height - 0.5),
                        strength=strength, radius=radius * min(width, height), rotation=math.radians(rotation),
                        order=1, mode="reflect", preserve_range=True)
    inside = _interior(*cvf.get_filter("swirl").maps(
        cvf.get_filter("swirl").resolve({"center": center, "radius": radius, "strength": strength,
                                         "rotation": rotation}), ImageInfo.of(image)), width, height)
    assert inside.mean() > 0.5
    np.testing.assert_allclose(out[inside], expected[inside], atol=FLOAT_TOLERANCE)
    # the border (reflect101 = scikit-image's "reflect") agrees too, a little less tightly
    np.testing.assert_allclose(out, expected, atol=1e-3)


# ------------------------------------------------------------------ GPUImage formulas, literally
def _smoothstep(edge0: float, edge1: float, x: float) -> float:
    t = min(max((x - edge0) / (edge1 - edge0), 0.0), 1.0)
    return t * t * (3.0 - 2.0 * t)


def _refract(incident: np.ndarray, normal: np.ndarray, eta: float) -> np.ndarray:
    d = float(normal @ incident)
    k = 1.0 - eta * eta * (1.0 - d * d)
    return np.zeros(3) if k < 0.0 else eta * incident - (eta * d + math.sqrt(k)) * normal


def gpu_bulge(tc, center, radius, scale, aspect):
    use = np.array([tc[0], tc[1] * aspect + 0.5 - 0.5 * aspect])
    dist = np.linalg.norm(np.asarray(center) - use)
    out = np.array(tc, dtype=np.float64)
    if dist < radius:
        percent = (1.0 - ((radius - dist) / radius) * scale) ** 2
        out = (out - center) * percent + center
    return out


def gpu_pinch(tc, center, radius, scale, aspect):
    use = np.array([tc[0], tc[1] * aspect + 0.5 - 0.5 * aspect])
    dist = np.linalg.norm(np.asarray(center) - use)
    out = np.array(tc, dtype=np.float64)
    if dist < radius:
        percent = 1.0 + ((0.5 - dist) / 0.5) * scale
        out = (out - center) * percent + center
    return out


def gpu_stretch(tc, center):
    norm = 2.0 * np.asarray(tc, dtype=np.float64) - 1.0 - (2.0 * np.asarray(center) - 1.0)
    s = np.sign(norm)
    a = np.abs(norm)
    a = np.array([0.5 * v + 0.5 * _smoothstep(0.25, 0.5, v) * v for v in a])
    return (s * a + (2.0 * np.asarray(center) - 1.0)) / 2.0 + 0.5


def gpu_sphere(tc, center, radius, eta, aspect):
    """(texture coordinate or None outside the sphere)."""
    use = np.array([tc[0], tc[1] * aspect + 0.5 - 0.5 * aspect])
    dist = np.linalg.norm(np.asarray(center) - use)
    if not dist <= radius:  # step(distanceFromCenter, radius) == 0
        return None
    depth = radius * math.sqrt(max(0.0, 1.0 - (dist / radius) ** 2))
    normal = np.array([*(use - center), depth])
    normal /= np.linalg.norm(normal)
    refracted = _refract(np.array([0.0, 0.0, -1.0]), normal, eta)
    return (refracted[:2] + 1.0) * 0.5


def _sample_points(width: int, height: int, n: int = 40) -> list[tuple[int, int]]:
    rng = np.random.default_rng(7)
    points = [(int(x), int(y)) for x, y in zip(rng.integers(0, width, n), rng.integers(0, height, n), strict=True)]
    return points + [(width // 2, height // 2), (0, 0), (width - 1, height - 1)]


def _check_maps_against(name: str, params: dict, gpu, shape: tuple[int, int]) -> int:
    """Compare Filter.maps with ``gpu(texture_coordinate)`` at sample pixels; returns how many were inside."""
    height, width = shape
    flt = cvf.get_filter(name)
    map_x, map_y = flt.maps(flt.resolve(params), ImageInfo(height, width, 3, np.dtype(np.uint8)))
    assert map_x.dtype == np.float32 and map_x.shape == (height, width)
    moved = 0
    for px, py in _sample_points(width, height):
        tc = ((px + 0.5) / width, (py + 0.5) / height)
        src = gpu(tc)
        if src is None:
            assert map_x[py, px] <= OUTSIDE / 2 and map_y[py, px] <= OUTSIDE / 2
            continue
        expected = (src[0] * width - 0.5, src[1] * height - 0.5)
        assert map_x[py, px] == pytest.approx(expected[0], abs=MAP_TOLERANCE), (px, py)
        assert map_y[py, px] == pytest.approx(expected[1], abs=MAP_TOLERANCE), (px, py)
        moved += abs(expected[0] - px) + abs(expected[1] - py) > 0.01
    return moved


# GPUImage radii are fractions of the width; ours of min(width, height). GPUImage scales y about
# 0.5, so on non-square images the centre is on the line y = 0.5; square images take any centre.
GPU_CASES = [((48, 64), (0.4, 0.5)), ((64, 48), (0.5, 0.5)), ((50, 50), (0.3, 0.65))]


@pytest.mark.parametrize(("shape", "center"), GPU_CASES, ids=str)
@pytest.mark.parametrize(("radius", "scale"), [(0.25, 0.5), (0.4, -0.7)])
def test_bulge_maps_follow_gpuimage(shape, center, radius: float, scale: float) -> None:
    height, width = shape
    ours = {"center": center, "radius": radius * width / min(shape), "scale": scale}
    moved = _check_maps_against("bulge", ours, lambda tc: gpu_bulge(tc, np.array(center), radius, scale,
                                                                      height / width), shape)
    assert moved > 0


@pytest.mark.parametrize(("shape", "center"), GPU_CASES, ids=str)
@pytest.mark.parametrize("scale", [0.5, -1.0])
def test_pinch_maps_follow_gpuimage(shape, center, scale: float) -> None:
    # GPUImage's falloff is over a fixed 0.5 (of the width): ours is over the radius, the same at 0.5
    height, width = shape
    ours = {"center": center, "radius": 0.5 * width / min(shape), "scale": scale}
    moved = _check_maps_against("pinch", ours, lambda tc: gpu_pinch(tc, np.array(center), 0.5, scale,
                                                                      height / width), shape)
    assert moved > 0


@pytest.mark.parametrize(("shape", "center"), [((48, 64), (0.5, 0.5)), ((48, 64), (0.3, 0.7)), ((64, 40), (0.6, 0.2))],
                         ids=str)
def test_stretch_maps_follow_gpuimage(shape, center) -> None:
    moved = _check_maps_against("stretch", {"center": center, "strength": 1.0},
                                lambda tc: gpu_stretch(tc, np.array(center)), shape)
    assert moved > 0


@pytest.mark.parametrize(("shape", "center"), GPU_CASES, ids=str)
@pytest.mark.parametrize(("radius", "eta"), [(0.25, 0.71), (0.35, 0.3), (0.3, 1.3)])
def test_sphere_maps_follow_gpuimage(shape, center, radius: float, eta: float) -> None:
    height, width = shape
    ours = {"center": center, "radius": radius * width / min(shape), "refractive_index": eta}
    moved = _check_maps_against("sphere", ours, lambda tc: gpu_sphere(tc, np.array(center), radius, eta,
                                                                        height / width), shape)
    assert moved > 0


def test_sphere_outside_is_the_fill(backend: str) -> None:
    image = photo(40, 56, 4, np.uint8)
    out = cvf.apply(image, "sphere", backend=backend)
    np.testing.assert_array_equal(out[0, 0], [0, 0, 0, 0])  # GPUImage: colour * 0
    center = out[20, 28]
    assert center[3] > 0
    red = cvf.apply(photo(40, 56, 3, np.uint8), "sphere", fill="red", backend=backend)
    np.testing.assert_array_equal(red[0, -1], [0, 0, 255])


@pytest.mark.parametrize(("name", "params"), [
    ("bulge", {"scale": 0.0}), ("pinch", {"scale": 0.0}), ("stretch", {"strength": 0.0}),
    ("swirl", {"strength": 0.0, "rotation": 0.0}), ("rotate", {"angle": 0.0}),
    ("affine", {"matrix": [[1, 0, 0], [0, 1, 0]]}), ("perspective", {"matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}),
])
@pytest.mark.parametrize(("dtype", "channels"), [(np.uint8, 3), (np.uint16, 1), (np.float32, 3)])
def test_zero_strength_is_identity(backend: str, name: str, params: dict, dtype: type, channels: int) -> None:
    image = photo(27, 38, channels, dtype)
    out = cvf.apply(image, name, interpolation="nearest", backend=backend, **params)
    np.testing.assert_array_equal(out, image)


def test_default_distortions_are_visible() -> None:
    image = photo(96, 128, 3, np.float32)
    for name in ("rotate", "affine", "perspective", "swirl", "bulge", "pinch", "stretch", "sphere"):
        changed = np.abs(cvf.apply(image, name, backend="cpu") - image).max(axis=2) > 0.05
        assert changed.mean() > 0.02, name


# ------------------------------------------------------------------ flip
@pytest.mark.parametrize("axis", ["horizontal", "vertical", "both"])
def test_flip_is_exact_and_its_maps_describe_it(backend: str, axis: str) -> None:
    image = photo(13, 17, 4, np.uint16)
    code = {"horizontal": 1, "vertical": 0, "both": -1}[axis]
    out = cvf.apply(image, "flip", axis=axis, backend=backend)
    np.testing.assert_array_equal(out, cv2.flip(image, code))
    flt = cvf.get_filter("flip")
    map_x, map_y = flt.maps(flt.resolve({"axis": axis}), ImageInfo.of(image))
    np.testing.assert_array_equal(cv2.remap(image, map_x, map_y, cv2.INTER_NEAREST), out)
    np.testing.assert_array_equal(cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR), out)


# ------------------------------------------------------------------ custom warp kernels
@pytest.fixture
def shift_filter() -> Iterator[cvf.Filter]:
    def shift(x, y, *, width, height, dx):
        """Move the image right by ``dx`` pixels: source = (x - dx, y)."""
        return x - dx, y

    flt = warp_kernel(shift, "test_warp_shift", summary="Shift right by dx pixels.",
                      params=[Param("dx", "float", 3.0, min=-50, max=50, unit="px", help="shift to the right")],
                      border="replicate")
    yield flt
    registry.unregister("test_warp_shift")


def test_custom_warp_kernel_is_a_shift(backend: str, shift_filter: cvf.Filter) -> None:
    image = photo(21, 30, 3, np.uint8)
    by_object = cvf.apply(image, shift_filter, backend=backend)
    np.testing.assert_array_equal(by_object[:, 3:], image[:, :-3])
    np.testing.assert_array_equal(by_object[:, :3], np.repeat(image[:, :1], 3, axis=1))  # replicate border
    by_name = Pipeline.parse("test_warp_shift")(image, backend=backend)
    np.testing.assert_array_equal(by_name, by_object)
    rolled = Pipeline.parse("test_warp_shift:dx=-5,border=wrap")(image, backend=backend)
    np.testing.assert_array_equal(rolled, np.roll(image, -5, axis=1))
    map_x, map_y = shift_filter.maps(shift_filter.resolve({"dx": 3}), ImageInfo.of(image))
    np.testing.assert_array_equal(map_x, np.tile(np.arange(30, dtype=np.float32) - 3, (21, 1)))
    np.testing.assert_array_equal(map_y, np.repeat(np.arange(21, dtype=np.float32)[:, None], 30, axis=1))
    assert registry.get("test_warp_shift") is shift_filter
    assert "Move the image right" in shift_filter.description and "Coordinates:" in shift_filter.description


def test_warp_kernel_rejects_bad_declarations_and_results() -> None:
    with pytest.raises(ValueError, match="reserved"):
        warp_kernel(lambda x, y, **_: (x, y), "test_warp_bad", summary="x",
                    params=[Param("border", "float", 1.0, min=0, max=2, help="clash")])
    with pytest.raises(ValueError, match="snake_case"):
        warp_kernel(lambda x, y, **_: (x, y), "Bad-Name", summary="x")
    flt = warp_kernel(lambda x, y, **_: (x[:2], y), "test_warp_bad_shape", summary="Broken.")
    try:
        with pytest.raises(ValueError, match="broadcastable to the output grid"):
            cvf.apply(photo(8, 8, 3, np.uint8), flt, backend="cpu")
    finally:
        registry.unregister("test_warp_bad_shape")


def test_maps_are_built_once_per_size_and_params(backend: str, shift_filter: cvf.Filter) -> None:
    be = get_backend(backend)
    image = photo(29, 37, 3, np.uint8)

    def constants(img: np.ndarray, **params: float) -> int:
        before = be.counters.constants
        cvf.apply(img, shift_filter, backend=backend, **params)
        return be.counters.constants - before

    assert constants(image, dx=1.25) == 2  # map_x and map_y, uploaded once
    assert constants(image, dx=1.25) == 0
    assert constants(image, dx=1.25, interpolation="cubic", border="wrap") == 0  # sampling is not in the maps
    assert constants(photo(31, 37, 3, np.uint8), dx=1.25) == 2  # another size
    assert constants(image, dx=2.5) == 2  # other parameters
    _, report = Pipeline([("swirl", {"radius": 0.31})]).run(image, backend=backend)
    _, again = Pipeline([("swirl", {"radius": 0.31})]).run(image, backend=backend)
    assert (report.counters.constants, again.counters.constants) == (2, 0)


# ------------------------------------------------------------------ backends agree beyond the defaults
WARPS = ["rotate", "affine", "perspective", "swirl", "bulge", "pinch", "stretch", "sphere"]


@pytest.mark.parametrize("name", WARPS)
@pytest.mark.parametrize(("interpolation", "border", "fill"),
                         [("nearest", "wrap", (0.0,)), ("cubic", "reflect", (0.0,)),
                          ("lanczos", "constant", (0.1, 0.5, 0.9, 0.8)), ("linear", "constant", (0.3, 0.6))])
@pytest.mark.parametrize(("dtype", "channels"), [(np.uint8, 3), (np.float32, 4)])
def test_backends_agree_with_cpu(backend: str, name: str, interpolation: str, border: str, fill, dtype,
                                 channels: int) -> None:
    image = photo(36, 52, channels, dtype)
    params = {"interpolation": interpolation, "border": border, "fill": fill}
    if name == "rotate":
        params["expand"] = True
    expected = cvf.apply(image, name, backend="cpu", **params)
    actual = cvf.apply(image, name, backend=backend, **params)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    difference = np.abs(visible(actual) - visible(expected)).max()
    assert difference <= PARITY_TOLERANCE[np.dtype(dtype)] + 1e-9, f"max difference {difference}"


def test_fill_alpha_on_an_image_without_alpha_warns_once_and_is_opaque() -> None:
    from cvfilters.engine import sampling

    sampling._WARNED_FILL_ALPHA.clear()
    image = np.full((20, 30, 3), 90, np.uint8)
    with pytest.warns(sampling.FillAlphaWarning, match="no alpha channel"):
        out = cvf.apply(image, "rotate:angle=10,fill=#ffffff80", backend="cpu")
    assert out.shape == image.shape and (out[0, 0] == 255).all()  # opaque white corners, channels kept
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cvf.apply(image, "rotate:angle=10,fill=#ffffff80", backend="cpu")  # once per fill and process
        cvf.apply(image, "rotate:angle=10", backend="cpu")  # the default fill (one value) never warns
    rgba = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    assert (cvf.apply(rgba, "rotate:angle=10,fill=#ffffff80", backend="cpu")[0, 0] == [255, 255, 255, 128]).all()


def test_distortion_radius_is_a_fraction_of_the_shorter_side_from_001_to_4() -> None:
    """Every distortion's radius: float, 0.01 to 4 (docs: "fraction of min(width, height)"), its own default."""
    defaults = {"swirl": 0.75, "bulge": 0.25, "pinch": 0.5, "sphere": 0.25}
    for name, default in defaults.items():
        (radius,) = [p for p in cvf.get_filter(name).params if p.name == "radius"]
        assert (radius.kind, radius.default, radius.min, radius.max, radius.unit) == \
            ("float", default, 0.01, 4.0, "fraction of min(width, height)"), name
    from cvfilters.filters.distort import _radius_param

    assert _radius_param(0.3, "h") == Param("radius", "float", 0.3, min=0.01, max=4.0,
                                            unit="fraction of min(width, height)", help="h")


def test_sphere_outside_its_disc_warns_of_nothing() -> None:
    """Pixels outside the sphere take the fill: no square root of a negative on the way (a RuntimeWarning)."""
    import warnings

    image = photo(40, 60, 3, np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = cvf.apply(image, "sphere", backend="cpu")
    assert out.shape == image.shape
