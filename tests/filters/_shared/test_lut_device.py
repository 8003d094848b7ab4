"""How the ``lut`` filter runs a file (cvfilters.filters._shared.lut_device), against numpy references.

The references are tests/filters/test_cube.py's: a trilinear interpolation written out corner
by corner and ``np.interp`` for 1-D tables, clipped to 0..1 and stored at the image's depth;
integer results within 1 level, float32 within 1e-5. The limits on cube and shaper sizes
(``MAX_REMAP_NODES``, ``MAX_REMAP_ROW``) are lowered by monkeypatching, as there, so that
small files reach both paths; which path ran shows as the counted host fallback on a device
backend (on cpu the host path is a plain call).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters._shared import lut_device
from tests.conftest import full_scale
from tests.filters.test_color import DTYPES, assert_close, sample
from tests.filters.test_cube import stored, trilinear_reference, write_cube

ON_HOST = "lut (3-D cube on host)"


def wide_cube(nodes: int = 6) -> np.ndarray:
    """A smooth [b, g, r] -> (B, G, R) cube whose outputs run from -0.4 to 1.4 (HDR-style files do)."""
    t = np.linspace(0, 1, nodes)
    b, g, r = np.meshgrid(t, t, t, indexing="ij")
    return np.stack([np.sqrt(b), g * g, 1 - r], axis=-1) * 1.8 - 0.4


@pytest.mark.parametrize("host", [False, True], ids=["remap", "host"])
def test_cube_outputs_outside_0_1_are_clipped(backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              host: bool) -> None:
    """Outputs are clipped to 0..1 of full scale on both paths (an unclipped 1.4 wraps in uint8)."""
    if host:
        monkeypatch.setattr(lut_device, "MAX_REMAP_NODES", 16)  # the 6-node cube is refined to 36 nodes
    cube = wide_cube()
    write_cube(tmp_path / "wide.cube", cube)
    for dtype in DTYPES:
        image = sample(dtype)
        out = cvf.apply(image, "lut", file=str(tmp_path / "wide.cube"), backend=backend)
        expected = stored(trilinear_reference(cube, image / full_scale(dtype)), dtype)
        assert (expected == 0).any() and (expected == full_scale(dtype)).any()  # both ends clipped
        assert_close(out, expected)


@pytest.mark.parametrize(("low", "high"), [((0.0, 0.1, 0.2), (1.0, 1.0, 1.0)), ((0.0, 0.0, 0.0), (0.7, 0.8, 0.9))],
                         ids=["low", "high"])
def test_cube_domain_per_channel(backend: str, tmp_path: Path, low: tuple[float, ...], high: tuple[float, ...]) -> None:
    """DOMAIN_MIN / DOMAIN_MAX with a value per channel (R G B in the file): each channel scaled by its own."""
    cube = wide_cube(5)
    write_cube(tmp_path / "plain.cube", cube)
    text = (tmp_path / "plain.cube").read_text().replace(
        "LUT_3D_SIZE 5\n", "LUT_3D_SIZE 5\nDOMAIN_MIN {} {} {}\nDOMAIN_MAX {} {} {}\n".format(*low, *high))
    (tmp_path / "domain.cube").write_text(text)
    image = sample(np.uint16)
    out = cvf.apply(image, "lut", file=str(tmp_path / "domain.cube"), backend=backend)
    low_bgr, high_bgr = np.array(low[::-1]), np.array(high[::-1])
    expected = trilinear_reference(cube, (image / 65535.0 - low_bgr) / (high_bgr - low_bgr))  # clamped to 0..1 there
    assert_close(out, stored(expected, np.uint16))


def test_1d_input_range_clamps_float_inputs(backend: str, tmp_path: Path) -> None:
    """float32 through a 1-D table with LUT_1D_INPUT_RANGE 0.25 0.75: inputs outside take the end rows."""
    rows = np.array([[0.1, 0.9, 0.3], [0.4, 0.2, 0.8], [0.6, 0.7, 0.1], [0.9, 0.3, 0.5], [0.95, 0.05, 0.7]])
    (tmp_path / "range.cube").write_text("LUT_1D_SIZE 5\nLUT_1D_INPUT_RANGE 0.25 0.75\n"
                                         + "\n".join(" ".join(map(str, r)) for r in rows) + "\n")
    image = sample(np.float32)
    assert (image < 0.25).any() and (image > 0.75).any()
    out = cvf.apply(image, "lut", file=str(tmp_path / "range.cube"), backend=backend)
    grid = np.linspace(0.25, 0.75, 5)  # np.interp holds the end values outside the grid
    expected = np.stack([np.interp(image[..., c], grid, rows[:, 2 - c]) for c in range(3)], axis=-1)
    assert_close(out, stored(expected, np.float32))


def test_remap_limits_are_inclusive(device_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cube of exactly MAX_REMAP_NODES nodes and a shaper of exactly MAX_REMAP_ROW rows stay on the device."""
    cube = wide_cube(5)  # refined to 33 nodes
    shaper = np.stack([np.linspace(0, 1, 9) ** 0.5, np.linspace(0, 1, 9), np.linspace(0, 1, 9) ** 2], axis=-1)
    write_cube(tmp_path / "cube.cube", cube)
    write_cube(tmp_path / "shaper.cube", cube, shaper=shaper)
    image = sample(np.uint8)

    def fallbacks(name: str, nodes: int, row: int) -> int:
        monkeypatch.setattr(lut_device, "MAX_REMAP_NODES", nodes)
        monkeypatch.setattr(lut_device, "MAX_REMAP_ROW", row)
        _, report = Pipeline([("lut", {"file": tmp_path / name})]).run(image, backend=device_backend)
        return int(report.counters.fallbacks.get(ON_HOST, 0))

    assert fallbacks("cube.cube", 33, 9) == 0 and fallbacks("cube.cube", 32, 9) == 1
    assert fallbacks("shaper.cube", 33, 9) == 0 and fallbacks("shaper.cube", 33, 8) == 1


def test_shaper_outputs_outside_0_1_are_clamped_before_the_cube(backend: str, tmp_path: Path) -> None:
    """A shaper whose rows run from -0.3 to 1.3, on uint8: its outputs index the cube clamped to its edges."""
    cube = wide_cube(5)
    grid = np.linspace(0, 1, 9)
    shaper = np.stack([grid ** 0.5, grid, grid ** 2], axis=-1) * 1.6 - 0.3  # columns R G B
    write_cube(tmp_path / "shaper.cube", cube, shaper=shaper)
    image = sample(np.uint8)
    out = cvf.apply(image, "lut", file=str(tmp_path / "shaper.cube"), backend=backend)
    shaped = np.stack([np.interp(image[..., c] / 255, grid, shaper[:, 2 - c]) for c in range(3)], axis=-1)
    assert (shaped < 0).any() and (shaped > 1).any()
    assert_close(out, stored(trilinear_reference(cube, shaped), np.uint8))  # the reference clamps to 0..1
