"""Every border mode and every interpolation mode of every filter that declares one has its own effect.

A filter that maps two choices to the same OpenCV constant, or drops the choice on the
way to the primitive, gives equal results for two modes; these tests run each registered
filter once per choice and require every pair to differ. The per-mode oracles live beside
each family (``test_blur.py``: scipy per border mode; ``test_warp.py``: a textbook
reference per interpolation mode); this file covers the filters those do not name.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.registry import catalog as registry

# Parameters at which each mode reads a different part of the plane (a warp must sample
# more than one pixel outside the image, or every border mode looks alike). Filters not
# named run at their defaults.
PARAMS: dict[str, dict[str, Any]] = {
    "convolve": {"kernel": [[1, 2, 0], [0, -1, 3], [2, 0, 1]]},
    "bulge": {"center": (0.1, 0.1), "radius": 1.0, "scale": -1.0},
    "stretch": {"center": (0.12, 0.12), "strength": -2.0},
    "pinch": {"center": (0.1, 0.1), "radius": 1.0, "scale": 2.0},
    "swirl": {"center": (0.0, 0.0), "strength": 10.0},
    "perspective": {"matrix": ((1.0, 0.1, 0.0), (0.0, 1.0, 0.0), (0.002, 0.004, 1.0))},
    "pad": {"top": 3, "bottom": 2, "left": 4, "right": 1, "fill": [0.3]},  # the default adds no pixels
}
# A 3x3 window reads one pixel beyond the edge, where replicate (aa|ab) and reflect (ba|ab)
# give the same pixel: these pairs are equal by arithmetic, not by a bug.
SAME_WITHIN_ONE_PIXEL = {"replicate", "reflect"}
THREE_BY_THREE = {"convolve", "edges", "emboss", "laplacian", "prewitt", "scharr", "sharpen", "sobel"}


def field() -> np.ndarray:
    """A float32 BGR field that differs at every edge (left/right, top/bottom) and per channel."""
    y, x = np.mgrid[0:23, 0:29]
    planes = [0.02 * x + 0.3 * np.sin(0.37 * y) + 0.01 * (x * y % 7), 0.5 + 0.3 * np.cos(0.04 * x * y),
              0.01 * x * x / 8]
    return np.clip(np.dstack(planes), 0, 1).astype(np.float32)


def _cases(param: str) -> list[Any]:
    return [pytest.param(f.name, id=f.name) for f in registry.filters()
            if any(p.name == param for p in f.params)]


def _results(name: str, param: str) -> dict[str, np.ndarray]:
    choices = next(p for p in cvf.get_filter(name).params if p.name == param).choices
    image = field()
    return {c: cvf.apply(image, name, backend="cpu", **{param: c}, **PARAMS.get(name, {})) for c in choices}


@pytest.mark.parametrize("name", _cases("border"))
def test_every_border_mode_has_its_own_effect(name: str) -> None:
    results = _results(name, "border")
    for a, b in itertools.combinations(results, 2):
        differ = np.abs(results[a].astype(np.float64) - results[b]).max() > 1e-3
        if name in THREE_BY_THREE and {a, b} == SAME_WITHIN_ONE_PIXEL:
            assert not differ, f"{name}: {a} and {b} should agree for a 3x3 window"
        else:
            assert differ, f"{name}: border={a} and border={b} give the same image"


@pytest.mark.parametrize("name", _cases("interpolation"))
def test_every_interpolation_mode_has_its_own_effect(name: str) -> None:
    results = _results(name, "interpolation")
    for a, b in itertools.combinations(results, 2):
        assert np.abs(results[a].astype(np.float64) - results[b]).max() > 1e-3, \
            f"{name}: interpolation={a} and interpolation={b} give the same image"
