"""One construction route: keywords checked at registration, generated signatures and help."""

from __future__ import annotations

import inspect
import pydoc
from typing import Literal, get_args

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.registry.params import Param


def test_misspelled_keyword_fails_at_registration_naming_filter_and_keyword(scratch) -> None:
    scratch.append("typo_blur")
    with pytest.raises(TypeError, match=r"'typo_blur'.*'sigm'.*did you mean 'sigma'"):
        @cvf.register(category="blur", summary="x", params=[Param("sigma", "float", 1.0, min=0, max=10)])
        def typo_blur(ctx, img, *, sigm):
            return img
    assert "typo_blur" not in {f.name for f in cvf.list_filters()}  # nothing half-registered


def test_declared_parameter_the_function_lacks_fails_at_registration(scratch) -> None:
    scratch.append("lacks_it")
    with pytest.raises(TypeError, match=r"'lacks_it'.*no keyword 'amount'"):
        cvf.register("lacks_it", category="color", summary="x",
                     params=[Param("amount", "float", 1.0)])(lambda ctx, img: img)


def test_kwargs_and_optional_extras_are_accepted(scratch) -> None:
    scratch += ["takes_all", "with_extra"]
    cvf.register("takes_all", category="color", summary="x", params=[Param("a", "int", 1)])(
        lambda ctx, img, **values: img)
    cvf.register("with_extra", category="color", summary="x", params=[Param("a", "int", 1)])(
        lambda ctx, img, *, a, cache=None: img)
    image = np.full((2, 2), 7, np.uint8)
    assert cvf.apply(image, "with_extra", a=3, backend="cpu").tolist() == image.tolist()


def test_color_and_warp_kernels_check_their_functions(scratch) -> None:
    scratch += ["bad_curve", "bad_warp"]
    with pytest.raises(TypeError, match=r"'bad_curve'.*'gama'"):
        cvf.color_kernel(lambda v, *, gama: v ** gama, "bad_curve", summary="x",
                         params=[Param("gamma", "float", 1.0, min=0.1, max=5)])
    with pytest.raises(TypeError, match=r"'bad_warp'.*keyword 'dy'.*declared: dx"):
        cvf.warp_kernel(lambda x, y, *, width, height, dy: (x, y - dy), "bad_warp", summary="x",
                        params=[Param("dx", "float", 0.0, min=-9, max=9)])
    assert not {"bad_curve", "bad_warp"} & {f.name for f in cvf.list_filters()}


def test_signature_lists_the_declared_parameters_with_defaults() -> None:
    signature = inspect.signature(cvf.get_filter("gaussian_blur"))
    params = signature.parameters
    assert list(params) == ["image", "sigma", "ksize", "border", "backend", "channel_order", "layout"]
    assert params["image"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert all(params[n].kind is inspect.Parameter.KEYWORD_ONLY for n in ("sigma", "ksize", "border", "backend"))
    assert (params["sigma"].default, params["ksize"].default, params["border"].default) == (2.0, 0, "reflect101")
    assert params["sigma"].annotation is float
    assert get_args(params["border"].annotation) == ("reflect101", "replicate", "reflect", "wrap", "constant")
    assert params["border"].annotation.__origin__ is Literal
    # a required parameter has no default
    assert inspect.signature(cvf.get_filter("convolve")).parameters["kernel"].default is inspect.Parameter.empty


def test_signature_binds_like_the_call() -> None:
    """The signature is what the filter accepts: it binds good calls and refuses bad ones."""
    flt = cvf.get_filter("vignette")
    signature = inspect.signature(flt)
    signature.bind(np.zeros((2, 2), np.uint8), intensity=1.0)
    with pytest.raises(TypeError):
        signature.bind(np.zeros((2, 2), np.uint8), 1.0)  # parameters are keyword-only


def test_help_shows_summary_types_defaults_and_ranges() -> None:
    text = pydoc.render_doc(cvf.get_filter("gaussian_blur"), renderer=pydoc.plaintext)
    assert cvf.get_filter("gaussian_blur").summary in text
    assert "sigma : float, default 2, range [0.1, 100] px" in text
    assert "ksize : int, default 0, range [0, 255] px, odd" in text
    assert "border : {'reflect101', 'replicate', 'reflect', 'wrap', 'constant'}, default reflect101" in text
    assert "standard deviation of the Gaussian" in text  # the parameter's help
    assert "file : path, required" in cvf.get_filter("lut").__doc__


def test_every_filter_has_a_generated_signature_and_doc() -> None:
    for flt in cvf.list_filters():
        names = list(inspect.signature(flt).parameters)
        assert names == ["image", *(p.name for p in flt.params), "backend", "channel_order", "layout"], flt.name
        assert flt.__doc__.startswith(flt.summary) and "Parameters\n----------" in flt.__doc__, flt.name


def test_filter_is_keyword_only_and_unlisted_filters_stay_unlisted() -> None:
    with pytest.raises(TypeError):
        cvf.Filter("positional", "blur", "x", (), lambda ctx, img: img)  # type: ignore[misc]
    hidden = cvf.register("not_listed", category="blur", summary="x", listed=False)(lambda ctx, img: img)
    assert hidden.name not in {f.name for f in cvf.list_filters()}
    image = np.arange(6, dtype=np.uint8).reshape(2, 3)
    np.testing.assert_array_equal(hidden(image, backend="cpu"), image)


# ---------------------------------------------------------------- generated signature and type text, called directly
# (signature_of and describe_type run at registration, at import: these tests call them on their own
# declarations and compare with what a hand-written function and the numpydoc text would say)

def _hand_written(image, /, *, sigma: float = 1.5, border: Literal["reflect", "wrap"] = "wrap",
                  kernel: tuple[tuple[float, ...], ...], level: int = None,  # type: ignore[assignment]
                  backend: Literal["auto", "cpu", "opencl", "cuda"] = "auto",
                  channel_order: Literal["bgr", "rgb"] | None = None,
                  layout: Literal["hwc", "chw"] = "hwc"):
    """A user's hand-written version of the declarations below (an automatic default keeps its kind's type)."""


def _hand_written_bare(image, /, *, backend: Literal["auto", "cpu", "opencl", "cuda"] = "auto",
                       channel_order: Literal["bgr", "rgb"] | None = None,
                       layout: Literal["hwc", "chw"] = "hwc"):
    """A filter without parameters of its own."""


def test_signature_of_matches_a_hand_written_function() -> None:
    from cvfilters.registry.signatures import signature_of

    params = [Param("sigma", "float", 1.5, min=0, max=9),
              Param("border", "choice", "wrap", choices=("reflect", "wrap")),
              Param("kernel", "kernel", required=True, example=[[1.0]]), Param("level", "int", None)]
    generated = signature_of(params)
    # the return annotation is text for help(): "same type as image"
    expected = inspect.signature(_hand_written, eval_str=True).replace(return_annotation="same type as image")
    assert generated == expected
    # spelled out too, so a failure says which part differs
    assert str(generated) == str(expected)
    assert generated.return_annotation == "same type as image"
    assert get_args(generated.parameters["backend"].annotation) == ("auto", "cpu", "opencl", "cuda")
    assert generated.parameters["channel_order"].annotation == Literal["bgr", "rgb"] | None
    bare = inspect.signature(_hand_written_bare, eval_str=True).replace(return_annotation="same type as image")
    assert signature_of([]) == bare


def test_annotation_is_literal_only_for_a_choice() -> None:
    from cvfilters.registry.signatures import annotation

    assert annotation(Param("border", "choice", "wrap", choices=("reflect", "wrap"))) == Literal["reflect", "wrap"]
    assert annotation(Param("gain", "float", 1.0)) is float
    # choices on a str parameter are not enforced (any string is taken), so its type stays str
    assert annotation(Param("label", "str", "a", choices=("a", "b"))) is str
    assert Param("label", "str", "a", choices=("a", "b")).coerce("z", "f") == "z"


@pytest.mark.parametrize(("param", "text"), [
    (Param("sigma", "float", 2.0, min=0.1, max=100, unit="px"), "float, default 2, range [0.1, 100] px"),
    (Param("ksize", "int", 0, min=0, max=255, unit="px", odd=True), "int, default 0, range [0, 255] px, odd"),
    (Param("border", "choice", "wrap", choices=("reflect", "wrap")), "{'reflect', 'wrap'}, default wrap"),
    (Param("label", "str", "a", choices=("a", "b")), "str, default a"),
    (Param("kernel", "kernel", required=True, example=[[1.0]]), "2-D sequence of float, required"),
    (Param("level", "float", None, min=0, max=1), "float, default automatic, range [0, 1]"),
    (Param("floor", "float", 1.0, min=-2), "float, default 1, range [-2, inf]"),
    (Param("cap", "int", 3, max=10, unit="px"), "int, default 3, range [-inf, 10] px"),
    (Param("angle", "float", 0.5, unit="deg"), "float, default 0.5, deg"),
    (Param("flag", "bool", True), "bool, default true"),
])
def test_describe_type_writes_the_numpydoc_type_line(param: Param, text: str) -> None:
    from cvfilters.registry.signatures import describe_type

    assert describe_type(param) == text


def test_a_keyword_with_no_close_match_gets_no_suggestion(scratch) -> None:
    scratch.append("odd_keyword")
    with pytest.raises(TypeError) as caught:
        cvf.register("odd_keyword", category="color", summary="x",
                     params=[Param("sigma", "float", 1.0)])(lambda ctx, img, *, sigma, qqq: img)
    assert str(caught.value) == ("filter 'odd_keyword': <lambda>() takes keyword 'qqq', which is not a declared "
                                 "parameter (declared: sigma)")


def test_doc_of_writes_the_numpydoc_docstring() -> None:
    from cvfilters.registry.signatures import doc_of

    params = [Param("sigma", "float", 2.0, min=0.1, max=100, unit="px", help="The spread.", large=50),
              Param("mode", "choice", "a", choices=("a", "b"))]
    tail = """backend : {"auto", "cpu", "opencl", "cuda"}, default "auto"
    Where to run; an unavailable backend named explicitly is an error.
channel_order : {"bgr", "rgb"}, optional
    The order of the image's colour channels (default BGR, OpenCV's, or cvfilters.set_defaults); PIL images are RGB.
layout : {"hwc", "chw"}, default "hwc"
    chw takes and returns C x H x W arrays.

Returns
-------
image
    Same type, shape and dtype as ``image`` unless the filter changes them.

Examples
--------
>>> out = cvfilters.get_filter('soft')(image)  # doctest: +SKIP"""
    parameters = """Parameters
----------
image : numpy.ndarray, PIL.Image.Image, array-like, cv2.UMat or cv2.cuda.GpuMat
    uint8, uint16, float32, float64 or int16; 1, 2, 3 or 4 channels (BGR order unless channel_order).
sigma : float, default 2, range [0.1, 100] px
    The spread.
    Values above 50 need allow_large (CLI --allow-large).
mode : {'a', 'b'}, default a
"""
    assert doc_of("soft", "Soften.", " More words.\n", params) == "Soften.\n\nMore words.\n\n" + parameters + tail
    # a description that only repeats the summary, or none, is left out
    assert doc_of("soft", "Soften.", " Soften. ", params) == "Soften.\n\n" + parameters + tail
    assert doc_of("soft", "Soften.", "", params) == "Soften.\n\n" + parameters + tail
