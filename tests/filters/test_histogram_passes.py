"""The two-pass histogram filters: ``_two_pass``'s footprint, and statistics applied at their edges.

``_two_pass`` runs at import, once per filter, before mutmut switches a mutant on, so
running the filters (tiled or not) never reaches its mutants; it is called again here
with stand-in ``measure`` and ``apply`` functions that record what they are given.
Oracles: the arguments written out by hand, sums and maxima of small arrays, and the
footprint lines of ``cvfilters info equalize`` / ``info normalize``. All exact.

Then the filters' statistics applied where the mirror's tests did not reach: auto_contrast
in tiles against scikit-image's ``rescale_intensity`` between pooled ``np.percentile``
values (0.51 of a level: rounding after cv2's float32 arithmetic), normalize against
``cv2.normalize`` (exact) and the float formula ``(x - min) / (max - min)`` (5e-6, float32
arithmetic) with the result inside 0..1 exactly; equalize through its tables (every case but
8-bit grey or per channel) on a constant image, which must come back as it is (the input itself).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest
from skimage.exposure import rescale_intensity

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.tiles import process
from cvfilters.filters.histogram import _two_pass
from cvfilters.registry.footprints import Global, Window
from tests.conftest import photo

SPEC = ImageInfo(height=4, width=6, channels=1, dtype=np.dtype(np.uint8))


def recorders() -> tuple[list[tuple[Any, ...]], Any, Any]:
    calls: list[tuple[Any, ...]] = []

    def measure(ctx: Any, img: Any, **params: Any) -> np.ndarray:
        calls.append(("measure", ctx, img, params))
        return np.array([1, 2])

    def apply(ctx: Any, img: Any, stats: Any, **params: Any) -> str:
        calls.append(("apply", ctx, img, stats, params))
        return "applied"

    return calls, measure, apply


def test_two_pass_measures_the_window_and_applies_with_the_filters_parameters() -> None:
    calls, measure, apply = recorders()
    footprint = _two_pass(measure, apply)({"space": "lab", "linked": True}, SPEC)
    assert isinstance(footprint, Global)
    ctx, tile = object(), np.arange(24, dtype=np.uint8).reshape(4, 6)
    window = Window(rect=(0, 4, 0, 6), full=SPEC, inner=(1, 3, 2, 5))

    stats = footprint.statistics(ctx, tile, window)
    np.testing.assert_array_equal(stats, [1, 2])
    (name, got_ctx, got_img, params), = calls
    assert (name, got_ctx, got_img) == ("measure", ctx, tile)
    part = params.pop("part")
    assert params == {"space": "lab", "linked": True}
    np.testing.assert_array_equal(part(tile), [[8, 9, 10], [14, 15, 16]])  # rows 1..2, columns 2..4

    assert footprint.apply(ctx, tile, stats, window) == "applied"
    assert calls[1] == ("apply", ctx, tile, stats, {"space": "lab", "linked": True})


def test_two_pass_sums_tile_histograms_unless_given_a_merge() -> None:
    _, measure, apply = recorders()
    partials = [np.array([[1, 0, 2]]), np.array([[3, 4, 0]]), np.array([[0, 1, 1]])]
    summed = _two_pass(measure, apply)({}, SPEC)
    np.testing.assert_array_equal(summed.merge(partials), [[4, 5, 3]])
    widest = _two_pass(measure, apply, merge=lambda parts: np.maximum.reduce(parts),
                       measures="the minimum and maximum of each channel")({}, SPEC)
    np.testing.assert_array_equal(widest.merge(partials), [[3, 4, 2]])


def test_two_pass_describes_what_it_measures_as_info_shows() -> None:
    _, measure, apply = recorders()
    # `cvfilters info equalize` and `cvfilters info normalize`, footprint lines
    assert _two_pass(measure, apply)({}, SPEC).describe() == (
        "global: a histogram of levels of the whole image (a statistics pass), then per tile")
    assert _two_pass(measure, apply, measures="the minimum and maximum of each channel")({}, SPEC).describe() == (
        "global: the minimum and maximum of each channel of the whole image (a statistics pass), then per tile")


# ---------------------------------------------------------------- the statistics applied
def test_auto_contrast_in_tiles_keeps_one_range_for_all_channels() -> None:
    # auto_contrast's tiles get no `linked`: one range over B, G and R is the default they must fall back on
    image = photo(29, 37, 3)
    image[..., 0] = image[..., 0] // 4 + 60  # blue squeezed: a per-channel stretch would widen it alone
    lo, hi = np.percentile(image, [1, 98])
    expected = rescale_intensity(image.astype(np.float64), in_range=(lo, hi), out_range=(0.0, 255.0))
    tiled = process(image, Pipeline([("auto_contrast", {"low": 0.01, "high": 0.02})]), tile_size=13)
    assert np.abs(tiled - expected).max() <= 0.51  # rounding, after cv2's float32 arithmetic


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_normalize_stretches_a_range_of_1_to_full_scale(dtype: type) -> None:
    # only a range of exactly 0..full is left as it is; 1..full is stretched as cv2.normalize does
    full = np.iinfo(dtype).max
    for channels, linked in ((3, True), (1, False)):
        image = np.maximum(photo(20, 24, channels, dtype), 1)
        image.reshape(-1)[[0, -1]] = 1, full
        expected = cv2.normalize(image, None, 0, full, cv2.NORM_MINMAX)
        np.testing.assert_array_equal(cvf.apply(image, "normalize", backend="cpu", linked=linked), expected)


# float32 minimum and maximum whose stretch in float32 falls just outside 0..1 (cv2.addWeighted:
# 1.0000005 at the top, -1.9e-06 at the bottom), found by a search over random pairs
@pytest.mark.parametrize(("lo", "hi"), [(0.883137047290802, 1.0237464904785156),
                                        (-2.900834083557129, -2.7541589736938477)])
def test_normalize_float_result_stays_within_0_and_1(lo: float, hi: float) -> None:
    image = np.array([[lo, hi], [(lo + hi) / 2, lo + (hi - lo) / 4]], np.float32)
    out = cvf.apply(image, "normalize", backend="cpu")
    assert out.min() >= 0.0 and out.max() <= 1.0
    # float32 arithmetic on values near 3 over a range of 0.15: a few ulps of 3 / 0.15, 2e-6 each
    np.testing.assert_allclose(out, (image.astype(np.float64) - lo) / (hi - lo), rtol=0, atol=5e-6)


# ---------------------------------------------------------------- equalize through its tables
@pytest.mark.parametrize(("dtype", "channels", "space"), [(np.uint16, 1, "ycrcb"), (np.float32, 1, "ycrcb"),
                                                          (np.uint8, 3, "ycrcb"), (np.uint16, 3, "per_channel")])
def test_equalize_gives_a_constant_image_back_unchanged(dtype: type, channels: int, space: str) -> None:
    """A constant image is documented as unchanged; the table path (all but 8-bit grey or per channel) gave None."""
    shape = (9, 11, channels) if channels > 1 else (9, 11)
    image: np.ndarray = np.full(shape, 0.3 if dtype == np.float32 else 77, dtype)
    out = cvf.apply(image, "equalize", backend="cpu", space=space)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, image)


# ---------------------------------------------------------------- float32 percentiles on 16-bit levels
@pytest.mark.parametrize("linked", [False, True])
def test_auto_levels_of_a_float_image_reads_16_bit_levels_as_level_over_65535(linked: bool) -> None:
    """float32 percentiles are found on levels round(x * 65535) and read back as level / 65535.

    Read over 65536 (or 65533) the percentiles move by 1.5e-5 (3e-5) of themselves, the result by 1.7e-5
    (3.4e-5) of full scale; cv2's float32 arithmetic is 7.5e-8 off here.
    """
    levels = np.random.default_rng(5).integers(6000, 60000, (40, 50, 3))
    image = (levels / 65535).astype(np.float32)  # exactly on 16-bit levels: the quantisation is exact
    expected = np.empty(image.shape)
    for c in ([slice(None)] if linked else range(3)):
        lo, hi = np.percentile(levels[..., c], [1, 98]) / 65535
        expected[..., c] = np.clip((image[..., c].astype(np.float64) - lo) / (hi - lo), 0.0, 1.0)
    out = cvf.apply(image, "auto_levels", backend="cpu", low=0.01, high=0.02, linked=linked)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-6)


# ---------------------------------------------------------------- clahe in tiles
@pytest.mark.parametrize(("channels", "space", "dtype", "tiles"), [(1, "ycrcb", np.uint8, 4),
                                                                  (3, "per_channel", np.uint8, 4),
                                                                  (1, "ycrcb", np.uint16, 16)])
def test_clahe_in_tiles_is_opencvs_clahe_of_each_plane(channels: int, space: str, dtype: type, tiles: int) -> None:
    """Tiled CLAHE (each tile's histograms summed, then each tile blended) must equal cv2.createCLAHE on every plane.

    Per channel, the planes of a colour image were lost in the tiled path; 16 x 16 tiles (256 of them) on 16-bit
    levels got 8-bit tables. The whole-image path has its own tests.
    """
    image = photo(41, 53, channels, dtype)
    operator = cv2.createCLAHE(3.0, (tiles, tiles))
    expected = operator.apply(image) if channels == 1 else cv2.merge([operator.apply(p) for p in cv2.split(image)])
    tiled = process(image, Pipeline([("clahe", {"clip_limit": 3.0, "tiles": tiles, "space": space})]), tile_size=29)
    np.testing.assert_array_equal(tiled, expected)


def test_clahe_describes_what_it_measures_as_info_shows() -> None:
    """`cvfilters info clahe` and `--explain` name the statistics pass: the histograms of the CLAHE tiles."""
    flt = cvf.get_filter("clahe")
    assert flt.footprint_for(flt.resolve({}), SPEC).describe() == (
        "global: the histograms of the CLAHE tiles of the whole image (a statistics pass), then per tile")
