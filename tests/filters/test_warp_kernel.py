"""warp_kernel's declarations, called directly (the built-in warps run it at import), and the matrix checks.

The references are written out here: a mirror that subsamples, ``(width - 1 - k x, height - 1 - k y)``,
indexed with numpy; fill colours in 8-bit levels; the declared defaults as the docstring states them.
"""

from __future__ import annotations

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.tiles import process
from cvfilters.filters.warp import _matrix_check, warp_kernel
from cvfilters.registry.params import Param
from tests.conftest import photo

FILL = (0.2, 0.4, 0.6, 0.5)  # RGBA fractions: B, G, R, A = 153, 102, 51, 128 in 8 bits
FILL_BGRA = [153, 102, 51, 128]


def mirror(x: np.ndarray, y: np.ndarray, *, width: int, height: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Mirror both ways, taking every k-th pixel: source ``(width - 1 - k x, height - 1 - k y)``."""
    return width - 1 - k * x, height - 1 - k * y


def shift(x: np.ndarray, y: np.ndarray, *, width: int, height: int, dx: float) -> tuple[np.ndarray, np.ndarray]:
    """Move right by ``dx`` pixels."""
    return x - dx, y


K_PARAM = Param("k", "int", 2, min=1, max=100, help="step")
DX_PARAM = Param("dx", "float", 2.0, min=-50, max=50, unit="px", help="shift")



def test_declared_defaults_and_refusals(names: list[str]) -> None:
    """interpolation linear, border constant, fill [0] by default; bad declarations name the filter."""
    names.append("test_wk_plain")
    flt = warp_kernel(shift, "test_wk_plain", summary="Shift.", params=[DX_PARAM])
    assert [(p.name, p.default) for p in flt.params] == [
        ("dx", 2.0), ("interpolation", "linear"), ("border", "constant"), ("fill", (0.0,))]
    with pytest.raises(ValueError, match="'test_wk_plain' is registered already"):
        warp_kernel(shift, "test_wk_plain", summary="Again.", params=[DX_PARAM])
    assert warp_kernel(shift, "test_wk_plain", summary="Again.", params=[DX_PARAM], replace=True).summary == "Again."
    with pytest.raises(TypeError, match="^warp_kernel: fn must be callable, not int$"):
        warp_kernel(3, "test_wk_number", summary="x")  # type: ignore[arg-type]
    for reserved in ("width", "height", "fill"):
        with pytest.raises(ValueError, match=rf"^warp kernel 'test_wk_reserved': parameter names \['{reserved}'\]"):
            warp_kernel(shift, "test_wk_reserved", summary="x", params=[Param(reserved, "int", 3, min=1, max=5)])

    def misspelt(x: np.ndarray, y: np.ndarray, *, width: int, height: int, dxx: float) -> tuple[np.ndarray, np.ndarray]:
        return x, y

    with pytest.raises(TypeError, match="^filter 'test_wk_misspelt': misspelt\\(\\) takes keyword 'dxx'"):
        warp_kernel(misspelt, "test_wk_misspelt", summary="x", params=[DX_PARAM])
    with pytest.raises(ParameterError, match="^test_wk_interp: interpolation=bilinear is not one of"):
        warp_kernel(shift, "test_wk_interp", summary="x", params=[DX_PARAM], interpolation="bilinear")
    names.append("test_wk_broken")
    broken = warp_kernel(lambda x, y, **_: (x[:2], y), "test_wk_broken", summary="Broken.")
    assert broken.maps is not None
    with pytest.raises(ValueError, match="^warp kernel 'test_wk_broken': the coordinate function must return"):
        broken.maps(broken.resolve({}), ImageInfo.of(photo(8, 8, 3, np.uint8)))


def test_output_size_is_declared_truncated_and_at_least_one_pixel(names: list[str]) -> None:
    """``output_size(params, width, height)``, made int (truncated) and at least 1, sizes the output and its maps."""
    names.append("test_wk_mirror")
    flt = warp_kernel(mirror, "test_wk_mirror", summary="Mirror and subsample.", params=[K_PARAM],
                      output_size=lambda p, w, h: (w / p["k"], h / p["k"]), interpolation="nearest")
    image = photo(11, 17, 3, np.uint8)
    spec = ImageInfo.of(image)
    assert flt.output_info(flt.resolve({"k": 2}), spec).size == (8, 5)  # 8.5 x 5.5, truncated
    out = cvf.apply(image, flt, k=2, backend="cpu")
    np.testing.assert_array_equal(out, image[10 - 2 * np.arange(5)][:, 16 - 2 * np.arange(8)])
    assert flt.maps is not None
    map_x, map_y = flt.maps(flt.resolve({"k": 3}), spec)
    np.testing.assert_array_equal(map_x, np.tile(16 - 3 * np.arange(5, dtype=np.float32), (3, 1)))
    np.testing.assert_array_equal(map_y, np.repeat(10 - 3 * np.arange(3, dtype=np.float32)[:, None], 5, axis=1))
    assert flt.output_info(flt.resolve({"k": 40}), spec).size == (1, 1)  # 0.425 x 0.275: one pixel
    np.testing.assert_array_equal(cvf.apply(image, flt, k=40, backend="cpu"), image[10:, 16:])
    piped = Pipeline.parse("test_wk_mirror:k=2 | flip")(image, backend="cpu")  # the next step sees the new size
    np.testing.assert_array_equal(piped, out[:, ::-1])


@pytest.mark.parametrize("alpha", ["premultiply", "all"])
def test_translucent_fill_is_drawn_as_given(names: list[str], alpha: str) -> None:
    """border=constant draws the fill colour, straight, under either alpha policy (BGRA), and on BGR opaque."""
    name = f"test_wk_fill_{alpha}"
    names.append(name)
    flt = warp_kernel(shift, name, summary="Shift.", params=[DX_PARAM], alpha=alpha,  # type: ignore[arg-type]
                      interpolation="nearest")
    bgra = photo(6, 9, 4, np.uint8)
    bgra[..., 3] = 255
    out = cvf.apply(bgra, flt, dx=2.0, fill=FILL, backend="cpu")
    np.testing.assert_array_equal(out[:, 2:], bgra[:, :-2])
    assert np.abs(out[:, :2].astype(int) - FILL_BGRA).max() <= 1  # 8-bit rounding of the premultiplied round trip
    default = cvf.apply(bgra, flt, dx=2.0, backend="cpu")
    np.testing.assert_array_equal(default[:, :2], 0)  # fill [0]: transparent black


@pytest.mark.parametrize(("kernel", "params"), [
    ("shift", {"dx": 2.5, "interpolation": "cubic", "fill": FILL}),
    ("mirror", {"k": 2, "interpolation": "linear", "border": "reflect"}),
])
def test_tiles_equal_the_whole_image(names: list[str], kernel: str, params: dict[str, object]) -> None:
    """A custom warp run in 7 px tiles equals the whole-image run (its declared footprint is exact)."""
    name = f"test_wk_tiles_{kernel}"
    names.append(name)
    fn, own = (shift, DX_PARAM) if kernel == "shift" else (mirror, K_PARAM)
    output_size = None if kernel == "shift" else (lambda p, w, h: (w / p["k"], h / p["k"]))
    warp_kernel(fn, name, summary="x", params=[own], output_size=output_size)
    image = photo(23, 29, 4, np.float32)
    image[..., 3] = np.linspace(0.2, 1.0, 29, dtype=np.float32)  # translucent: premultiplied sampling shows
    pipe = Pipeline([(name, params)])
    whole = pipe(image, backend="cpu")
    np.testing.assert_array_equal(process(image, pipe, tile_size=7), whole)
    if kernel == "shift":
        np.testing.assert_allclose(whole[:, 0], np.tile([0.6, 0.4, 0.2, 0.5], (23, 1)), atol=1e-6)


def test_matrix_checks_name_the_problem() -> None:
    """The affine (2x3) and homography (3x3) checks: None when invertible, else the documented message."""
    affine, homography = _matrix_check(2, "affine"), _matrix_check(3, "homography")
    assert affine({"matrix": ((2.0, 0.5, 3.0), (0.0, 0.5, -1.0))}) is None  # det 1, translations ignored
    assert affine({"matrix": ((1e-3, 0.0, 0.0), (0.0, 1e-3, 0.0))}) is None  # det 1e-6: small, invertible
    assert homography({"matrix": ((1, 0, 0), (0, 1, 0), (0.001, 0.002, 1))}) is None
    assert affine({"matrix": ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0))}) == "matrix must be 2x3 (affine), not 3x4"
    assert homography({"matrix": ((1, 0, 0), (0, 1, 0))}) == "matrix must be 3x3 (homography), not 2x3"
    singular = "matrix is singular (not invertible): it maps the image onto a line or a point"
    assert affine({"matrix": ((1, 2, 5), (2, 4, 7))}) == singular  # the last column does not count
    assert homography({"matrix": ((1, 2, 0), (2, 4, 0), (0, 0, 1))}) == singular
    assert homography({"matrix": ((1, 0, 0), (0, 1, 0), (1, 0, 0))}) == singular  # its 2x2 block is invertible


def test_flip_maps_take_the_default_axis_when_left_out() -> None:
    """``Filter.maps`` of flip with no parameters is the default, horizontal: source ``(width - 1 - x, y)``."""
    flt = cvf.get_filter("flip")
    assert flt.maps is not None
    map_x, map_y = flt.maps({}, ImageInfo(width=5, height=3, channels=1, dtype=np.dtype(np.uint8)))
    np.testing.assert_array_equal(map_x, np.tile(np.arange(4, -1, -1, dtype=np.float32), (3, 1)))
    np.testing.assert_array_equal(map_y, np.repeat(np.arange(3, dtype=np.float32)[:, None], 5, axis=1))
