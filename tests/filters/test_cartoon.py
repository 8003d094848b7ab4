"""Cartoon looks (cvfilters/filters/cartoon.py): the properties that define each effect, and oracles.

Photos come from scikit-image (astronaut, coffee, chelsea). Formula oracles re-evaluate
GPUImage's shaders (toon, halftone, crosshatch) in numpy. Kuwahara and the host-only looks of
filters/stylize.py are tested in test_stylize.py, which shares the photo helpers here.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import skimage.data
from scipy import ndimage

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters._shared.quantize import kmeans, quantize_palette
from tests.conftest import FIXTURES, PARITY_TOLERANCE, photo, to_dtype, visible

PHOTOS = ("astronaut", "coffee", "chelsea")
# GPUImageCrosshatchFilter's fragment shader, written out: (luminance below, x + direction y, offset in spacings)
#   if (lum < 1.00) mod(x + y, s) <= w;            if (lum < 0.75) mod(x - y, s) <= w;
#   if (lum < 0.50) mod(x + y - s / 2, s) <= w;    if (lum < 0.30) mod(x - y - s / 2, s) <= w
GPUIMAGE_HATCHES = ((1.0, 1, 0.0), (0.75, -1, 0.0), (0.5, 1, 0.5), (0.3, -1, 0.5))
LUMA = np.array([0.0721, 0.7154, 0.2125])  # Rec. 709 in BGR order, GPUImage's W


def sk_photo(name: str) -> np.ndarray:
    """A scikit-image photo as 8-bit BGR."""
    return np.ascontiguousarray(cv2.cvtColor(getattr(skimage.data, name)(), cv2.COLOR_RGB2BGR))


def distinct_colours(image: np.ndarray) -> int:
    pixels = image.reshape(-1, 1 if image.ndim == 2 else image.shape[-1])
    if pixels.dtype.kind == "u" and pixels.dtype.itemsize * pixels.shape[1] <= 8:
        # each pixel's channels packed into one integer: np.unique of a flat array, not of rows (10x faster)
        codes = np.zeros(len(pixels), np.uint64)
        for column in pixels.T:
            codes = (codes << np.uint64(8 * pixels.dtype.itemsize)) | column
        return len(np.unique(codes))
    return len(np.unique(pixels, axis=0))


def mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))


def luminance(image: np.ndarray) -> np.ndarray:
    """Float64 Rec. 709 luminance in 0..1 of a uint8 image."""
    values = image.astype(np.float64) / 255
    return values if values.ndim == 2 else values @ LUMA


# ------------------------------------------------------------------------------ quantize
# Each photo once and each k once: every case takes the same path (k-means fitted on a 32,768-pixel
# sample, every pixel then mapped), whose cost does not fall with k or the photo; all 9 pairs took 3x longer.
@pytest.mark.parametrize(("name", "k"), [("astronaut", 4), ("coffee", 8), ("chelsea", 16)])
def test_quantize_has_at_most_k_colours_and_beats_posterize(name: str, k: int) -> None:
    # half size: k-means takes seconds on the whole photo (and every half-size photo is over the sample size)
    image = cv2.resize(sk_photo(name), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    out = cvf.apply(image, "quantize", k=k, backend="cpu")
    assert distinct_colours(out) <= k
    levels = 2
    while True:  # the coarsest posterize that shows at least as many colours
        posterized = cvf.apply(image, "posterize", levels=levels, backend="cpu")
        if distinct_colours(posterized) >= k:
            break
        levels += 1
    assert mse(out, image) < mse(posterized, image)


def test_quantize_palette_returns_the_colours_used_most_first() -> None:
    image = sk_photo("coffee")
    out, palette = quantize_palette(image, 6, seed=3)
    assert palette.shape == (6, 3) and palette.dtype == np.uint8
    labels = np.unique(out.reshape(-1, 3), axis=0, return_counts=True)
    used = {tuple(c): n for c, n in zip(*labels, strict=True)}
    assert set(used) == {tuple(c) for c in palette}
    counts = [used[tuple(c)] for c in palette]
    assert counts == sorted(counts, reverse=True)
    # the filter and the function agree
    np.testing.assert_array_equal(cvf.apply(image, "quantize", k=6, seed=3, backend="cpu"), out)


def test_quantize_lab_space_and_gray() -> None:
    image = sk_photo("chelsea")
    out, palette = quantize_palette(image, 5, space="lab")
    assert distinct_colours(out) <= 5 and len(palette) <= 5
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    out, palette = quantize_palette(gray, 4)
    assert out.shape == gray.shape and palette.shape[1] == 1 and len(np.unique(out)) <= 4


@pytest.mark.parametrize("dtype", [np.uint16, np.float32])
def test_quantize_keeps_depth(dtype: type) -> None:
    image = to_dtype(sk_photo("astronaut")[::4, ::4], dtype)
    out, palette = quantize_palette(image, 8)
    assert out.dtype == dtype and palette.dtype == dtype and distinct_colours(out) <= 8
    # uint16 palettes are not rounded to 8-bit steps
    if dtype == np.uint16:
        assert np.any(palette % 257)


def test_quantize_same_seed_same_result_and_alpha_kept() -> None:
    image = photo(60, 80, 4, np.uint8)
    first = cvf.apply(image, "quantize", k=5, seed=11, backend="cpu")
    second = cvf.apply(image, "quantize", k=5, seed=11, backend="cpu")
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first[..., 3], image[..., 3])


def test_quantize_fewer_distinct_colours_than_k() -> None:
    tiny = np.array([[[10, 20, 30]]], dtype=np.uint8)
    out, palette = quantize_palette(tiny, 8)
    np.testing.assert_array_equal(out, tiny)
    assert palette.tolist() == [[10, 20, 30]]
    two = np.zeros((4, 4, 3), np.uint8)
    two[:, 2:] = 200
    out, palette = quantize_palette(two, 16)
    np.testing.assert_array_equal(out, two)
    assert len(palette) == 2


def test_kmeans_finds_separated_clusters() -> None:
    rng = np.random.default_rng(0)
    truth = np.array([[0.1, 0.1], [0.9, 0.2], [0.5, 0.8]])
    samples = np.concatenate([c + 0.01 * rng.standard_normal((200, 2)) for c in truth])
    centers = kmeans(samples, 3, seed=5)
    assert np.abs(np.sort(centers, axis=0) - np.sort(truth, axis=0)).max() < 0.01


@pytest.mark.parametrize("bad", [{"k": 0}, {"space": "hsv"}])
def test_quantize_palette_rejects_bad_arguments(bad: dict) -> None:
    values = {"k": 4, **bad}
    k = values.pop("k")
    with pytest.raises(ValueError, match="Incorrect value of `(k|space)`"):
        quantize_palette(photo(8, 8), k, **values)


# ------------------------------------------------------------------------------ cartoon
def outline_measures(image: np.ndarray, out: np.ndarray) -> dict[str, float]:
    """Outline (pure black) pixels near and far from Canny edges of the input, and their shape."""
    black = out.max(axis=-1) == 0
    gray = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    canny = cv2.Canny(gray, 100, 200).astype(np.uint8)
    near = cv2.dilate(canny, np.ones((5, 5), np.uint8)) > 0
    far = cv2.dilate(canny, np.ones((15, 15), np.uint8)) == 0
    labels, _ = ndimage.label(black, structure=np.ones((3, 3)))
    sizes = np.bincount(labels.ravel())[1:]
    covered = cv2.dilate(black.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    return {
        "near": float(black[near].mean()),
        "far": float(black[far].mean()),
        "canny_covered": float(covered[canny > 0].mean()),
        "in_strokes": float(sizes[sizes >= 30].sum() / max(1, sizes.sum())),  # share of outline in big components
    }


def flat_share(image: np.ndarray, where: np.ndarray) -> float:
    """Share of pixels (under ``where``) whose 3 x 3 neighbourhood has a single colour."""
    codes = image.astype(np.int64) @ np.array([1, 256, 65536])
    same = ndimage.maximum_filter(codes, 3) == ndimage.minimum_filter(codes, 3)
    return float(same[where].mean())


@pytest.mark.parametrize("name", PHOTOS)
@pytest.mark.parametrize("edges", ["adaptive", "laplacian"])
def test_cartoon_has_dark_connected_outlines_on_strong_edges(name: str, edges: str) -> None:
    image = sk_photo(name)
    out = cvf.apply(image, "cartoon", edges=edges, backend="cpu")
    measures = outline_measures(image, out)
    assert measures["near"] > 0.15, measures  # many outline pixels along strong edges
    assert measures["far"] < 0.03, measures  # almost none away from them
    assert measures["near"] > 10 * measures["far"], measures
    assert measures["canny_covered"] > 0.5, measures  # most strong edges get an outline
    assert measures["in_strokes"] > 0.5, measures  # outlines are strokes, not speckle


@pytest.mark.parametrize("name", PHOTOS)
def test_cartoon_flat_regions_with_few_colours(name: str) -> None:
    image = sk_photo(name)
    out = cvf.apply(image, "cartoon", colors=8, backend="cpu")
    assert distinct_colours(out) <= 8 + 1  # the palette plus black outlines
    inside = out.max(axis=-1) > 0
    assert flat_share(out, inside) > 0.6
    assert flat_share(out, inside) > 5 * flat_share(image, inside)


def test_cartoon_posterize_and_none() -> None:
    image = sk_photo("chelsea")
    posterized = cvf.apply(image, "cartoon", quantize="posterize", levels=3, edges="none", backend="cpu")
    assert set(np.unique(posterized)) <= {0, 128, 255}  # round(c * 2) / 2 in 8-bit
    smooth = cvf.apply(image, "cartoon", quantize="none", edges="none", backend="cpu")
    assert distinct_colours(smooth) > 1000  # smoothing alone keeps the gradations
    with pytest.raises(cvf.ParameterError, match="nothing to do"):
        cvf.get_filter("cartoon").resolve({"edges": "none", "quantize": "none", "passes": 0})


def test_cartoon_same_seed_same_output() -> None:
    image = sk_photo("coffee")[::2, ::2]
    first = cvf.apply(image, "cartoon", seed=4, backend="cpu")
    np.testing.assert_array_equal(first, cvf.apply(image, "cartoon", seed=4, backend="cpu"))


@pytest.mark.parametrize("edges", ["adaptive", "laplacian"])
def test_cartoon_sensitivity_and_thickness_add_outline(edges: str) -> None:
    image = sk_photo("astronaut")[::2, ::2]

    def outline(**params: float) -> float:
        out = cvf.apply(image, "cartoon", edges=edges, quantize="none", **params, backend="cpu")
        return float((out.max(axis=-1) == 0).mean())

    assert outline(sensitivity=0.2) < outline(sensitivity=0.5) < outline(sensitivity=0.9)
    assert outline(thickness=1) < outline(thickness=2) < outline(thickness=4)


RECIPE = {"passes": 7, "quantize": "none", "sensitivity": 1.0, "thickness": 1}


def test_cartoon_uint8_colour_is_the_recipe_and_agrees_with_the_float_path() -> None:
    image = sk_photo("chelsea")
    out = cvf.apply(image, "cartoon", **RECIPE, backend="cpu")
    # cv2 parity: the recipe's colour path (half scale, 7 bilateral d=9 sigma 20/7 with clamped edges, back)
    small = cv2.resize(image, (round(image.shape[1] / 2), round(image.shape[0] / 2)), interpolation=cv2.INTER_AREA)
    for _ in range(7):
        small = cv2.bilateralFilter(small, 9, 20, 7, borderType=cv2.BORDER_REPLICATE)
    colour = cv2.resize(small, image.shape[1::-1], interpolation=cv2.INTER_LINEAR)
    kept = out.max(axis=-1) > 0
    np.testing.assert_array_equal(out[kept], colour[kept])
    assert 0.02 < 1 - kept.mean() < 0.3  # outlines drawn (their rule is tested below)
    # independent of cv2's 8-bit bilateral: the float32 path of the same recipe, within a level on average
    as_float = cvf.apply(image.astype(np.float32) / 255, "cartoon", **RECIPE, backend="cpu")
    assert np.abs(as_float * 255 - out)[kept].mean() < 1.0


def outline_mask(out: np.ndarray) -> np.ndarray:
    return out.max(axis=-1) == 0


def lifted(name: str) -> np.ndarray:
    """A photo with no black pixel, so black in the output is exactly the outline."""
    return np.maximum(sk_photo(name), 1)


# C of cv2.adaptiveThreshold in 8-bit levels and the Laplacian limit, as documented in
# `cvfilters info cartoon`: 2 + 18 (1 - s) and 4 + 60 (1 - s), written out per case.
ADAPTIVE_C = {0.3: 14.6, 1.0: 2.0, 0.5: 11.0}
LAPLACIAN_LIMIT = {0.3: 46.0, 0.8: 16.0}


@pytest.mark.parametrize(("sensitivity", "edge_blur", "block"), [(0.3, 7, 9), (1.0, 5, 15), (0.5, 1, 3)])
def test_cartoon_adaptive_edges_are_adaptive_threshold_rule(sensitivity: float, edge_blur: int, block: int) -> None:
    image = lifted("chelsea")
    out = cvf.apply(image, "cartoon", quantize="none", passes=0, thickness=1, sensitivity=sensitivity,
                    edge_blur=edge_blur, block=block, backend="cpu")
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float64)
    if edge_blur > 1:  # median with a replicated border
        gray = ndimage.median_filter(gray, edge_blur, mode="nearest")
    mean = ndimage.uniform_filter(gray, block, mode="nearest")
    # cv2.adaptiveThreshold's rule (outline where gray <= mean - C) on whole numbers: block^2 (gray - mean + C)
    area = block * block
    expected = np.rint(area * (gray - mean)) + round(area * ADAPTIVE_C[sensitivity]) <= 0
    np.testing.assert_array_equal(outline_mask(out), expected)


@pytest.mark.parametrize("sensitivity", list(LAPLACIAN_LIMIT))
def test_cartoon_laplacian_edges_are_the_documented_rule(sensitivity: float) -> None:
    image = lifted("coffee")[::2, ::2]
    out = cvf.apply(image, "cartoon", edges="laplacian", quantize="none", passes=0, thickness=1,
                    sensitivity=sensitivity, edge_blur=3, backend="cpu")
    gray = ndimage.median_filter(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float64), 3, mode="nearest")
    surround = ndimage.correlate(gray, np.array([[1, 1, 1], [1, -8, 1], [1, 1, 1]], float), mode="nearest")
    np.testing.assert_array_equal(outline_mask(out), surround >= LAPLACIAN_LIMIT[sensitivity])


# OpenCV's elliptic structuring elements (cv2.getStructuringElement(MORPH_ELLIPSE, ...)), by hand.
DISCS = {3: [[0, 1, 0], [1, 1, 1], [0, 1, 0]],
         5: [[0, 0, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0]]}


@pytest.mark.parametrize("thickness", [3, 5])
def test_cartoon_thickness_dilates_the_outline_by_a_disc(thickness: int) -> None:
    image = lifted("astronaut")[::4, ::4]
    params = {"quantize": "none", "passes": 0, "edges": "adaptive"}
    thin = outline_mask(cvf.apply(image, "cartoon", thickness=1, backend="cpu", **params))
    thick = outline_mask(cvf.apply(image, "cartoon", thickness=thickness, backend="cpu", **params))
    expected = ndimage.binary_dilation(thin, structure=np.array(DISCS[thickness], bool))
    np.testing.assert_array_equal(thick, expected)
    assert thick.sum() > 1.5 * thin.sum()


def block_mean_2x2(values: np.ndarray) -> np.ndarray:
    """INTER_AREA at exactly half size: the mean of each 2 x 2 block."""
    h, w = values.shape[0] // 2, values.shape[1] // 2
    return values[: 2 * h, : 2 * w].reshape(h, 2, w, 2, -1).mean(axis=(1, 3))


def linear_upscale(values: np.ndarray, height: int, width: int) -> np.ndarray:
    """INTER_LINEAR resize: source ``(x + 0.5) in / out - 0.5``, clamped to the edge pixels."""
    def axis(n_out: int, n_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = np.maximum((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0)
        i0 = np.minimum(np.floor(s).astype(int), n_in - 1)
        return i0, np.minimum(i0 + 1, n_in - 1), s - np.floor(s)

    y0, y1, fy = axis(height, values.shape[0])
    x0, x1, fx = axis(width, values.shape[1])
    rows = values[y0] * (1 - fy)[:, None, None] + values[y1] * fy[:, None, None]
    return rows[:, x0] * (1 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None]


@pytest.mark.parametrize(("passes", "scale", "diameter", "sigma_color", "sigma_space"),
                         [(1, 1.0, 5, 30.0, 4.0), (3, 1.0, 5, 30.0, 4.0), (2, 1.0, 7, 60.0, 1.5),
                          (2, 0.5, 5, 30.0, 4.0)])
def test_cartoon_smoothing_is_repeated_bilateral_at_scale(passes: int, scale: float, diameter: int,
                                                          sigma_color: float, sigma_space: float) -> None:
    """``passes`` bilateral filters (replicated border) at ``scale``: numpy's bilateral, block means, linear."""
    from tests.filters.test_blur import bilateral_reference

    image = photo(30, 36, 3, np.float32)  # the float32 colour path (uint8 without k-means runs the 8-bit recipe)
    out = cvf.apply(image, "cartoon", edges="none", quantize="none", passes=passes, scale=scale,
                    diameter=diameter, sigma_color=sigma_color, sigma_space=sigma_space, backend="cpu") * 255
    work = image.astype(np.float64)
    if scale != 1.0:
        work = block_mean_2x2(work)
    for _ in range(passes):
        work = bilateral_reference(work, diameter, sigma_color / 255, sigma_space, pad="edge")
    if scale != 1.0:
        work = linear_upscale(work, 30, 36)
    # cv2's tabulated colour weight (float32 bilateral); one pass more or less is >= 13 levels
    assert np.abs(out - work * 255).max() <= 0.75


def test_cartoon_seed_and_colors_change_the_palette() -> None:
    image = sk_photo("coffee")[::4, ::4]
    params = {"edges": "none", "passes": 1}
    four = cvf.apply(image, "cartoon", colors=4, backend="cpu", **params)
    twelve = cvf.apply(image, "cartoon", colors=12, backend="cpu", **params)
    assert distinct_colours(four) == 4 and distinct_colours(twelve) == 12
    seeds = {cvf.apply(image, "cartoon", colors=12, seed=s, backend="cpu", **params).tobytes() for s in range(4)}
    assert len(seeds) > 1  # the seed picks k-means' starting centres


def test_cartoon_levels_posterize_to_that_many_values() -> None:
    ramp = np.linspace(0, 255, 64).round().astype(np.uint8)
    image = np.dstack([np.tile(ramp, (16, 1))] * 3)  # every level from black to white
    for levels in (2, 4):
        out = cvf.apply(image, "cartoon", quantize="posterize", levels=levels, edges="none", backend="cpu")
        expected = {round(255 * i / (levels - 1)) for i in range(levels)}
        assert set(np.unique(out)) == expected


# ------------------------------------------------------------------------------ toon
def gpuimage_toon(image: np.ndarray, threshold: float, levels: int, source: str) -> tuple[np.ndarray, np.ndarray]:
    """GPUImageToonFilter's fragment shader in numpy (clamped edges); output and magnitude."""
    colour = image.astype(np.float64) / 255
    intensity = colour[..., 2] if source == "red" else colour @ LUMA
    p = np.pad(intensity, 1, mode="edge")
    top_left, top, top_right = p[:-2, :-2], p[:-2, 1:-1], p[:-2, 2:]
    left, right = p[1:-1, :-2], p[1:-1, 2:]
    bottom_left, bottom, bottom_right = p[2:, :-2], p[2:, 1:-1], p[2:, 2:]
    h = -top_left - 2.0 * top - top_right + bottom_left + 2.0 * bottom + bottom_right
    v = -bottom_left - 2.0 * left - top_left + bottom_right + 2.0 * right + top_right
    mag = np.hypot(h, v)
    posterized = np.floor(colour * levels + 0.5) / levels
    threshold_test = 1.0 - (mag >= threshold)
    return posterized * threshold_test[..., None], mag


@pytest.mark.parametrize("source", ["red", "luminance"])
@pytest.mark.parametrize(("threshold", "levels"), [(0.2, 10), (0.5, 4)])
def test_toon_matches_gpuimage_formula(source: str, threshold: float, levels: int) -> None:
    image = photo(36, 48, 3, np.uint8)
    out = cvf.apply(image, "toon", threshold=threshold, levels=levels, source=source, smoothing=0, backend="cpu")
    expected, mag = gpuimage_toon(image, threshold, levels, source)
    decided = np.abs(mag - threshold) > 1e-4  # ties are float-rounding dependent
    difference = np.abs(out / 255.0 - expected).max(axis=-1)
    assert difference[decided].max() <= 0.5 / 255 + 1e-9
    assert 0.05 < (expected.max(axis=-1) == 0).mean() < 0.9  # the case has both outlines and colour


def test_smooth_toon_is_toon_of_the_blurred_image() -> None:
    image = photo(40, 40, 3, np.uint8)
    out = cvf.apply(image, "smooth_toon", blur=1.5, backend="cpu").astype(np.float64) / 255
    blurred = cv2.GaussianBlur(image.astype(np.float32) / 255, (13, 13), 1.5, borderType=cv2.BORDER_REPLICATE)
    expected, mag = gpuimage_toon(blurred * 255, 0.2, 10, "luminance")
    decided = np.abs(mag - 0.2) > 1e-4
    assert np.abs(out - expected).max(axis=-1)[decided].max() <= 0.5 / 255 + 1e-6
    # blurring first leaves fewer outline pixels than toon on the raw image
    raw = cvf.apply(image, "toon", smoothing=0, threshold=0.2, backend="cpu")
    assert (out.max(axis=-1) == 0).mean() < (raw.max(axis=-1) == 0).mean()


def specks(out: np.ndarray) -> int:
    """Black blobs of at most 4 pixels (8-connected): the speckles toon sprays over texture."""
    black = (out.max(axis=-1) == 0).astype(np.uint8)
    _, _, stats, _ = cv2.connectedComponentsWithStats(black, connectivity=8)
    return int((stats[1:, cv2.CC_STAT_AREA] <= 4).sum())


def test_toon_defaults_draw_outlines_without_speckles_on_fur() -> None:
    cat = cv2.imread(str(FIXTURES / "chelsea.jpg"))
    out = cvf.apply(cat, "toon", backend="cpu")
    gpuimage = cvf.apply(cat, "toon", smoothing=0, threshold=0.2, backend="cpu")  # the shader's own defaults
    assert specks(out) <= 10 < 50 <= specks(gpuimage)  # 5 against 104 at this size
    assert 0.01 < (out.max(axis=-1) == 0).mean() < 0.1  # outlines are still drawn (eyes, nose)
    smoothed = cv2.GaussianBlur(cat.astype(np.float32) / 255, (17, 17), 2.0, borderType=cv2.BORDER_REPLICATE)
    expected, mag = gpuimage_toon(smoothed * 255, 0.3, 10, "luminance")
    decided = np.abs(mag - 0.3) > 1e-3
    outline = expected.max(axis=-1) == 0  # outlines found on the smoothed luminance (colour posterized unsmoothed)
    assert ((out.max(axis=-1) == 0) == outline)[decided].mean() > 0.999


# ------------------------------------------------------------------------------ sketch
def test_sketch_gray_is_white_on_flat_areas_and_dark_on_edges() -> None:
    image = np.full((40, 120, 3), 180, np.uint8)
    image[:, 60:] = 30
    out = cvf.apply(image, "sketch", blur=4.0, shading=0.0, backend="cpu")
    assert np.all(out[..., 0] == out[..., 1]) and np.all(out[..., 1] == out[..., 2])
    assert out[:, :20].min() == 255 and out[:, -20:].min() == 255  # flat paper stays white, dark or light
    assert out[:, 60:63].mean() < 160  # the edge is drawn, on its dark side


def test_sketch_strength_darkens_and_color_mode_is_coloured_pencil() -> None:
    image = sk_photo("chelsea")[::2, ::2].copy()
    light = cvf.apply(image, "sketch", strength=1.0, backend="cpu").mean()
    dark = cvf.apply(image, "sketch", strength=2.5, backend="cpu").mean()
    assert dark < light
    out = cvf.apply(image, "sketch", mode="color", strength=1.5, shading=0.3, blur=4.0, backend="cpu")
    # numpy oracle: Rec. 709 luminance dodged by its blurred negative, strokes in the pixel's colour on white
    unit = image.astype(np.float64) / 255
    y = unit @ np.array([0.0721, 0.7154, 0.2125])
    blurred = cv2.GaussianBlur((1 - y).astype(np.float32), (33, 33), 4.0, borderType=cv2.BORDER_REPLICATE)
    dodge = np.clip((y + 1 / 64) / (1 - blurred + 1 / 64), 0, 1)
    lines = np.clip(1 - 1.5 * (1 - dodge), 0, 1)[..., None]
    expected = (1 - (1 - lines) * (1 - unit)) * (0.7 + 0.3 * unit)
    assert np.abs(out - expected * 255).max() <= 1.0
    assert out.mean() > 170 and np.abs(out.astype(int) - out[..., :1]).mean() > 5  # light paper, coloured strokes


# ------------------------------------------------------------------------------ halftone, crosshatch
def halftone_reference(image: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """GPUImage's halftone in pixels: white where the distance to the cell centre >= size/2 (1 - mean Y)."""
    lum = luminance(image)
    height, width = lum.shape
    rows, cols = -(-height // size), -(-width // size)
    padded = np.pad(lum, ((0, rows * size - height), (0, cols * size - width)), mode="edge")
    means = padded.reshape(rows, size, cols, size).mean(axis=(1, 3))
    radius = np.kron(0.5 * size * (1 - means), np.ones((size, size)))[:height, :width]
    y, x = np.mgrid[0:height, 0:width] + 0.5
    distance = np.hypot(x - (np.floor(x / size) + 0.5) * size, y - (np.floor(y / size) + 0.5) * size)
    return distance >= radius, np.abs(distance - radius)


@pytest.mark.parametrize("size", [4, 7])
def test_halftone_matches_formula(size: int) -> None:
    image = photo(45, 62, 3, np.uint8)
    out = cvf.apply(image, "halftone", size=size, backend="cpu")
    white, margin = halftone_reference(image, size)
    assert set(np.unique(out)) <= {0, 255}
    decided = margin > 1e-4
    np.testing.assert_array_equal((out[..., 0] == 255)[decided], white[decided])


def test_halftone_dot_area_follows_darkness() -> None:
    black = cvf.apply(np.zeros((64, 64), np.uint8), "halftone", size=16, backend="cpu")
    assert abs((black == 0).mean() - np.pi / 4) < 0.03  # touching dots cover pi/4 of each cell
    white = cvf.apply(np.full((64, 64), 255, np.uint8), "halftone", size=16, backend="cpu")
    assert white.min() == 255


def crosshatch_reference(image: np.ndarray, spacing: float, width: float) -> np.ndarray:
    lum = luminance(image)
    y, x = np.mgrid[0:lum.shape[0], 0:lum.shape[1]] + 0.5
    black = np.zeros(lum.shape, bool)
    for limit, direction, offset in GPUIMAGE_HATCHES:
        black |= (lum < limit) & (np.mod(x + direction * y - offset * spacing, spacing) <= width)
    return ~black


def test_crosshatch_matches_formula() -> None:
    image = photo(50, 70, 3, np.uint8)
    out = cvf.apply(image, "crosshatch", spacing=10, line_width=1.5, backend="cpu")
    np.testing.assert_array_equal(out[..., 0] == 255, crosshatch_reference(image, 10, 1.5))


def test_crosshatch_density_follows_darkness() -> None:
    ramp = np.tile(np.linspace(0, 255, 100).astype(np.uint8), (60, 1))
    out = cvf.apply(ramp, "crosshatch", backend="cpu")
    ink = (out == 0).mean(axis=0)
    assert ink[:20].mean() > 2 * ink[-30:-1].mean() > 0
    assert ink[-1] == 0  # pure white is not hatched


# ------------------------------------------------------------------------------ backends
DEVICE_CASES = [
    ("cartoon", {}),
    ("cartoon", {"edges": "laplacian", "quantize": "posterize", "thickness": 3, "sensitivity": 0.8}),
    ("cartoon", {"scale": 1.0, "passes": 2, "colors": 12, "seed": 9}),
    ("cartoon", {"quantize": "none"}),  # uint8: the classic recipe's 8-bit colour path
    ("toon", {"threshold": 0.3, "levels": 6}),
    ("smooth_toon", {"blur": 3.0, "source": "red"}),
    ("kuwahara", {"radius": 2}),
    ("kuwahara", {"radius": 7, "border": "reflect101"}),
    ("sketch", {"blur": 3.0, "strength": 2.0, "shading": 0.5}),
    ("sketch", {"mode": "color", "blur": 3.0, "shading": 0.4}),
    ("halftone", {"size": 5}),
    ("crosshatch", {"spacing": 7, "line_width": 2}),
    ("quantize", {"k": 6, "space": "lab"}),
]


@pytest.mark.parametrize(("name", "params"), DEVICE_CASES, ids=lambda v: v if isinstance(v, str) else None)
@pytest.mark.parametrize(("dtype", "channels"), [(np.uint8, 3), (np.uint16, 3), (np.float32, 4), (np.uint8, 1)])
def test_device_matches_cpu(device_backend: str, name: str, params: dict, dtype: type, channels: int) -> None:
    image = photo(97, 131, channels, dtype)
    expected = cvf.apply(image, name, backend="cpu", **params)
    actual = cvf.apply(image, name, backend=device_backend, **params)
    difference = np.abs(visible(actual) - visible(expected)).max()
    assert difference <= PARITY_TOLERANCE[np.dtype(dtype)] + 1e-9, f"max difference {difference}"


@pytest.mark.parametrize(("name", "params", "extra"), [
    ("toon", {}, 0), ("smooth_toon", {}, 0), ("kuwahara", {}, 0), ("sketch", {}, 0), ("halftone", {}, 0),
    ("crosshatch", {}, 0), ("cartoon", {"quantize": "posterize"}, 0), ("sketch", {"mode": "color"}, 0),
    ("cartoon", {"quantize": "none"}, 0),
    ("cartoon", {}, 1), ("quantize", {}, 1), ("oil_paint", {}, 1),
    ("stylization", {}, 1), ("detail_enhance", {}, 1), ("edge_preserving", {}, 1), ("mean_shift", {}, 1),
])
def test_host_work_is_one_counted_round_trip(device_backend: str, name: str, params: dict, extra: int) -> None:
    """Device steps stay on the device; a host-only algorithm is one counted host fallback."""
    _, report = Pipeline([(name, params)]).run(photo(40, 56, 3, np.uint8), backend=device_backend)
    counters = report.counters
    assert (counters.uploads, counters.downloads) == (1, 1)
    assert sum(counters.fallbacks.values()) == extra
