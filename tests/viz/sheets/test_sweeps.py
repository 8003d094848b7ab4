"""Parameter sweeps (cvfilters.viz.sheets.sweeps): the values a range gives and where the tiles run."""

from __future__ import annotations

import numpy as np
import pytest

from cvfilters.backends import availability
from cvfilters.core.errors import BackendUnavailableError
from cvfilters.viz.sheets.sweeps import parse_sweep, sweep_sheet


def test_int_ranges_round_and_only_odd_parameters_snap_to_odd() -> None:
    (levels,) = parse_sweep(["posterize:levels=2..6/3"]).axes  # an int parameter with no odd rule
    assert levels.values == (2, 4, 6)
    (ksize,) = parse_sweep(["gaussian_blur:ksize=0..4/3,sigma=1"]).axes  # odd, where 0 means automatic
    assert ksize.values[0] == 0
    assert all(value % 2 == 1 and abs(value - wanted) <= 1 for value, wanted in zip(ksize.values[1:], (2, 4),
                                                                                    strict=True))
    (size,) = parse_sweep(["median_blur:size=3..7/3"]).axes
    assert size.values == (3, 5, 7)


def test_the_tiles_run_on_the_backend_asked_for() -> None:
    if availability("cuda").available:
        pytest.skip("a CUDA build: the backend that must refuse is available here")
    sweep = parse_sweep(["posterize:levels=2..6/3"])
    with pytest.raises(BackendUnavailableError, match="backend 'cuda' is unavailable"):
        sweep_sheet(np.zeros((8, 8, 3), np.uint8), sweep, tile=16, backend="cuda")


def test_tiles_are_256_pixels_by_default() -> None:
    image = np.random.default_rng(2).integers(0, 256, (40, 30, 3), np.uint8)
    sweep = parse_sweep(["posterize:levels=2..6/2"])
    sheet = sweep_sheet(image, sweep)
    np.testing.assert_array_equal(sheet, sweep_sheet(image, sweep, tile=256))
    assert not np.array_equal(sheet, sweep_sheet(image, sweep, tile=257))
