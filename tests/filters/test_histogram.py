"""Histogram filters and the histogram plot, each against an independent oracle
(``histogram()`` itself is tested in test_histograms.py).

Oracles: numpy CDF equalisation and one-tile CLAHE (clip, redistribute, CDF) written
here, ``cv2.adaptiveThreshold``, ``cv2.normalize``, ``np.bincount``/``np.histogram``,
scikit-image's ``match_histograms``, ``rescale_intensity`` and ``threshold_otsu``. Tests
against ``cv2.equalizeHist``/``cv2.createCLAHE`` (the calls the filters make) are
labelled cv2-parity and sit next to an independent one. Photos are scikit-image's (astronaut, coffee, chelsea,
camera, moon, page), shipped with the package.

Tolerances (levels of the image's dtype unless said otherwise):

- results that follow the same integer arithmetic as the oracle: exact;
- against a float oracle that our table rounds: at most 0.5 (rounding), mean at most 0.3;
- float32 paths, quantised to 16-bit levels: 1e-4 of full scale;
- flatness of an equalised histogram: the Kolmogorov-Smirnov distance to the uniform
  distribution ``max_v |F(v) - (v + 1) / 256|`` is at most the largest share of one input
  level plus 1/256 (pixels of one level cannot be split).
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np
import pytest
import skimage.data
from skimage.exposure import match_histograms, rescale_intensity
from skimage.filters import threshold_otsu as sk_threshold_otsu

import cvfilters as cvf
from cvfilters.core.errors import OutputExistsError, ParameterError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters.histogram import load_histogram, otsu_threshold, save_histogram
from tests import cli_runner
from tests.conftest import FIXTURES, photo, photo16

ROOT = Path(__file__).resolve().parents[2]
CAMERA16 = FIXTURES / "camera-16bit.png"
ROUNDING = 0.5 + 1e-9


# ---------------------------------------------------------------- images
def bgr(name: str) -> np.ndarray:
    """A scikit-image colour photo in OpenCV's BGR order."""
    return np.ascontiguousarray(getattr(skimage.data, name)()[..., ::-1])


def gray(name: str) -> np.ndarray:
    image = getattr(skimage.data, name)()
    return image if image.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(image[..., ::-1]), cv2.COLOR_BGR2GRAY)


def low_contrast(image: np.ndarray) -> np.ndarray:
    """Squeezed into 60..123 so that equalisation and stretching have work to do."""
    return (image // 4 + 60).astype(image.dtype)


def write_png(path: Path, image: np.ndarray) -> Path:
    assert cv2.imwrite(str(path), image)
    return path


def run(image: np.ndarray, name: str, backend: str = "cpu", **params: object) -> np.ndarray:
    return cvf.apply(image, name, backend=backend, **params)


# ---------------------------------------------------------------- numpy references
def cdf_equalize(plane: np.ndarray, levels: int, single: bool = False) -> np.ndarray:
    """Global equalisation written from the definition: round((cdf - cdf_min) / (N - cdf_min) * (L - 1)).

    ``single``: the product in float32, ``(cdf - cdf_min) * float32((L - 1) / (N - cdf_min))``,
    as OpenCV's documented 8-bit equalizeHist computes it (its results differ from float64
    by one level on some products).
    """
    counts = np.bincount(plane.ravel(), minlength=levels).astype(np.int64)
    cdf = np.cumsum(counts)
    cdf_min = counts[np.flatnonzero(counts)[0]]
    if cdf_min == plane.size:
        return plane.copy()
    if single:
        scale = np.float32(levels - 1) / np.float32(plane.size - cdf_min)
        table = np.rint((cdf - cdf_min).astype(np.float32) * scale)
    else:
        table = np.rint((cdf - cdf_min) * (levels - 1.0) / (plane.size - cdf_min))
    return table[plane].astype(plane.dtype)


def equalize8(plane: np.ndarray) -> np.ndarray:
    return cdf_equalize(plane, 256, single=True)


def clahe_one_tile(plane: np.ndarray, clip_limit: float, levels: int) -> np.ndarray:
    """CLAHE over a single tile, from Zuiderveld's algorithm as OpenCV states it.

    Clip every bin at ``max(int(clip_limit * N / L), 1)`` (no clipping for 0), spread the
    clipped counts evenly (``excess // L`` to every bin, the remainder one each to bins
    ``0, s, 2s, ...`` with ``s = max(L // remainder, 1)``), then map through the
    cumulative histogram scaled by ``(L - 1) / N`` (float32), rounded.
    """
    n = plane.size
    hist = np.bincount(plane.ravel(), minlength=levels).astype(np.int64)
    if clip_limit > 0:
        limit = max(int(clip_limit * n / levels), 1)
        excess = int(np.maximum(hist - limit, 0).sum())
        hist = np.minimum(hist, limit) + excess // levels
        remainder = excess % levels
        if remainder:
            hist[np.arange(0, levels, max(levels // remainder, 1))[:remainder]] += 1
    scale = np.float32(levels - 1) / np.float32(n)
    return np.rint(np.cumsum(hist).astype(np.float32) * scale).clip(0, levels - 1).astype(plane.dtype)[plane]


def exact_otsu(levels: np.ndarray) -> int:
    """Otsu's level in exact rational arithmetic: the first ``t`` maximising ``w0 w1 (mu0 - mu1)^2``, class 0 ``<= t``.

    The variance is the same from one present level to the next, so only present levels are
    tried; float64 picks the candidates within 1e-9 of its maximum, fractions decide among them.
    """
    values, counts = np.unique(levels.astype(np.int64), return_counts=True)
    below, below_sum = np.cumsum(counts)[:-1], np.cumsum(values * counts)[:-1]
    n, total = int(counts.sum()), int((values * counts).sum())
    rough = below * (n - below) * (below_sum / below - (total - below_sum) / (n - below)) ** 2
    candidates = np.flatnonzero(rough >= rough.max() * (1 - 1e-9)).tolist()

    def between(i: int) -> Fraction:
        w0, s0 = int(below[i]), int(below_sum[i])
        return w0 * (n - w0) * (Fraction(s0, w0) - Fraction(total - s0, n - w0)) ** 2

    return int(values[max(candidates, key=lambda i: (between(i), -i))])


def ks_to_uniform(plane: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance between a uint8 plane's distribution and the uniform one."""
    cdf = np.cumsum(np.bincount(plane.ravel(), minlength=256)) / plane.size
    return float(np.abs(cdf - (np.arange(256) + 1) / 256).max())


def largest_level_share(plane: np.ndarray) -> float:
    return float(np.bincount(plane.ravel()).max() / plane.size)


# ---------------------------------------------------------------- equalize
@pytest.mark.parametrize("name", ["camera", "moon", "page", "small", "random", "constant", "one_row"])
def test_equalize_gray_uint8_is_the_cdf_formula(backend: str, name: str) -> None:
    images = {"small": photo(40, 56, 1), "random": np.random.default_rng(5).integers(0, 256, (33, 47), np.uint8),
              "constant": np.full((9, 9), 77, np.uint8), "one_row": photo(1, 7, 1)}
    image = images.get(name) if name in images else gray(name)
    out = run(image, "equalize", backend)
    np.testing.assert_array_equal(out, equalize8(image))
    np.testing.assert_array_equal(out, cv2.equalizeHist(image))  # cv2-parity: the call the filter makes


def test_equalize_rounds_in_float32_like_opencv() -> None:
    """Small random images hit products that round differently in float32 and float64."""
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(30):
        image = rng.integers(0, 256, tuple(rng.integers(3, 40, 2)), dtype=np.uint8)
        np.testing.assert_array_equal(run(image, "equalize"), equalize8(image))
        differs += not np.array_equal(equalize8(image), cdf_equalize(image, 256))
    assert differs > 0  # the float32 product matters on these images


def test_equalize_uint16_and_float32_follow_the_cdf_definition(backend: str) -> None:
    image16 = cv2.imread(str(CAMERA16), cv2.IMREAD_UNCHANGED)
    assert image16.dtype == np.uint16
    np.testing.assert_array_equal(run(image16, "equalize", backend), cdf_equalize(image16, 65536))
    genuine = photo16(channels=1)  # ~23000 distinct levels, where camera-16bit has 254
    assert len(np.unique(genuine)) > 20000 and len(np.unique(image16)) < 300
    np.testing.assert_array_equal(run(genuine, "equalize", backend), cdf_equalize(genuine, 65536))
    image32 = low_contrast(gray("moon")).astype(np.float32) / 255
    levels = np.rint(image32 * 65535).astype(np.uint16)
    expected = cdf_equalize(levels, 65536).astype(np.float32) / 65535
    np.testing.assert_allclose(run(image32, "equalize", backend), expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize(("space", "forward", "back", "index"), [
    ("ycrcb", cv2.COLOR_BGR2YCrCb, cv2.COLOR_YCrCb2BGR, 0),
    ("lab", cv2.COLOR_BGR2Lab, cv2.COLOR_Lab2BGR, 0),
    ("hsv", cv2.COLOR_BGR2HSV_FULL, cv2.COLOR_HSV2BGR_FULL, 2),
])
def test_equalize_colour_uint8_on_luminance(space: str, forward: int, back: int, index: int) -> None:
    image = bgr("coffee")
    planes = list(cv2.split(cv2.cvtColor(image, forward)))
    planes[index] = equalize8(planes[index])
    expected = cv2.cvtColor(cv2.merge(planes), back)
    np.testing.assert_array_equal(run(image, "equalize", space=space), expected)


def test_equalize_colour_uint16_on_luminance_follows_the_cdf_definition() -> None:
    image = photo(60, 80, 3, np.uint16)
    ycc = cv2.cvtColor(image.astype(np.float32) / 65535, cv2.COLOR_BGR2YCrCb)
    luma = np.clip(np.rint(ycc[..., 0] * 65535), 0, 65535).astype(np.uint16)
    ycc[..., 0] = cdf_equalize(luma, 65536).astype(np.float32) / 65535
    expected = np.clip(np.rint(cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR) * 65535), 0, 65535)
    assert np.abs(run(image, "equalize").astype(np.float64) - expected).max() <= 1


def test_equalize_per_channel_and_alpha() -> None:
    image = np.dstack([bgr("chelsea"), np.random.default_rng(1).integers(0, 256, (300, 451), np.uint8)])
    out = run(image, "equalize", space="per_channel")
    for c in range(3):
        np.testing.assert_array_equal(out[..., c], equalize8(image[..., c]))
    np.testing.assert_array_equal(out[..., 3], image[..., 3])


@pytest.mark.parametrize("name", ["camera", "moon"])
def test_equalized_histogram_is_close_to_flat(name: str) -> None:
    image = gray(name)
    out = run(image, "equalize")
    assert ks_to_uniform(out) <= largest_level_share(image) + 1 / 256
    assert ks_to_uniform(out) < ks_to_uniform(image) / 5


# ---------------------------------------------------------------- match_histogram
PAIRS = [("astronaut", "coffee"), ("coffee", "chelsea"), ("chelsea", "astronaut")]


@pytest.mark.parametrize(("source", "reference"), PAIRS)
def test_match_histogram_per_channel_is_skimage(tmp_path: Path, source: str, reference: str) -> None:
    image, ref = bgr(source), bgr(reference)
    out = run(image, "match_histogram", reference=write_png(tmp_path / "ref.png", ref))
    for c in range(3):
        oracle = match_histograms(image[..., c], ref[..., c])  # float64, not rounded
        difference = np.abs(out[..., c] - oracle)
        assert difference.max() <= ROUNDING and difference.mean() <= 0.3, (c, difference.max(), difference.mean())


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_match_histogram_gray_is_skimage(backend: str, tmp_path: Path, dtype: type) -> None:
    scale = 257 if dtype == np.uint16 else 1
    image, ref = gray("camera").astype(dtype) * scale, gray("moon").astype(dtype) * scale
    out = run(image, "match_histogram", backend, reference=write_png(tmp_path / "ref.png", ref))
    difference = np.abs(out - match_histograms(image, ref))
    assert difference.max() <= ROUNDING and difference.mean() <= 0.3


def test_match_histogram_on_lab_lightness_is_skimage_on_l(tmp_path: Path) -> None:
    image, ref = bgr("astronaut"), bgr("chelsea")
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
    lab[..., 0] = np.rint(match_histograms(lab[..., 0], cv2.cvtColor(ref, cv2.COLOR_BGR2Lab)[..., 0]))
    expected = cv2.cvtColor(lab, cv2.COLOR_Lab2BGR)
    out = run(image, "match_histogram", reference=write_png(tmp_path / "ref.png", ref), space="lab")
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(("channels", "dtype", "space"), [
    (1, np.uint8, "per_channel"), (3, np.uint8, "per_channel"), (3, np.uint8, "lab"), (3, np.uint8, "ycrcb"),
    (4, np.uint16, "hsv"), (3, np.float32, "per_channel"),
])
def test_match_histogram_to_itself_is_the_identity(tmp_path: Path, channels: int, dtype: type, space: str) -> None:
    image = photo(48, 64, channels, dtype)
    suffix = ".tiff" if dtype == np.float32 else ".png"
    out = run(image, "match_histogram", reference=write_png(tmp_path / f"self{suffix}", image), space=space)
    if dtype == np.float32:  # quantised to 16-bit levels
        np.testing.assert_allclose(out, image, rtol=0, atol=0.5 / 65535 + 1e-7)
    else:
        np.testing.assert_array_equal(out, image)


@pytest.mark.parametrize("space", ["per_channel", "lab"])
@pytest.mark.parametrize("suffix", [".npy", ".json"])
def test_match_histogram_to_a_saved_histogram_equals_matching_the_image(tmp_path: Path, space: str,
                                                                         suffix: str) -> None:
    image, ref = bgr("coffee"), bgr("chelsea")
    counts = save_histogram(tmp_path / f"ref{suffix}", ref, space=space)
    assert counts.shape == ((3, 256) if space == "per_channel" else (1, 256))
    np.testing.assert_array_equal(load_histogram(tmp_path / f"ref{suffix}"), counts)
    from_file = run(image, "match_histogram", reference=tmp_path / f"ref{suffix}", space=space)
    from_image = run(image, "match_histogram", reference=write_png(tmp_path / "ref.png", ref), space=space)
    np.testing.assert_array_equal(from_file, from_image)


def test_match_histogram_across_depths_scales_levels(tmp_path: Path) -> None:
    image, ref = gray("camera"), gray("page")
    path = write_png(tmp_path / "ref8.png", ref)
    out8 = run(image, "match_histogram", reference=path)
    out16 = run(image.astype(np.uint16) * 257, "match_histogram", reference=path)
    assert np.abs(out16 / 257 - out8).max() <= 1


def test_match_histogram_reference_errors_name_the_parameter(tmp_path: Path) -> None:
    flt = cvf.get_filter("match_histogram")
    with pytest.raises(ParameterError, match=r"^match_histogram: reference=.*missing\.png: no such file"):
        flt.resolve({"reference": str(tmp_path / "missing.png")})
    (tmp_path / "bad.json").write_text('{"counts": [[1, -2, 3]]}')
    with pytest.raises(ParameterError, match=r"^match_histogram: reference=.*not a histogram file"):
        flt.resolve({"reference": str(tmp_path / "bad.json")})
    (tmp_path / "junk.png").write_bytes(b"not an image")
    with pytest.raises(ParameterError, match=r"^match_histogram: reference=.*junk\.png"):
        flt.resolve({"reference": str(tmp_path / "junk.png")})
    np.save(tmp_path / "bgr.npy", np.ones((3, 256)))
    with pytest.raises(ParameterError, match=r"bgr\.npy holds 3 channels; space=lab matches one "
                                             r"\(save it with space=lab\)$"):
        flt.resolve({"reference": str(tmp_path / "bgr.npy"), "space": "lab"})
    with pytest.raises(ParameterError, match=r"^match_histogram: reference=\S*bgr\.npy holds 3 channels; "
                                             r"this image needs 1$"):
        run(photo(8, 8, 1), "match_histogram", reference=tmp_path / "bgr.npy")


def test_match_histogram_at_file_from_the_cli(tmp_path: Path) -> None:
    write_png(tmp_path / "in.png", bgr("chelsea"))
    write_png(tmp_path / "ref.png", bgr("coffee"))
    proc = subprocess.run([sys.executable, "-m", "cvfilters", "apply", "in.png", "-o", "out.png",
                           "-f", "match_histogram:reference=@ref.png"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    expected = run(bgr("chelsea"), "match_histogram", reference=tmp_path / "ref.png")
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "out.png")), expected)


# ---------------------------------------------------------------- clahe
@pytest.mark.parametrize("clip_limit", [0.0, 2.0, 4.0, 40.0])
@pytest.mark.parametrize("depth", [np.uint8, np.uint16])
def test_clahe_one_tile_is_clipped_equalisation(backend: str, clip_limit: float, depth: type) -> None:
    """One tile: no interpolation between tiles, so CLAHE is the clipped-histogram CDF written here."""
    image = gray("camera") if depth == np.uint8 else photo16(channels=1)
    levels = 256 if depth == np.uint8 else 65536
    out = run(image, "clahe", backend, clip_limit=clip_limit, tiles=1)
    np.testing.assert_array_equal(out, clahe_one_tile(image, clip_limit, levels))
    if clip_limit == 2.0:  # clipping matters here: not the unclipped CDF
        assert not np.array_equal(out, clahe_one_tile(image, 0.0, levels))


def test_clahe_tiles_adapt_to_local_contrast() -> None:
    """Property (not cv2): a dim half and a bright half are each stretched over the range by
    8 tiles, which one tile cannot do (its CDF is global)."""
    rng = np.random.default_rng(2)
    image = np.hstack([rng.integers(20, 60, (64, 64)), rng.integers(190, 230, (64, 64))]).astype(np.uint8)
    local = run(image, "clahe", clip_limit=40.0, tiles=8)
    whole = run(image, "clahe", clip_limit=40.0, tiles=1)
    for half in (slice(8, 24), slice(104, 120)):  # away from the boundary, where tiles blend
        assert np.ptp(local[:, half]) > 1.5 * np.ptp(whole[:, half])


@pytest.mark.parametrize(("clip_limit", "tiles"), [(2.0, 8), (4.0, 4), (0.0, 2), (40.0, 16)])
def test_clahe_gray_uint8_is_opencv(backend: str, clip_limit: float, tiles: int) -> None:
    """cv2-parity (the call the backend makes); the independent check is the one-tile formula above."""
    image = gray("camera")
    expected = cv2.createCLAHE(clip_limit, (tiles, tiles)).apply(image)
    np.testing.assert_array_equal(run(image, "clahe", backend, clip_limit=clip_limit, tiles=tiles), expected)


def test_clahe_uint16_and_float32_are_opencv_on_16_bit_levels(backend: str) -> None:
    image16 = cv2.imread(str(CAMERA16), cv2.IMREAD_UNCHANGED)
    expected16 = cv2.createCLAHE(3.0, (6, 6)).apply(image16)
    np.testing.assert_array_equal(run(image16, "clahe", backend, clip_limit=3.0, tiles=6), expected16)
    image32 = image16.astype(np.float32) / 65535
    np.testing.assert_allclose(run(image32, "clahe", backend, clip_limit=3.0, tiles=6),
                               expected16.astype(np.float32) / 65535, rtol=0, atol=1e-7)


def test_clahe_colour_on_luma_and_per_channel() -> None:
    image = bgr("astronaut")
    operator = cv2.createCLAHE(2.0, (8, 8))
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
    lab[..., 0] = operator.apply(np.ascontiguousarray(lab[..., 0]))
    np.testing.assert_array_equal(run(image, "clahe", space="lab"), cv2.cvtColor(lab, cv2.COLOR_Lab2BGR))
    per_channel = cv2.merge([operator.apply(p) for p in cv2.split(image)])
    np.testing.assert_array_equal(run(image, "clahe", space="per_channel"), per_channel)


# ---------------------------------------------------------------- auto_levels, auto_contrast, normalize
def rescaled(values: np.ndarray, low: float, high: float, full: float) -> np.ndarray:
    lo, hi = np.percentile(values, [100 * low, 100 * (1 - high)])
    return rescale_intensity(values.astype(np.float64), in_range=(lo, hi), out_range=(0.0, full))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_auto_levels_is_rescale_intensity_between_percentiles(backend: str, dtype: type) -> None:
    scale = {np.uint8: 1, np.uint16: 257}.get(dtype)
    base = low_contrast(bgr("coffee"))
    image = base.astype(dtype) * scale if scale else base.astype(np.float32) / 255
    full = 1.0 if dtype == np.float32 else 255.0 * scale
    tolerance = 1e-4 if dtype == np.float32 else 0.51  # rounding, after float32 arithmetic in cv2
    out = run(image, "auto_levels", backend, low=0.01, high=0.02)
    for c in range(3):
        difference = np.abs(out[..., c] - rescaled(image[..., c], 0.01, 0.02, full))
        assert difference.max() <= tolerance, (c, difference.max())
    linked = run(image, "auto_levels", backend, low=0.01, high=0.02, linked=True)
    difference = np.abs(linked - rescaled(image, 0.01, 0.02, full))
    assert difference.max() <= tolerance
    np.testing.assert_array_equal(run(image, "auto_contrast", backend, low=0.01, high=0.02), linked)


def test_auto_levels_leaves_flat_channels_and_alpha() -> None:
    image = photo(20, 30, 4)
    image[..., 1] = 90
    out = run(image, "auto_levels", low=0.0, high=0.0)
    np.testing.assert_array_equal(out[..., 1], image[..., 1])
    np.testing.assert_array_equal(out[..., 3], image[..., 3])
    assert out[..., 0].min() == 0 and out[..., 0].max() == 255


def test_normalize_is_cv2_normalize_minmax(backend: str) -> None:
    image = low_contrast(bgr("chelsea"))
    expected = cv2.normalize(image, None, 0, 255, cv2.NORM_MINMAX)
    np.testing.assert_array_equal(run(image, "normalize", backend), expected)
    per_channel = cv2.merge([cv2.normalize(p, None, 0, 255, cv2.NORM_MINMAX) for p in cv2.split(image)])
    np.testing.assert_array_equal(run(image, "normalize", backend, linked=False), per_channel)


def test_normalize_brings_hdr_float_into_range() -> None:
    image = photo(30, 40, 3, np.float32) * 3.0 - 0.5
    expected = (image - image.min()) / (image.max() - image.min())
    np.testing.assert_allclose(run(image, "normalize"), expected, rtol=0, atol=1e-6)
    constant = np.full((5, 5), 0.3, np.float32)
    np.testing.assert_array_equal(run(constant, "normalize"), constant)


# ---------------------------------------------------------------- thresholds
@pytest.mark.parametrize("name", ["camera", "moon", "page", "coins"])
def test_otsu_threshold_is_skimage_and_opencv(name: str) -> None:
    image = gray(name)
    t = otsu_threshold(image)
    assert abs(t - sk_threshold_otsu(image)) <= 1
    assert t == cv2.threshold(image, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[0]
    assert abs(otsu_threshold(image.astype(np.uint16) * 257) - sk_threshold_otsu(image.astype(np.uint16) * 257)) <= 1
    assert abs(otsu_threshold(image.astype(np.float32) / 255) - sk_threshold_otsu(image / 255.0)) <= 1 / 255


def test_threshold_otsu_float32_splits_between_16_bit_levels() -> None:
    noise = np.random.default_rng(2).uniform(-0.5, 0.5, (512, 512))  # fills the 16-bit levels between 8-bit ones
    image = ((gray("camera") + noise) / 255).astype(np.float32)
    levels = np.rint(image * 65535)
    level = exact_otsu(levels)  # scikit-image picks 26455 here: a variance 7e-8 below the maximum, at 26470
    assert otsu_threshold(image) == (level + 0.5) / 65535  # the midpoint above it
    assert (levels == level + 1).any(), "a pixel must sit on the first foreground level"
    np.testing.assert_array_equal(run(image, "threshold_otsu"), np.where(levels > level, 1.0, 0.0))



def test_threshold_otsu_of_an_all_white_float_image_is_black() -> None:
    # one level, 65535: its threshold (65535 + 0.5) / 65535 is past full scale, taken as 1.0; no pixel is above it
    white = np.ones((4, 5), np.float32)
    assert otsu_threshold(white) == 65535.5 / 65535
    np.testing.assert_array_equal(run(white, "threshold_otsu"), np.zeros_like(white))

def test_threshold_otsu_filter_binarises_luma(backend: str) -> None:
    image = np.dstack([bgr("coffee"), np.full((400, 600), 99, np.uint8)])
    luma = cv2.cvtColor(image[..., :3], cv2.COLOR_BGR2GRAY)
    binary = np.where(luma > otsu_threshold(luma), 255, 0).astype(np.uint8)
    out = run(image, "threshold_otsu", backend)
    np.testing.assert_array_equal(out, np.dstack([binary, binary, binary, image[..., 3]]))
    np.testing.assert_array_equal(run(luma, "threshold_otsu", backend, invert=True), 255 - binary)


@pytest.mark.parametrize("method", ["mean", "gaussian"])
@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize(("block_size", "c"), [(11, 2), (3, 0), (31, -5), (25, 7)])
def test_adaptive_threshold_is_opencv(method: str, invert: bool, block_size: int, c: int) -> None:
    image = gray("page")
    kind = cv2.THRESH_BINARY_INV if invert else cv2.THRESH_BINARY
    adaptive = cv2.ADAPTIVE_THRESH_MEAN_C if method == "mean" else cv2.ADAPTIVE_THRESH_GAUSSIAN_C
    expected = cv2.adaptiveThreshold(image, 255, adaptive, kind, block_size, c)
    out = run(image, "adaptive_threshold", method=method, invert=invert, block_size=block_size, c=c / 255)
    np.testing.assert_array_equal(out, expected)


def test_adaptive_threshold_colour_uses_luma(backend: str) -> None:
    image = bgr("chelsea")
    luma = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    expected = cv2.adaptiveThreshold(luma, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, 11, 2)
    out = run(image, "adaptive_threshold", backend, c=2 / 255)
    np.testing.assert_array_equal(out, cv2.merge([expected] * 3))


# ---------------------------------------------------------------- device work and parity
# uint8 statistics run on the device (calc_hist, min_max, clahe primitives); the overlay
# draws its panel on the host from one counted copy.
EXPECTED_HOST_WORK = [
    ("equalize", {}, {}),
    ("equalize", {"space": "per_channel"}, {}),
    ("clahe", {}, {}),
    ("auto_levels", {}, {}),
    ("normalize", {}, {}),
    ("threshold_otsu", {}, {}),
    ("adaptive_threshold", {}, {}),
    ("histogram_overlay", {}, {"calc_hist": 1}),
]


@pytest.mark.parametrize(("name", "params", "fallbacks"), EXPECTED_HOST_WORK, ids=lambda v: str(v))
def test_one_counted_host_copy_per_filter(device_backend: str, name: str, params: dict, fallbacks: dict) -> None:
    image = photo(40, 56, 3)
    out, report = Pipeline([(name, params)]).run(image, backend=device_backend)
    assert dict(report.counters.fallbacks) == fallbacks
    assert (report.counters.uploads, report.counters.downloads) == (1 + (name == "histogram_overlay"), 1)
    # OpenCV's OpenCL CLAHE kernel rounds a few pixels one level away from its CPU code
    limit = 1 if name == "clahe" else 0
    assert np.abs(out.astype(int) - run(image, name, "cpu", **params)).max() <= limit
    _, on_cpu = Pipeline([(name, params)]).run(image, backend="cpu")
    assert not on_cpu.counters.fallbacks


# (filter, params, dtype, channels, largest difference in levels, or fraction of full scale for float32).
# OpenCV's OpenCL Lab->BGR and HSV->BGR 8-bit kernels round differently from its CPU code
# (up to 2 and 1 levels on their own); every other case is within one rounding step.
PARITY = [
    ("equalize", {"space": "lab"}, np.uint8, 3, 2), ("equalize", {"space": "hsv"}, np.uint8, 4, 1),
    ("equalize", {"space": "ycrcb"}, np.uint8, 3, 0), ("equalize", {"space": "per_channel"}, np.uint16, 3, 0),
    ("clahe", {"space": "ycrcb"}, np.uint8, 3, 1), ("clahe", {"space": "per_channel"}, np.float32, 3, 1e-6),
    ("auto_levels", {"linked": True}, np.uint16, 3, 1), ("normalize", {"linked": False}, np.float32, 1, 1e-6),
    ("match_histogram", {"space": "ycrcb", "reference": str(FIXTURES / "astronaut.png")}, np.float32, 3, 1e-4),
    ("adaptive_threshold", {"method": "mean", "block_size": 31}, np.uint8, 1, 0),
]


@pytest.mark.parametrize(("name", "params", "dtype", "channels", "tolerance"), PARITY, ids=lambda v: str(v))
def test_device_matches_cpu_beyond_defaults(device_backend: str, name: str, params: dict, dtype: type,
                                            channels: int, tolerance: float) -> None:
    image = photo(40, 56, channels, dtype)
    expected = run(image, name, "cpu", **params)
    actual = run(image, name, device_backend, **params)
    assert np.abs(actual.astype(np.float64) - expected).max() <= tolerance


# ---------------------------------------------------------------- plots
def png_size(path: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as image:
        return image.size


def test_plot_has_the_requested_size_and_log_differs(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from cvfilters.viz.plots import write_before_after_plot, write_histogram_plot

    image = bgr("chelsea")
    linear = write_histogram_plot(tmp_path / "linear.png", [image], size=(641, 353))
    log = write_histogram_plot(tmp_path / "log.png", [image], size=(641, 353), log=True)
    assert png_size(linear) == png_size(log) == (641, 353)
    assert not np.array_equal(cv2.imread(str(linear)), cv2.imread(str(log)))
    both = write_before_after_plot(tmp_path / "ba.png", image, run(image, "equalize"), size=(500, 300))
    assert png_size(both) == (500, 300)
    assert not np.array_equal(cv2.imread(str(both))[:, :, 0], np.full((300, 500), 255))
    with pytest.raises(OutputExistsError):
        write_histogram_plot(linear, [image], overwrite=False)
    with pytest.raises(UsageError, match="by its extension"):
        write_histogram_plot(tmp_path / "plot.bmp", [image])


def run_cli(*args: object, cwd: Path | None = None, python: list[str] | None = None) -> subprocess.CompletedProcess:
    if python is None:
        return cli_runner.run_cli(*args, cwd=cwd)
    return subprocess.run([*python, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_cli_histogram_writes_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    a, b = write_png(tmp_path / "a.png", bgr("coffee")), write_png(tmp_path / "b.png", gray("camera"))
    proc = run_cli("histogram", a, b, "-o", tmp_path / "plot.png", "--width", 700, "--height", 420)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    assert png_size(tmp_path / "plot.png") == (700, 420)
    proc = run_cli("histogram", a, "-o", tmp_path / "plot.png", "--width", 700, "--height", 420, "--log",
                   "--no-clobber")
    assert proc.returncode == 2 and proc.stderr.strip().endswith("--no-clobber refuses to replace it")
    proc = run_cli("histogram", a, "-o", tmp_path / "log.png", "--width", 700, "--height", 420, "--log")
    assert proc.returncode == 0, proc.stderr
    before = cv2.imread(str(tmp_path / "plot.png"))
    assert not np.array_equal(before, cv2.imread(str(tmp_path / "log.png")))
    proc = run_cli("histogram", a, "-o", tmp_path / "plot.png", "--width", 700, "--height", 420, "--log")
    assert proc.returncode == 0, proc.stderr  # a named output is replaced, as apply and sweep replace it
    assert not np.array_equal(before, cv2.imread(str(tmp_path / "plot.png")))
    proc = run_cli("histogram", a, a, a, "-o", tmp_path / "three.png")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and lines == ["error: histogram takes one or two inputs (before and after), not 3"]
    assert not (tmp_path / "three.png").exists()


def test_cli_histogram_without_matplotlib_says_how_to_install(tmp_path: Path) -> None:
    a = write_png(tmp_path / "a.png", photo(8, 8))
    blocked = [sys.executable, "-c", "import sys; sys.modules['matplotlib'] = None; "
               "from cvfilters.cli import main; sys.exit(main(sys.argv[1:]))"]
    proc = run_cli("histogram", a, "-o", tmp_path / "plot.png", python=blocked)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ['error: the histogram plot needs matplotlib: pip install "cvfilters[plot]"']
    assert not (tmp_path / "plot.png").exists()


def test_saved_histogram_json_is_documented_format(tmp_path: Path) -> None:
    counts = save_histogram(tmp_path / "h.json", photo(20, 30, 3, np.uint16), space="ycrcb")
    data = json.loads((tmp_path / "h.json").read_text())
    assert data["format"] == "cvfilters.histogram" and data["levels"] == 65536 and data["channels"] == ["ycrcb"]
    assert np.array_equal(np.asarray(data["counts"]), counts) and counts.sum() == 600
