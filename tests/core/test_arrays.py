"""cvfilters.core.arrays: numpy views of what callers hold, R/B swaps, images as parameter values.

References are numpy itself (fancy indexing for the channel swap, ``np.shares_memory`` for views)
and Pillow's own modes, never the functions under test."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

from cvfilters.core import arrays
from cvfilters.core.defaults import running_in
from cvfilters.core.errors import InvalidImageError
from tests.array_likes import ArrayOnly, BrokenArray, DLPackOnly


def _image(shape: tuple[int, ...], dtype: Any = np.uint8) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) % 251).reshape(shape).astype(dtype)


class SilentlyBroken:
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise RuntimeError("")


class BadDLPackGoodArray(ArrayOnly):
    def __dlpack__(self, **kwargs: Any) -> Any:
        raise BufferError("on another device")


def test_is_pil_and_is_device() -> None:
    assert arrays.is_pil(Image.new("RGB", (2, 2))) and not arrays.is_pil(np.zeros((2, 2, 3), np.uint8))
    assert arrays.is_device(cv2.UMat(np.zeros((2, 2), np.uint8))) and not arrays.is_device(np.zeros((2, 2)))


def test_as_array_views_without_copying() -> None:
    base = _image((4, 5, 3))
    assert arrays.as_array(base) is base
    viewed = arrays.as_array(DLPackOnly(base))
    assert np.shares_memory(viewed, base) and np.array_equal(viewed, base)
    np.testing.assert_array_equal(arrays.as_array(ArrayOnly(base.tolist())), base)
    fallback = arrays.as_array(BadDLPackGoodArray(base))  # DLPack refused: __array__ still works
    np.testing.assert_array_equal(fallback, base)


def test_as_array_refusals_are_one_line_and_named() -> None:
    with pytest.raises(InvalidImageError) as caught:
        arrays.as_array(BrokenArray(), "reference")
    assert str(caught.value) == "reference: BrokenArray.__array__ failed (device lost)"
    with pytest.raises(InvalidImageError) as silent:
        arrays.as_array(SilentlyBroken())
    assert str(silent.value) == "image: SilentlyBroken.__array__ failed (RuntimeError)"
    expected = ("expected a numpy array, PIL image, cv2.UMat, cv2.cuda.GpuMat or an object with __array__ or "
                "__dlpack__, not {}")
    with pytest.raises(InvalidImageError) as objects:
        arrays.as_array(ArrayOnly([object(), object()]), "source")
    assert str(objects.value) == "source: " + expected.format("ArrayOnly")
    with pytest.raises(InvalidImageError) as other:
        arrays.as_array("not an image")
    assert str(other.value) == "image: " + expected.format("str")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.int16, np.float64, np.int32])
@pytest.mark.parametrize("channels", [3, 4])
def test_swap_rb_swaps_channels_0_and_2_only(dtype: Any, channels: int) -> None:
    image = _image((3, 5, channels), dtype)
    swapped = arrays.swap_rb(image)
    order = [2, 1, 0, 3][:channels]
    assert swapped.dtype == image.dtype and swapped.flags.c_contiguous
    np.testing.assert_array_equal(swapped, image[..., order])
    np.testing.assert_array_equal(arrays.swap_rb(image[:, ::2]), image[:, ::2][..., order])  # a strided view


@pytest.mark.parametrize("shape", [(3, 5), (3, 5, 1), (3, 5, 2), (3, 5, 6)])
def test_swap_rb_leaves_other_layouts_alone(shape: tuple[int, ...]) -> None:
    image = _image(shape)
    assert arrays.swap_rb(image) is image


def test_host_bgr() -> None:
    rgb = _image((4, 6, 3))
    pil = Image.fromarray(rgb)
    np.testing.assert_array_equal(arrays.host_bgr(pil, "bgr"), rgb[..., ::-1])  # PIL is RGB whatever the order
    assert arrays.host_bgr(rgb, "bgr") is rgb
    np.testing.assert_array_equal(arrays.host_bgr(rgb, "rgb"), rgb[..., ::-1])
    np.testing.assert_array_equal(arrays.host_bgr(ArrayOnly(rgb), "rgb"), rgb[..., ::-1])
    with pytest.raises(InvalidImageError, match="^blend source: expected a numpy array"):
        arrays.host_bgr(3, "bgr", "blend source")
    with pytest.raises(InvalidImageError, match="^mask: PIL mode P "):
        arrays.host_bgr(Image.new("P", (2, 2)), "bgr", "mask")


@pytest.mark.parametrize(("mode", "dtype", "shape"), [
    ("L", np.uint8, (3, 4)), ("LA", np.uint8, (3, 4, 2)), ("RGB", np.uint8, (3, 4, 3)),
    ("RGBA", np.uint8, (3, 4, 4)), ("I;16", np.uint16, (3, 4)), ("F", np.float32, (3, 4)),
])
def test_pil_array_modes(mode: str, dtype: Any, shape: tuple[int, ...]) -> None:
    array = arrays.pil_array(Image.new(mode, (4, 3)))
    assert array.dtype == np.dtype(dtype) and array.shape == shape


def test_pil_array_refuses_other_modes_with_the_list() -> None:
    with pytest.raises(InvalidImageError) as caught:
        arrays.pil_array(Image.new("CMYK", (2, 2)), "reference")
    assert str(caught.value) == ("reference: PIL mode CMYK is not supported (use L, LA, RGB, RGBA, I;16, F; "
                                 "image.convert('RGB') for the others)")


def test_image_value_copies_freezes_and_keys_by_content() -> None:
    source = _image((3, 4, 3))
    value = arrays.ImageValue(source)
    source[0, 0, 0] = 250
    assert value.bgr()[0, 0, 0] == 0 and not value.bgr().flags.writeable
    same, other = arrays.ImageValue(_image((3, 4, 3))), arrays.ImageValue(_image((3, 4, 3)) + 1)
    assert value == same and hash(value) == hash(same) and value.key() == same.key()
    assert value != other and value.key() != other.key() and value != _image((3, 4, 3))
    reshaped = arrays.ImageValue(_image((3, 4, 3)).reshape(4, 3, 3))  # the same bytes, another shape
    assert reshaped != value and reshaped.key() != value.key()
    as_u16 = arrays.ImageValue(np.zeros((2, 2), np.uint16))
    as_u8 = arrays.ImageValue(np.zeros((2, 4), np.uint8))  # the same 8 bytes
    assert as_u16 != as_u8 and as_u16.key() != as_u8.key()
    assert value.key()[2:4] == ((3, 4, 3), np.dtype(np.uint8).str)
    assert str(value) == repr(value) == "<array 3x4x3 uint8>"


def test_image_value_order_follows_the_run_or_pil() -> None:
    rgb = _image((2, 3, 3))
    value = arrays.ImageValue(rgb)
    with running_in("bgr"):
        assert value.order == "bgr" and value.bgr() is not None
        np.testing.assert_array_equal(value.bgr(), rgb)
    with running_in("rgb"):
        assert value.order == "rgb" and value.key()[-1] == "rgb"
        np.testing.assert_array_equal(value.bgr(), rgb[..., ::-1])
    pil = arrays.ImageValue(Image.fromarray(rgb))
    with running_in("bgr"):
        assert pil.order == "rgb"
        np.testing.assert_array_equal(pil.bgr(), rgb[..., ::-1])
    assert str(pil) == "<PIL image 2x3x3 uint8>"
    assert pil != value  # the same pixels read in another order


def test_image_value_from_device_images() -> None:
    grey = _image((3, 4))
    np.testing.assert_array_equal(arrays.ImageValue(cv2.UMat(grey)).bgr(), grey)


@pytest.mark.parametrize(("image", "detail"), [
    (np.zeros((2, 2), np.int32), "dtype int32, shape (2, 2)"),
    (np.zeros((2, 2, 3, 1), np.uint8), "dtype uint8, shape (2, 2, 3, 1)"),
    (np.zeros(4, np.float32), "dtype float32, shape (4,)"),
])
def test_image_value_refuses_what_is_not_an_image(image: np.ndarray, detail: str) -> None:
    with pytest.raises(InvalidImageError) as caught:
        arrays.ImageValue(image, "reference")
    assert str(caught.value) == (f"reference: {detail} is not an image "
                                 "(use uint8, uint16 or float32, H x W or H x W x C)")


def test_refusals_name_the_image_by_default_or_as_told() -> None:
    not_an_image = ("expected a numpy array, PIL image, cv2.UMat, cv2.cuda.GpuMat or an object with __array__ or "
                    "__dlpack__")
    cmyk = Image.new("CMYK", (2, 2))
    cases = [
        (lambda: arrays.host_bgr(3, "bgr"), f"image: {not_an_image}, not int"),
        (lambda: arrays.pil_array(cmyk), "image: PIL mode CMYK is not supported"),
        (lambda: arrays.ImageValue(np.zeros((2, 2), np.int32)), "image: dtype int32"),
        (lambda: arrays.ImageValue(cmyk, "reference"), "reference: PIL mode CMYK is not supported"),
        (lambda: arrays.ImageValue(object(), "reference"), f"reference: {not_an_image}, not object"),
    ]
    for call, start in cases:
        with pytest.raises(InvalidImageError) as caught:
            call()
        assert str(caught.value).startswith(start), str(caught.value)


def test_is_pil_without_pillow_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "PIL.Image")  # a caller that never imported Pillow: no PIL image can exist
    assert arrays.is_pil(np.zeros((2, 2), np.uint8)) is False
