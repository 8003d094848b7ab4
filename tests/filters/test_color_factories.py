"""The colour factories a user builds filters with: ``point_filter``, ``color_kernel``, ``matrix_filter``.

The built-in colour filters are made by these factories when their module is imported, so
testing ``gamma`` or ``saturation`` says nothing about a filter built later: each test here
registers its own test filter (unregistered at the end) and checks what the factory's
docstring promises against references written out in numpy: the curves and matrices
applied by hand, BT.601 luma ``0.114 B + 0.587 G + 0.299 R`` for gray images.

Tolerances: integer results within 1 level of the numpy reference (OpenCV's ``transform``
works in fixed point, and a gray result is rounded twice, colour then luma); float32 within
1e-5 of full scale, 1e-6 where only numpy runs.
"""

from __future__ import annotations

import functools
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.core.errors import ParameterError
from cvfilters.filters.color import color_kernel, color_matrix_of, matrix_filter, point_filter, point_op_of
from cvfilters.registry import catalog as registry
from cvfilters.registry.footprints import Point
from cvfilters.registry.params import Param
from tests.conftest import photo

LUMA = np.array([0.114, 0.587, 0.299])  # BT.601 in BGR order
U8 = np.dtype(np.uint8)


def fresh(stem: str) -> str:
    """A filter name no other test uses (``matrix_filter`` warns once per process and name)."""
    return f"test_{stem}_{uuid.uuid4().hex[:8]}"



def stored(values: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """Normalised values as the filters store them: clipped, scaled, rounded for integers."""
    dtype = np.dtype(dtype)
    values = np.clip(values, 0.0, 1.0)
    if dtype.kind == "f":
        return values
    full = np.iinfo(dtype).max
    return np.asarray(np.rint(values * full))


def normalised(image: np.ndarray) -> np.ndarray:
    full = float(np.iinfo(image.dtype).max) if image.dtype.kind == "u" else 1.0
    return np.asarray(image, dtype=np.float64) / full


def table_of(flt: registry.Filter, params: dict[str, Any], spec: ImageInfo) -> np.ndarray:
    assert flt.table is not None
    table = flt.table(params, spec)
    assert table is not None
    return table


def assert_within(actual: np.ndarray, expected: np.ndarray, tolerance: float) -> None:
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    diff = np.abs(actual.astype(np.float64) - expected).max()
    assert diff <= tolerance, f"max difference {diff} > {tolerance}"


# ---------------------------------------------------------------- point_filter
def three_curves(params: Any, full: float) -> list[Callable[[np.ndarray], Any] | None]:
    """B unchanged, G squared, R inverted."""
    return [None, lambda v: v ** 2, lambda v: 1.0 - v]


def three_curves_reference(bgr: np.ndarray) -> np.ndarray:
    return np.stack([bgr[..., 0], bgr[..., 1] ** 2, 1.0 - bgr[..., 2]], axis=-1)


def gray_reference(v: np.ndarray) -> np.ndarray:
    """The three curves on (v, v, v), reduced to BT.601 luma."""
    return 0.114 * v + 0.587 * v ** 2 + 0.299 * (1.0 - v)


def test_point_filter_declares_a_colour_point_filter_with_its_summary(names: list[str]) -> None:
    name = fresh("pf_three")
    flt = point_filter(name, three_curves, summary="Square green, invert red.")
    names.append(name)
    assert flt.name == name and registry.get(name) is flt
    assert flt.category == "color" and flt.alpha == "passthrough"
    assert flt.description == "Square green, invert red."  # description defaults to the summary
    assert isinstance(flt.footprint, Point) and flt.point_only
    described = point_filter(fresh("pf_described"), three_curves, summary="s.", description="``out = f(in)``.",
                             category="tone")
    names.append(described.name)
    assert described.description == "``out = f(in)``." and described.category == "tone"


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32], ids=lambda d: np.dtype(d).name)
def test_point_filter_three_curves_on_colour_gray_and_alpha(names: list[str], dtype: type) -> None:
    name = fresh("pf_three")
    flt = point_filter(name, three_curves, summary="Square green, invert red.")
    names.append(name)
    tolerance = 1e-5 if np.dtype(dtype).kind == "f" else 1.0
    colour = photo(12, 16, 3, dtype)
    assert_within(cvf.apply(colour, name, backend="cpu"), stored(three_curves_reference(normalised(colour)), dtype),
                  tolerance)
    gray = photo(12, 16, 1, dtype)  # (v, v, v) through the curves, then luma, in one channel
    assert_within(cvf.apply(gray, name, backend="cpu"), stored(gray_reference(normalised(gray)), dtype), tolerance)
    rgba = photo(12, 16, 4, dtype)
    out = cvf.apply(rgba, flt, backend="cpu")
    np.testing.assert_array_equal(out[..., 3], rgba[..., 3])  # alpha passes through
    assert_within(out[..., :3], stored(three_curves_reference(normalised(rgba[..., :3])), dtype), tolerance)


def test_point_filter_tables_per_dtype(names: list[str]) -> None:
    name = fresh("pf_three")
    flt = point_filter(name, three_curves, summary="Square green, invert red.")
    names.append(name)
    ramp = np.arange(256) / 255.0
    table = table_of(flt, {}, ImageInfo(1, 1, 3, U8))
    assert table.shape == (256, 3) and table.dtype == np.uint8 and not table.flags.writeable
    np.testing.assert_array_equal(table, stored(np.stack([ramp, ramp ** 2, 1.0 - ramp], axis=-1), U8))
    assert table_of(flt, {}, ImageInfo(1, 1, 4, U8)).shape == (256, 3)  # alpha is not in the table
    gray = table_of(flt, {}, ImageInfo(1, 1, 1, U8))
    assert gray.shape == (256,)
    assert_within(gray, stored(gray_reference(ramp), U8), 0.0)
    wide = table_of(flt, {}, ImageInfo(1, 1, 3, np.dtype(np.uint16)))
    assert wide.shape == (65536, 3) and wide.dtype == np.uint16
    assert wide[65535].tolist() == [65535, 65535, 0] and wide[257].tolist() == [257, 1, 65278]
    assert flt.table is not None and flt.table({}, ImageInfo(1, 1, 3, np.dtype(np.float32))) is None


def test_point_op_evaluates_float32_on_colour_gray_and_one_channel_images(names: list[str]) -> None:
    seen: list[np.dtype] = []

    def curves(params: Any, full: float) -> list[Callable[[np.ndarray], Any] | None]:
        def square(v: np.ndarray) -> np.ndarray:
            seen.append(v.dtype)
            return v ** 2
        return [None, square, lambda v: 1.0 - v]

    name = fresh("pf_eval")
    point_filter(name, curves, summary="Square green, invert red.")
    names.append(name)
    op = point_op_of(name)
    assert op is not None
    rng = np.random.default_rng(3)
    bgr = rng.uniform(0, 1, (4, 5, 3))  # float64 in: curves get float32, float32 comes out
    out = op.evaluate(bgr, {})
    assert out.dtype == np.float32 and set(seen) == {np.dtype(np.float32)}
    assert_within(out, three_curves_reference(bgr.astype(np.float32).astype(np.float64)), 1e-6)
    v = rng.uniform(0, 1, (4, 5))
    assert_within(op.evaluate(v, {}), gray_reference(v), 1e-6)
    one = op.evaluate(v[..., None], {})  # H x W x 1 is gray too, and keeps its shape
    assert one.shape == (4, 5, 1) and one.dtype == np.float32
    assert_within(one[..., 0], gray_reference(v), 1e-6)


def test_point_filter_resolves_with_its_params_and_check(names: list[str]) -> None:
    def check(p: dict[str, Any]) -> str | None:
        return "low must be below high" if p["low"] >= p["high"] else None

    name = fresh("pf_window")
    flt = point_filter(name, lambda p, full: [lambda v: np.clip((v - p["low"]) / (p["high"] - p["low"]), 0, 1)],
                       summary="Stretch a window.", check=check,
                       params=[Param("low", "float", 0.2, min=0.0, max=1.0, help="black point"),
                               Param("high", "float", 0.6, min=0.0, max=1.0, help="white point")])
    names.append(name)
    with pytest.raises(ParameterError, match="low must be below high"):
        flt.resolve({"low": 0.7})
    image = photo(8, 8, 3, np.uint8)
    assert_within(cvf.apply(image, name, high=0.8, backend="cpu"),
                  stored(np.clip((normalised(image) - 0.2) / 0.6, 0, 1), U8), 1.0)


def test_point_filter_replace_is_refused_unless_asked(names: list[str]) -> None:
    name = fresh("pf_twice")
    point_filter(name, lambda p, full: [lambda v: v ** 2], summary="Square.")
    names.append(name)
    with pytest.raises(ValueError, match=f"a filter named '{name}' is registered already"):
        point_filter(name, lambda p, full: [lambda v: 1.0 - v], summary="Invert.")
    point_filter(name, lambda p, full: [lambda v: 1.0 - v], summary="Invert.", replace=True)
    image = photo(8, 8, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu"), 255 - image)
    assert point_op_of(name) is not None  # the replacement's curves


def test_point_filter_native_replaces_the_table_when_running(names: list[str]) -> None:
    calls: list[np.dtype] = []

    def native(ctx: Any, img: Any) -> Any:
        calls.append(ctx.info.dtype)
        return ctx.backend.bitwise_not(img) if ctx.info.dtype != np.float32 else ctx.backend.convert(
            img, np.float32, -1.0, 1.0)

    name = fresh("pf_native")
    flt = point_filter(name, lambda p, full: [lambda v: 1.0 - v], summary="Invert.", native=native)
    names.append(name)
    image = photo(8, 8, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu"), 255 - image)
    wide = photo(8, 8, 3, np.uint16)
    np.testing.assert_array_equal(cvf.apply(wide, name, backend="cpu"), 65535 - wide)
    floats = photo(8, 8, 3, np.float32)
    assert_within(cvf.apply(floats, name, backend="cpu"), 1.0 - floats.astype(np.float64), 1e-6)
    assert calls == [U8, np.dtype(np.uint16), np.dtype(np.float32)]  # native for every dtype
    np.testing.assert_array_equal(table_of(flt, {}, ImageInfo(1, 1, 1, U8)), 255 - np.arange(256))  # still exposed


def test_point_filter_float_device_runs_float32_only(names: list[str]) -> None:
    calls: list[np.dtype] = []

    def float_device(ctx: Any, img: Any) -> Any:
        calls.append(ctx.info.dtype)
        return ctx.backend.convert(img, np.float32, -1.0, 1.0)

    name = fresh("pf_float")
    point_filter(name, lambda p, full: [lambda v: 1.0 - v], summary="Invert.", float_device=float_device)
    names.append(name)
    image = photo(8, 8, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu"), 255 - image)  # the table
    assert calls == []
    floats = photo(8, 8, 3, np.float32)
    assert_within(cvf.apply(floats, name, backend="cpu"), 1.0 - floats.astype(np.float64), 1e-6)
    assert calls == [np.dtype(np.float32)]


def test_point_filter_errors_name_the_filter(names: list[str]) -> None:
    two = fresh("pf_two")
    point_filter(two, lambda p, full: [lambda v: v, lambda v: v], summary="Two curves.")
    names.append(two)
    with pytest.raises(ValueError, match=f"^{two}: curves\\(\\) must return 1 or 3 curves, not 2$"):
        cvf.apply(photo(4, 4, 3, np.uint8), two, backend="cpu")
    nan = fresh("pf_nan")
    point_filter(nan, lambda p, full: [lambda v: v / 0.0 * 0.0], summary="NaN.")
    names.append(nan)
    with pytest.raises(ValueError, match=f"^colour kernel '{nan}' returned NaN or infinite values$"):
        cvf.apply(photo(4, 4, 3, np.float32), nan, backend="cpu")


def test_point_op_of_a_filter_object_and_of_other_filters(names: list[str]) -> None:
    name = fresh("pf_square")
    flt = point_filter(name, lambda p, full: [lambda v: v ** 2], summary="Square.")
    names.append(name)
    op = point_op_of(flt)
    assert op is not None and op is point_op_of(name)
    assert_within(op.evaluate(np.array([0.5, 0.25]), {}), np.array([0.25, 0.0625]), 1e-7)
    assert point_op_of("grayscale") is None and point_op_of("saturation") is None  # matrices

    @registry.register(name, category="color", summary="Not a point op any more.", replace=True)
    def replaced(ctx: Any, img: Any) -> Any:
        return img

    assert point_op_of(name) is None and point_op_of(replaced) is None


def test_point_op_tables_are_cached_and_the_cache_is_bounded(names: list[str]) -> None:
    builds: list[float] = []

    def curves(params: Any, full: float) -> list[Callable[[np.ndarray], Any]]:
        builds.append(params["k"])
        return [lambda v: v * params["k"]]

    name = fresh("pf_cache")
    flt = point_filter(name, curves, summary="Scale.", params=[Param("k", "float", 1.0, min=0.0, max=2.0, help="k")])
    names.append(name)
    spec = ImageInfo(1, 1, 3, U8)
    first = table_of(flt, {"k": 0.5}, spec)
    assert table_of(flt, {"k": 0.5}, spec) is first and builds == [0.5]  # built once
    for k in np.linspace(1.0, 2.0, 300):  # a sweep does not keep 300 tables
        table_of(flt, {"k": float(k)}, spec)
    builds.clear()
    again = table_of(flt, {"k": 0.5}, spec)
    assert builds == [0.5] and again is not first
    np.testing.assert_array_equal(again, first)


# ---------------------------------------------------------------- color_kernel
def test_color_kernel_refuses_a_callable_without_a_name() -> None:
    def scale(v: np.ndarray, *, k: float = 2.0) -> np.ndarray:
        return v * k

    with pytest.raises(ValueError, match="^color_kernel: pass name= for a lambda"):
        color_kernel(lambda v: v, summary="x")
    # a functools.partial has no __name__: it was registered as "run", the factory's inner function
    with pytest.raises(ValueError, match="^color_kernel: pass name= for a lambda or a callable without __name__$"):
        color_kernel(functools.partial(scale, k=0.5), summary="Half.")
    assert "run" not in {f.name for f in registry.filters()}


def test_color_kernel_of_a_partial_with_a_name(names: list[str]) -> None:
    def scale(v: np.ndarray, *, k: float = 2.0) -> np.ndarray:
        return v * k

    name = fresh("ck_half")
    flt = color_kernel(functools.partial(scale, k=0.5), name, summary="Half.")
    names.append(name)
    assert flt.name == name and point_op_of(name) is not None
    image = photo(8, 8, 3, np.uint8)
    assert_within(cvf.apply(image, name, backend="cpu"), stored(normalised(image) * 0.5, U8), 0.0)


def test_color_kernel_refuses_undeclared_keywords_naming_the_filter() -> None:
    def lift(v: np.ndarray, *, amout: float) -> np.ndarray:
        return v + amout

    name = fresh("ck_typo")
    with pytest.raises(TypeError, match=f"^filter '{name}': lift\\(\\) takes keyword 'amout'"):
        color_kernel(lift, name, summary="Lift.", params=[Param("amount", "float", 0.1, min=0.0, max=1.0, help="a")])
    assert name not in {f.name for f in registry.filters()}


def test_color_kernel_passes_category_check_and_replace_on(names: list[str]) -> None:
    def window(v: np.ndarray, *, low: float, high: float) -> np.ndarray:
        return (v - low) / (high - low)

    def check(p: dict[str, Any]) -> str | None:
        return "low must be below high" if p["low"] >= p["high"] else None

    params = [Param("low", "float", 0.1, min=0.0, max=1.0, help="black point"),
              Param("high", "float", 0.9, min=0.0, max=1.0, help="white point")]
    name = fresh("ck_window")
    flt = color_kernel(window, name, summary="Stretch a window.", params=params, category="tone", check=check)
    names.append(name)
    assert flt.category == "tone" and flt.description == "Stretch a window."  # no docstring: the summary
    with pytest.raises(ParameterError, match="low must be below high"):
        flt.resolve({"low": 0.95})
    with pytest.raises(ValueError, match="registered already"):
        color_kernel(window, name, summary="Again.", params=params)
    color_kernel(lambda v, *, low, high: 1.0 - v, name, summary="Invert.", params=params, replace=True)
    image = photo(8, 8, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu"), 255 - image)


# ---------------------------------------------------------------- matrix_filter
def warm(p: Any) -> np.ndarray:
    """A warm tint (B, G, R rows): blue down, red up by ``warm`` of full scale, a little green from red."""
    return np.array([[1.0 - p["warm"], 0.0, 0.0, 0.0],
                     [0.0, 0.9, 0.1, 0.0],
                     [0.0, 0.0, 1.0, p["warm"]]])


WARM_PARAMS = [Param("warm", "float", 0.1, min=0.0, max=0.5, help="how warm"),
               Param("cool", "float", 0.0, min=0.0, max=0.5, help="not used with warm")]


def warm_check(p: dict[str, Any]) -> str | None:
    return "give warm or cool, not both" if p["warm"] and p["cool"] else None


def matrix_reference(image: np.ndarray, m: np.ndarray) -> np.ndarray:
    return stored(normalised(image) @ m[:, :3].T + m[:, 3], image.dtype)


def gray_colour_reference(gray: np.ndarray, m: np.ndarray) -> np.ndarray:
    """(v, v, v) through ``m``, clipped: the colour a gray pixel becomes (normalised)."""
    return np.asarray(np.clip(normalised(gray)[..., None] * m[:, :3].sum(axis=1) + m[:, 3], 0.0, 1.0))


def tint(gray: str, names: list[str], **declared: Any) -> str:
    name = fresh(f"mf_{gray}")
    matrix_filter(name, warm, summary="A warm tint.", params=WARM_PARAMS, check=warm_check, gray=gray, **declared)
    names.append(name)
    return name


def test_matrix_filter_declares_what_it_was_given(names: list[str]) -> None:
    name = tint("color", names, description="``out = M @ [b, g, r, 1]``.", identity="warm=0 is the identity")
    flt = registry.get(name)
    assert flt.name == name and flt.category == "color" and flt.summary == "A warm tint."
    assert [p.name for p in flt.params] == ["warm", "cool"]
    assert flt.description == "``out = M @ [b, g, r, 1]``." and flt.identity == "warm=0 is the identity"
    assert isinstance(flt.footprint, Point) and flt.point_only
    with pytest.raises(ParameterError, match="give warm or cool, not both"):
        flt.resolve({"cool": 0.2})
    np.testing.assert_array_equal(color_matrix_of(name, {"warm": 0.25}), warm({"warm": 0.25}))
    assert flt.matrix is not None
    np.testing.assert_array_equal(flt.matrix({"warm": 0.3, "cool": 0.0}, None), warm({"warm": 0.3}))
    plain = registry.get(tint("luma", names))
    assert plain.description == "A warm tint." and plain.identity == ""  # the defaults


def test_matrix_filter_default_gray_policy_is_luma(names: list[str]) -> None:
    name = fresh("mf_default")
    flt = matrix_filter(name, warm, summary="A warm tint.", params=WARM_PARAMS)
    names.append(name)
    gray = photo(12, 16, 1, np.uint8)
    out = cvf.apply(gray, flt, warm=0.2, backend="cpu")
    assert_within(out, stored(gray_colour_reference(gray, warm({"warm": 0.2})) @ LUMA, U8), 1.0)


def test_matrix_filter_refuses_an_unknown_gray_policy() -> None:
    name = fresh("mf_bad")
    with pytest.raises(ValueError, match=(f"^matrix_filter '{name}': gray must be one of "
                                          r"\('luma', 'color', 'unchanged'\), not 'sepia'$")):
        matrix_filter(name, warm, summary="A warm tint.", params=WARM_PARAMS, gray="sepia")
    assert name not in {f.name for f in registry.filters()}


@pytest.mark.parametrize("gray", ["luma", "color", "unchanged"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=lambda d: np.dtype(d).name)
def test_matrix_filter_colour_images_under_every_gray_policy(names: list[str], gray: str, dtype: type) -> None:
    name = tint(gray, names)
    tolerance = 1e-5 if np.dtype(dtype).kind == "f" else 1.0
    m = warm({"warm": 0.3})
    colour = photo(12, 16, 3, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # colour images never warn
        assert_within(cvf.apply(colour, name, warm=0.3, backend="cpu"), matrix_reference(colour, m), tolerance)
        rgba = photo(12, 16, 4, dtype)
        out = cvf.apply(rgba, name, warm=0.3, backend="cpu")
    np.testing.assert_array_equal(out[..., 3], rgba[..., 3])
    assert_within(out[..., :3], matrix_reference(rgba[..., :3], m), tolerance)
    flt = registry.get(name)
    for channels in (3, 4):
        spec = ImageInfo(12, 16, channels, np.dtype(dtype))
        assert flt.output_info(flt.resolve({}), spec) == spec


@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=lambda d: np.dtype(d).name)
def test_matrix_filter_gray_luma_is_the_luma_of_the_colour_result(names: list[str], dtype: type) -> None:
    name = tint("luma", names)
    gray = photo(12, 16, 1, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = cvf.apply(gray, name, warm=0.3, backend="cpu")
    tolerance = 1e-5 if np.dtype(dtype).kind == "f" else 1.0
    assert_within(out, stored(gray_colour_reference(gray, warm({"warm": 0.3})) @ LUMA, dtype), tolerance)
    flt = registry.get(name)
    spec = ImageInfo(12, 16, 1, np.dtype(dtype))
    assert flt.output_info(flt.resolve({}), spec) == spec


@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=lambda d: np.dtype(d).name)
def test_matrix_filter_gray_color_becomes_the_colour_result(names: list[str], dtype: type) -> None:
    name = tint("color", names)
    flt = registry.get(name)
    gray = photo(12, 16, 1, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = cvf.apply(gray, name, warm=0.3, backend="cpu")
    tolerance = 1e-5 if np.dtype(dtype).kind == "f" else 1.0
    assert_within(out, stored(gray_colour_reference(gray, warm({"warm": 0.3})), dtype), tolerance)
    spec = ImageInfo(12, 16, 1, np.dtype(dtype))
    assert flt.output_info(flt.resolve({}), spec) == ImageInfo(12, 16, 3, np.dtype(dtype))  # declared
    for channels in (3, 4):
        spec = ImageInfo(12, 16, channels, np.dtype(dtype))
        assert flt.output_info(flt.resolve({}), spec) == spec


def test_matrix_filter_gray_unchanged_returns_gray_and_warns_once(names: list[str]) -> None:
    name = fresh("mf_unchanged")
    # rows summing to 1 with no offsets keep every gray: (v, v, v) -> (v, v, v)
    mix = np.array([[0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.25, 0.0], [0.25, 0.25, 0.5, 0.0]])
    matrix_filter(name, lambda p: mix, summary="Mix the channels.", gray="unchanged")
    names.append(name)
    gray = photo(12, 16, 1, np.uint8)
    message = f"^{name}: a gray \\(1-channel\\) image has no colour to change; it is returned unchanged$"
    with pytest.warns(UserWarning, match=message):
        np.testing.assert_array_equal(cvf.apply(gray, name, backend="cpu"), gray)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(cvf.apply(gray, name, backend="cpu"), gray)  # once per process
        colour = photo(12, 16, 3, np.uint8)
        assert_within(cvf.apply(colour, name, backend="cpu"), matrix_reference(colour, mix), 1.0)
    assert [str(w.message) for w in caught] == []
    flt = registry.get(name)
    spec = ImageInfo(12, 16, 1, U8)
    assert flt.output_info(flt.resolve({}), spec) == spec


# ---------------------------------------------------------------- color_matrix_of, color_matrix
def test_color_matrix_of_a_filter_without_a_matrix_lists_the_matrix_filters() -> None:
    with pytest.raises(KeyError) as caught:
        color_matrix_of("gamma", {})
    message = caught.value.args[0]
    head = "gamma is not a colour-matrix filter (matrix filters: "
    assert message.startswith(head) and message.endswith(")")
    listed = message[len(head):-1].split(", ")
    assert {"color_matrix", "grayscale", "hue_shift", "saturation"} <= set(listed)
    assert "gamma" not in listed and "sepia" not in listed and "invert" not in listed


def test_color_matrix_refusal_names_rows_and_columns() -> None:
    with pytest.raises(ParameterError, match=r"matrix must be 3x3 or 3x4 \(the last column adds offsets\), not 2x3$"):
        cvf.get_filter("color_matrix").resolve({"matrix": [[1, 0, 0], [0, 1, 0]]})
    with pytest.raises(ParameterError, match="not 3x5$"):
        cvf.get_filter("color_matrix").resolve({"matrix": [[1, 0, 0, 0, 0]] * 3})


# ---------------------------------------------------------------- from the re-run's survivors
def test_three_identical_curves_make_one_column(names: list[str]) -> None:
    def curves(params: Any, full: float) -> list[Callable[[np.ndarray], Any] | None]:
        square = lambda v: v ** 2  # noqa: E731
        return [square, square, square]

    name = fresh("pf_same")
    flt = point_filter(name, curves, summary="Square.")
    names.append(name)
    expected = stored((np.arange(256) / 255.0) ** 2, U8)
    for channels in (1, 3):  # one curve for all channels: an (N,) table, also for colour
        table = table_of(flt, {}, ImageInfo(1, 1, channels, U8))
        assert table.shape == (256,)
        np.testing.assert_array_equal(table, expected)


def test_exact_halves_round_to_even_whatever_the_float_error(names: list[str]) -> None:
    name = fresh("ck_half")  # v / 3 * 1.5 is v / 2 with float64 error beside the halves
    flt = color_kernel(lambda v: v / 3 * 1.5, name, summary="Halve.")
    names.append(name)
    for dtype in (np.uint8, np.uint16):
        full = np.iinfo(dtype).max
        ramp = np.arange(full + 1)
        expected = np.rint(ramp / 2)  # exact halves, rounded half to even
        np.testing.assert_array_equal(table_of(flt, {}, ImageInfo(1, 1, 1, np.dtype(dtype))), expected)


def test_curves_get_the_full_scale_of_the_dtype(names: list[str]) -> None:
    seen: list[float] = []

    def curves(params: Any, full: float) -> list[Callable[[np.ndarray], Any]]:
        seen.append(full)
        return [lambda v: v + 10.0 / full]  # ten levels brighter

    name = fresh("pf_levels")
    flt = point_filter(name, curves, summary="Ten levels brighter.")
    names.append(name)
    np.testing.assert_array_equal(table_of(flt, {}, ImageInfo(1, 1, 1, U8)), np.minimum(np.arange(256) + 10, 255))
    table_of(flt, {}, ImageInfo(1, 1, 1, np.dtype(np.uint16)))
    op = point_op_of(name)
    assert op is not None
    assert_within(op.evaluate(np.array([[0.5, 0.95]]), {}), np.array([[0.5 + 10.0, 1.0]]).clip(0, 1), 1e-6)
    assert seen == [255.0, 65535.0, 1.0]


def test_evaluate_passes_the_parameters_for_one_channel_images(names: list[str]) -> None:
    def scale(v: np.ndarray, *, k: float) -> np.ndarray:
        return v * k

    name = fresh("ck_scale")
    color_kernel(scale, name, summary="Scale.", params=[Param("k", "float", 1.0, min=0.0, max=2.0, help="k")])
    names.append(name)
    op = point_op_of(name)
    assert op is not None
    v = np.linspace(0, 1, 12).reshape(3, 4, 1)
    assert_within(op.evaluate(v, {"k": 0.5}), v * 0.5, 1e-7)


def test_non_finite_values_come_out_as_nan_without_warnings(names: list[str]) -> None:
    name = fresh("ck_lift")
    color_kernel(lambda v: 2 * v - v * v, name, summary="Lift.")  # inf gives inf - inf: invalid, quietly
    names.append(name)
    op = point_op_of(name)
    assert op is not None
    values = np.array([[0.5, np.inf, np.nan, -np.inf, 0.0, 2.0]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = op.evaluate(values, {})
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(out), [[False, True, True, True, False, False]])
    assert_within(out[:, [0, 4, 5]], np.array([[0.75, 0.0, 0.0]]), 1e-7)  # 2 * 2 - 4 = 0


def test_native_gets_the_parameters(names: list[str]) -> None:
    def native(ctx: Any, img: Any, *, k: float) -> Any:
        return ctx.backend.convert(img, ctx.info.dtype, k, 0.0)

    name = fresh("pf_native_k")
    point_filter(name, lambda p, full: [lambda v: v * p["k"]], summary="Scale.", native=native,
                 params=[Param("k", "float", 1.0, min=0.0, max=2.0, help="k")])
    names.append(name)
    image = photo(8, 8, 3, np.uint8)
    assert_within(cvf.apply(image, name, k=0.5, backend="cpu"), stored(normalised(image) * 0.5, U8), 1.0)


def test_an_integer_matrix_runs(names: list[str]) -> None:
    name = fresh("mf_swap")
    swap = np.array([[0, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0]])  # B <-> R, as integers
    matrix_filter(name, lambda p: swap, summary="Swap blue and red.")
    names.append(name)
    image = photo(8, 8, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, name, backend="cpu"), image[..., ::-1])


def test_a_matrix_keeping_gray_returns_gray_as_is_and_others_run(names: list[str]) -> None:
    gray = photo(12, 16, 1, np.float32)

    def register_luma(m: np.ndarray) -> str:
        name = fresh("mf_luma")
        matrix_filter(name, lambda p: m, summary="A matrix.")
        names.append(name)
        return name

    # rows summing to 1, no offsets: gray is returned bit for bit (running it would move some by an ulp)
    keeps = np.array([[0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.25, 0.0], [-1.2, 1.6, 0.6, 0.0]])
    np.testing.assert_array_equal(cvf.apply(gray, register_luma(keeps), backend="cpu"), gray)
    v = gray.astype(np.float64)
    offset = np.hstack([np.eye(3), np.full((3, 1), 0.2)])  # an offset is not gray-keeping
    assert_within(cvf.apply(gray, register_luma(offset), backend="cpu"), np.clip(v + 0.2, 0, 1), 1e-5)
    near = np.hstack([np.eye(3) * 1.000009, np.zeros((3, 1))])  # 9e-6 from keeping gray: it runs
    assert_within(cvf.apply(gray, register_luma(near), backend="cpu"), np.clip(v * 1.000009, 0, 1), 5e-7)


def test_sepia_declares_three_channels_for_gray_only() -> None:
    sepia = cvf.get_filter("sepia")
    params = sepia.resolve({})
    for channels, declared in ((1, 3), (3, 3), (4, 4)):
        spec = ImageInfo(5, 7, channels, U8)
        assert sepia.output_info(params, spec) == ImageInfo(5, 7, declared, U8)


def test_evaluate_clips_results_to_the_unit_range(names: list[str]) -> None:
    name = fresh("ck_stretch")
    color_kernel(lambda v: 3 * v - 1, name, summary="Stretch.")
    names.append(name)
    op = point_op_of(name)
    assert op is not None
    assert_within(op.evaluate(np.array([[0.0, 0.5, 0.9]]), {}), np.array([[0.0, 0.5, 1.0]]), 1e-6)
