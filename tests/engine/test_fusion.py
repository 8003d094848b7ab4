"""Fusion: fused and unfused pipelines agree within the tolerance stated per pass.

- lookup tables: exact (uint8, uint16; float32 runs the steps one by one);
- colour matrices: within one level per step for uint8 (the unfused chain rounds after
  every step, the fused one once), 1e-5 for float32, on images whose intermediate
  values stay in range;
- warps: one resampling instead of several, so they differ by interpolation error. A
  bilinear resampling is within ``max|f''| / 8`` per axis of the exact value (the linear
  interpolation error bound, unit pixel spacing); the unfused chain of ``k`` warps
  resamples ``k`` times and the fused one once, so the tolerance is ``(k + 1) / 8`` times
  the image's largest second difference (0.089 on the smooth test image: 0.034 for two
  steps, 0.045 for three; measured worst 0.022 over every two-step chain and 0.028 over
  60 random three-step ones), and mean |difference| < 0.004 (0.0033 for three 7-degree
  rotations), as fractions of full scale, over pixels whose source stays inside the image.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cvfilters.backends import get_backend
from cvfilters.core.context import ImageInfo
from cvfilters.engine.fusion import compose_matrices, compose_tables
from cvfilters.engine.pipeline import Pipeline
from tests.conftest import photo

TABLE_STEPS = [
    "gamma:gamma=1.4", "gamma:gamma=0.6", "brightness_contrast:brightness=10,contrast=1.2", "posterize:levels=16",
    "invert", "solarize", "exposure:ev=0.5", "levels:in_black=0.1,in_white=0.9", "threshold",
    "tone_curve:points=[[0,0],[0.3,0.2],[0.7,0.85],[1,1]]",
]
MATRIX_STEPS = ["saturation:amount=0.5", "hue_shift:degrees=30", "grayscale",
                "color_matrix:matrix=[[0.9,0.05,0.05],[0.05,0.9,0.05],[0.05,0.05,0.9]]"]
WARP_STEPS = ["rotate:angle=7", "rotate:angle=-12", "swirl:strength=1", "flip", "flip:axis=vertical",
              "affine:matrix=[[1,0.1,-3],[0,1,2]]", "bulge:scale=0.3", "pinch:scale=0.3"]


def both(spec: str, image: np.ndarray, backend: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    fused = Pipeline.parse(spec)(image, backend=backend)
    plain = Pipeline.parse(spec, fuse=False)(image, backend=backend)
    return fused, plain


def test_compile_groups_runs_of_one_kind() -> None:
    pipe = Pipeline.parse("gamma:gamma=2 | posterize | gaussian_blur | flip | rotate:angle=5 | invert "
                          "| saturation:amount=0.5 | grayscale")
    plan = [step.filter.name for step in pipe.compile()]
    assert plan == ["fused[gamma:gamma=2 | posterize]", "gaussian_blur", "fused[flip | rotate:angle=5]", "invert",
                    "fused[saturation:amount=0.5 | grayscale]"]
    assert [s.filter.name for s in Pipeline.parse("gamma | posterize", fuse=False).compile()] == ["gamma", "posterize"]
    _, report = pipe.run(photo(16, 16), backend="cpu")
    assert "fused[gamma:gamma=2 | posterize]" in "\n".join(report.lines())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=st.lists(st.sampled_from(TABLE_STEPS), min_size=2, max_size=5),
       dtype=st.sampled_from([np.uint8, np.uint16, np.float32]), channels=st.sampled_from([1, 3, 4]))
def test_table_fusion_is_exact(chain: list[str], dtype: type, channels: int) -> None:
    image = photo(12, 17, channels, dtype)
    fused, plain = both(" | ".join(chain), image)
    np.testing.assert_array_equal(fused, plain)


def test_table_fusion_runs_one_lut_on_the_device(device_backend: str) -> None:
    image = photo(40, 56, 3, np.uint8)
    spec = "gamma:gamma=1.4 | brightness_contrast:brightness=10,contrast=1.3 | posterize:levels=16 | invert"
    fused, plain = both(spec, image, device_backend)
    np.testing.assert_array_equal(fused, plain)
    out, report = Pipeline.parse(spec).run(image, backend=device_backend)
    assert report.steps == (f"fused[{spec}]",) and (report.counters.uploads, report.counters.downloads) == (1, 1)


def test_compose_tables_per_channel() -> None:
    first = np.array([[0, 1], [2, 0], [1, 2]])  # 3 levels, 2 channels
    second = np.array([2, 0, 1])
    np.testing.assert_array_equal(compose_tables([first, second]), [[2, 0], [1, 2], [0, 1]])
    np.testing.assert_array_equal(compose_tables([second, first]), [[1, 2], [0, 1], [2, 0]])
    np.testing.assert_array_equal(compose_tables([first, first]), [[0, 0], [1, 1], [2, 2]])


def test_compose_matrices_is_the_affine_product() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    v = rng.normal(size=3)
    expected = b[:, :3] @ (a[:, :3] @ v + a[:, 3]) + b[:, 3]
    np.testing.assert_allclose(compose_matrices([a, b])[:, :3] @ v + compose_matrices([a, b])[:, 3], expected)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=st.lists(st.sampled_from(MATRIX_STEPS), min_size=2, max_size=4),
       dtype=st.sampled_from([np.uint8, np.float32]))
def test_matrix_fusion_agrees(chain: list[str], dtype: type) -> None:
    # mid-range colours keep every intermediate inside 0..1, where clipping cannot differ
    image = (photo(10, 13, 3, np.float32) * 0.5 + 0.25)
    image = (image * 255).round().astype(np.uint8) if dtype == np.uint8 else image
    fused, plain = both(" | ".join(chain), image)
    limit = len(chain) if dtype == np.uint8 else 1e-5  # the unfused chain rounds once per step
    assert np.abs(fused.astype(np.float64) - plain).max() <= limit


def smooth(height: int = 64, width: int = 80) -> np.ndarray:
    return cv2.GaussianBlur(photo(height, width, 3, np.float32), (0, 0), 2.0)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=st.lists(st.sampled_from(WARP_STEPS), min_size=2, max_size=3))
def test_warp_fusion_agrees_within_interpolation_error(chain: list[str]) -> None:
    image = smooth()
    spec = " | ".join(chain)
    fused, plain = both(spec, image)
    # pixels whose source is inside the image in both runs: mark them with an all-ones image
    inside = np.minimum(*both(spec, np.ones_like(image)))[..., 0] > 0.999
    inside = cv2.erode(inside.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    difference = np.abs(fused - plain)[inside]
    second = max(np.abs(np.diff(image, 2, axis=0)).max(), np.abs(np.diff(image, 2, axis=1)).max())
    assert difference.mean() < 0.004 and difference.max() <= (len(chain) + 1) / 8 * second


def test_flips_fuse_exactly_and_maps_are_built_once(backend: str) -> None:
    image = photo(21, 30, 4, np.uint8)
    pipe = Pipeline.parse("flip | flip:axis=vertical | flip:axis=both")
    np.testing.assert_array_equal(pipe(image, backend=backend), image)
    be = get_backend(backend)
    before = be.counters.constants
    pipe(image, backend=backend)
    assert be.counters.constants == before  # composed maps cached on the device


def test_fused_warps_change_size_like_the_steps() -> None:
    image = photo(30, 50, 3, np.uint8)
    fused, plain = both("rotate:angle=30,expand=true | flip", image)
    assert fused.shape == plain.shape != image.shape


def test_constant_after_non_constant_border_is_not_fused() -> None:
    pipe = Pipeline.parse("swirl:border=reflect101 | rotate:angle=10,border=constant")
    assert [s.filter.name for s in pipe.compile()] == ["swirl", "rotate"]


@pytest.mark.parametrize("spec", ["gamma:gamma=2 | invert", "rotate:angle=5 | rotate:angle=-3"])
def test_cli_no_fuse_flag(tmp_path, spec: str) -> None:
    from cvfilters.cli import main

    source = tmp_path / "in.png"
    image = photo(20, 24)
    cv2.imwrite(str(source), image)
    assert main(["apply", str(source), "-o", str(tmp_path / "a.png"), "-f", spec]) == 0
    assert main(["apply", str(source), "-o", str(tmp_path / "b.png"), "-f", spec, "--no-fuse"]) == 0
    a, b = cv2.imread(str(tmp_path / "a.png")), cv2.imread(str(tmp_path / "b.png"))
    fused, plain = both(spec, image)
    np.testing.assert_array_equal(a, fused)  # the default fuses
    np.testing.assert_array_equal(b, plain)  # --no-fuse runs the steps one by one
    if spec.startswith("rotate"):  # two resamplings differ from one: the flag is seen
        assert np.abs(a.astype(int) - b).max() > 0


BGR_FROM_RGB = np.eye(3)[::-1]


def test_matrix_fusion_is_one_transform_of_the_composed_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two colour matrices (one with offsets) run as one cv2.transform: ``clip(M2 (M1 x + b1) + b2)``."""
    from cvfilters.backends.cpu import CpuBackend

    calls: list[np.ndarray] = []
    original = CpuBackend.transform
    monkeypatch.setattr(CpuBackend, "transform", lambda self, image, matrix: calls.append(matrix) or
                        original(self, image, matrix))
    m1 = np.array([[0.9, 0.05, 0.05, 0.1], [0.05, 0.9, 0.05, 0.0], [0.1, 0.1, 0.8, -0.05]])  # RGB rows, offsets
    m2 = np.array([[1.3, 0.0, 0.0], [0.0, 0.7, 0.0], [0.2, 0.0, 0.9]])
    spec = (f"color_matrix:matrix={json.dumps(m1.tolist())} | color_matrix:matrix={json.dumps(m2.tolist())}")
    for dtype in (np.uint8, np.float32):
        image = photo(12, 15, 3, dtype)
        calls.clear()
        fused = Pipeline.parse(spec)(image, backend="cpu")
        assert len(calls) == 1  # one transform, not one per step
        full = 255.0 if dtype == np.uint8 else 1.0
        rgb = image[..., ::-1].astype(np.float64) / full
        expected = np.clip((rgb @ m1[:, :3].T + m1[:, 3]) @ m2.T, 0, 1)[..., ::-1] * full  # offsets in full scale
        tolerance = 1.0 if dtype == np.uint8 else 1e-5  # uint8: cv2.transform in 1/1024 fixed point
        assert np.abs(fused.astype(np.float64) - expected).max() <= tolerance
        assert fused.min() >= 0 and fused.max() <= full  # float32 is clipped like the steps would


def test_fused_constant_border_leaves_the_fill_where_the_steps_do() -> None:
    """Composed maps carry the constant border: pixels the steps fill stay filled."""
    image = photo(40, 48, 3, np.float32) * 0.8 + 0.2  # no black inside: black is the fill
    fused, plain = both("rotate:angle=20 | rotate:angle=-35", image)
    filled = plain.max(axis=-1) == 0
    assert filled.sum() > 100
    assert (fused.max(axis=-1)[filled] < 0.05).mean() > 0.95  # the fill, up to interpolation at its edge


def test_matrix_fusion_on_gray_runs_the_steps() -> None:
    image = photo(12, 15, 1, np.float32)
    fused, plain = both("saturation:amount=0.5 | color_matrix:matrix=[[0.9,0.1,0,0.05],[0,1,0,0],[0,0,1,0]]", image)
    np.testing.assert_allclose(fused, plain, atol=1e-6)
    assert fused.shape == image.shape and np.abs(fused - image).max() > 0.01


def test_fused_warps_keep_the_fill_colour_on_bgra() -> None:
    """A translucent fill colour: the fused remap fills with it, premultiplied like the steps do."""
    image = np.dstack([photo(40, 48, 3, np.float32) * 0.8 + 0.2, np.ones((40, 48), np.float32)])
    fill = "[0.2,0.4,0.6,0.5]"
    fused, plain = both(f"rotate:angle=20,fill={fill} | rotate:angle=-35,fill={fill}", image)
    filled = np.abs(plain[..., 3] - 0.5) < 1e-6
    assert filled.sum() > 100
    np.testing.assert_allclose(plain[filled][:, :3], np.tile([0.6, 0.4, 0.2], (filled.sum(), 1)), atol=1e-5)  # RGBA
    inner = filled & (cv2.erode(filled.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0)  # off the fill's edge
    np.testing.assert_allclose(fused[inner], plain[inner], atol=1e-4)


def _grid(rect: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Source coordinates equal to the output's own (x + 0.5, y + 0.25) over ``rect``: a stand-in for a warp's maps."""
    y0, y1, x0, x1 = rect
    xs, ys = np.meshgrid(np.arange(x0, x1, dtype=np.float32) + 0.5, np.arange(y0, y1, dtype=np.float32) + 0.25)
    return xs, ys


@pytest.mark.parametrize(("area", "strips"), [
    ((3, 20, 5, 45), [(3, 5), (5, 7), (7, 9), (9, 11), (11, 13), (13, 15), (15, 17), (17, 19), (19, 20)]),  # 2 rows
    ((0, 4, 10, 160), [(0, 1), (1, 2), (2, 3), (3, 4)]),  # a row over the bound: one row at a time
    ((0, 2, 0, 40), [(0, 2)]),  # 80 pixels: at once
    ((6, 8, 0, 50), [(6, 8)]),  # exactly 100
    ((0, 150, 7, 8), [(0, 100), (100, 150)]),  # one column: 100 rows a strip
    ((0, 4, 60, 100), [(0, 2), (2, 4)]),  # strips sized by the width, not by where the area starts
])
def test_maps_over_a_large_area_are_evaluated_in_bounded_strips(monkeypatch: pytest.MonkeyPatch,
                                                              area: tuple[int, int, int, int],
                                                              strips: list[tuple[int, int]]) -> None:
    """100 pixels at once: strips of 100 // width rows (at least one), the same values as the whole area."""
    from cvfilters.engine import fusion

    monkeypatch.setattr(fusion, "STRIP_PIXELS", 100)
    asked: list[tuple[int, int, int, int]] = []

    def maps(rect: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        asked.append(rect)
        return _grid(rect)

    xs, ys = fusion._in_strips(maps, area)
    assert asked == [(top, bottom, area[2], area[3]) for top, bottom in strips]
    expected_x, expected_y = _grid(area)  # the coordinates written out: x + 0.5, y + 0.25
    assert xs.dtype == ys.dtype == np.float32
    np.testing.assert_array_equal(xs, expected_x)
    np.testing.assert_array_equal(ys, expected_y)
    np.testing.assert_array_equal(ys[:, 0], np.arange(area[0], area[1]) + 0.25)


def test_tiled_fused_warps_composed_in_strips_equal_the_whole_image(monkeypatch: pytest.MonkeyPatch) -> None:
    """Maps of the area a tile reaches evaluated 64 pixels at a time: the tiled result is still the whole-image one."""
    from cvfilters.engine import fusion
    from cvfilters.engine.tiles import process

    monkeypatch.setattr(fusion, "STRIP_PIXELS", 64)
    image = photo(70, 90, 3, np.uint8)
    pipe = Pipeline.parse("rotate:angle=10 | swirl:strength=1")
    assert [step.filter.name for step in pipe.compile()] == ["fused[rotate:angle=10 | swirl:strength=1]"]
    np.testing.assert_array_equal(process(image, pipe, tile_size=32), pipe(image, backend="cpu"))


TILED_CHAINS = [
    "rotate:angle=20 | rotate:angle=-35",  # a constant border after the first warp: OUTSIDE carried through tiles
    "rotate:angle=10 | flip",  # a step without a border parameter after the first
    "rotate:angle=10 | rotate:angle=30,expand=true",  # the second step's output is larger than its input
    "rotate:angle=20,border=wrap | rotate:angle=-35,border=wrap",  # a wrap reaches across the whole first output
]


@pytest.mark.parametrize("spec", TILED_CHAINS)
def test_tiled_fused_warps_equal_the_whole_image_and_tile(spec: str) -> None:
    """A fused warp tiles (no whole-image step) and its tiles give the whole-image fused run bit for bit.

    Catches composed tile maps that lose the constant border's far-outside coordinates (filled with
    the image's corner instead), fail on a step without a border, read the wrong step's output size or
    take a wrapped area as reflected.
    """
    from cvfilters.engine.tiles import plan, process

    image = photo(70, 90, 3, np.uint8)
    pipe = Pipeline.parse(spec)
    assert len(pipe.compile()) == 1
    assert plan(pipe, image.shape, image.dtype, tile_size=32).whole_image_steps == ()
    np.testing.assert_array_equal(process(image, pipe, tile_size=32), pipe(image, backend="cpu"))


def test_tiled_fused_warps_keep_a_translucent_fill_premultiplied() -> None:
    """BGRA with a translucent fill: tiles fill like the whole-image fused run (within float rounding)."""
    from cvfilters.engine.tiles import process

    image = np.dstack([photo(60, 72, 3, np.float32) * 0.8 + 0.2, np.ones((60, 72), np.float32)])
    fill = "[0.2,0.4,0.6,0.5]"
    pipe = Pipeline.parse(f"rotate:angle=20,fill={fill} | rotate:angle=-35,fill={fill}")
    whole_run = pipe(image, backend="cpu")
    assert (np.abs(whole_run[..., 3] - 0.5) < 1e-6).sum() > 100
    np.testing.assert_allclose(process(image, pipe, tile_size=32), whole_run, atol=1e-5)


def test_fused_point_groups_tile_as_points() -> None:
    """Fused tables and matrices stay point operations: the tile plan runs them per tile, no halo."""
    from cvfilters.engine.tiles import plan

    for spec in ("gamma:gamma=1.4 | invert", "saturation:amount=0.5 | grayscale"):
        tile_plan = plan(Pipeline.parse(spec), (70, 90, 3), np.dtype(np.uint8), tile_size=32)
        assert tile_plan.whole_image_steps == () and tile_plan.halo == (0, 0, 0, 0)
        assert tile_plan.explain()[1].startswith(f"  fused[{spec}]: point: ")


@pytest.fixture
def plugins() -> Iterator[None]:
    """Plugin filters: a warp with maps but no footprint, clamping float input to 0..1; a table filter
    whose table is missing; table filters inverting all four channels (alpha "all") and premultiplied colour
    (alpha "premultiply")."""
    from cvfilters.registry.catalog import register, unregister

    def mirror_maps(_: Mapping[str, Any], spec: ImageInfo) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = np.meshgrid(np.arange(spec.width, dtype=np.float32)[::-1], np.arange(spec.height, dtype=np.float32))
        return xs, ys

    register("plugin_mirror", category="warp", summary="Mirror.", alpha="all", maps=mirror_maps, linear=True,
             unbounded=False)(
        lambda ctx, img: ctx.backend.flip(img, 1))
    register("plugin_no_table", category="tone", summary="No table.", table=lambda params, spec: None)(
        lambda ctx, img: img)
    inverted = (255 - np.arange(256)).astype(np.uint8)
    register("plugin_invert_all", category="tone", summary="Invert, alpha too.", alpha="all",
             table=lambda params, spec: inverted)(lambda ctx, img: ctx.backend.lut(img, inverted))
    register("plugin_invert_premultiplied", category="tone", summary="Invert premultiplied.", alpha="premultiply",
             table=lambda params, spec: inverted)(lambda ctx, img: 1.0 - img)  # float32 under "premultiply"
    yield
    for name in ("plugin_mirror", "plugin_no_table", "plugin_invert_all", "plugin_invert_premultiplied"):
        unregister(name)


@pytest.mark.usefixtures("plugins")
def test_a_fused_warp_with_a_step_giving_no_tile_maps_runs_whole_and_says_which() -> None:
    """A plugin warp without a footprint: the fused group runs whole-image, naming that step."""
    from cvfilters.engine.tiles import plan

    pipe = Pipeline.parse("rotate:angle=10 | plugin_mirror")
    tile_plan = plan(pipe, (40, 50, 3), np.dtype(np.uint8), tile_size=32)
    assert tile_plan.whole_image_steps == ("fused[rotate:angle=10 | plugin_mirror]",)
    assert tile_plan.explain()[1] == ("  fused[rotate:angle=10 | plugin_mirror]: whole image: "
                                      "plugin_mirror gives no tile maps to compose")


@pytest.mark.usefixtures("plugins")
def test_a_fused_table_step_without_a_table_is_a_clear_error() -> None:
    """A table filter whose table is None for uint8 fails in the fused group with the documented message."""
    with pytest.raises(TypeError, match="^a fused step lacks what its fusion kind needs$"):
        Pipeline.parse("gamma:gamma=2 | plugin_no_table")(photo(8, 8), backend="cpu")


@pytest.mark.usefixtures("plugins")
def test_a_fused_warp_clamps_float_input_when_one_of_its_steps_does() -> None:
    """``rotate | plugin_mirror`` (the plugin declared bounded): float values over 1 are clamped, as by the steps."""
    image = photo(30, 36, 3, np.float32) * 2.0
    fused, plain = both("rotate:angle=5 | plugin_mirror", image)
    assert image.max() > 1.5 and fused.max() <= 1.0 and plain.max() <= 1.0


@pytest.mark.usefixtures("plugins")
@pytest.mark.parametrize("spec", ["plugin_invert_all | gamma:gamma=2", "gamma:gamma=2 | plugin_invert_all"])
def test_table_steps_with_other_alpha_policies_give_what_the_steps_give(spec: str) -> None:
    """A table step that inverts alpha next to one that passes it through: the alpha of the steps.

    Fused as one group under the first step's policy, the alpha was inverted by both tables or by neither.
    """
    image = np.dstack([photo(6, 7, 3, np.uint8), np.full((6, 7), 200, np.uint8)])
    fused, plain = both(spec, image)
    assert (plain[..., 3] == 55).all()
    np.testing.assert_array_equal(fused, plain)


@pytest.mark.usefixtures("plugins")
def test_table_steps_under_all_and_premultiply_are_not_fused() -> None:
    """Two table steps, alpha "all" then "premultiply": each runs under its own policy.

    Only warps share those two policies; tables fused under "premultiply" inverted premultiplied colour
    where the first step inverts straight colour and alpha.
    """
    image = np.dstack([photo(6, 7, 3, np.uint8), np.full((6, 7), 200, np.uint8)])
    fused, plain = both("plugin_invert_all | plugin_invert_premultiplied", image)
    np.testing.assert_array_equal(fused, plain)


def test_a_flip_before_a_rotation_still_resamples_premultiplied() -> None:
    """``flip | rotate`` on BGRA: fused, the rotation's premultiplied resampling holds (the flip's "all" would not).

    Left half transparent red, right half opaque blue: straight resampling bleeds red into the blue
    at the seam; premultiplied keeps the colour blue wherever there is alpha. The flip is exact, so
    the fused run equals the steps within 1e-4 away from the image's edge (where the rotation's
    border fill partly covers pixels).
    """
    image = np.zeros((40, 48, 4), np.float32)
    image[:, :24] = (0.0, 0.0, 1.0, 0.0)  # BGRA: transparent red
    image[:, 24:] = (1.0, 0.0, 0.0, 1.0)  # opaque blue
    fused, plain = both("flip | rotate:angle=7", image)
    seen = plain[..., 3] > 0.05
    np.testing.assert_allclose(plain[seen][:, :3], np.tile([1.0, 0.0, 0.0], (seen.sum(), 1)), atol=1e-4)
    np.testing.assert_allclose(fused[8:-8, 8:-8], plain[8:-8, 8:-8], atol=1e-4)


def test_fused_warps_run_in_linear_light_like_the_steps() -> None:
    """With linear light, a fused warp group mixes linear values like its steps (within 2 levels).

    ``flip | rotate:angle=45``: the flip is exact, so both runs resample once; on noise, mixing
    encoded values instead gives a visibly darker result.
    """
    image = np.random.default_rng(3).integers(0, 256, (40, 48, 3), dtype=np.uint8)
    spec = "flip | rotate:angle=45"
    fused = Pipeline.parse(spec).run(image, backend="cpu", linear=True)[0]
    plain = Pipeline.parse(spec, fuse=False).run(image, backend="cpu", linear=True)[0]
    encoded = Pipeline.parse(spec, fuse=False).run(image, backend="cpu")[0]
    middle = (slice(12, -12), slice(12, -12))
    assert np.abs(fused[middle].astype(int) - plain[middle]).max() <= 2
    assert plain[middle].mean() - encoded[middle].mean() > 10  # linear mixing is brighter on noise


def test_a_fused_group_is_described_by_its_steps() -> None:
    """A fused group's declaration: its name as description, the first step's category, linear for warps."""
    for spec, category, linear in (("invert | gamma:gamma=2", "color", False),
                                   ("gamma:gamma=2 | invert", "tone", False), ("rotate:angle=5 | flip", "warp", True)):
        (step,) = Pipeline.parse(spec).compile()
        info = step.filter.info()
        assert (info["description"], info["category"], info["linear"]) == (f"fused[{spec}]", category, linear)
