"""``_two_pass``: the two-pass (statistics, then per tile) footprint of the histogram filters.

``_two_pass`` runs at import, once per filter, before mutmut switches a mutant on, so
running the filters (tiled or not) never reaches its mutants; it is called again here
with stand-in ``measure`` and ``apply`` functions that record what they are given.
Oracles: the arguments written out by hand, sums and maxima of small arrays, and the
footprint lines of ``cvfilters info equalize`` / ``info normalize``. All exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvfilters.core.context import ImageInfo
from cvfilters.filters.histogram import _two_pass
from cvfilters.registry.footprints import Global, Window

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
