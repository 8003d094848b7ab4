"""What the declarations document is what the filters do (issue 26, part 2).

Three kinds of check, each against the text a user reads (``cvfilters info``) and an
independent reference (a numpy formula, a hand-built array), never the filter's own code:

* Defaults named in the help ("``reflect101 (..., default)``", "``the default -25.5``",
  "``[1,0] top-right (default)``") are the declared defaults, for every filter.
* Every value a help text documents as leaving the image unchanged ("1 = unchanged",
  "0 leaves the image unchanged") does so; the help is checked to still say it.
* Documented formulas and choices: the defaults of the colour, photo, geometry, feather and
  look filters do what their help says by the documented amount; the five border rules do
  what their ``gfedcb|abcdefgh|gfedcba`` pictures show; flip, fit and channel choices.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.registry import catalog

FILTERS = catalog.filters()
RNG = np.random.default_rng(26)
# a smooth colour image (32x48): gradients plus gentle noise, no clipped values
_Y, _X = np.mgrid[0:32, 0:48]
PHOTO = np.clip(np.dstack([40 + 3 * _X, 60 + 4 * _Y, 200 - 2 * _X - _Y]) + RNG.normal(0, 4, (32, 48, 3)), 5,
                250).astype(np.uint8)
PHOTO_F = PHOTO.astype(np.float32) / 255


def run(image: np.ndarray, name: str, **params: Any) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(cvf.apply(image, name, backend="cpu", **params))


def helptext(name: str, param: str) -> str:
    return cvf.get_filter(name).param(param).help


# --- defaults named in the help are the declared ones ---------------------------------------

MARKED = re.compile(r"(?:^|[ :,;])([\w.\[\],-]+)(?: [a-z-]+)? \((?:[^()]*, )?default\)")  # "[1,0] top-right (default)"


@pytest.mark.parametrize("flt", FILTERS, ids=lambda f: f.name)
def test_a_default_named_in_the_help_is_the_declared_default(flt):
    for param in flt.params:
        for named in MARKED.findall(param.help):
            shown = named if param.kind == "choice" else [float(v) for v in named.strip("[]").split(",")]
            declared = param.default if param.kind == "choice" else list(np.atleast_1d(param.default))
            assert shown == declared, f"{flt.name}.{param.name}: the help names {named} as the default, " \
                                      f"the declaration says {param.default!r}"
        number = re.search(r"\bthe default (-?\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)?)\b", param.help)
        if number and param.kind in ("int", "float"):
            numerator, _, denominator = number.group(1).partition("/")
            value = float(numerator) / float(denominator or 1)
            assert value == pytest.approx(param.default), (flt.name, param.name, number.group(0))


# --- values documented as leaving the image unchanged ------------------------------------

# (filter, the values, the parameter whose help documents it, the words it uses)
IDENTITIES = [
    ("motion_blur", {"length": 1.0}, "length", "1 leaves the image unchanged"),
    ("zoom_blur", {"amount": 0.0}, "amount", "0 leaves the image unchanged"),
    ("sharpen", {"amount": 0.0}, "amount", "0 the identity"),
    ("brightness_contrast", {"contrast": 1.0, "brightness": 0.0}, "contrast", "1 = unchanged"),
    ("exposure", {"ev": 0.0}, "ev", "0 leaves the image"),
    ("gamma", {"gamma": 1.0}, "gamma", "1 = unchanged"),
    ("highlights_shadows", {"shadows": 0.0, "highlights": 1.0}, "shadows", "0 leaves them"),
    ("highlights_shadows", {"shadows": 0.0, "highlights": 1.0}, "highlights", "1 leaves them"),
    ("hue_shift", {"degrees": 0.0}, "degrees", "0 or 360 = unchanged"),
    ("hue_shift", {"degrees": 360.0}, "degrees", "0 or 360 = unchanged"),
    ("saturation", {"amount": 1.0}, "amount", "1 leaves the image"),
    ("sepia", {"intensity": 0.0}, "intensity", "0 = unchanged"),
    ("temperature_tint", {"temperature": 6500.0, "tint": 0.0, "target_temperature": 6500.0, "target_tint": 0.0},
     "temperature", "equal to target_temperature (and tint equal to target_tint) leaves it unchanged"),
    ("vibrance", {"amount": 0.0}, "amount", "0 leaves the image unchanged"),
    ("bulge", {"scale": 0.0}, "scale", "0 leaves the image unchanged"),
    ("pinch", {"scale": 0.0}, "scale", "0 = unchanged"),
    ("stretch", {"strength": 0.0}, "strength", "0 leaves the image unchanged"),
    ("bloom", {"intensity": 0.0}, "intensity", "0 leaves the image unchanged"),
    ("grain", {"amount": 0.0}, "amount", "0 leaves the image unchanged"),
    ("vignette", {"intensity": 0.0}, "intensity", "0 leaves the image unchanged"),
    ("histogram_overlay", {"opacity": 0.0}, "opacity", "0 leaves the image unchanged"),
    ("resize", {"scale": 1.0}, "scale", "1 keeps the size"),
    ("levels", {"in_black": 0.0, "in_white": 1.0}, "gamma", "the exponent is 1/gamma"),
    ("crop", {}, "width", "0 = to the right edge"),
    ("pad", {}, "top", "pixels added at the top"),
    ("chroma_key", {"spill": 0.0, "tolerance": 0.0, "softness": 0.0, "color": [1.0, 0.0, 1.0]}, "spill", "0 keeps it"),
]


@pytest.mark.parametrize(("name", "values", "param", "words"), IDENTITIES,
                         ids=[f"{n}-{'-'.join(map(str, v.values()))}" for n, v, _, _ in IDENTITIES])
def test_documented_identities_leave_the_image(name, values, param, words):
    assert words in helptext(name, param), f"{name}.{param}'s help no longer says {words!r}"
    for image, tolerance in ((PHOTO, 1), (PHOTO_F, 1.5 / 255)):
        out = run(image, name, **values)
        if name == "chroma_key":  # adds an alpha channel; the colour and a full alpha stay
            assert out.shape[2] == 4 and np.all(out[..., 3] == (255 if image.dtype == np.uint8 else 1.0))
            out = out[..., :3]
        assert out.shape == image.shape, name
        assert np.abs(out.astype(np.float64) - image).max() <= tolerance, (name, values, image.dtype)


# --- documented formulas at the defaults ------------------------------------------------------


def luma(rgb_last_bgr: np.ndarray) -> np.ndarray:
    """BT.601 luma of a BGR image, as float."""
    b, g, r = (rgb_last_bgr[..., i].astype(np.float64) for i in range(3))
    return 0.299 * r + 0.587 * g + 0.114 * b


def close(out: np.ndarray, want: np.ndarray, levels: float = 1.0) -> None:
    assert out.shape == want.shape
    np.testing.assert_allclose(out.astype(np.float64), want, atol=levels)


def test_brightness_contrast_default_is_in_times_1_2_minus_25_5_and_keeps_mid_grey():
    flt = cvf.get_filter("brightness_contrast")
    assert (flt.param("contrast").default, flt.param("brightness").default) == (1.2, -25.5)
    close(run(PHOTO, "brightness_contrast"), np.clip(np.rint(PHOTO * 1.2 - 25.5), 0, 255))
    close(run(PHOTO_F, "brightness_contrast"), PHOTO_F * 1.2 - 25.5 / 255, 1e-5)
    assert run(np.full((4, 4), 0.5, np.float32), "brightness_contrast") == pytest.approx(0.5, abs=1e-6)


PHOTO_16 = PHOTO.astype(np.uint16) * 257


def test_16_bit_images_follow_the_same_formulas_at_full_scale_65535():
    # brightness is in 8-bit levels "x257 for uint16"; the others are relative to full scale
    close(run(PHOTO_16, "brightness_contrast"), np.clip(np.rint(PHOTO_16 * 1.2 - 25.5 * 257), 0, 65535), 1)
    close(run(PHOTO_16, "exposure"), np.clip(PHOTO_16 * 2**0.5, 0, 65535), 1)
    close(run(PHOTO_16, "gamma"), 65535 * (PHOTO_16 / 65535.0) ** 0.75, 2)
    close(run(PHOTO_16, "levels"), np.clip((PHOTO_16 / 65535.0 - 0.05) / 0.9, 0, 1) * 65535, 2)
    y = luma(PHOTO_16)[..., None]
    close(run(PHOTO_16, "saturation"), np.clip(y + 1.5 * (PHOTO_16 - y), 0, 65535), 2)


def test_exposure_default_multiplies_by_2_to_the_half_and_clips():
    close(run(PHOTO, "exposure"), np.clip(PHOTO * 2**0.5, 0, 255))
    close(run(PHOTO, "exposure", ev=1.0), np.clip(PHOTO * 2.0, 0, 255))  # "+1 doubles every value"
    close(run(PHOTO, "exposure", ev=-1.0), PHOTO / 2.0)  # "-1 halves it"


def test_gamma_default_is_power_0_75():
    close(run(PHOTO, "gamma"), 255 * (PHOTO / 255.0) ** 0.75)
    assert run(PHOTO, "gamma").mean() > PHOTO.mean()  # "above 1 brightens midtones"


def test_levels_defaults_stretch_5_to_95_percent_to_full_scale():
    close(run(PHOTO, "levels"), np.clip((PHOTO / 255.0 - 0.05) / 0.9, 0, 1) * 255)
    one = run(PHOTO, "levels", channel="b")  # "apply to ... one (b, g or r)"
    np.testing.assert_array_equal(one[..., 1:], PHOTO[..., 1:])
    close(one[..., 0], np.clip((PHOTO[..., 0] / 255.0 - 0.05) / 0.9, 0, 1) * 255)


def test_saturation_default_scales_colour_around_bt601_luma_by_1_5():
    y = luma(PHOTO)[..., None]
    close(run(PHOTO, "saturation"), np.clip(y + 1.5 * (PHOTO - y), 0, 255))
    grey = run(PHOTO, "saturation", amount=0.0)  # "0 gives gray (BT.601 luma)"
    close(grey, np.repeat(y, 3, axis=2))


def test_solarize_threshold_and_posterize_defaults():
    ramp = np.arange(256, dtype=np.uint8).reshape(16, 16)
    solar = run(ramp, "solarize")  # values at or above half of full scale are inverted
    np.testing.assert_array_equal(solar, np.where(ramp >= 127.5, 255 - ramp, ramp))
    np.testing.assert_array_equal(run(ramp, "threshold"), np.where(ramp > 127.5, 255, 0))  # above 0.5 -> full
    np.testing.assert_array_equal(run(ramp, "invert"), 255 - ramp)
    poster = run(ramp, "posterize")  # 4 evenly spaced levels, 0 and full scale included
    assert sorted(np.unique(poster)) == [0, 85, 170, 255]
    assert np.all(np.diff(poster.ravel().astype(int)) >= 0)  # a ramp stays a staircase


def test_vignette_default_keeps_a_quarter_at_the_corners():
    flat = np.full((101, 101), 200, np.uint8)
    out = run(flat, "vignette")
    assert out[50, 50] == pytest.approx(200, abs=1)
    # the corner pixels' centres are at 0.99 of the half-diagonal: 1 - 0.75 * 0.99^2 of the brightness
    assert out[0, 0] == pytest.approx(200 * (1 - 0.75 * 0.99**2), abs=4)


def test_resize_default_halves_by_pixel_area():
    out = run(PHOTO, "resize")
    close(out, PHOTO.reshape(16, 2, 24, 2, 3).mean(axis=(1, 3)), 0.51)


def test_resize_fit_choices():
    assert run(PHOTO, "resize", width=24, height=24).shape[:2] == (24, 24)  # stretch
    assert run(PHOTO, "resize", width=24, height=24, fit="contain").shape[:2] == (16, 24)  # fit inside
    cover = run(PHOTO, "resize", width=24, height=24, fit="cover")  # fill, crop the overflow centred
    assert cover.shape[:2] == (24, 24)
    close(cover, cv2.resize(PHOTO, (36, 24), interpolation=cv2.INTER_AREA)[:, 6:30], 1)
    nearest = run(PHOTO, "resize", scale=0.37, interpolation="nearest")  # existing pixels only
    assert set(map(tuple, nearest.reshape(-1, 3))) <= set(map(tuple, PHOTO.reshape(-1, 3)))


def test_flip_choices():
    np.testing.assert_array_equal(run(PHOTO, "flip"), PHOTO[:, ::-1])  # default: horizontal
    np.testing.assert_array_equal(run(PHOTO, "flip", axis="vertical"), PHOTO[::-1])
    np.testing.assert_array_equal(run(PHOTO, "flip", axis="both"), np.rot90(PHOTO, 2))  # "rotates by 180"


def test_affine_default_shears_right_by_0_2_px_per_row():
    dot = np.zeros((40, 40), np.uint8)
    dot[20, 10] = 255
    out = run(dot, "affine", interpolation="nearest")
    assert np.argwhere(out == out.max()).tolist() == [[20, 14]]  # (x + 0.2 y, y)


def test_rotate_default_is_15_degrees_counter_clockwise():
    dot = np.zeros((41, 41), np.uint8)
    dot[20, 35] = 255  # 15 px right of the centre
    y, x = np.argwhere(run(dot, "rotate") > 100).mean(axis=0)
    angle = np.degrees(np.arctan2(20 - y, x - 20))  # up is positive on screen
    assert angle == pytest.approx(15, abs=2)


def test_hue_shift_default_turns_red_towards_yellow():
    red = np.zeros((4, 4, 3), np.uint8)
    red[..., 2] = 200
    out = run(red, "hue_shift").astype(int)[0, 0]
    assert out[2] > out[1] > 20 and out[0] <= 5  # orange: R > G > 0, no blue


def test_grain_default_has_the_documented_standard_deviation():
    grey = np.full((256, 256), 0.5, np.float32)
    noise = run(grey, "grain", size=0.0) - grey  # independent pixels: the declared amount, 0.04
    assert noise.std() == pytest.approx(0.04, rel=0.1)
    assert np.array_equal(run(grey, "grain"), run(grey, "grain"))  # "the same seed gives the same result"


def test_chroma_key_default_keys_green():
    image = np.zeros((2, 2, 3), np.uint8)
    image[0, :] = (0, 255, 0)  # green (BGR)
    image[1, :] = (0, 0, 255)  # red
    out = run(image, "chroma_key")
    assert out.shape == (2, 2, 4)
    assert (out[0, :, 3] == 0).all() and (out[1, :, 3] == 255).all()


def test_white_balance_grayworld_makes_the_channel_means_agree():
    cast = np.clip(PHOTO * np.array([0.7, 1.0, 1.3]), 0, 255).astype(np.uint8)
    means = run(cast, "white_balance").reshape(-1, 3).mean(axis=0)
    assert means.max() - means.min() < 0.05 * means.mean(), means


def test_crop_and_pad_defaults():
    np.testing.assert_array_equal(run(PHOTO, "crop"), PHOTO)  # 0 width, height: to the edges
    np.testing.assert_array_equal(run(PHOTO, "crop", x=40, y=30, width=20), PHOTO[30:, 40:])  # cut at the edge
    np.testing.assert_array_equal(run(PHOTO, "pad"), PHOTO)


# --- the border rules, as their pictures in the help show -----------------------------------

PICTURE = re.compile(r"(\w+) \(([a-z0]+)\|abcdefgh\|([a-z0]+)")


@pytest.mark.parametrize("border", ["reflect101", "replicate", "reflect", "wrap", "constant"])
def test_pad_follows_the_pictured_border_rule(border):
    pictures = {name: (left, right) for name, left, right in PICTURE.findall(helptext("pad", "border"))}
    left, right = pictures[border]
    row = np.array([[10, 20, 30, 40, 50, 60, 70, 80]], np.uint8)  # a b c d e f g h
    letters = {chr(ord("a") + i): int(v) for i, v in enumerate(row[0])} | {"0": 0}
    out = run(row, "pad", left=len(left), right=len(right), border=border)
    want = [letters[c] for c in left] + row[0].tolist() + [letters[c] for c in right]
    assert out[0].tolist() == want


@pytest.mark.parametrize("flt", [f for f in FILTERS if any(p.name == "border" for p in f.params)],
                         ids=lambda f: f.name)
def test_every_border_help_pictures_all_its_choices(flt):
    param = flt.param("border")
    assert {name for name, _, _ in PICTURE.findall(param.help)} == set(param.choices)


@pytest.mark.parametrize("flt", [f for f in FILTERS if any(p.kind == "choice" for p in f.params)],
                         ids=lambda f: f.name)
def test_every_choice_is_named_in_its_help(flt):
    for param in flt.params:
        if param.kind == "choice":
            unnamed = [c for c in param.choices if not re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", param.help)]
            assert not unnamed, f"{flt.name}.{param.name}: the help does not say what {unnamed} do"
