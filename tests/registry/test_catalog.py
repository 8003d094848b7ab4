"""The registry's declarations as users see them: ``info``, errors, the spec a footprint sees, filter calls."""

from __future__ import annotations

import inspect
import subprocess
import sys

import cv2
import numpy as np
import pytest

import cvfilters as cvf
import cvfilters.backends as backends
from cvfilters.core.context import ImageInfo
from cvfilters.core.errors import ParameterError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.registry import catalog as registry
from cvfilters.registry.footprints import Point
from cvfilters.registry.params import Param

U8 = np.dtype(np.uint8)
F32 = np.dtype(np.float32)
POINT_TEXT = "point: each output pixel from the same input pixel (no halo)"


def _keep(ctx, img, **params):
    return img


def _checker() -> np.ndarray:
    """A 48 x 48 colour 1-px checkerboard of 0 and 255."""
    return np.dstack([(np.indices((48, 48)).sum(0) % 2 * 255).astype(np.uint8)] * 3)


def test_info_lists_the_declaration_under_its_documented_keys(scratch) -> None:
    """``cvfilters info --json`` keys renamed or an identity shown for a filter declaring none."""
    scratch.append("probe_info")
    flt = cvf.register("probe_info", category="color", summary="A probe.", description="out = in",
                       footprint=Point(), linear=True)(_keep)
    assert flt.info() == {
        "name": "probe_info", "category": "color", "summary": "A probe.", "alpha": "passthrough",
        "linear": True,
        "float_range": "kept: float values outside 0..1 (HDR light, signed values) pass through",
        "description": "out = in", "footprint": POINT_TEXT, "params": []}
    plain = cvf.register("probe_info", category="color", summary="A probe.", replace=True,
                         identity="it keeps the image", unbounded=False, linear=True)(_keep)
    info = plain.info()
    assert info["identity"] == "it keeps the image"
    assert info["float_range"] == "clamped: float input is clamped to 0..1 first (the filter is defined on 0..1)"
    assert info["description"] == "A probe."  # the summary when there is neither description nor docstring


def test_unknown_parameter_error_names_the_filter_the_closest_parameter_and_all_of_them(scratch) -> None:
    """A misspelt parameter's message without its suggestion, with a wrong one, or without the list."""
    scratch.extend(["probe_params", "probe_bare"])
    params = [Param("radius", "int", 1, min=0, max=9), Param("amount", "float", 1.0, min=0, max=2)]
    flt = cvf.register("probe_params", category="blur", summary="x", params=params)(_keep)
    with pytest.raises(ParameterError) as caught:
        flt.resolve({"RADIUZ": 2})
    assert str(caught.value) == ("probe_params: RADIUZ is not a parameter of probe_params "
                                 "(did you mean 'radius'? parameters: radius, amount)")
    assert caught.value.filter_name == "probe_params"
    with pytest.raises(ParameterError) as caught:
        flt.param("zzz")
    assert str(caught.value) == "probe_params: zzz is not a parameter of probe_params (parameters: radius, amount)"
    bare = cvf.register("probe_bare", category="blur", summary="x")(_keep)
    with pytest.raises(ParameterError) as caught:
        bare.resolve({"sigma": 1})
    assert str(caught.value) == "probe_bare: sigma is not a parameter of probe_bare (parameters: none)"


def test_unknown_category_error_lists_the_categories_and_the_closest() -> None:
    """A category typo's message without its suggestion, with a wrong one, or without the list."""
    names = ", ".join(registry.CATEGORIES)
    with pytest.raises(UsageError) as caught:
        registry.category_of("Blurr")
    assert str(caught.value) == f"category 'Blurr' is not one of {names} (did you mean 'blur'?)"
    with pytest.raises(UsageError) as caught:
        registry.category_of("qqqq")
    assert str(caught.value) == f"category 'qqqq' is not one of {names}"
    with pytest.raises(UsageError, match="did you mean 'blur'"):
        cvf.list_filters("blurr")
    assert {f.category for f in cvf.list_filters("Blur")} == {"blur"}


@pytest.mark.parametrize(("alpha", "channels", "want"), [
    ("passthrough", 4, ImageInfo(20, 10, 3, U8)), ("premultiply", 4, ImageInfo(20, 10, 4, F32)),
    ("all", 4, ImageInfo(20, 10, 4, U8)), ("passthrough", 3, ImageInfo(20, 10, 3, U8)),
    ("premultiply", 3, ImageInfo(20, 10, 3, U8)), ("premultiply", 5, ImageInfo(20, 10, 5, U8)),
])
def test_a_footprint_sees_the_image_its_function_sees_under_the_alpha_policy(
        scratch, alpha: str, channels: int, want: ImageInfo) -> None:
    """Footprint rules sized from the wrong channels or dtype (alpha passed through: colour only;
    premultiplied: float colour and alpha; all: the image as it is)."""
    scratch.append("probe_seen")
    seen: list[ImageInfo] = []
    flt = cvf.register("probe_seen", category="blur", summary="x", alpha=alpha,
                       footprint=lambda params, spec: seen.append(spec) or Point())(_keep)
    flt.footprint_for({}, ImageInfo(20, 10, channels, U8))
    assert seen == [want]


def test_info_sizes_the_footprint_on_a_1000_px_8_bit_colour_image(scratch) -> None:
    """``cvfilters info``'s footprint worked out on another image, or a required parameter's text changed."""
    scratch.extend(["probe_text", "probe_required"])
    seen: list[ImageInfo] = []
    flt = cvf.register("probe_text", category="blur", summary="x", alpha="all",
                       params=[Param("k", "int", 3, min=1, max=9)],
                       footprint=lambda params, spec: seen.append((params, spec)) or Point())(_keep)
    assert flt.footprint_text() == POINT_TEXT
    assert seen == [({"k": 3}, ImageInfo(1000, 1000, 3, U8))]
    required = cvf.register("probe_required", category="blur", summary="x",
                            params=[Param("k", "int", None, min=1, max=9, required=True, example=3)],
                            footprint=lambda params, spec: Point() if params["k"] + 1 else Point())(_keep)
    assert required.footprint_text() == "declared per call (depends on required parameters)"


def test_a_filter_object_shows_its_parameters_to_inspect_and_help(scratch) -> None:
    """A filter object without its generated signature or docstring (IDEs, ``help()``)."""
    scratch.append("probe_sig")
    flt = cvf.register("probe_sig", category="blur", summary="Blur a probe.", description="out = mean(in)",
                       params=[Param("radius", "int", 2, min=0, max=9)])(_keep)
    signature = inspect.signature(flt)
    assert list(signature.parameters)[:2] == ["image", "radius"]
    assert signature.parameters["radius"].default == 2
    assert flt.__doc__.startswith("Blur a probe.\n\nout = mean(in)\n")
    assert "cvfilters.get_filter('probe_sig')(image)" in flt.__doc__
    assert "radius" in flt.__doc__


def test_register_keeps_every_part_of_the_declaration(scratch) -> None:
    """A declared check, output size, maps, matrix, footprint or float range dropped at registration."""
    scratch.append("probe_decl")

    def check(params):
        return "k must be even" if params["k"] % 2 else None

    def size(params, spec):
        return spec.with_(width=params["k"])

    def maps(params, spec):
        return np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32)

    def matrix(params, spec):
        return np.eye(3, 4)

    rule = Point()
    flt = cvf.register("probe_decl", category="color", summary="x", params=[Param("k", "int", 2, min=0, max=9)],
                       check=check, output_info=size, maps=maps, matrix=matrix, footprint=rule, linear=True,
                       unbounded=False, alpha="all")(_keep)
    assert (flt.check, flt.output_info, flt.maps, flt.matrix, flt.footprint) == (check, size, maps, matrix, rule)
    assert (flt.alpha, flt.linear, flt.unbounded, flt.identity) == ("all", True, False, "")
    with pytest.raises(ParameterError, match="^probe_decl: k must be even$"):
        flt.resolve({"k": 3})
    assert cvf.register("probe_decl", category="color", summary="x", replace=True)(_keep).alpha == "passthrough"


def test_registration_errors_say_what_is_wrong(scratch) -> None:
    """Replacing a filter with ``replace=True`` refused, or the registration errors' texts lost."""
    scratch.append("probe_twice")
    cvf.register("probe_twice", category="color", summary="x")(_keep)
    again = cvf.register("probe_twice", category="color", summary="again", replace=True)(_keep)
    assert cvf.get_filter("probe_twice") is again
    with pytest.raises(ValueError, match=r"^a filter named 'probe_twice' is registered already"):
        cvf.register("probe_twice", category="color", summary="x")(_keep)
    with pytest.raises(ValueError, match=r"^filter name 'Bad Name' must be snake_case$"):
        cvf.register("Bad Name", category="color", summary="x")(_keep)
    with pytest.raises(ValueError, match=r"^filter 'probe_alpha': alpha must be one of"):
        cvf.register("probe_alpha", category="color", summary="x", alpha="some")(_keep)
    with pytest.raises(ValueError, match=r"'layout' is a keyword of every filter call "
                                         r"\(backend, channel_order, layout, linear\); name it otherwise$"):
        cvf.register("probe_kw", category="color", summary="x", params=[Param("layout", "int", 0)])(_keep)


def test_calling_a_filter_object_blurs_in_linear_light_when_asked() -> None:
    """A filter object ignoring ``linear=True`` (or applying it to filters that work on codes).

    A 1-px checkerboard blurred: 128 on the codes, 188 = 255 * srgb_encode(0.5) in linear light
    (IEC 61966-2-1: 1.055 * 0.5 ** (1 / 2.4) - 0.055 = 0.7354); 1 code of tolerance.
    """
    centre = (slice(16, 32), slice(16, 32))
    want = round(255 * (1.055 * 0.5 ** (1 / 2.4) - 0.055))
    blur = cvf.get_filter("gaussian_blur")
    assert np.abs(blur(_checker(), sigma=6, backend="cpu", linear=True)[centre].astype(int) - want).max() <= 1
    assert np.abs(blur(_checker(), sigma=6, backend="cpu")[centre].astype(int) - 128).max() <= 1
    # invert works on codes: linear=True changes nothing (255 - 128; in linear light it would give 230)
    gray = np.full((8, 8, 3), 128, np.uint8)
    np.testing.assert_array_equal(cvf.get_filter("invert")(gray, backend="cpu", linear=True), 255 - gray)


def test_calling_a_filter_object_keeps_its_output_size_and_layout() -> None:
    """A filter object's output size worked out without its parameters, or its ``layout`` ignored."""
    image = np.arange(3 * 6 * 10, dtype=np.uint8).reshape(3, 6, 10)
    out = cvf.get_filter("crop")(image, x=2, y=1, width=5, height=3, layout="chw", backend="cpu")
    np.testing.assert_array_equal(out, image[:, 1:4, 2:7])
    flipped = cvf.get_filter("flip")(image, layout="chw", backend="cpu")
    np.testing.assert_array_equal(flipped, cv2.flip(image.transpose(1, 2, 0), 1).transpose(2, 0, 1))


def test_auto_keeps_a_point_filter_on_cpu_without_probing_gpus(monkeypatch) -> None:
    """Point work on a big image under ``auto`` probing (and so starting) the GPUs."""
    def probed(name):
        raise AssertionError(f"{name} probed")

    monkeypatch.setattr(backends, "availability", probed)
    image = np.full((512, 512, 3), 10, np.uint8)
    np.testing.assert_array_equal(cvf.get_filter("invert")(image), np.full((512, 512, 3), 245, np.uint8))


def test_an_unregistered_name_is_free_again(scratch) -> None:
    """``unregister`` leaving the filter listed, so its name stays taken."""
    scratch.append("probe_gone")
    cvf.register("probe_gone", category="color", summary="x")(_keep)
    registry.unregister("probe_gone")
    assert "probe_gone" not in {f.name for f in registry.loaded()}
    cvf.register("probe_gone", category="color", summary="again")(_keep)


def test_float_input_is_clamped_to_0_1_unless_the_filter_is_unbounded(scratch) -> None:
    """Float values outside 0..1 clamped for an unbounded filter, or kept (or clamped to 0..2) for a bounded one."""
    scratch.extend(["probe_bounded", "probe_unbounded"])
    image = np.array([[[-0.5, 0.25, 1.5]]], np.float32)
    bounded = cvf.register("probe_bounded", category="color", summary="x")(_keep)
    unbounded = cvf.register("probe_unbounded", category="color", summary="x", unbounded=True)(_keep)
    np.testing.assert_array_equal(bounded(image, backend="cpu"), [[[0.0, 0.25, 1.0]]])
    np.testing.assert_array_equal(unbounded(image, backend="cpu"), image)


def test_a_missing_bar_before_a_registered_filter_is_pointed_out_and_only_then(scratch) -> None:
    """A filter registered in this process not taken for a filter name, or any word taken for one."""
    scratch.append("probe_step")
    cvf.register("probe_step", category="color", summary="x")(_keep)
    with pytest.raises(UsageError) as caught:
        Pipeline.parse("invert probe_step")
    assert str(caught.value).endswith("; steps are separated by '|': did you mean 'invert | probe_step'?")
    with pytest.raises(UsageError) as caught:
        Pipeline.parse("gamma:gamma=2 bogus_word")
    assert "separated by" not in str(caught.value)


def test_the_catalogue_of_one_category_lists_that_category_only() -> None:
    """``cvfilters list CATEGORY`` showing every category, or refusing a category named in another case."""
    entries = registry.catalog("Color")
    assert {e["category"] for e in entries} == {"color"}
    assert {"invert", "sepia", "grayscale"} <= {e["name"] for e in entries}
    assert len(registry.catalog()) > len(entries)


def test_a_required_parameter_left_out_is_refused_naming_the_filter(scratch) -> None:
    """A required parameter left out passed on as ``None``, or its error naming no filter."""
    scratch.append("probe_required_k")
    flt = cvf.register("probe_required_k", category="color", summary="x",
                       params=[Param("k", "int", None, min=1, max=9, required=True, example=3)])(_keep)
    with pytest.raises(ParameterError) as caught:
        flt.resolve({})
    assert str(caught.value) == "probe_required_k: k is required"
    assert flt.resolve({"k": "4"}) == {"k": 4}


def test_a_missing_bar_before_a_built_in_of_a_family_not_loaded_yet_is_pointed_out() -> None:
    """The hint missing in a fresh process, where ``pixellate``'s family is not imported yet (the manifest's names)."""
    code = """
from cvfilters.engine.pipeline import Pipeline
try:
    Pipeline.parse("gaussian_blur:sigma=3 pixellate")
except Exception as exc:
    print(exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().endswith("did you mean 'gaussian_blur:sigma=3 | pixellate'?")


def test_a_misspelt_filter_name_suggests_filters_registered_here_too(scratch) -> None:
    """Suggestions drawn only from the built-ins, more than three, or the error naming no filter."""
    scratch.append("probe_lookup")
    cvf.register("probe_lookup", category="color", summary="x")(_keep)
    assert cvf.get_filter("Probe-Lookup").name == "probe_lookup"  # any case, '-' for '_'
    with pytest.raises(cvf.UsageError) as caught:
        cvf.get_filter("Probe_Lookp")
    assert str(caught.value) == ("unknown filter 'Probe_Lookp' (did you mean probe_lookup?); "
                                 "`cvfilters list` shows them all")
    scratch.extend(["probe_look_a", "probe_look_b", "probe_look_c"])
    for name in scratch[1:]:
        cvf.register(name, category="color", summary="x")(_keep)
    with pytest.raises(cvf.UsageError) as caught:
        cvf.get_filter("probe_look_x")
    assert str(caught.value).count("probe_look") == 1 + 3  # the name given and three suggestions
