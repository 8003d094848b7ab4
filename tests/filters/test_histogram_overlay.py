"""``histogram_overlay``: the panel drawn, and where it is pasted (moved from test_histogram.py).

Oracles: the input itself (opacity 0 gives back the image bit for bit, wherever the panel
sits), rectangles worked out by hand from ``round(position * (free space))`` and
``round(size * (width, height))``, and ``np.bincount`` for the bars (``log1p`` of the counts
for ``log``; float32 counted by its 16-bit levels ``round(x * 65535)``). Everything is exact.

The paste crops the image around the panel and joins the pieces with ``concat``. On the cpu
backend a numpy slice past the edge is silently shortened and ``cv2.hconcat`` skips an empty
piece; the device backends do neither: a ``cv2.UMat`` region past the edge raises, an empty
``UMat`` piece fails ``hconcat``'s assertion (both checked with OpenCV 5.1), a ``GpuMat``
region past the edge raises, and the cuda backend's ``concat`` reads any axis but 1 as
top-to-bottom; OpenCL's ``addWeighted`` of two depths without a ``dtype`` raises (``arithm_op_ocl``,
OpenCV 5.1; the cpu code takes the first one's). ``DeviceRules`` is the cpu backend with those
rules, so the cpu suite checks what the overlay asks of a device backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.backends.cpu import CpuBackend
from cvfilters.core.context import Context, ImageInfo
from cvfilters.registry import catalog
from tests.conftest import photo


def run(image: np.ndarray, name: str, backend: str = "cpu", **params: object) -> np.ndarray:
    return cvf.apply(image, name, backend=backend, **params)


class DeviceRules(CpuBackend):
    """The cpu backend with the device backends' rules for regions, joins and blends."""

    def crop(self, image: Any, x: int, y: int, width: int, height: int) -> np.ndarray:
        rows, cols = image.shape[:2]
        assert 0 <= x and 0 <= y and width >= 1 and height >= 1, (x, y, width, height)
        assert x + width <= cols and y + height <= rows, (x, y, width, height, cols, rows)
        return super().crop(image, x, y, width, height)

    def concat(self, images: Sequence[Any], axis: int) -> Any:
        assert axis in (0, 1), axis
        shared = 0 if axis == 1 else 1  # hconcat keeps the height, vconcat the width
        assert len({image.shape[shared] for image in images}) == 1, [image.shape for image in images]
        return super().concat(images, axis)

    def add_weighted(self, a: Any, wa: float, b: Any, wb: float, gamma: float = 0.0, dtype: Any = None) -> Any:
        # OpenCL refuses two depths without a dtype; the cpu code takes the first one's
        assert dtype is not None or a.dtype == b.dtype, (a.dtype, b.dtype)
        return super().add_weighted(a, wa, b, wb, gamma, dtype)


def overlay_on(backend: CpuBackend, image: np.ndarray, **params: Any) -> np.ndarray:
    fn = catalog.get("histogram_overlay")
    return np.asarray(fn.run(Context(backend, ImageInfo.of(image)), image, fn.resolve(params)))


# ---------------------------------------------------------------- the panel
def test_histogram_overlay_draws_a_blended_panel_and_nothing_else(backend: str) -> None:
    image = np.zeros((40, 100, 3), np.uint8)
    image[:, 50:] = 255  # two spikes: level 0 and level 255, each half the pixels
    image[:, :50, 0] = 0
    out = run(image, "histogram_overlay", backend, position=(1.0, 1.0), size=(0.5, 0.5), opacity=0.5)
    panel = out[20:, 50:].astype(int)
    assert np.array_equal(out[:20], image[:20]) and np.array_equal(out[20:, :50], image[20:, :50])
    # 50 columns, 50 bins: the spikes are full-height bars in the first and last column (all
    # channels: white); elsewhere the black panel at opacity 0.5 over white, round(127.5) = 128.
    np.testing.assert_array_equal(panel[:, 1:-1], np.full((20, 48, 3), 128))
    np.testing.assert_array_equal(panel[:, [0, -1]], np.full((20, 2, 3), 255))
    np.testing.assert_array_equal(run(image, "histogram_overlay", backend, opacity=0.0), image)


def test_histogram_overlay_panel_matches_the_histogram() -> None:
    image = photo(60, 80, 1)
    out = run(image, "histogram_overlay", position=(0.0, 0.0), size=(1.0, 1.0), opacity=1.0)
    coarse = np.bincount(image.ravel().astype(int) * 80 // 256, minlength=80)  # 80 columns show 80 equal-width bins
    heights = np.rint(coarse / coarse.max() * 60)
    np.testing.assert_array_equal((out == 255).sum(axis=0), heights)
    assert set(np.unique(out)) <= {0, 255}


# ---------------------------------------------------------------- where the panel goes
# A 30 x 40 image, a panel of round(0.5 * 40) x round(0.4 * 30) = 20 x 12 px, 20 and 18 px of
# free space: (x, y) = (round(px * 20), round(py * 18)). Between them the cases leave image on
# every side of the panel, on none, and on each one alone.
PLACES = [
    ((0.0, 0.0), (0, 0)), ((0.5, 0.5), (10, 9)), ((1.0, 1.0), (20, 18)), ((0.0, 1.0), (0, 18)),
    ((1.0, 0.0), (20, 0)), ((0.25, 0.5), (5, 9)),
]


@pytest.mark.parametrize(("position", "corner"), PLACES, ids=lambda v: str(v))
def test_histogram_overlay_at_opacity_0_gives_the_image_back_wherever_it_sits(position: tuple[float, float],
                                                                               corner: tuple[int, int]) -> None:
    image = photo(30, 40, 3)  # rows and columns all differ: a piece taken from the wrong place shows
    for backend in (CpuBackend(), DeviceRules()):
        out = overlay_on(backend, image, position=position, size=(0.5, 0.4), opacity=0.0)
        np.testing.assert_array_equal(out, image)


@pytest.mark.parametrize(("position", "corner"), PLACES, ids=lambda v: str(v))
def test_histogram_overlay_panel_covers_exactly_its_rectangle(position: tuple[float, float],
                                                               corner: tuple[int, int]) -> None:
    image = photo(30, 40, 1)
    x, y = corner
    inside = np.zeros(image.shape, bool)
    inside[y : y + 12, x : x + 20] = True
    for backend in (CpuBackend(), DeviceRules()):
        out = overlay_on(backend, image, position=position, size=(0.5, 0.4), opacity=1.0)
        np.testing.assert_array_equal(out[~inside], image[~inside])
        panel = out[inside]
        assert set(np.unique(panel)) == {0, 255}  # the chart on black, nothing of the image
        assert not np.array_equal(panel, image[inside])


def test_histogram_overlay_of_the_whole_image_and_of_one_pixel() -> None:
    image = photo(30, 40, 3)
    for backend in (CpuBackend(), DeviceRules()):
        np.testing.assert_array_equal(overlay_on(backend, image, size=(1.0, 1.0), opacity=0.0), image)
        one = overlay_on(backend, image, position=(0.5, 0.5), size=(0.01, 0.01), opacity=0.0)  # 1 x 1 at (20, 14)
        np.testing.assert_array_equal(one, image)


# ---------------------------------------------------------------- what the panel shows
def bars(levels: np.ndarray, full: int, width: int, height: int, *, log: bool = False) -> np.ndarray:
    """Bar heights (channels x width) from the docstring: ``min(256, width)`` bins, at least 2, over
    ``[0, full]``; column ``i`` shows bin ``i * bins // width``; heights relative to the largest bin."""
    bins = max(2, min(256, width))
    planes = levels.reshape(-1, 1) if levels.ndim == 2 else levels.reshape(-1, levels.shape[-1])
    counts = np.stack([np.bincount(plane.astype(np.int64) * bins // (full + 1), minlength=bins) for plane in planes.T])
    values = np.log1p(counts) if log else counts.astype(np.float64)
    heights: np.ndarray = np.rint(values[:, np.arange(width) * bins // width] / values.max() * height)
    return heights


def filled(panel: np.ndarray, top: float) -> np.ndarray:
    """The bar heights drawn in a panel at opacity 1 (channels x width): its full-scale pixels per column."""
    planes = panel[..., None] if panel.ndim == 2 else panel
    return np.moveaxis((planes == top).sum(axis=0), -1, 0)


def test_histogram_overlay_draws_each_colour_channel_in_its_own_channel() -> None:
    """Every channel showing the blue histogram (a 1-channel panel blended into 3) would pass the grey tests."""
    image = photo(30, 40, 3)
    assert not np.array_equal(bars(image[..., 0], 255, 40, 30), bars(image[..., 2], 255, 40, 30))
    out = run(image, "histogram_overlay", size=(1.0, 1.0), opacity=1.0)
    np.testing.assert_array_equal(filled(out, 255), bars(image, 255, 40, 30))
    assert set(np.unique(out)) == {0, 255}


def test_histogram_overlay_log_scale_shows_the_log1p_of_the_counts() -> None:
    """``log=true`` ignored, the bars of a small count next to a spike stay near zero."""
    image = photo(30, 40, 1)
    image[:15] = 200  # a spike: half the pixels at one level
    out = run(image, "histogram_overlay", size=(1.0, 1.0), opacity=1.0, log=True)
    expected = bars(image, 255, 40, 30, log=True)
    np.testing.assert_array_equal(filled(out, 255), expected)
    assert not np.array_equal(expected, bars(image, 255, 40, 30))


def test_histogram_overlay_two_columns_are_two_bins() -> None:
    """A 2 px panel shows the lower and upper half of the levels, not 3 bins of which it draws 2."""
    image = np.zeros((30, 100), np.uint8)
    image[:, 50:] = 255
    out = run(image, "histogram_overlay", position=(0.0, 0.0), size=(0.02, 1.0), opacity=1.0)
    np.testing.assert_array_equal(out[:, :2], np.full((30, 2), 255))  # both halves: full-height bars
    np.testing.assert_array_equal(out[:, 2:], image[:, 2:])


def test_histogram_overlay_wider_than_256_px_shows_256_bins() -> None:
    """Past 256 columns the bins stay the 256 levels: 257 bins would leave the top level's column empty."""
    image = photo(10, 300, 1)
    image[:, -20:] = 255
    out = run(image, "histogram_overlay", size=(1.0, 1.0), opacity=1.0)
    expected = bars(image, 255, 300, 10)
    assert expected[0, -1] > 0  # the last column shows level 255
    np.testing.assert_array_equal(filled(out, 255), expected)


def test_histogram_overlay_panel_is_at_least_one_pixel_and_only_one() -> None:
    """``size`` rounding to 0 px gives a 1 x 1 panel, not 2 px in either direction."""
    image = photo(30, 40, 1)
    out = run(image, "histogram_overlay", position=(0.5, 0.5), size=(0.01, 0.01), opacity=1.0)
    x, y = round(0.5 * 39), round(0.5 * 29)  # 20, 14
    outside = np.ones(image.shape, bool)
    outside[y, x] = False
    np.testing.assert_array_equal(out[outside], image[outside])
    assert out[y, x] == 255 * bars(image, 255, 1, 1)[0, 0]


def test_histogram_overlay_of_a_float_image_counts_its_16_bit_levels() -> None:
    """float32 is binned by its 16-bit levels ``round(x * 65535)``, as its uint16 conversion is.

    64 pixels in each of 64 bins, placed a fraction of a 16-bit level from the bins' edges: any
    other quantisation (none, or by 65534 or 65537 levels) moves some across an edge, and the
    64 equal full-height columns become uneven."""
    low = np.arange(64) * 1024.0  # each bin's lowest 16-bit level
    offsets = [low - 0.4, low + 0.3, low + 1023.4, low + 512]  # -0.4 and +0.4 round into the bin
    offsets[0][0] = 0.0
    levels = np.repeat(np.stack(offsets, axis=1), 16, axis=1)  # 64 bins x 64 pixels
    image = (levels / 65535).astype(np.float32)
    quantised = np.rint(np.clip(image.astype(np.float64), 0.0, 1.0) * 65535).astype(np.uint16)
    assert np.array_equal(quantised // 1024, np.repeat(np.arange(64)[:, None], 64, axis=1))
    out = run(image, "histogram_overlay", size=(1.0, 1.0), opacity=1.0)
    np.testing.assert_array_equal(out, np.ones((64, 64), np.float32))  # 64 full columns
    np.testing.assert_array_equal(run(quantised, "histogram_overlay", size=(1.0, 1.0), opacity=1.0), 65535)
