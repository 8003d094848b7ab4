"""masked and blend: region-limited filtering and blend modes (tests mirror cvfilters/filters/blend.py)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from scipy import ndimage

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters import masks
from cvfilters.registry.catalog import register, unregister
from tests.conftest import FIXTURES, photo, visible
from tests.filters.test_feather import write_png


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_masked_all_ones_is_the_filter_and_all_zeros_the_input(backend: str, channels: int) -> None:
    image = photo(30, 40, channels, np.uint8)
    spec = "gaussian_blur:sigma=3 | invert"
    plain = Pipeline.parse(spec)(image, backend=backend)
    ones = cvf.apply(image, "masked", mask="rect:0,0,1,1", filter=spec, feather=5, backend=backend)
    zeros = cvf.apply(image, "masked", mask="rect:0,0,0,0", filter=spec, feather=5, backend=backend)
    by_array = masks.apply_masked(image, spec, np.ones((30, 40), bool), backend=backend)
    if channels == 4:  # colour under ~zero alpha is arbitrary: compare what is visible
        for result, reference in ((ones, plain), (by_array, plain), (zeros, image)):
            assert np.abs(visible(result) - visible(reference)).max() <= 1 / 255 + 1e-9
    else:
        np.testing.assert_array_equal(ones, plain)
        np.testing.assert_array_equal(by_array, plain)
        np.testing.assert_array_equal(zeros, image)
    inverted = cvf.apply(image, "masked", mask="rect:0,0,1,1", invert=True, filter=spec, backend=backend)
    assert np.abs(visible(inverted) - visible(image)).max() <= 1 / 255 + 1e-9


ELLIPSE = "ellipse:0.5,0.5,0.3,0.35"


def ellipse_weights(feather: float) -> dict[str, np.ndarray]:
    """The (30, 40) weights of ``ELLIPSE``: rasterised at pixel centres (``hard``), and feathered
    by ``feather`` px as GIMP does (``gaussian``: sigma feather / 3.5) and as FeatherBlender does
    (``distance``: the taxicab distance inward over ``feather``, at most 1)."""
    y, x = np.mgrid[0:30, 0:40] + 0.5
    inside = ((x / 40 - 0.5) / 0.3) ** 2 + ((y / 30 - 0.5) / 0.35) ** 2 <= 1
    sigma = feather / 3.5
    return {"hard": inside.astype(np.float64),
            "gaussian": ndimage.gaussian_filter(inside.astype(np.float64), sigma, mode="nearest",
                                                truncate=math.ceil(3 * sigma) / sigma),
            "distance": np.minimum(1.0, ndimage.distance_transform_cdt(inside, metric="taxicab") / feather)}


def test_masked_weights_are_the_feathered_mask(backend: str) -> None:
    """``out = blur * w + in * (1 - w)`` with every piece built here: scipy's Gaussian (the
    automatic 33 taps of sigma 4 on float32, reflect101), the ellipse rasterised at pixel
    centres, and its feathering (GIMP's sigma r / 3.5, or FeatherBlender's taxicab ramp)."""
    image = photo(30, 40, 3, np.float32)
    blurred = np.dstack([ndimage.gaussian_filter(image[..., c].astype(np.float64), 4.0, mode="mirror", truncate=4.0)
                         for c in range(3)])
    weights = ellipse_weights(6)
    for method in ("gaussian", "distance"):
        out = cvf.apply(image, "masked", mask=ELLIPSE, filter="gaussian_blur:sigma=4", feather=6,
                        feather_method=method, backend=backend)
        w = weights[method][:, :, None]
        np.testing.assert_allclose(out, blurred * w + image * (1 - w), atol=1e-5)
        # apply_masked with the same mask given as an array, a path-free Shape and a string
        for mask in (masks.make_mask(ELLIPSE, 40, 30), masks.parse_shape(ELLIPSE), ELLIPSE):
            again = masks.apply_masked(image, "gaussian_blur:sigma=4", mask, feather=6, feather_method=method,
                                       backend=backend)
            np.testing.assert_allclose(again, out, atol=1e-6)


def test_masked_twice_with_another_feather_or_invert_gets_its_own_weights(backend: str) -> None:
    """The weight is kept on the device per size and parameters: masked steps of one size that differ
    only in feather or invert (one pipeline, a parameter sweep) must not get the first one's weight.
    Over black, ``filter=invert`` shows the weight itself."""
    black = np.zeros((30, 40, 3), np.float32)
    weights = ellipse_weights(6)
    for feather, invert, expected in ((0, False, weights["hard"]), (6, False, weights["gaussian"]),
                                      (0, True, 1 - weights["hard"]), (6, True, 1 - weights["gaussian"])):
        out = cvf.apply(black, "masked", mask=ELLIPSE, filter="invert", feather=feather, invert=invert,
                        backend=backend)
        np.testing.assert_allclose(out, np.dstack([expected] * 3), atol=1e-5, err_msg=f"{feather=} {invert=}")


def test_masked_premultiplied_mix_leaves_no_dark_fringe(backend: str) -> None:
    # A white disk on transparent black, blurred only in the right half with a feathered
    # mask: mixing straight colour would pull the black of the transparent pixels into
    # the soft edge; premultiplied mixing keeps every visible pixel white.
    yy, xx = np.mgrid[0:40, 0:40]
    alpha = np.where(np.hypot(xx - 20, yy - 20) < 10, 255, 0).astype(np.uint8)
    image = np.dstack([alpha, alpha, alpha, alpha])
    out = cvf.apply(image, "masked", mask="rect:0.5,0,0.5,1", feather=8, filter="gaussian_blur:sigma=3",
                    backend=backend)
    shown = out[..., 3] >= 8
    assert shown.sum() > (alpha > 0).sum()
    assert out[..., :3][shown].min() >= 250


def test_masked_spec_with_nested_quotes_parses_and_round_trips() -> None:
    text = ("masked:mask='ellipse:0.5,0.4,0.2,0.3',feather=20,"
            "filter='gaussian_blur:sigma=8 | pixellate:size=4',feather_method=distance")
    pipe = Pipeline.parse(text)
    step = pipe.steps[0]
    assert step.params["mask"] == "ellipse:0.5,0.4,0.2,0.3"
    assert [s.filter.name for s in masks.parse_steps(step.params["filter"])] == ["gaussian_blur", "pixellate"]
    assert Pipeline.parse(pipe.to_spec()) == pipe
    assert Pipeline.from_dict(yaml.safe_load(yaml.safe_dump(pipe.to_dict()))) == pipe
    # two levels of nesting: the outer value switches to double quotes
    nested = Pipeline.parse("masked:mask='rect:0,0,0.5,1',filter=\"masked:mask='circle:0.5,0.5,0.2',"
                            "filter='invert | grayscale'\" | invert")
    assert len(nested) == 2 and Pipeline.parse(nested.to_spec()) == nested
    image = photo(20, 30, 3, np.uint8)
    assert nested(image).shape == image.shape
    # a Pipeline object is accepted in Python and stored as its spec
    flt = cvf.get_filter("masked")
    params = flt.resolve({"mask": "rect:0,0,1,1", "filter": Pipeline.parse("invert")})
    assert params["filter"] == "invert"


def test_masked_at_files_resolve_against_the_pipeline_folder(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    mask = np.zeros((48, 64), np.uint8)
    mask[:, 32:] = 255
    write_png(folder / "half.png", mask)
    (folder / "inner.yaml").write_text(yaml.safe_dump({"version": 1, "steps": [{"filter": "invert"}]}))
    (folder / "outer.yaml").write_text(yaml.safe_dump({"version": 1, "steps": [
        {"filter": "masked", "params": {"mask": "@half.png", "filter": "@inner.yaml"}}]}))
    monkeypatch.chdir(tmp_path)  # not the pipeline's folder
    pipe = Pipeline.load(folder / "outer.yaml")
    image = photo(48, 64, 3, np.uint8)
    out = pipe(image, backend="cpu")
    np.testing.assert_array_equal(out[:, 32:], 255 - image[:, 32:])
    np.testing.assert_array_equal(out[:, :32], image[:, :32])
    # what a worker process receives (to_dict / from_dict) runs the same
    np.testing.assert_array_equal(Pipeline.from_dict(pipe.to_dict())(image), out)


def test_files_named_in_a_pipeline_file_stay_in_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    write_png(tmp_path / "outside.png", np.full((8, 8), 255, np.uint8))
    (tmp_path / "k.csv").write_text("0,1,0\n1,1,1\n0,1,0\n")
    cases = [{"mask": "@../outside.png", "filter": "invert"},
             {"mask": "rect:0,0,1,1", "filter": "convolve:kernel=@../k.csv"},
             {"mask": "rect:0,0,1,1", "filter": "@../loop.yaml"}]
    for params in cases:
        (folder / "p.yaml").write_text(yaml.safe_dump({"version": 1, "steps": [{"filter": "masked",
                                                                                 "params": params}]}))
        with pytest.raises(ParameterError, match="outside the pipeline file's folder"):
            Pipeline.load(folder / "p.yaml")
    (folder / "b.yaml").write_text(yaml.safe_dump({"version": 1, "steps": [
        {"filter": "blend", "params": {"source": "../outside.png"}}]}))
    with pytest.raises(ParameterError, match="outside the pipeline file's folder"):
        Pipeline.load(folder / "b.yaml")


def test_masked_recursion_is_bounded(tmp_path: Path) -> None:
    def write(name: str, pipeline: str) -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump({"version": 1, "steps": [
            {"filter": "masked", "params": {"mask": "rect:0,0,1,1", "filter": pipeline}}]}))
        return path

    located = r"^(\S*loop.yaml:\d+: step 1: )?"  # the pipeline file's location, when it reports one
    with pytest.raises(ParameterError, match=located + "masked: filter=@.*loop.yaml: the pipeline file includes "
                                                       "itself"):
        Pipeline.load(write("loop.yaml", "@loop.yaml"))
    for level in range(masks.MAX_NESTING + 1):
        write(f"f{level}.yaml", f"@f{level + 1}.yaml" if level < masks.MAX_NESTING else "invert")
    with pytest.raises(ParameterError, match="deeper than"):
        Pipeline.load(tmp_path / "f0.yaml")
    image = photo(10, 12, 3, np.uint8)
    np.testing.assert_array_equal(Pipeline.load(tmp_path / "f1.yaml")(image), 255 - image)
    # three levels inline cannot be quoted in one spec: refused with a hint, not written back broken
    two = "masked:mask='rect:0,0,1,1',filter=\"masked:mask='rect:0,0,1,1',filter='invert | grayscale'\""
    with pytest.raises(ParameterError, match="nested too deeply"):
        Pipeline([("masked", {"mask": "rect:0,0,1,1", "filter": two})])


def test_masked_errors_name_the_parameter(tmp_path: Path) -> None:
    flt = cvf.get_filter("masked")
    with pytest.raises(ParameterError, match="^masked: filter has a bad step: gaussian_blur: sigma="):
        flt.resolve({"mask": "rect:0,0,1,1", "filter": "gaussian_blur:sigma=-3"})
    with pytest.raises(ParameterError, match="unknown filter"):
        flt.resolve({"mask": "rect:0,0,1,1", "filter": "no_such_filter"})
    with pytest.raises(ParameterError, match="^masked: mask=.*no such file"):
        flt.resolve({"mask": str(tmp_path / "missing.png"), "filter": "invert"})
    with pytest.raises(ParameterError, match="apply_masked"):
        cvf.apply(photo(8, 8), "masked", mask=np.ones((8, 8)), filter="invert")

    @register(category="feather", summary="Test: doubles the width.", alpha="all",
              output_info=lambda params, spec: spec.with_(width=spec.width * 2))
    def widen_for_test(ctx, img):
        """Doubles the width."""
        return ctx.backend.concat([img, img], axis=1)

    try:
        with pytest.raises(ParameterError, match="must keep size"):
            cvf.apply(photo(10, 10, 3, np.uint8), "masked", mask="rect:0,0,1,1", filter="widen_for_test")
    finally:
        unregister("widen_for_test")


def test_cli_masked_with_file_mask(tmp_path: Path) -> None:
    mask = np.zeros((256, 256), np.uint8)
    cv2.ellipse(mask, (112, 60), (34, 46), 0, 0, 360, 255, -1)
    write_png(tmp_path / "face.png", mask)
    spec = "masked:mask=@face.png,feather=20,filter='gaussian_blur:sigma=8 | grayscale'"
    proc = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(FIXTURES / "astronaut.png"), "-o",
                           "out.png", "-f", spec, "--backend", "cpu"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = cv2.imread(str(tmp_path / "out.png"))
    expected = masks.apply_masked(cv2.imread(str(FIXTURES / "astronaut.png")), "gaussian_blur:sigma=8 | grayscale",
                                  tmp_path / "face.png", feather=20, backend="cpu")
    np.testing.assert_array_equal(out, expected)
    info = subprocess.run([sys.executable, "-m", "cvfilters", "info", "feather"], capture_output=True, text=True,
                          timeout=120)
    assert "v = d^2 / (s2 * size)" in info.stdout and "falloff(clip(d / radius, 0, 1))" in info.stdout


# ------------------------------------------------------------------ blend: W3C formulas
def w3c_blend(mode: str, cb: np.ndarray, cs: np.ndarray) -> np.ndarray:
    """The separable blend functions of W3C Compositing and Blending Level 1 (section 10.2)."""
    if mode == "normal":
        return cs
    if mode == "multiply":
        return cb * cs
    if mode == "screen":
        return cb + cs - cb * cs
    if mode == "overlay":  # HardLight(Cs, Cb): Multiply(Cs, 2 Cb) or Screen(Cs, 2 Cb - 1)
        b = 2 * cb - 1
        return np.where(cb <= 0.5, cs * 2 * cb, cs + b - cs * b)
    if mode == "darken":
        return np.minimum(cb, cs)
    if mode == "lighten":
        return np.maximum(cb, cs)
    if mode == "difference":
        return np.abs(cb - cs)
    if mode == "add":
        return np.minimum(1.0, cb + cs)
    d = np.where(cb <= 0.25, ((16 * cb - 12) * cb + 4) * cb, np.sqrt(cb))
    return np.where(cs <= 0.5, cb - (1 - 2 * cs) * cb * (1 - cb), cb + (2 * cs - 1) * (d - cb))


def w3c_source_over(cb, ab, cs, a_s, mode):
    """Straight colour and alpha of source-over with a blend mode (W3C section 9.1.4 / 10)."""
    cs_prime = (1 - ab) * cs + ab * w3c_blend(mode, cb, cs)
    co = a_s * cs_prime + ab * cb * (1 - a_s)
    ao = a_s + ab * (1 - a_s)
    return co / np.maximum(ao, 1e-12), ao


@pytest.mark.parametrize("mode", ["normal", "multiply", "screen", "overlay", "soft_light", "darken", "lighten",
                                  "difference", "add"])
def test_blend_modes_match_w3c(backend: str, mode: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    base = rng.random((12, 16, 3)).astype(np.float32)
    source16 = (rng.random((12, 16, 4)) * 65535).astype(np.uint16)
    path = write_png(tmp_path / "src.png", source16)
    cs = source16[..., :3].astype(np.float64) / 65535
    src_alpha = source16[..., 3:].astype(np.float64) / 65535
    out = cvf.apply(base, "blend", source=str(path), mode=mode, opacity=0.8, backend=backend)
    expected = base + 0.8 * src_alpha * (w3c_blend(mode, base.astype(np.float64), cs) - base)
    np.testing.assert_allclose(out, expected, atol=2e-6)
    # solid colour over a BGRA backdrop with varying alpha: the full source-over formula
    bgra = np.dstack([base, rng.random((12, 16, 1))]).astype(np.float32)
    color = (0.9, 0.35, 0.1)  # B, G, R; colour parameters are written R, G, B
    out = cvf.apply(bgra, "blend", color=list(color[::-1]), mode=mode, opacity=0.6, backend=backend)
    colour, alpha = w3c_source_over(bgra[..., :3].astype(np.float64), bgra[..., 3:].astype(np.float64),
                                    np.array(color)[None, None, :], 0.6, mode)
    np.testing.assert_allclose(out[..., 3], alpha[..., 0], atol=2e-6)
    np.testing.assert_allclose(out[..., :3] * out[..., 3:], colour * alpha, atol=2e-6)


def test_blend_textbook_values() -> None:
    cb = np.array([[[0.2, 0.5, 0.8]]], np.float32)
    expected = {"multiply": [0.12, 0.3, 0.48], "screen": [0.68, 0.8, 0.92], "overlay": [0.24, 0.6, 0.84],
                "darken": [0.2, 0.5, 0.6], "lighten": [0.6, 0.6, 0.8], "difference": [0.4, 0.1, 0.2],
                "add": [0.8, 1.0, 1.0], "soft_light": [0.2 + 0.2 * (((16 * 0.2 - 12) * 0.2 + 4) * 0.2 - 0.2),
                                                         0.5 + 0.2 * (math.sqrt(0.5) - 0.5),
                                                         0.8 + 0.2 * (math.sqrt(0.8) - 0.8)]}
    for mode, values in expected.items():
        out = cvf.apply(cb, "blend", color=[0.6, 0.6, 0.6], mode=mode, opacity=1.0)
        np.testing.assert_allclose(out[0, 0], values, atol=1e-6, err_msg=mode)


def test_blend_resampled_source_has_no_dark_fringe(backend: str, tmp_path: Path) -> None:
    # A small white-on-transparent badge (black under alpha 0) stretched over a larger
    # image: straight-alpha resampling would mix that black into the soft edge.
    yy, xx = np.mgrid[0:16, 0:16]
    alpha = np.clip((7.5 - np.hypot(xx - 7.5, yy - 7.5)) * 80, 0, 255).astype(np.uint8)
    badge = np.dstack([np.where(alpha > 0, 255, 0).astype(np.uint8)] * 3 + [alpha])
    path = write_png(tmp_path / "badge.png", badge)
    white = np.full((45, 45, 3), 255, np.uint8)
    out = cvf.apply(white, "blend", source=str(path), mode="normal", opacity=1.0, backend=backend)
    assert out.min() >= 254
    gray = np.full((45, 45, 3), 128, np.uint8)
    out = cvf.apply(gray, "blend", source=str(path), opacity=1.0, mask="circle:0.5,0.5,0.45", feather=6,
                    backend=backend)
    assert out.min() >= 127 and out.max() == 255
    # a white-on-transparent backdrop blended with white keeps white wherever it is visible
    backdrop = np.dstack([np.full((45, 45, 3), 255, np.uint8), cv2.resize(alpha, (45, 45))])
    over = cvf.apply(backdrop, "blend", color=[1.0, 1.0, 1.0, 0.5], opacity=1.0, mask="rect:0,0,0.5,1",
                     feather=5, backend=backend)
    assert over[..., :3][over[..., 3] > 4].min() >= 250


def test_blend_mask_and_sizes(tmp_path: Path) -> None:
    base = photo(30, 40, 3, np.float32)
    out = cvf.apply(base, "blend", color=[1.0, 1.0, 1.0], opacity=1.0, mask="rect:0,0,0.5,1")
    np.testing.assert_array_equal(out[:, :20], 1.0)
    np.testing.assert_array_equal(out[:, 20:], base[:, 20:])
    inverted = cvf.apply(base, "blend", color=[1.0], opacity=1.0, mask="rect:0,0,0.5,1", invert=True)
    np.testing.assert_array_equal(inverted[:, :20], base[:, :20])
    gray = photo(30, 40, 1, np.uint16)
    src = write_png(tmp_path / "bgr.png", photo(10, 12, 3, np.uint8))  # BGR source over gray: its luma
    out = cvf.apply(gray, "blend", source=str(src), opacity=1.0)
    expected = cv2.resize(cv2.cvtColor(photo(10, 12, 3, np.float32), cv2.COLOR_BGR2GRAY), (40, 30),
                          interpolation=cv2.INTER_LINEAR)
    assert np.abs(out / 65535 - expected).max() < 2e-5
    with pytest.raises(ParameterError, match="^blend: source=.*no such file"):
        cvf.get_filter("blend").resolve({"source": str(tmp_path / "none.png")})


def test_blend_inverted_without_a_mask_leaves_the_image(backend: str) -> None:
    """No mask is everywhere, so ``invert=true`` without one blends nowhere (W3C with ``as = 0``:
    ``out = Cb``, alpha ``ab``); catches an invert that is ignored or gives a weight of 1 or 2."""
    base = photo(12, 16, 3, np.uint8)
    out = cvf.apply(base, "blend", color=[1.0, 0.5, 0.0], opacity=0.7, invert=True, backend=backend)
    np.testing.assert_array_equal(out, base)
    bgra = photo(12, 16, 4, np.float32)
    bgra[..., 3] = np.linspace(0.2, 1.0, 16, dtype=np.float32)[None, :]
    out = cvf.apply(bgra, "blend", color=[1.0, 0.5, 0.0], mode="multiply", opacity=0.7, invert=True,
                    backend=backend)
    np.testing.assert_allclose(out, bgra, atol=1e-6)


def test_blend_twice_with_another_mask_or_source_gets_its_own_planes(backend: str, tmp_path: Path) -> None:
    """The source planes and ``as`` are kept on the device per size and parameters: blends of one
    size that differ only in the mask, its feather, feather method or invert, or in the source
    file, must not get the first one's. White at full opacity over black shows ``as`` itself."""
    black = np.zeros((30, 40, 3), np.float32)
    weights = ellipse_weights(6)
    for params, expected in (({"feather": 6}, weights["gaussian"]),
                             ({"feather": 6, "feather_method": "distance"}, weights["distance"]),
                             ({"feather": 0}, weights["hard"]), ({"feather": 0, "invert": True}, 1 - weights["hard"]),
                             ({"mask": "rect:0,0,0.5,1"}, np.repeat([[1.0] * 20 + [0.0] * 20], 30, axis=0))):
        out = cvf.apply(black, "blend", color=[1.0], opacity=1.0, **{"mask": ELLIPSE, **params}, backend=backend)
        np.testing.assert_allclose(out, np.dstack([expected] * 3), atol=1e-5, err_msg=str(params))
    for level in (64, 192):  # two source files of one size
        path = write_png(tmp_path / f"{level}.png", np.full((30, 40, 3), level, np.uint8))
        out = cvf.apply(black, "blend", source=str(path), opacity=1.0, backend=backend)
        np.testing.assert_allclose(out, level / 255, atol=1e-6, err_msg=path.name)


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_blend_on_integer_images_matches_w3c(backend: str, dtype: type, channels: int) -> None:
    """8- and 16-bit images blend in 0..1 of their full scale and come back in their own dtype
    (blending in integer units, or returning float32, would not match the W3C formula)."""
    full = np.iinfo(dtype).max
    image = photo(12, 16, channels, dtype)
    color = (0.9, 0.35, 0.1)  # B, G, R
    out = cvf.apply(image, "blend", color=list(color[::-1]), mode="multiply", opacity=0.6, backend=backend)
    assert out.dtype == dtype and out.shape == image.shape
    values, got = image.astype(np.float64) / full, out.astype(np.float64) / full
    backdrop_alpha = values[..., 3:] if channels == 4 else np.ones((12, 16, 1))
    colour, alpha = w3c_source_over(values[..., :3], backdrop_alpha, np.array(color)[None, None, :], 0.6, "multiply")
    # each stored value is rounded to the nearest level: half a level, and a level on colour * alpha
    np.testing.assert_allclose(got[..., 3:] if channels == 4 else 1.0, alpha, atol=0.5 / full + 1e-6)
    np.testing.assert_allclose(got[..., :3] * (got[..., 3:] if channels == 4 else 1.0), colour * alpha,
                               atol=1 / full + 1e-6)


# ------------------------------------------------------------------ vignette_effect


# ------------------------------------------------------------------ declarations and sources
MASK_HELP = ("where the effect applies: an image file (@mask.png: gray, or the alpha of RGBA; stretched to the "
             "image) or a quoted shape 'rect:x,y,w,h', 'ellipse:cx,cy,rx,ry', 'circle:cx,cy,r', "
             "'polygon:x1,y1,x2,y2,...' in fractions of width/height or pixels with px")


@pytest.mark.parametrize("required", [True, False])
def test_mask_params_are_declared_as_the_help_says(required: bool) -> None:
    # _mask_params runs once at import (masked: required, blend: optional); called here, each
    # declaration is checked against `cvfilters info masked` / `info blend`
    from cvfilters.filters.blend import _mask_params

    mask, feather, method, invert = (p.describe() for p in _mask_params(required))
    assert mask == {"name": "mask", "type": "mask", "default": None, "unit": "file or shape",
                    "help": MASK_HELP + ("" if required else "; none: everywhere"), "required": required,
                    "example": "ellipse:0.5,0.5,0.3,0.4"}
    assert feather == {"name": "feather", "type": "float", "default": 0.0, "min": 0.0, "max": 1000.0, "unit": "px",
                       "help": "feather radius of the mask's edge (0: the mask as it is)", "required": False,
                       "large": 300.0}
    assert method == {"name": "feather_method", "type": "choice", "default": "gaussian",
                      "choices": ["gaussian", "distance"], "unit": "", "required": False,
                      "help": "gaussian (GIMP: sigma = feather / 3.5, both ways) or distance (FeatherBlender: "
                              "min(1, distanceTransform / feather), inward)"}
    assert invert == {"name": "invert", "type": "bool", "default": False, "unit": "", "required": False,
                      "help": "use the inverse of the mask (the effect applies outside it)"}


def test_blend_solid_colour_on_gray_bgr_and_bgra() -> None:
    """Colours are written R, G, B; gray takes the BT.601 luma; one value is every channel, and
    on an image with alpha the source's alpha too (opaque without alpha)."""
    gray = cvf.apply(np.zeros((3, 4), np.float32), "blend", color=[0.2, 0.4, 0.6], opacity=1.0, backend="cpu")
    np.testing.assert_allclose(gray, 0.299 * 0.2 + 0.587 * 0.4 + 0.114 * 0.6, atol=1e-6)
    bgr = cvf.apply(np.zeros((3, 4, 3), np.float32), "blend", color=[0.5], opacity=1.0, backend="cpu")
    np.testing.assert_allclose(bgr, 0.5, atol=1e-6)
    backdrop = np.dstack([np.full((3, 4, 3), 0.25, np.float32), np.ones((3, 4, 1), np.float32)])
    bgra = cvf.apply(backdrop, "blend", color=[0.5], opacity=1.0, backend="cpu")
    # source alpha 0.5 over an opaque backdrop: 0.5 * 0.5 + 0.25 * (1 - 0.5), alpha 1
    np.testing.assert_allclose(bgra, np.broadcast_to([0.375, 0.375, 0.375, 1.0], (3, 4, 4)), atol=1e-6)


def test_blend_one_value_colour_over_bgr_then_bgra_of_one_size() -> None:
    """The source planes are kept per size and parameters: a one-value colour's alpha depends on
    the image having alpha, so a BGR image and then a BGRA one of the same size (a folder of mixed
    PNGs) each get their own (the BGRA one read the BGR one's opaque alpha, and the reverse)."""
    size = (5, 7)
    backdrop = np.dstack([np.full((*size, 3), 0.25, np.float32), np.ones((*size, 1), np.float32)])
    for _ in range(2):
        bgr = cvf.apply(np.full((*size, 3), 0.25, np.float32), "blend", color=[0.5], opacity=1.0, backend="cpu")
        np.testing.assert_allclose(bgr, 0.5, atol=1e-6)
        bgra = cvf.apply(backdrop, "blend", color=[0.5], opacity=1.0, backend="cpu")
        np.testing.assert_allclose(bgra[..., :3], 0.5 * 0.5 + 0.25 * 0.5, atol=1e-6)
        np.testing.assert_allclose(bgra[..., 3], 1.0, atol=1e-6)


def test_blend_gray_and_array_sources() -> None:
    """A gray source over BGR is replicated, over gray used as it is; arrays work as files do."""
    ramp = np.linspace(0, 1, 6 * 8, dtype=np.float32).reshape(6, 8)
    stretched = cv2.resize(ramp, (16, 12), interpolation=cv2.INTER_LINEAR)
    out = cvf.apply(np.zeros((12, 16, 3), np.float32), "blend", source=ramp, opacity=1.0, backend="cpu")
    np.testing.assert_allclose(out, np.dstack([stretched] * 3), atol=1e-6)
    same = cvf.apply(np.zeros((6, 8), np.float32), "blend", source=ramp, opacity=1.0, backend="cpu")
    np.testing.assert_allclose(same, ramp, atol=1e-6)
    colour = photo(6, 8, 3, np.float32)
    np.testing.assert_allclose(cvf.apply(np.zeros((6, 8, 3), np.float32), "blend", source=colour, opacity=1.0,
                                         backend="cpu"), colour, atol=1e-6)


def test_blend_float_source_is_clipped_to_0_1() -> None:
    source = np.full((4, 5, 3), 1.5, np.float32)
    source[:2] = -0.5
    out = cvf.apply(np.full((4, 5, 3), 0.5, np.float32), "blend", source=source, opacity=1.0, backend="cpu")
    np.testing.assert_array_equal(out, np.clip(source, 0.0, 1.0))


@pytest.mark.parametrize(("size", "source_size"), [
    ((8, 8), (24, 24)),   # shrinks both ways: block means
    ((8, 8), (24, 8)),    # taller only: still area
    ((8, 8), (8, 24)),    # wider only
    ((12, 4), (36, 8)),   # taller than the image is wide
    ((6, 3), (6, 9)),     # an image 3 px wide (as wide as the colour channels)
    ((8, 8), (4, 24)),    # shrinks one way, grows the other: bilinear
    ((8, 8), (5, 5)),     # grows both ways: bilinear
])
def test_blend_source_is_resampled_premultiplied(size: tuple[int, int], source_size: tuple[int, int]) -> None:
    """A source of another size is stretched on premultiplied colour and alpha: ``INTER_AREA``
    (block means, no aliasing) where it shrinks both ways, else bilinear (cv2 directly, float32).
    Over black the result is the resampled premultiplied colour, over white ``1 - a + that``."""
    rng = np.random.default_rng(11)
    source = rng.random((*source_size, 4)).astype(np.float32)
    source[..., 3] = 0.2 + 0.8 * source[..., 3]
    shrink = size[0] <= source_size[0] and size[1] <= source_size[1]
    inter = cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
    premul = cv2.resize(source[..., :3] * source[..., 3:], size[::-1], interpolation=inter)
    alpha = cv2.resize(np.ascontiguousarray(source[..., 3]), size[::-1], interpolation=inter)[..., None]
    over_black = cvf.apply(np.zeros((*size, 3), np.float32), "blend", source=source, opacity=1.0, backend="cpu")
    np.testing.assert_allclose(over_black, premul, atol=1e-5)
    over_white = cvf.apply(np.ones((*size, 3), np.float32), "blend", source=source, opacity=1.0, backend="cpu")
    np.testing.assert_allclose(over_white, 1.0 - alpha + premul, atol=1e-5)
