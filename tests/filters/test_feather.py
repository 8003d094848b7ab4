"""The feather family: feather modes, masks, feather_mask, masked, blend, vignette_effect.

Every formula is checked against an independent numpy/scipy evaluation at sample pixels;
blend modes against the W3C Compositing and Blending formulas; device backends against
cpu for non-default parameters (the registry-wide parity test only runs the defaults).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.core.errors import ParameterError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters import masks
from cvfilters.filters.feather import edge_weight, radial_weight, smoothstep, vignette_factor
from tests.conftest import FIXTURES, PARITY_TOLERANCE, photo, visible
from tests.filters.test_filters_oracles import vignette_reference

SAMPLES = [(0, 0), (39, 29), (20, 15), (5, 25), (33, 3), (12, 8), (27, 21)]
ROOT = FIXTURES.parent


def half_diagonal(width: int, height: int) -> float:
    return 0.5 * math.hypot(width, height)


def smooth(t: float) -> float:
    t = min(1.0, max(0.0, t))
    return t * t * (3 - 2 * t)


def write_png(path: Path, image: np.ndarray) -> Path:
    assert cv2.imwrite(str(path), image)
    return path


# ------------------------------------------------------------------ feather: radial / edges / brighten
@pytest.mark.parametrize("falloff", ["linear", "smoothstep"])
def test_radial_falloff_at_known_radii(backend: str, falloff: str) -> None:
    width, height, center, inner, outer = 40, 30, (0.4, 0.55), 0.2, 0.7
    image = np.full((height, width, 3), 0.8, np.float32)
    out = cvf.apply(image, "feather", mode="radial", center=center, inner=inner, outer=outer, falloff=falloff,
                    color=[0.0, 0.0, 0.0], backend=backend)
    curve = (lambda t: min(1.0, max(0.0, t))) if falloff == "linear" else smooth
    for x, y in SAMPLES:
        r = math.hypot(x + 0.5 - center[0] * width, y + 0.5 - center[1] * height) / half_diagonal(width, height)
        expected = 0.8 * (1 - curve((r - inner) / (outer - inner)))
        np.testing.assert_allclose(out[y, x], expected, atol=1e-5, err_msg=f"pixel {(x, y)} at r={r:.3f}")
    # known radii: untouched inside `inner`, fully faded beyond `outer`; halfway is 0.5 for both curves
    from cvfilters.filters.feather import radial_weight

    w = radial_weight(101, 1, (0.5, 0.5), 0.2, 0.6, falloff)[0]
    r = np.abs(np.arange(101) + 0.5 - 50.5) / half_diagonal(101, 1)
    assert np.all(w[r <= 0.2] == 1) and np.all(w[r >= 0.6] == 0)
    mid = np.argmin(np.abs(r - 0.4))
    expected_mid = 1 - curve((r[mid] - 0.2) / 0.4)
    assert abs(w[mid] - expected_mid) < 1e-6 and abs(w[mid] - 0.5) < 0.05
    quarter = 0.75 if falloff == "linear" else 1 - smooth(0.25)  # t = 1/4: 0.75 or 0.84375
    t = (r - 0.2) / 0.4
    near = np.argmin(np.abs(t - 0.25))
    assert abs(w[near] - quarter) < 0.03


def test_radial_hard_edge_when_outer_not_beyond_inner() -> None:
    image = np.full((20, 20), 1.0, np.float32)
    out = cvf.apply(image, "feather", mode="radial", inner=0.5, outer=0.5, color=[0.0])
    assert set(np.unique(out)) == {0.0, 1.0}


def edge_distance(width: int, height: int, x: int, y: int, shape: str) -> float:
    px, py = x + 0.5, y + 0.5
    if shape == "rect":
        return min(px, width - px, py, height - py)
    a, b = width / 2, height / 2
    vx, vy = px - a, py - b
    rho = math.sqrt((vx / a) ** 2 + (vy / b) ** 2)
    if rho == 0:
        return min(a, b)
    # the ray c + s v meets the ellipse at s = 1 / rho: the distance left along it is |v| (1/rho - 1)
    return max(0.0, math.hypot(vx, vy) * (1 / rho - 1))


@pytest.mark.parametrize("shape", ["rect", "ellipse"])
@pytest.mark.parametrize("falloff", ["linear", "smoothstep"])
def test_edges_weight_formula(backend: str, shape: str, falloff: str) -> None:
    width, height, radius = 40, 30, 9.0
    image = np.full((height, width, 3), 0.25, np.float32)
    out = cvf.apply(image, "feather", mode="edges", radius=radius, shape=shape, falloff=falloff,
                    color=[1.0, 1.0, 1.0], backend=backend)
    for x, y in SAMPLES + [(1, 14), (20, 1), (38, 14)]:
        t = min(1.0, edge_distance(width, height, x, y, shape) / radius)
        w = t if falloff == "linear" else smooth(t)
        np.testing.assert_allclose(out[y, x], w * 0.25 + (1 - w) * 1.0, atol=1e-5, err_msg=f"pixel {(x, y)}")


@pytest.mark.parametrize("mode", ["edges", "radial"])
def test_fill_colour_with_alpha_on_bgra_is_premultiplied_over(mode: str) -> None:
    """BGRA, fill=color (RGBA) with alpha 0.4: premultiplied ``w * in + (1 - w) * colour``, alpha included."""
    width, height, radius, color = 40, 30, 9.0, (0.2, 0.9, 0.6, 0.4)
    image = photo(height, width, 4, np.float32)
    params = {"radius": radius} if mode == "edges" else {"inner": 0.1, "outer": 0.8}
    out = cvf.apply(image, "feather", mode=mode, color=color, backend="cpu", **params).astype(np.float64)
    for x, y in SAMPLES + [(1, 14), (20, 1)]:
        if mode == "edges":
            w = min(1.0, edge_distance(width, height, x, y, "rect") / radius)
        else:
            r = math.hypot(x + 0.5 - width / 2, y + 0.5 - height / 2) / half_diagonal(width, height)
            w = 1 - min(1.0, max(0.0, (r - 0.1) / 0.7))
        a_in = float(image[y, x, 3])
        alpha = w * a_in + (1 - w) * color[3]
        premultiplied = w * image[y, x, :3] * a_in + (1 - w) * np.array(color[2::-1]) * color[3]  # RGB colour
        np.testing.assert_allclose(out[y, x, 3], alpha, atol=1e-5, err_msg=f"alpha at {(x, y)}")
        if alpha > 0.05:
            np.testing.assert_allclose(out[y, x, :3], premultiplied / alpha, atol=1e-4, err_msg=f"colour at {(x, y)}")


@pytest.mark.parametrize("channels", [1, 3])
def test_fill_colour_alpha_is_an_opacity_without_alpha(channels: int) -> None:
    """BGR and gray, a colour with alpha 0.25: ``out = in + 0.25 (1 - w) (colour - in)``."""
    width, height, radius = 40, 30, 9.0
    image = photo(height, width, channels, np.float32)
    color = (0.1, 0.8, 0.3, 0.25) if channels == 3 else (0.7, 0.25)
    out = cvf.apply(image, "feather", radius=radius, color=color, backend="cpu").astype(np.float64)
    target = np.array(color[2::-1]) if channels == 3 else np.array(color[0])  # colours are RGB(A)
    for x, y in SAMPLES + [(0, 14), (20, 0)]:
        w = min(1.0, edge_distance(width, height, x, y, "rect") / radius)
        expected = image[y, x] + 0.25 * (1 - w) * (target - image[y, x])
        np.testing.assert_allclose(out[y, x], expected, atol=1e-5, err_msg=f"pixel {(x, y)}")


def test_edges_to_transparent_adds_alpha(backend: str) -> None:
    image = photo(30, 40, 3, np.uint8)
    out = cvf.apply(image, "feather", fill="transparent", radius=10, backend=backend)
    assert out.shape == (30, 40, 4) and out.dtype == np.uint8
    np.testing.assert_array_equal(out[..., :3], image)
    for x, y in SAMPLES:
        expected = min(1.0, edge_distance(40, 30, x, y, "rect") / 10) * 255
        assert abs(int(out[y, x, 3]) - expected) <= 0.5 + 1e-9
    gray = cvf.apply(photo(30, 40, 1, np.uint16), "feather", fill="transparent", backend=backend)
    assert gray.shape == (30, 40, 4) and gray.dtype == np.uint16
    # an image with alpha keeps 4 channels: alpha is multiplied by the weight
    bgra = photo(30, 40, 4, np.float32)
    faded = cvf.apply(bgra, "feather", fill="transparent", radius=10, backend=backend)
    np.testing.assert_allclose(faded[15, 0, 3], bgra[15, 0, 3] * 0.05, atol=1e-6)
    np.testing.assert_array_equal(faded[..., :3], bgra[..., :3])
    flt = cvf.get_filter("feather")
    spec = cvf.ImageInfo(30, 40, 3, np.dtype(np.uint8))
    assert flt.output_info(flt.resolve({"fill": "transparent"}), spec).channels == 4
    assert flt.output_info(flt.resolve({"fill": "transparent", "mode": "brighten"}), spec) == spec


def brighten_reference(width: int, height: int, x: int, y: int, center, size: float) -> float:
    """The tutorial's loop body (V = 255 * dist^2 / (s2 * mSize)) at pixel centres, as a fraction."""
    ratio = width / height if width < height else height / width
    dx = center[0] * width - (x + 0.5)
    dy = center[1] * height - (y + 0.5)
    if width > height:
        dx *= ratio
    else:
        dy *= ratio
    s2 = (width / 2) ** 2 + (height / 2) ** 2
    return (dx * dx + dy * dy) / (s2 * size)


@pytest.mark.parametrize(("width", "height", "center", "size"),
                         [(40, 30, (0.5, 0.5), 0.5), (30, 40, (0.3, 0.6), 1.5), (24, 24, (0.5, 0.5), 2.0)])
def test_brighten_formula(backend: str, width: int, height: int, center, size: float) -> None:
    image = photo(height, width, 4, np.float32) * np.float32(0.7)
    out = cvf.apply(image, "feather", mode="brighten", center=center, size=size, backend=backend)
    np.testing.assert_array_equal(out[..., 3], image[..., 3])
    for x, y in SAMPLES:
        x, y = min(x, width - 1), min(y, height - 1)
        v = brighten_reference(width, height, x, y, center, size)
        np.testing.assert_allclose(out[y, x, :3], np.minimum(image[y, x, :3] + v, 1.0), atol=2e-6)
    eight = cvf.apply(np.full((height, width, 3), 100, np.uint8), "feather", mode="brighten", size=size,
                      center=center, backend=backend)
    v = brighten_reference(width, height, 0, 0, center, size)
    assert abs(int(eight[0, 0, 0]) - min(255.0, 100 + 255 * v)) <= 0.5 + 1e-6


# ------------------------------------------------------------------ feather_mask (GIMP gaussian, FeatherBlender ramp)
def mask_image() -> np.ndarray:
    mask = np.zeros((40, 50), np.float32)
    cv2.circle(mask, (18, 20), 11, 1.0, -1)
    mask[4:30, 32:47] = 1.0
    return mask


def gimp_feather(plane: np.ndarray, radius: float) -> np.ndarray:
    """GIMP's feather in scipy: a Gaussian of sigma radius / 3.5, 2 ceil(3 sigma) + 1 taps, edges replicated."""
    sigma = radius / 3.5
    return ndimage.gaussian_filter(plane.astype(np.float64), sigma, mode="nearest",
                                   truncate=math.ceil(3 * sigma) / sigma)


@pytest.mark.parametrize("radius", [3.5, 7.0, 12.0])
def test_gaussian_feather_uses_gimp_sigma(backend: str, radius: float) -> None:
    mask = mask_image()
    out = cvf.apply(mask, "feather_mask", radius=radius, method="gaussian", backend=backend)
    sigma = radius / 3.5
    half = math.ceil(3 * sigma)
    np.testing.assert_allclose(out, gimp_feather(mask, radius), atol=2e-6)
    wrong = ndimage.gaussian_filter(mask.astype(np.float64), radius / 3, mode="nearest", truncate=half / sigma)
    assert np.abs(out - wrong).max() > 1e-3  # the test tells sigma = r/3.5 from r/3
    np.testing.assert_allclose(masks.feather_mask(mask, radius), out, atol=1e-6)


@pytest.mark.parametrize("radius", [1.0, 2.5, 6.0])
def test_distance_ramp_is_featherblender_weight(backend: str, radius: float) -> None:
    mask = mask_image()
    out = cvf.apply(mask, "feather_mask", radius=radius, method="distance", backend=backend)
    distance = ndimage.distance_transform_cdt(mask > 0.5, metric="taxicab")
    expected = np.minimum(1.0, distance / radius)
    np.testing.assert_allclose(out, expected, atol=1e-6)
    eight = cvf.apply((mask * 255).astype(np.uint8), "feather_mask", radius=radius, method="distance",
                      backend=backend)
    assert np.abs(eight.astype(float) - np.round(expected * 255)).max() <= 1
    np.testing.assert_allclose(masks.feather_mask(mask, radius, method="distance"), expected, atol=1e-6)


def test_feather_mask_softens_each_channel_of_a_colour_image(backend: str) -> None:
    """A BGR image is three masks, each feathered on its own (not one channel back, not the first for all)."""
    mask = mask_image()
    image = np.ascontiguousarray(np.stack([mask, mask[::-1], mask[:, ::-1]], axis=2))
    out = cvf.apply(image, "feather_mask", radius=7.0, backend=backend)
    assert out.shape == image.shape
    for channel in range(3):
        np.testing.assert_allclose(out[..., channel], gimp_feather(image[..., channel], 7.0), atol=2e-6)


def test_feather_mask_on_bgra_softens_alpha_only(backend: str) -> None:
    image = photo(40, 50, 4, np.uint8)
    image[..., 3] = (mask_image() * 255).astype(np.uint8)
    out = cvf.apply(image, "feather_mask", radius=6, backend=backend)
    np.testing.assert_array_equal(out[..., :3], image[..., :3])
    sigma = 6 / 3.5
    side = 2 * math.ceil(3 * sigma) + 1
    expected = cv2.GaussianBlur(image[..., 3].astype(np.float32) / 255, (side, side), sigma,
                                borderType=cv2.BORDER_REPLICATE)
    assert np.abs(out[..., 3] / 255 - expected).max() <= 1 / 255 + 1e-6


# ------------------------------------------------------------------ masks: shapes and files
def test_rect_ellipse_circle_polygon_shapes() -> None:
    rect = masks.make_mask("rect:0.25,0.5,0.5,0.25", 40, 20)
    expected = np.zeros((20, 40), np.float32)
    expected[10:15, 10:30] = 1
    np.testing.assert_array_equal(rect, expected)
    np.testing.assert_array_equal(masks.make_mask("rect:10px,10px,20px,5px", 40, 20), expected)
    np.testing.assert_array_equal(masks.make_mask("RECT: 10px, 0.5, 0.5, 5PX", 40, 20), expected)

    ellipse = masks.make_mask("ellipse:0.5,0.5,0.3,0.4", 40, 20)
    yy, xx = np.mgrid[0:20, 0:40] + 0.5
    np.testing.assert_array_equal(ellipse, ((xx - 20) / 12) ** 2 + ((yy - 10) / 8) ** 2 <= 1)
    circle = masks.make_mask("circle:0.5,0.5,0.4", 40, 20)  # r: fraction of the shorter side
    np.testing.assert_array_equal(circle, np.hypot(xx - 20, yy - 10) <= 8)
    assert masks.make_mask("rect:0,0,1,1", 5, 3, invert=True).max() == 0

    polygon = masks.make_mask("polygon:0.1,0.1,0.9,0.2,0.5,0.9", 40, 40)
    from skimage.draw import polygon as draw_polygon

    reference = np.zeros((40, 40), np.float32)
    # skimage's coordinates are pixel indices (centres): continuous X is index X - 0.5
    rows, cols = draw_polygon(np.array([4, 8, 36]) - 0.5, np.array([4, 36, 20]) - 0.5, reference.shape)
    reference[rows, cols] = 1
    np.testing.assert_array_equal(polygon, reference)
    # a concave polygon (even-odd rule): the notch stays outside
    notch = masks.make_mask("polygon:0,0,40px,0,40px,40px,20px,10px,0,40px", 40, 40)
    assert notch[5, 20] == 1 and notch[30, 20] == 0 and notch[30, 2] == 1


@pytest.mark.parametrize("bad", ["rect:1,2,3", "ellipse:0.5,0.5,-1,0.2", "polygon:0,0,1,1", "rect:a,b,c,d",
                                 "circle:0.5,0.5,0.2,0.1", "rect:1,2,3,nan"])
def test_bad_shapes_are_usage_errors(bad: str) -> None:
    with pytest.raises(ValueError):
        masks.parse_shape(bad)
    with pytest.raises(ParameterError, match="^masked: mask="):
        cvf.get_filter("masked").resolve({"mask": bad, "filter": "invert"})


def test_shape_spec_canonical_round_trip() -> None:
    shape = masks.parse_shape(" ellipse: 0.50, .4 ,20px, 3.0E1PX")
    assert shape.to_text() == "ellipse:0.5,0.4,20px,30px"
    assert masks.parse_shape(shape.to_text()) == shape


def test_masks_from_files(tmp_path: Path) -> None:
    gray = np.zeros((20, 40), np.uint8)
    gray[5:15, 10:30] = 255
    np.testing.assert_array_equal(masks.load_mask(write_png(tmp_path / "g.png", gray)), gray / 255)
    bgra = np.zeros((20, 40, 4), np.uint8)
    bgra[..., :3] = 255  # white everywhere: only the alpha carries the mask
    bgra[..., 3] = gray // 2
    np.testing.assert_allclose(masks.load_mask(write_png(tmp_path / "a.png", bgra)), (gray // 2) / 255, atol=1e-7)
    opaque = np.dstack([gray, gray, gray, np.full_like(gray, 255)])
    np.testing.assert_allclose(masks.load_mask(write_png(tmp_path / "o.png", opaque)), gray / 255, atol=1e-6)
    sixteen = (gray.astype(np.uint16) * 257)
    np.testing.assert_array_equal(masks.load_mask(write_png(tmp_path / "s.png", sixteen)), gray / 255)
    stretched = masks.make_mask(tmp_path / "g.png", 80, 40)  # another size: stretched to the image
    assert stretched.shape == (40, 80)
    assert stretched[20, 40] == 1 and stretched[2, 2] == 0
    array = masks.make_mask(np.dstack([gray] * 3), 40, 20)  # a BGR array: its luma
    np.testing.assert_allclose(array, gray / 255, atol=1e-6)
    np.testing.assert_array_equal(masks.make_mask(gray > 0, 40, 20), gray > 0)


# ------------------------------------------------------------------ masked / apply_masked
@pytest.mark.parametrize(("style", "params"), [
    ("core_image", {"center": (0.4, 0.6), "radius": 0.3, "falloff": 0.5, "intensity": 0.9}),
    ("core_image", {"radius": 0.5, "falloff": 0.0, "intensity": -0.5}),
    ("gpuimage", {"center": (0.5, 0.5), "start": 0.3, "end": 0.75}),
    ("gpuimage", {"center": (0.3, 0.5), "start": 0.1, "end": 0.5, "aspect_correct": True}),
])
def test_vignette_effect_formulas(backend: str, style: str, params: dict) -> None:
    width, height = 40, 30
    image = np.full((height, width, 3), 0.6, np.float32)
    color = (0.2, 0.4, 1.0)  # B, G, R; colour parameters are written R, G, B
    out = cvf.apply(image, "vignette_effect", style=style, color=list(color[::-1]), backend=backend, **params)
    center = params.get("center", (0.5, 0.5))
    for x, y in SAMPLES:
        if style == "core_image":
            r = math.hypot(x + 0.5 - center[0] * width, y + 0.5 - center[1] * height) / half_diagonal(width, height)
            edge0, edge1 = params["radius"], params["radius"] + params["falloff"]
            ramp = float(r >= edge0) if edge1 == edge0 else smooth((r - edge0) / (edge1 - edge0))
            a = params["intensity"] * ramp
        else:
            dx, dy = (x + 0.5) / width - center[0], (y + 0.5) / height - center[1]
            if params.get("aspect_correct"):
                dy *= height / width
            a = smooth((math.hypot(dx, dy) - params["start"]) / (params["end"] - params["start"]))
        np.testing.assert_allclose(out[y, x], 0.6 + a * (np.array(color) - 0.6), atol=2e-6, err_msg=f"{(x, y)}")


def test_vignette_effect_keeps_alpha_and_gray() -> None:
    bgra = photo(20, 30, 4, np.uint8)
    out = cvf.apply(bgra, "vignette_effect", style="gpuimage")
    np.testing.assert_array_equal(out[..., 3], bgra[..., 3])
    gray = cvf.apply(np.full((20, 30), 1.0, np.float32), "vignette_effect", color=[1.0, 0.0, 0.0], radius=0.0,
                     falloff=0.0)
    np.testing.assert_allclose(gray, 0.299, atol=1e-6)  # the BT.601 luma of red


# ------------------------------------------------------------------ device parity for non-default parameters
PARITY_SPECS = [
    "feather:mode=edges,shape=ellipse,falloff=smoothstep,radius=7,color=[0.2,0.4,0.6,0.5]",
    "feather:mode=radial,center=[0.3,0.6],inner=0.1,outer=0.6,fill=transparent",
    "feather:mode=brighten,center=[0.6,0.4],size=0.8",
    "feather_mask:radius=5.5,method=distance",
    "feather_mask:radius=4,method=gaussian",
    "masked:mask='polygon:0.1,0.1,0.9,0.3,0.4,0.9',feather=4,feather_method=distance,"
    "filter='gaussian_blur:sigma=2 | invert'",
    "masked:mask='ellipse:0.5,0.5,0.3,0.4',feather=6,invert=true,filter=pixellate:size=4",
    "blend:mode=soft_light,color=[0.9,0.5,0.1],opacity=0.7,mask='circle:0.4,0.5,0.3',feather=5",
    "blend:mode=overlay,source=fixtures/badge-rgba.png,opacity=1",
    "blend:mode=difference,color=[0.3,0.6,0.9,0.8],opacity=0.9",
    "vignette_effect:style=gpuimage,aspect_correct=true,color=[0.1,0.2,0.3],start=0.2,end=0.6",
    "vignette_effect:style=core_image,radius=0.2,falloff=0.6,intensity=-0.7",
]


@pytest.mark.parametrize("spec", PARITY_SPECS)
@pytest.mark.parametrize(("dtype", "channels"), [(np.uint8, 3), (np.uint16, 1), (np.float32, 4)],
                         ids=["u8x3", "u16x1", "f32x4"])
def test_device_matches_cpu(device_backend: str, spec: str, dtype: type, channels: int, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    pipe = Pipeline.parse(spec)
    image = photo(40, 56, channels, dtype)
    expected = pipe(image, backend="cpu")
    actual, report = pipe.run(image, backend=device_backend)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    assert np.abs(visible(actual) - visible(expected)).max() <= PARITY_TOLERANCE[np.dtype(dtype)] + 1e-9
    assert not report.counters.fallbacks and report.counters.uploads == 1 and report.counters.downloads == 1
    again = pipe.run(image, backend=device_backend)[1]
    assert again.counters.constants == 0  # masks and planes stay on the device between runs


def test_errors_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        Pipeline.parse("masked:mask='rect:0,0,1,1'")  # filter is required
    with pytest.raises(ParameterError, match="^apply_masked: feather"):
        masks.apply_masked(photo(8, 8), "invert", "rect:0,0,1,1", feather=-1)



# ----------------------------------------------------------------------------- edges of the formulas
def test_smoothstep_with_equal_edges_is_a_step_at_edge0() -> None:
    """GLSL's step: 0 below edge0, 1 from it on; so vignette_effect radius=0, falloff=0 reaches the centre too."""
    np.testing.assert_array_equal(smoothstep(0.5, 0.5, np.array([0.25, 0.5, 0.75])), [0.0, 1.0, 1.0])
    image = np.full((5, 5, 3), 0.8, np.float32)  # odd sides: the centre pixel is at distance 0
    out = cvf.apply(image, "vignette_effect", radius=0.0, falloff=0.0, backend="cpu")
    np.testing.assert_array_equal(out, 0.0)


def test_radial_weight_linear_by_default_and_hard_edges() -> None:
    """``1 - clip((d - inner) / (outer - inner), 0, 1)``; ``outer <= inner``: 1 up to ``inner``, 0 beyond."""
    width, height = 9, 7
    y, x = np.mgrid[0:height, 0:width] + 0.5
    d = np.hypot(x - 0.3 * width, y - 0.6 * height) / half_diagonal(width, height)
    np.testing.assert_allclose(radial_weight(width, height, (0.3, 0.6), 0.2, 0.7),
                               1 - np.clip((d - 0.2) / 0.5, 0, 1), atol=1e-6)
    for outer in (0.3, 0.6):  # below inner, equal to it
        np.testing.assert_array_equal(radial_weight(width, height, (0.3, 0.6), 0.6, outer), d <= 0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by outer - inner = 0
        centre = radial_weight(5, 5, (0.5, 0.5), 0.0, 0.0)
    expected = np.zeros((5, 5))
    expected[2, 2] = 1.0  # distance 0 is not beyond inner = 0
    np.testing.assert_array_equal(centre, expected)


def test_one_value_colour_is_alpha_too_on_bgra() -> None:
    """A colour of one value fills every channel, alpha included, on BGRA (``[0]`` is transparent black)."""
    width, height, radius, value = 40, 30, 9.0, 0.5
    image = photo(height, width, 4, np.float32)
    out = cvf.apply(image, "feather", radius=radius, color=[value], backend="cpu").astype(np.float64)
    for x, y in SAMPLES:
        w = min(1.0, edge_distance(width, height, x, y, "rect") / radius)
        alpha = w * image[y, x, 3] + (1 - w) * value
        np.testing.assert_allclose(out[y, x, 3], alpha, atol=1e-5, err_msg=f"alpha at {(x, y)}")
        colour = (w * image[y, x, :3] * image[y, x, 3] + (1 - w) * value * value) / alpha
        np.testing.assert_allclose(out[y, x, :3], colour, atol=1e-4, err_msg=f"colour at {(x, y)}")


def test_fade_to_transparent_multiplies_alpha_per_radius_and_keeps_float_weights() -> None:
    """uint8 BGRA: ``alpha * w`` rounded, for each radius asked in turn; float32 BGR gets ``alpha = w`` unrounded."""
    width, height = 40, 30
    image = photo(height, width, 4, np.uint8)
    for radius in (4.0, 11.0):
        out = cvf.apply(image, "feather", fill="transparent", radius=radius, backend="cpu")
        np.testing.assert_array_equal(out[..., :3], image[..., :3])
        for x, y in SAMPLES + [(0, 15), (2, 15)]:
            w = min(1.0, edge_distance(width, height, x, y, "rect") / radius)
            assert abs(int(out[y, x, 3]) - image[y, x, 3] * w) <= 0.5 + 1e-6, (radius, x, y)
    bgr = photo(height, width, 3, np.float32)
    alpha = cvf.apply(bgr, "feather", fill="transparent", radius=10.0, backend="cpu")[..., 3]
    for x, y in SAMPLES:
        expected = min(1.0, edge_distance(width, height, x, y, "rect") / 10.0)
        assert alpha[y, x] == pytest.approx(expected, abs=1e-6), (x, y)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16], ids=["uint8", "uint16"])
def test_vignette_of_an_integer_image_keeps_its_dtype_and_rounds_each_pixel(backend: str, dtype: type) -> None:
    """``in * factor`` rounded, in the image's dtype, at every pixel of a colour image.

    Catches the multiply left without its output depth, which OpenCL refuses for an integer image times the
    float32 factor.
    """
    width, height, center, radius, intensity = 40, 30, (0.3, 0.6), 0.8, 1.2
    image = photo(height, width, 3, dtype)
    out = cvf.apply(image, "vignette", center=center, radius=radius, intensity=intensity, backend=backend)
    factor = np.array([[vignette_reference(width, height, x, y, center, radius, intensity) for x in range(width)]
                       for y in range(height)])
    assert out.dtype == dtype and out.shape == image.shape
    assert np.abs(out - image * factor[:, :, None]).max() <= 0.5 + 1e-3  # one rounding; float32 factor


def edge_weights(width: int, height: int, radius: float, shape: str) -> np.ndarray:
    """``clip(d / radius, 0, 1)`` at every pixel, ``d`` from :func:`edge_distance` (linear falloff)."""
    d = np.array([[edge_distance(width, height, x, y, shape) for x in range(width)] for y in range(height)])
    return np.clip(d / radius, 0.0, 1.0)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16], ids=["uint8", "uint16"])
def test_fade_toward_a_colour_on_integer_images_is_rounded_once(dtype: type) -> None:
    """``w * in + (1 - w) * colour * full_scale``, rounded once, at every pixel of an integer BGR image.

    Catches the colour scaled down instead of up to full scale, and ``in * w`` rounded to the integer
    dtype before the colour is added (errors up to one level).
    """
    width, height, radius, full = 40, 30, 9.0, np.iinfo(dtype).max
    image = photo(height, width, 3, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = cvf.apply(image, "feather", radius=radius, color=[0.1, 0.8, 0.3], backend="cpu")
    w = edge_weights(width, height, radius, "rect")[:, :, None]
    expected = w * image + (1 - w) * np.array([0.3, 0.8, 0.1]) * full  # BGR of the RGB colour
    assert out.dtype == dtype and np.abs(out - expected).max() <= 0.5 + 1e-3


def test_edge_weight_defaults_to_the_linear_rect_fade() -> None:
    """``edge_weight(W, H, radius)`` without shape and falloff: ``clip(min(x, W - x, y, H - y) / radius, 0, 1)``."""
    np.testing.assert_allclose(edge_weight(9, 7, 2.5), edge_weights(9, 7, 2.5, "rect"), atol=1e-6)


@pytest.mark.parametrize("shape", ["rect", "ellipse"])
def test_edges_radius_zero_is_no_fade_and_one_pixel_fades_the_border(shape: str) -> None:
    """Odd sides (a pixel centre on the ellipse's centre): radius 0 leaves the image, no division by zero;
    radius 1 fades the border pixels (centres 0.5 px in) halfway and keeps the centre pixel, without warnings.
    """
    width, height = 31, 21
    image = photo(height, width, 3, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 at the centre, no d / 0
        np.testing.assert_array_equal(cvf.apply(image, "feather", radius=0.0, shape=shape, backend="cpu"), image)
        faded = cvf.apply(image, "feather", radius=0.0, shape=shape, fill="transparent", backend="cpu")
        out = cvf.apply(image, "feather", radius=1.0, shape=shape, color=[1.0], backend="cpu")
    np.testing.assert_array_equal(faded[..., :3], image)
    np.testing.assert_array_equal(faded[..., 3], 1.0)
    w = edge_weights(width, height, 1.0, shape)[:, :, None]
    np.testing.assert_allclose(out, w * image + (1 - w), atol=1e-5)
    assert w[height // 2, width // 2, 0] == 1 and w[0, width // 2, 0] == pytest.approx(0.5)


def test_vignette_factor_is_the_documented_float32_plane() -> None:
    """``vignette_factor``: the (H, W) float32 factor ``clip(1 - intensity (r / R)^2, 0, 1)``; a window is its slice.

    Catches a float64 plane (twice the device memory, and a mixed-type multiply for every image).
    """
    width, height, center, radius, intensity = 23, 17, (0.3, 0.6), 0.7, 1.5
    factor = vignette_factor(width, height, center, radius, intensity)
    expected = [[vignette_reference(width, height, x, y, center, radius, intensity) for x in range(width)]
                for y in range(height)]
    assert factor.dtype == np.float32 and factor.shape == (height, width)
    np.testing.assert_allclose(factor, expected, atol=1e-6)
    window = vignette_factor(width, height, center, radius, intensity, (4, 11, 2, 19))
    np.testing.assert_array_equal(window, factor[4:11, 2:19])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16], ids=["uint8", "uint16"])
def test_fade_to_transparent_on_integer_bgra_rounds_alpha_times_weight(backend: str, dtype: type) -> None:
    """Integer BGRA on every backend: colour kept, ``alpha * w`` rounded in the image's dtype.

    Catches the alpha multiply left without its output depth, which OpenCL refuses for an integer alpha times
    the float32 weight.
    """
    width, height, radius = 40, 30, 9.0
    image = photo(height, width, 4, dtype)
    out = cvf.apply(image, "feather", fill="transparent", radius=radius, backend=backend)
    assert out.dtype == dtype and out.shape == image.shape
    np.testing.assert_array_equal(out[..., :3], image[..., :3])
    expected = image[..., 3] * edge_weights(width, height, radius, "rect")
    assert np.abs(out[..., 3] - expected).max() <= 0.5 + 1e-3
