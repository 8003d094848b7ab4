"""Linear light (issue #27): filters that mix light run on linear values when asked.

References: the sRGB formulas of IEC 61966-2-1 written out here in numpy, and a gamma 2.2
curve for a profile built in the test through LittleCMS.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.transfer import SRGB

CHECKER = np.dstack([(np.indices((64, 64)).sum(0) % 2 * 255).astype(np.uint8)] * 3)
CENTRE = (slice(24, 40), slice(24, 40))


def srgb_encode(linear: float) -> float:
    """IEC 61966-2-1, written out independently of cvfilters."""
    return 12.92 * linear if linear <= 0.0031308 else 1.055 * linear ** (1 / 2.4) - 0.055


def test_checkerboard_blurs_to_128_by_default_and_188_in_linear_light() -> None:
    expected_linear = round(255 * srgb_encode(0.5))  # 187.5 -> 188
    plain = cvf.apply(CHECKER, "gaussian_blur:sigma=6", backend="cpu")
    reference = cv2.GaussianBlur(CHECKER, (0, 0), 6, borderType=cv2.BORDER_REFLECT_101)
    assert np.abs(plain[CENTRE].astype(int) - reference[CENTRE]).max() <= 1
    assert 127 <= plain[CENTRE].min() and plain[CENTRE].max() <= 128
    linear = cvf.apply(CHECKER, "gaussian_blur:sigma=6", backend="cpu", linear=True)
    assert 187 <= linear[CENTRE].min() and linear[CENTRE].max() <= 188
    assert abs(float(linear[CENTRE].mean()) - expected_linear) <= 1


@pytest.mark.parametrize("spec", ["resize:scale=0.5", "box_blur:size=8", "pixellate:size=8", "rotate:angle=45"])
def test_other_light_mixing_filters_average_light(spec: str) -> None:
    out = cvf.apply(CHECKER, spec, backend="cpu", linear=True).astype(float)
    plain = cvf.apply(CHECKER, spec, backend="cpu").astype(float)
    inner = out[out.shape[0] // 4:3 * out.shape[0] // 4, out.shape[1] // 4:3 * out.shape[1] // 4]
    assert inner.mean() > plain.mean() + 30  # the mixed light is brighter than the mixed codes


def test_set_defaults_and_filter_objects_take_linear() -> None:
    try:
        cvf.set_defaults(linear=True)
        assert cvf.get_defaults()["linear"] is True
        assert cvf.apply(CHECKER, "gaussian_blur:sigma=6", backend="cpu")[CENTRE].min() >= 187
        assert cvf.apply(CHECKER, "gaussian_blur:sigma=6", backend="cpu", linear=False)[CENTRE].max() <= 128
    finally:
        cvf.set_defaults(linear=False)
    blur = cvf.get_filter("gaussian_blur")
    assert blur(CHECKER, sigma=6, backend="cpu", linear=True)[CENTRE].min() >= 187
    with pytest.raises(ValueError, match="linear"):
        cvf.set_defaults(linear="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_identity_chain_round_trips_within_one_level(dtype: type, channels: int) -> None:
    rng = np.random.default_rng(7)
    top = np.iinfo(dtype).max
    image = rng.integers(0, top + 1, (33, 47, channels), dtype=dtype).squeeze()
    if channels == 4:
        image[..., 3] = top  # opaque: un-premultiplying transparent pixels is a loss of its own
    out = cvf.apply(image, "flip | flip | resize:scale=1 | rotate:angle=0", backend="cpu", linear=True)
    assert out.dtype == image.dtype and out.shape == image.shape
    assert np.abs(out.astype(np.int64) - image).max() <= 1


def test_colour_filters_ignore_linear_and_alpha_is_not_decoded() -> None:
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (20, 30, 4), dtype=np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, "invert", linear=True), cvf.apply(image, "invert"))
    blurred = cvf.apply(image, "gaussian_blur:sigma=2", backend="cpu", linear=True)
    plain = cvf.apply(image, "gaussian_blur:sigma=2", backend="cpu")
    assert np.abs(blurred[..., 3].astype(int) - plain[..., 3]).max() <= 1  # coverage, not light


def test_transfer_is_the_srgb_formula_and_keeps_hdr_values() -> None:
    codes = np.linspace(-0.5, 2.0, 251, dtype=np.float32)
    a = np.abs(codes.astype(np.float64))
    decoded = np.sign(codes) * np.where(a <= 0.04045, a / 12.92, ((a + 0.055) / 1.055) ** 2.4)
    np.testing.assert_allclose(SRGB.decode(codes), decoded, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(SRGB.encode(SRGB.decode(codes)), codes, atol=1e-5)
    hdr = np.full((16, 16, 3), 4.0, np.float32)
    assert np.allclose(cvf.apply(hdr, "gaussian_blur", linear=True), 4.0, atol=1e-4)


def test_profile_transfer_is_the_profiles_curve() -> None:
    imagecodecs = pytest.importorskip("imagecodecs", reason="profile transfer functions are sampled with imagecodecs")
    from cvfilters.io.colour import transfer_of

    gamma22 = imagecodecs.cms_profile("rgb", whitepoint=[0.3127, 0.329, 1.0], gamma=2.2,
                                      primaries=[0.64, 0.33, 1, 0.3, 0.6, 1, 0.15, 0.06, 1])
    transfer = transfer_of(gamma22)
    codes = np.linspace(0, 1, 101, dtype=np.float32)
    np.testing.assert_allclose(transfer.decode(codes), codes.astype(np.float64) ** 2.2, atol=2e-4)
    out = cvf.apply(CHECKER, "gaussian_blur:sigma=6", backend="cpu", linear=transfer)
    assert abs(float(out[CENTRE].mean()) - 255 * 0.5 ** (1 / 2.2)) <= 1  # 186, not sRGB's 188


def test_cli_linear(tmp_path: Path) -> None:
    source, target = tmp_path / "checker.png", tmp_path / "out.png"
    cv2.imwrite(str(source), CHECKER)
    for flag, low, high in (([], 127, 128), (["--linear"], 187, 188)):
        done = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(source), "-o", str(target),
                               "-f", "gaussian_blur:sigma=6", "--backend", "cpu", *flag],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        centre = cv2.imread(str(target))[CENTRE]
        assert low <= centre.min() and centre.max() <= high
