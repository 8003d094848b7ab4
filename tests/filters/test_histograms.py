"""cvfilters.filters._shared.histograms on hand-made level counts: tables, thresholds, percentiles, panels
and histogram().

Expected values are worked out by hand in the comments, or come from numpy
(``np.percentile``) and scikit-image (``match_histograms``) on the pixels the counts describe.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage.exposure import match_histograms

from cvfilters.core.errors import InvalidImageError
from cvfilters.filters._shared import histograms as hist_module
from cvfilters.filters._shared.histograms import (
    equalize_table,
    histogram,
    histogram_panel,
    level_counts,
    match_table,
    otsu_level,
    percentile_level,
)
from tests.conftest import photo


def counts_of(pairs: dict[int, int], levels: int = 256) -> np.ndarray:
    counts = np.zeros(levels, np.int64)
    for level, n in pairs.items():
        counts[level] = n
    return counts


def pixels(counts: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(counts)), counts)


# ---------------------------------------------------------------- equalize_table
def test_equalize_table_of_two_levels() -> None:
    # 3 pixels at 1, 5 at 10: T(1) = 0, T(10) = (8 - 3) / (8 - 3) * 255 = 255; below 1 the cdf
    # minus cdf_min is negative (clipped to 0), above 10 it stays 255
    table = equalize_table(counts_of({1: 3, 10: 5}))
    assert table[0] == 0 and table[1] == 0 and table[9] == 0 and table[10] == 255 and table[255] == 255
    assert table.dtype == np.int64 and table.shape == (256,)
    sixteen = equalize_table(counts_of({2: 1, 5: 1, 9: 2}, levels=16))
    # cdf - 1 = 0 at 2, 1 at 5, 3 at 9; times 15 / 3: 0, 5, 15
    assert sixteen[2] == 0 and sixteen[5] == 5 and sixteen[9] == 15 and sixteen[0] == 0


def test_equalize_table_of_one_level_is_the_identity() -> None:
    np.testing.assert_array_equal(equalize_table(counts_of({7: 40})), np.arange(256))
    np.testing.assert_array_equal(equalize_table(np.zeros(16, np.int64)), np.arange(16))


def test_equalize_table_multiplies_in_float32_for_256_levels() -> None:
    # found by search: float32 (OpenCV's equalizeHist) and float64 round these levels differently
    counts = counts_of({45: 8, 225: 27, 134: 27, 238: 14, 86: 14})
    above = np.cumsum(counts) - 8
    single = np.rint(above.astype(np.float32) * (np.float32(255) / np.float32(90 - 8)))
    double = np.rint(above * 255.0 / (90 - 8))
    table = equalize_table(counts)
    np.testing.assert_array_equal(table[45:], single[45:])
    assert (table[134:137] != double[134:137]).all()


# ---------------------------------------------------------------- otsu_level
@pytest.mark.parametrize(("pairs", "levels", "expected"), [
    # 1 pixel at 0, 2 at 3: t = 0, 1 or 2 all split {0} | {3}: w0 w1 (mu0 - mu1)^2 = 1 * 2 * 9; the first wins
    ({0: 1, 3: 2}, 4, 0),
    ({1: 4, 4: 4}, 6, 1),
    # three groups: {0: 10, 5: 10, 6: 10}: t = 0 gives 10 * 20 * 5.5^2 = 6050, t = 5 gives 20 * 10 * 3.5^2 = 2450
    ({0: 10, 5: 10, 6: 10}, 8, 0),
    ({3: 9}, 8, 3),  # one level: that level
    # the top level present (its sum counts in mu1): t = 0 or 1 gives 3 * 10 * (0 - 26 / 10)^2 = 202.8,
    # t = 2 gives 7 * 6 * (8 / 7 - 3)^2 = 144.9
    ({0: 3, 2: 4, 3: 6}, 4, 0),
])
def test_otsu_level_by_hand(pairs: dict[int, int], levels: int, expected: int) -> None:
    assert otsu_level(counts_of(pairs, levels)) == expected


def test_otsu_level_of_an_empty_histogram_is_0() -> None:
    assert otsu_level(np.zeros(8)) == 0


# ---------------------------------------------------------------- percentile_level
@pytest.mark.parametrize("fraction", [0.0, 0.001, 0.25, 0.5, 0.731, 0.999, 1.0])
def test_percentile_level_is_numpys_percentile(fraction: float) -> None:
    counts = counts_of({0: 3, 2: 1, 7: 5, 200: 2, 255: 4})
    assert percentile_level(counts, fraction) == pytest.approx(np.percentile(pixels(counts), 100 * fraction))


def test_percentile_level_between_two_levels() -> None:
    assert percentile_level(counts_of({0: 1, 1: 1, 2: 1, 3: 1}, 4), 0.5) == 1.5


# ---------------------------------------------------------------- match_table
def assert_matches_skimage(source: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """match_table of two 256-level counts against match_histograms on their pixels (the table rounds)."""
    table = match_table(source, reference)
    src = pixels(source).astype(np.uint8).reshape(1, -1)
    matched = match_histograms(src, pixels(reference).astype(np.uint8).reshape(1, -1))
    np.testing.assert_allclose(table[src[0]], matched[0], atol=0.5 + 1e-9)
    return table


def test_match_table_is_skimage_on_the_levels_present() -> None:
    rng = np.random.default_rng(4)
    source, reference = np.zeros(256, np.int64), np.zeros(256, np.int64)
    source[rng.choice(256, 30, replace=False)] = rng.integers(1, 40, 30)
    reference[rng.choice(256, 12, replace=False)] = rng.integers(1, 90, 12)
    assert_matches_skimage(source, reference)


def test_match_table_across_level_counts_and_empty_inputs() -> None:
    # a 4-bin reference stands for levels 0, 85, 170, 255 of a 256-level source
    table = match_table(counts_of({10: 1, 20: 1}), counts_of({1: 1, 3: 1}, levels=4))
    assert table[10] == 85 and table[20] == 255
    np.testing.assert_array_equal(match_table(counts_of({3: 2}), np.zeros(256)), np.arange(256))
    np.testing.assert_array_equal(match_table(np.zeros(256), counts_of({3: 2})), np.arange(256))


# ---------------------------------------------------------------- histogram_panel
def test_histogram_panel_bars_by_hand() -> None:
    counts = np.array([[4, 2, 0, 1], [0, 0, 0, 0]])  # two channels, 4 bins; the largest count is 4
    panel = histogram_panel(counts, 4, 4)
    assert panel.shape == (4, 4, 2) and panel.dtype == np.float32
    np.testing.assert_array_equal(panel[..., 0].sum(axis=0), [4, 2, 0, 1])  # bar heights from the bottom
    assert panel[3, 1, 0] == 1 and panel[2, 1, 0] == 1 and panel[1, 1, 0] == 0  # filled from the bottom row
    assert not panel[..., 1].any()
    wide = histogram_panel(counts, 8, 2)  # column i shows bin i * 4 // 8
    np.testing.assert_array_equal(wide[..., 0].sum(axis=0), [2, 2, 1, 1, 0, 0, 0, 0])
    logged = histogram_panel(np.array([[1, 100]]), 2, 10, log=True)  # log1p: 0.69 / 4.62 of 10 rows
    np.testing.assert_array_equal(logged[..., 0].sum(axis=0), [2, 10])
    assert not histogram_panel(np.zeros((1, 4)), 4, 3).any()


# ---------------------------------------------------------------- histogram()
def test_histogram_channel_names_and_luminance() -> None:
    image = np.zeros((2, 3, 4), np.uint8)
    image[..., 0], image[..., 1], image[..., 2], image[..., 3] = 10, 20, 30, 40
    for name, level in (("b", 10), ("G", 20), ("r", 30), ("a", 40), (3, 40)):
        assert histogram(image, channels=name)[level] == 6
    luma = round(0.299 * 30 + 0.587 * 20 + 0.114 * 10)  # 22
    for name in ("luminance", "luma", "gray", "Y"):
        assert histogram(image, channels=name)[luma] == 6
    assert histogram(image).shape == (3, 256)  # alpha left out by default
    gray = np.full((2, 2), 9, np.uint8)
    assert histogram(gray, channels="luminance")[9] == 4 and histogram(gray).shape == (1, 256)
    assert histogram(gray[..., None], channels="luminance")[9] == 4


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"channels": "x"}, "histogram: channel 'x' is not b, g, r, a, luminance or an index"),
    ({"channels": 3}, "histogram: channel 3 does not exist in a 3-channel image"),
    ({"channels": -1}, "histogram: channel -1 does not exist in a 3-channel image"),
    ({"channels": [True]}, "histogram: channel True does not exist in a 3-channel image"),
    ({"bins": 1}, "histogram: bins=1 must be an integer in [2, 65536]"),
    ({"bins": 65537}, "histogram: bins=65537 must be an integer in [2, 65536]"),
    ({"bins": True}, "histogram: bins=True must be an integer in [2, 65536]"),
    ({"mask": np.ones((2, 2))}, "histogram: mask shape (2, 2) is not the image's (2, 3)"),
])
def test_histogram_refusals(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        histogram(np.zeros((2, 3, 3), np.uint8), **kwargs)
    assert str(caught.value) == message


def test_histogram_float32_ends_nan_and_mask() -> None:
    values = np.array([[-0.5, 0.0, 0.24, 0.25], [0.999, 1.0, 7.0, np.nan]], np.float32)
    # 4 bins of width 0.25: below 0 -> bin 0, 1 and above -> bin 3, NaN not counted
    np.testing.assert_array_equal(histogram(values, 4, channels=0), [3, 1, 0, 3])
    mask = np.array([[1, 0, 0, 0], [0, 0, 1, 1]])
    np.testing.assert_array_equal(histogram(values, 4, channels=0, mask=mask), [1, 0, 0, 1])
    sixteen = np.array([[0, 65535], [256, 256]], np.uint16)
    counts = histogram(sixteen, 65536, channels=0)
    assert counts[0] == 1 and counts[65535] == 1 and counts[256] == 2 and counts.sum() == 4
    assert histogram(sixteen, 2, channels=0).tolist() == [3, 1]  # bins of 32768 levels


def test_otsu_level_is_scale_invariant_and_takes_a_single_pixel_class() -> None:
    counts = counts_of({0: 2, 3: 1}, 4)  # the upper class is one pixel: still a split, at t = 0
    assert otsu_level(counts) == 0
    rng = np.random.default_rng(6)
    counts = rng.integers(0, 50, 64).astype(np.float64)
    assert otsu_level(counts / counts.sum()) == otsu_level(counts)  # a normalised histogram: the same t
    # fractions make every between-class variance small (here 0.25 at t = 0): t = 1 (no upper class) never wins
    assert otsu_level(np.array([0.5, 0.5])) == 0


def test_histogram_refuses_what_it_cannot_count() -> None:
    cases = [
        (np.zeros((2, 2, 2, 2), np.uint8), {},
         "histogram: expected a uint8, uint16 or float32 image (H x W [x C]), not uint8 (2, 2, 2, 2)"),
        (np.zeros((2, 2), np.int32), {}, "histogram: expected a uint8, uint16 or float32 image (H x W [x C]), "
                                         "not int32 (2, 2)"),
        (np.zeros((2, 2), np.uint8), {"bins": 3.5}, "histogram: bins=3.5 must be an integer in [2, 65536]"),
    ]
    for image, kwargs, message in cases:
        with pytest.raises(ValueError) as caught:
            histogram(image, **kwargs)
        assert str(caught.value) == message
    with pytest.raises(InvalidImageError) as caught:
        histogram([[1, 2]])
    assert str(caught.value) == ("image: expected a numpy array, PIL image, cv2.UMat, cv2.cuda.GpuMat or an object "
                                 "with __array__ or __dlpack__, not list")


def test_histogram_keeps_empty_top_bins_and_full_single_bars() -> None:
    low = np.full((3, 3), 0.2, np.float32)
    np.testing.assert_array_equal(histogram(low, 4, channels=0), [9, 0, 0, 0])  # length 4 though 3 bins are empty
    panel = histogram_panel(np.array([[1, 0, 1]]), 3, 5)  # the largest count is 1: full bars
    np.testing.assert_array_equal(panel[..., 0].sum(axis=0), [5, 0, 5])


def test_percentile_level_is_numpys_percentile_in_every_interval() -> None:
    rng = np.random.default_rng(5)
    for counts in (counts_of({0: 1, 3: 1}, 4), rng.integers(0, 4, 16)):
        values = np.repeat(np.arange(len(counts)), counts)
        for fraction in (0.0, 0.1, 0.5, 0.75, 0.99, 1.0):
            expected = np.percentile(values, 100 * fraction)
            assert percentile_level(counts, fraction) == pytest.approx(expected, abs=1e-9), (counts, fraction)


def test_otsu_and_an_empty_panel_warn_of_nothing() -> None:
    """Empty classes and an all-zero histogram are handled, not divided by zero with a RuntimeWarning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert otsu_level(counts_of({10: 5, 200: 5})) == 10
        panel = histogram_panel(np.zeros((1, 8)), 4, 3)
    np.testing.assert_array_equal(panel, np.zeros((3, 4, 1), np.float32))


# ---------------------------------------------------------------- eighth session
def test_equalize_table_rounds_a_half_like_cv2_equalize_hist() -> None:
    """21 * 255 / 90 is 59.5: equalizeHist's float32 product rounds it to 60, a float64 product to 59."""
    counts = counts_of({71: 2, 82: 21, 154: 39, 214: 18, 237: 12})
    image = pixels(counts).astype(np.uint8).reshape(4, 23)
    expected = cv2.equalizeHist(image)
    np.testing.assert_array_equal(equalize_table(counts)[image], expected)  # bit for bit
    assert expected[image == 82][0] == 60


def test_level_counts_of_gray_and_colour_are_bincounts() -> None:
    """level_counts (the histogram files' counts) must count every channel over levels 0 .. levels - 1."""
    rng = np.random.default_rng(8)
    colour = rng.integers(0, 16, (5, 7, 3)).astype(np.uint8)
    counts = level_counts(colour, 16)
    assert counts.shape == (3, 16) and counts.dtype == np.int64
    for c in range(3):
        np.testing.assert_array_equal(counts[c], np.bincount(colour[..., c].ravel(), minlength=16))
    gray = rng.integers(0, 65536, (6, 5)).astype(np.uint16)
    np.testing.assert_array_equal(level_counts(gray, 65536), np.bincount(gray.ravel(), minlength=65536)[None])


def test_histogram_of_a_colour_uint8_image_under_a_mask_is_numpys() -> None:
    """A uint8 colour image's mask (H x W, any non-zero value) must select pixels, not be refused or ignored."""
    rng = np.random.default_rng(9)
    image = rng.integers(0, 256, (6, 8, 3)).astype(np.uint8)
    mask = rng.integers(0, 3, (6, 8)) * 100  # 0, 100 or 200
    counts = histogram(image, mask=mask)
    assert counts.dtype == np.int64
    for c in range(3):
        np.testing.assert_array_equal(counts[c], np.bincount(image[..., c][mask != 0], minlength=256))


def test_histogram_of_a_pil_image_reads_it_as_rgb() -> None:
    """A PIL image is RGB: "r" is its first plane and luminance weighs it 0.299."""
    from PIL import Image

    rgb = np.zeros((2, 3, 3), np.uint8)
    rgb[..., 0], rgb[..., 1], rgb[..., 2] = 200, 100, 10
    image = Image.fromarray(rgb)
    assert histogram(image, channels="r")[200] == 6 and histogram(image, channels="b")[10] == 6
    luma = round(0.299 * 200 + 0.587 * 100 + 0.114 * 10)  # 119
    assert histogram(image, channels="luminance")[luma] == 6
    np.testing.assert_array_equal(histogram(image), [np.bincount(rgb[..., c].ravel(), minlength=256)
                                                     for c in range(3)])


def test_histogram_of_a_numpy_image_in_rgb_order() -> None:
    """channel_order="rgb" names the first plane "r" and weighs it 0.299 in the luminance."""
    rgb = np.zeros((2, 2, 4), np.uint8)
    rgb[..., 0], rgb[..., 1], rgb[..., 2], rgb[..., 3] = 200, 100, 10, 255
    assert histogram(rgb, channels="r", channel_order="rgb")[200] == 4
    assert histogram(rgb, channels="b", channel_order="rgb")[10] == 4
    luma = round(0.299 * 200 + 0.587 * 100 + 0.114 * 10)  # 119; in BGR order it would be 88
    assert histogram(rgb, channels="luminance", channel_order="rgb")[luma] == 4
    assert cv2.cvtColor(rgb, cv2.COLOR_RGBA2GRAY)[0, 0] == luma


def test_histogram_of_float32_counts_in_int64() -> None:
    """Counts are int64 for every depth, as documented (float32 images are counted by numpy)."""
    counts = histogram(np.full((2, 2, 3), 0.5, np.float32), 4)
    assert counts.dtype == np.int64 and counts.tolist() == [[0, 0, 4, 0]] * 3


def test_match_table_reaches_level_0_like_skimage() -> None:
    """A reference whose lowest level is 0 maps the source's lowest levels to 0, not to 1."""
    source, reference = counts_of({10: 5, 100: 3, 180: 2}), counts_of({0: 5, 60: 3, 255: 2})
    table = assert_matches_skimage(source, reference)
    assert table.dtype == np.int64 and table[10] == 0 and table[180] == 255


# ---------------------------------------------------------------- histogram() on images (moved from test_histogram.py)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_histogram_counts_every_level_like_bincount(dtype: type) -> None:
    image = photo(40, 56, 4, np.uint8).astype(dtype) * (257 if dtype == np.uint16 else 1)
    levels = 256 if dtype == np.uint8 else 65536
    counts = histogram(image, levels)
    assert counts.shape == (3, levels) and counts.dtype == np.int64  # alpha left out
    for c in range(3):
        np.testing.assert_array_equal(counts[c], np.bincount(image[..., c].ravel(), minlength=levels))
    np.testing.assert_array_equal(histogram(image, levels, channels="a"),
                                  np.bincount(image[..., 3].ravel(), minlength=levels))


def test_histogram_coarse_bins_luminance_and_mask() -> None:
    image = photo(40, 56, 3, np.uint16)
    np.testing.assert_array_equal(histogram(image, 256, channels="r"),
                                  np.bincount((image[..., 2] // 256).ravel(), minlength=256))
    luma = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    np.testing.assert_array_equal(histogram(image, 64, channels="luminance"),
                                  np.bincount((luma // 1024).ravel(), minlength=64))
    mask = np.zeros(image.shape[:2], np.uint8)
    mask[5:20, 10:30] = 7
    both = histogram(image, 16, channels=[0, "g"], mask=mask)
    assert both.shape == (2, 16)
    np.testing.assert_array_equal(both[1], np.bincount((image[5:20, 10:30, 1] // 4096).ravel(), minlength=16))


def test_histogram_float32_equal_width_bins_with_ends_included() -> None:
    image = photo(40, 56, 1, np.float32)
    image[0, :4] = [-0.5, 1.0, 2.0, np.nan]  # below range, top edge, above range, not counted
    counts = histogram(image, 100, channels=0)
    expected, _ = np.histogram(np.clip(image[~np.isnan(image)], 0, 1), bins=100, range=(0, 1))
    np.testing.assert_array_equal(counts, expected)
    assert counts.sum() == image.size - 1


def test_histogram_handles_both_calchist_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenCV 5 returns (bins,), 4.x returned (bins, 1): the same counts either way."""
    image = photo(24, 32, 3, np.uint8)
    expected = histogram(image)
    real = cv2.calcHist
    monkeypatch.setattr(hist_module.cv2, "calcHist", lambda *a: real(*a).reshape(-1, 1))
    np.testing.assert_array_equal(histogram(image), expected)


def test_histogram_takes_device_images_and_rejects_bad_arguments() -> None:
    image = photo(24, 32, 3, np.uint8)
    np.testing.assert_array_equal(histogram(cv2.UMat(image)), histogram(image))
    for bad in ({"bins": 1}, {"bins": 70000}, {"channels": "x"}, {"channels": 3}, {"mask": np.ones((2, 2))}):
        with pytest.raises(ValueError, match="^histogram: "):
            histogram(image, **bad)  # type: ignore[arg-type]
