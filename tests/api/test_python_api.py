"""What Python callers hold: PIL images, float64, int16, array-likes, CHW; spec strings and cvfilters.fx.

Oracles are numpy formulas (``invert`` is ``max - v``; on int16 through the documented
``(v + 32768) / 65535`` mapping it is exactly ``-1 - v``), scipy, or the same filter
on a plain uint8/float32 array, which the earlier tests pin down.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

import cvfilters as cvf
from cvfilters.core import boundary
from cvfilters.core.errors import InvalidImageError, ParameterError, SpecError
from tests.array_likes import ArrayOnly, DLPackOnly
from tests.conftest import FIXTURES, photo

ROOT = FIXTURES.parent


def rgb_photo(height: int = 24, width: int = 32) -> np.ndarray:
    return np.ascontiguousarray(photo(height, width, 3)[..., ::-1])


# ---------------------------------------------------------------- PIL images
@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA", "I;16", "F"])
def test_pil_images_come_back_as_pil_images_of_their_mode(mode: str) -> None:
    base = Image.fromarray(rgb_photo()).convert("RGBA")
    image = base.convert(mode) if mode not in ("I;16", "F") else Image.fromarray(
        (np.asarray(base.convert("L")).astype(np.uint16) * 257) if mode == "I;16"
        else np.asarray(base.convert("L")).astype(np.float32) / 255)
    assert image.mode == mode
    out = cvf.apply(image, "invert")
    assert isinstance(out, Image.Image) and out.mode == mode and out.size == image.size
    values, result = np.asarray(image), np.asarray(out)
    full = {"I;16": 65535, "F": 1.0}.get(mode, 255)
    if mode in ("LA", "RGBA"):  # invert leaves alpha alone
        assert np.array_equal(result[..., -1], values[..., -1])
        values, result = values[..., :-1], result[..., :-1]
    np.testing.assert_allclose(result, full - values.astype(np.float64), atol=1e-6)


def test_pil_rgb_is_rgb_whatever_the_default() -> None:
    rgb = rgb_photo()
    want = cvf.apply(rgb, "sepia", channel_order="rgb")
    assert np.array_equal(np.asarray(cvf.apply(Image.fromarray(rgb), "sepia")), want)
    assert np.array_equal(np.asarray(cvf.apply(Image.fromarray(rgb), "sepia", channel_order="bgr")), want)


def test_pil_gray_alpha_is_filtered_as_gray_with_alpha() -> None:
    gray = photo(24, 32, 1)
    alpha = np.full_like(gray, 255)
    out = cvf.apply(Image.fromarray(np.dstack([gray, alpha])), "gaussian_blur", sigma=1.5)
    assert out.mode == "LA"
    # exactly the BGRA run of the gray repeated (premultiplied in float32), within a level of the gray run
    bgra = cvf.apply(np.dstack([gray, gray, gray, alpha]), "gaussian_blur", sigma=1.5)
    assert np.array_equal(np.asarray(out), bgra[..., [0, 3]])
    assert np.abs(np.asarray(out)[..., 0].astype(int) - cvf.apply(gray, "gaussian_blur", sigma=1.5)).max() <= 1


def test_gray_alpha_arrays_become_bt601_gray_after_a_colour_filter() -> None:
    gray = photo(24, 32, 1)
    image = np.dstack([gray, np.full_like(gray, 200)])
    sepia_rows = [[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]]  # RGB rows
    out = cvf.apply(image, "color_matrix", matrix=sepia_rows)
    assert out.shape == image.shape and np.array_equal(out[..., 1], image[..., 1])
    g = gray.astype(np.float64)
    r, gg, b = (np.clip(np.rint(g * row_sum), 0, 255) for row_sum in (1.351, 1.203, 0.937))  # sepia rows on gray
    assert np.abs(out[..., 0] - (0.299 * r + 0.587 * gg + 0.114 * b)).max() <= 1.5  # two roundings, float32 maths


def test_write_takes_a_pil_image(tmp_path: Path) -> None:
    rgb = rgb_photo()
    cvf.write(tmp_path / "pil.png", Image.fromarray(rgb))
    assert np.array_equal(cv2.imread(str(tmp_path / "pil.png")), rgb[..., ::-1])


def test_unsupported_pil_mode_is_one_line() -> None:
    with pytest.raises(InvalidImageError, match=r"PIL mode P is not supported .*convert\('RGB'\)") as info:
        cvf.apply(Image.new("P", (4, 4)), "invert")
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- dtypes
def test_float64_in_float64_out() -> None:
    image = photo(24, 32, 3).astype(np.float64) / 255
    out = cvf.apply(image, "gaussian_blur", sigma=2.0, border="reflect")
    assert out.dtype == np.float64 and out.shape == image.shape
    want = ndimage.gaussian_filter(image, sigma=(2.0, 2.0, 0), mode="reflect", truncate=4.0)
    assert np.abs(out - want).max() < 2e-3  # float32 arithmetic and cv2's kernel size
    np.testing.assert_allclose(cvf.apply(image, "invert"), 1.0 - image, atol=1e-7)


def test_int16_runs_through_the_documented_float_range() -> None:
    values = np.array([[-32768, -1, 0, 1, 12345, 32767]], np.int16)
    assert np.array_equal(cvf.apply(values, "invert"), -1 - values)  # 1 - (v + 32768) / 65535, mapped back
    flat = np.full((16, 16), -1234, np.int16)
    assert np.array_equal(cvf.apply(flat, "gaussian_blur", sigma=3), flat)
    assert cvf.apply(np.zeros((8, 8, 3), np.int16), "sepia").dtype == np.int16


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint32, np.float16, np.bool_, np.complex64])
def test_unsupported_dtypes_are_one_line(dtype: type) -> None:
    with pytest.raises(InvalidImageError, match="is not supported") as info:
        cvf.apply(np.zeros((4, 4, 3), dtype), "invert")
    assert "\n" not in str(info.value) and "int16" in str(info.value)


# ---------------------------------------------------------------- array-likes and layouts


@pytest.mark.parametrize("kind", [ArrayOnly, DLPackOnly])
def test_array_likes_are_taken_without_a_copy(kind: type) -> None:
    image = photo(24, 32, 3)
    host, _ = boundary.enter(kind(image), "bgr")
    assert np.shares_memory(host, image)
    out = cvf.apply(kind(image), "gaussian_blur", sigma=2)
    assert isinstance(out, np.ndarray) and np.array_equal(out, cvf.apply(image, "gaussian_blur", sigma=2))


def test_chw_layout() -> None:
    image = photo(24, 32, 3)
    chw = np.ascontiguousarray(image.transpose(2, 0, 1))
    out = cvf.apply(chw, "sepia", layout="chw")
    assert out.shape == chw.shape and np.array_equal(out, cvf.apply(image, "sepia").transpose(2, 0, 1))
    assert np.array_equal(cvf.apply(DLPackOnly(chw), "sepia", layout="chw"), out)
    with pytest.raises(InvalidImageError, match="layout='nhwc' is not one of hwc, chw"):
        cvf.apply(image, "sepia", layout="nhwc")  # type: ignore[arg-type]


@pytest.mark.parametrize(("image", "message"), [
    ([[1, 2], [3, 4]], "not list"),
    ("photo.png", "not str"),
    (object(), "or an object with __array__ or __dlpack__, not object"),
])
def test_what_stays_unsupported_is_one_line(image: Any, message: str) -> None:
    with pytest.raises(InvalidImageError, match=message) as info:
        cvf.apply(image, "invert")
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- entry points
def test_apply_takes_a_spec_string_or_a_pipeline() -> None:
    image = photo(24, 32, 3)
    want = cvf.apply(image, "gaussian_blur", sigma=3)
    assert np.array_equal(cvf.apply(image, "gaussian_blur:sigma=3"), want)
    assert np.array_equal(cvf.apply(image, "invert | invert"), image)
    assert np.array_equal(cvf.apply(image, cvf.Pipeline.parse("gaussian_blur:sigma=3")), want)
    with pytest.raises(SpecError, match="not both"):
        cvf.apply(image, "gaussian_blur:sigma=3", sigma=2)


def test_apply_docstring_names_bgr_and_channel_order() -> None:
    doc = inspect.getdoc(cvf.apply) or ""
    assert "BGR" in doc and "channel_order" in doc and "spec string" in doc


def test_fx_namespace_is_the_registry() -> None:
    image = photo(24, 32, 3)
    assert np.array_equal(cvf.fx.gaussian_blur(image, sigma=3), cvf.apply(image, "gaussian_blur", sigma=3))
    assert cvf.fx.blend is cvf.get_filter("blend")
    assert inspect.ismodule(cvf.filters.blend)  # the family module, a different namespace
    names = dir(cvf.fx)
    assert names == sorted(f.name for f in cvf.list_filters()) and "gaussian_blur" in names
    with pytest.raises(AttributeError, match="did you mean gaussian_blur"):
        cvf.fx.gausian_blur  # noqa: B018
    assert np.array_equal(cvf.fx.sepia(rgb_photo(), channel_order="rgb"),
                          cvf.apply(rgb_photo(), "sepia", channel_order="rgb"))


def test_fx_lists_filters_registered_later() -> None:
    @cvf.register(category="color", summary="Identity, registered by a test.")
    def test_fx_identity(ctx: Any, img: Any) -> Any:
        return img

    try:
        assert "test_fx_identity" in dir(cvf.fx) and cvf.fx.test_fx_identity is test_fx_identity
    finally:
        from cvfilters.registry import catalog as registry

        registry.unregister("test_fx_identity")


def test_fx_dunder_lookups_raise_at_once_naming_the_attribute(monkeypatch) -> None:
    # copy, pickle, inspect.unwrap and doctest probe modules for dunders: the registry is not asked
    import cvfilters.fx as fx

    monkeypatch.setattr(fx, "get", lambda name: pytest.fail(f"the registry was asked for {name!r}"))
    with pytest.raises(AttributeError) as caught:
        fx.__wrapped__  # noqa: B018
    assert caught.value.args == ("__wrapped__",)
    assert not hasattr(fx, "__path__")


def test_fx_stub_is_current() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "update_fx_stub.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_py_typed_is_package_data() -> None:
    assert (ROOT / "cvfilters" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert '"py.typed"' in text and '"*.pyi"' in text


# ---------------------------------------------------------------- images as parameter values
def test_match_histogram_reference_as_array_pil_or_file(tmp_path: Path) -> None:
    image = photo(48, 64, 3)
    reference_bgr = cv2.imread(str(FIXTURES / "chelsea.jpg"))
    cv2.imwrite(str(tmp_path / "ref.png"), reference_bgr)
    from_file = cvf.apply(image, "match_histogram", reference=str(tmp_path / "ref.png"))
    assert np.array_equal(cvf.apply(image, "match_histogram", reference=reference_bgr), from_file)
    pil = Image.fromarray(np.ascontiguousarray(reference_bgr[..., ::-1]))
    assert np.array_equal(cvf.apply(image, "match_histogram", reference=pil), from_file)
    assert not np.array_equal(from_file, image)


def test_blend_source_as_array_or_file(tmp_path: Path) -> None:
    image = photo(48, 64, 3)
    overlay = photo(24, 32, 4)
    cv2.imwrite(str(tmp_path / "over.png"), overlay)
    from_file = cvf.apply(image, "blend", source=str(tmp_path / "over.png"), mode="multiply", opacity=0.8)
    assert np.array_equal(cvf.apply(image, "blend", source=overlay, mode="multiply", opacity=0.8), from_file)


def test_other_path_parameters_still_refuse_arrays() -> None:
    with pytest.raises(ParameterError, match="lut: file") as info:
        cvf.apply(photo(), "lut", file=np.zeros((256, 3), np.uint8))
    assert "\n" not in str(info.value)


def _run_python_blocks(page: str, first: str, last: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the ``python`` code blocks of ``page`` between the headings ``first`` and ``last``; return the code."""
    import re

    text = (ROOT / page).read_text()
    section = text[text.index(first):text.index(last)]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    for name in ("out.png", "look.yaml"):
        code = code.replace(f'"{name}"', repr(str(tmp_path / name)))
    monkeypatch.chdir(ROOT)
    try:
        exec(compile(code, page, "exec"), {})
    finally:
        cvf.set_defaults(channel_order="bgr")
    assert (tmp_path / "out.png").is_file()
    return code


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run_python_blocks("README.md", "## Python\n", "## Documentation", tmp_path, monkeypatch)


def test_python_manual_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _run_python_blocks("docs/python.md", "# Python\n", "## Your own filters", tmp_path, monkeypatch)
    assert "channel_order=\"rgb\"" in code and "Image.open" in code and ".map(" in code


def test_cli_info_states_how_python_dtypes_run() -> None:
    proc = subprocess.run([sys.executable, "-m", "cvfilters", "info", "invert"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "float64 runs as float32" in text and "(v + 32768) / 65535" in text


def test_fx_functions_show_their_parameters() -> None:
    signature = inspect.signature(cvf.fx.gaussian_blur)
    if "sigma" not in signature.parameters:
        pytest.skip("Filter objects get generated signatures with the architecture issue (#13)")
    assert {"sigma", "ksize", "border", "channel_order"} <= set(signature.parameters)
    assert "sigma" in (cvf.fx.gaussian_blur.__doc__ or "")


@pytest.mark.parametrize(("name", "params"), [
    ("gaussian_blur", {"sigma": np.zeros((3, 3))}),
    ("vignette", {"center": np.zeros((3, 3))}),
    ("convolve", {"kernel": np.zeros((3, 3, 3))}),
    ("blend", {"color": np.zeros((5, 5))}),
])
def test_array_values_of_other_parameters_are_named_by_shape_in_one_line(name: str, params: dict[str, Any]) -> None:
    with pytest.raises(ParameterError) as info:
        cvf.apply(photo(), name, **params)
    message = str(info.value)
    assert "\n" not in message and "<array " in message and "array([" not in message, message


@pytest.mark.parametrize("keyword", ["backend", "channel_order", "layout"])
def test_a_filter_parameter_cannot_shadow_a_call_keyword(keyword: str) -> None:
    with pytest.raises(ValueError, match=f"parameter '{keyword}' is a keyword of every filter call"):
        @cvf.register(category="color", summary="Shadows a call keyword (test).",
                      params=[cvf.Param(keyword, "str", "x", help="clashes")])
        def test_shadowing(ctx: Any, img: Any, **params: Any) -> Any:
            return img
