"""bloom, grain, chroma_key, crystallize, pointillize and hex_pixellate against numpy/scipy references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.filters.looks import cell_points, hex_labels, voronoi
from tests.conftest import CHANNELS, DTYPES, full_scale, photo, to_dtype


# ---------------------------------------------------------------- bloom
def test_bloom_is_a_screened_blur_of_the_highlights(backend: str) -> None:
    image = photo(40, 50, 3, np.float32)
    out = cvf.apply(image, "bloom", radius=3.0, intensity=0.8, threshold=0.4, backend=backend)
    bright = np.clip((image.astype(np.float64) - 0.4) / 0.6, 0, 1)
    glow = 0.8 * np.dstack([ndimage.gaussian_filter(bright[..., c], 3.0, mode="nearest", truncate=3.0)
                            for c in range(3)])
    np.testing.assert_allclose(out, np.clip(image + glow - image * glow, 0, 1), atol=2e-4)
    np.testing.assert_allclose(cvf.apply(image, "bloom", intensity=0.0, backend=backend), image, atol=1e-6)


# ---------------------------------------------------------------- grain
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_grain_is_seeded_and_has_the_asked_spread(dtype: type) -> None:
    image = to_dtype(np.full((80, 90, 3), 128, np.uint8), dtype)
    first = cvf.apply(image, "grain", amount=0.05, seed=7, backend="cpu")
    np.testing.assert_array_equal(first, cvf.apply(image, "grain", amount=0.05, seed=7, backend="cpu"))
    assert not np.array_equal(first, cvf.apply(image, "grain", amount=0.05, seed=8, backend="cpu"))
    noise = (first.astype(np.float64) - image) / full_scale(dtype)
    assert abs(noise.std() - 0.05) < 0.005 and abs(noise.mean()) < 0.005
    np.testing.assert_array_equal(noise[..., 0], noise[..., 2])  # monochrome grain
    colour = cvf.apply(image, "grain", monochrome=False, backend="cpu").astype(np.float64)
    assert np.abs(colour[..., 0] - colour[..., 2]).mean() > 0
    clumped = (cvf.apply(image, "grain", size=3.0, backend="cpu").astype(np.float64) - image)[..., 0]
    # a larger grain correlates neighbours: the lag-1 autocorrelation rises from about 0 (per-pixel noise)
    fine = (cvf.apply(image, "grain", size=0.0, backend="cpu").astype(np.float64) - image)[..., 0]
    assert np.corrcoef(clumped[:, :-1].ravel(), clumped[:, 1:].ravel())[0, 1] > \
        np.corrcoef(fine[:, :-1].ravel(), fine[:, 1:].ravel())[0, 1] + 0.3


# ---------------------------------------------------------------- chroma key
def ycbcr(bgr: np.ndarray) -> np.ndarray:
    """BT.601 Y, Cb, Cr by the standard matrix (RGB order rows), from BGR 0..1."""
    rgb = bgr[..., ::-1]
    matrix = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]])
    return rgb @ matrix.T


@pytest.mark.parametrize("channels", CHANNELS)
def test_chroma_key_turns_the_key_transparent_and_adds_alpha(channels: int) -> None:
    image = photo(30, 40, channels, np.uint8)
    out = cvf.apply(image, "chroma_key", backend="cpu")
    assert out.shape == (30, 40, 4)
    if channels == 4:
        assert np.all(out[..., 3] <= image[..., 3])


def test_chroma_key_example_keys_out_the_astronaut_suit() -> None:
    # The gallery's tile: the example (R, G, B) is the suit's orange.
    example = cvf.get_filter("chroma_key").param("color").example
    out = cvf.apply(photo(64, 64, 3, np.uint8), "chroma_key", color=example, backend="cpu")
    assert 0.1 < (out[..., 3] == 0).mean() < 0.6


def test_chroma_key_alpha_follows_the_chroma_distance() -> None:
    bgr = np.random.default_rng(1).random((20, 30, 3))
    bgr[:5] = [0.1, 0.9, 0.15]  # a green screen
    image = bgr.astype(np.float32)
    out = cvf.apply(image, "chroma_key", color=[0.0, 1.0, 0.0], tolerance=0.2, softness=0.1, spill=0.0,
                    backend="cpu")
    distance = np.hypot(*(ycbcr(bgr)[..., 1:] - ycbcr(np.array([0.0, 1.0, 0.0]))[1:]).transpose(2, 0, 1))
    t = np.clip((distance - 0.2) / 0.1, 0, 1)
    np.testing.assert_allclose(out[..., 3], t * t * (3 - 2 * t), atol=1e-5)
    np.testing.assert_allclose(out[..., :3], image, atol=1e-6)  # no spill: colour kept
    assert np.all(out[:5, :, 3] == 0)


def test_chroma_key_spill_removes_the_key_cast_and_keeps_luma() -> None:
    greenish = np.array([[[0.45, 0.65, 0.45]]], np.float32)
    out = cvf.apply(greenish, "chroma_key", spill=1.0, backend="cpu")[0, 0]
    before, after = ycbcr(greenish[0, 0].astype(np.float64)), ycbcr(out[:3].astype(np.float64))
    np.testing.assert_allclose(after[0], before[0], atol=1e-6)  # luma kept
    assert np.hypot(*after[1:]) < 0.2 * np.hypot(*before[1:])  # the green cast is gone
    assert out[3] == 1.0


# ---------------------------------------------------------------- Voronoi cells
def brute_force_labels(width: int, height: int, points: np.ndarray) -> np.ndarray:
    y, x = np.mgrid[0:height, 0:width]
    distance = (x[..., None] - points[:, 0]) ** 2 + (y[..., None] - points[:, 1]) ** 2
    return np.argmin(distance, axis=-1)  # ties: the lowest index


@pytest.mark.parametrize(("size", "spacing", "seed"), [((37, 23), 6.0, 0), ((50, 41), 9.5, 3), ((5, 3), 20.0, 1)])
def test_voronoi_labels_are_the_nearest_point(size, spacing: float, seed: int) -> None:
    width, height = size
    labels, _ = voronoi(width, height, spacing, seed)
    np.testing.assert_array_equal(labels, brute_force_labels(width, height, cell_points(width, height, spacing, seed)))


@pytest.mark.parametrize("channels", CHANNELS)
def test_crystallize_copies_each_cell_points_colour(backend: str, channels: int) -> None:
    image = photo(30, 40, channels, np.uint16)
    out = cvf.apply(image, "crystallize", radius=7.0, seed=2, backend=backend)
    points = cell_points(40, 30, 7.0, 2).astype(int)
    labels = brute_force_labels(40, 30, cell_points(40, 30, 7.0, 2))
    np.testing.assert_array_equal(out, image[points[labels, 1], points[labels, 0]])
    assert not np.array_equal(out, cvf.apply(image, "crystallize", radius=7.0, seed=3, backend=backend))


def test_pointillize_draws_dots_on_the_paper(backend: str) -> None:
    image = photo(30, 40, 3, np.uint8)
    out = cvf.apply(image, "pointillize", radius=8.0, dot=0.4, fill="blue", seed=5, backend=backend)
    points = cell_points(40, 30, 8.0, 5)
    labels = brute_force_labels(40, 30, points)
    y, x = np.mgrid[0:30, 0:40]
    inside = (x - points[labels, 0]) ** 2 + (y - points[labels, 1]) ** 2 <= (0.4 * 8.0) ** 2
    spots = points.astype(int)[labels]
    np.testing.assert_array_equal(out[inside], image[spots[..., 1], spots[..., 0]][inside])
    assert np.all(out[~inside] == [255, 0, 0])  # BGR


# ---------------------------------------------------------------- hexagons
def test_hex_labels_are_the_nearest_lattice_centre() -> None:
    size, width, height = 5.0, 45, 33
    labels = hex_labels(width, height, size)
    centres = [(c * np.sqrt(3) * size + (r % 2) * np.sqrt(3) * size / 2, r * 1.5 * size)
               for r in range(-1, 12) for c in range(-1, 12)]
    nearest = brute_force_labels(width, height, np.array(centres))
    # the same partition (labels are numbered differently): each region maps to one centre
    pairs = set(zip(labels.ravel().tolist(), nearest.ravel().tolist(), strict=True))
    assert len(pairs) == len(np.unique(labels)) == len(np.unique(nearest))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_hex_pixellate_fills_each_hexagon_with_its_mean(dtype: type) -> None:
    image = photo(30, 40, 3, dtype)
    out = cvf.apply(image, "hex_pixellate", size=4.0, backend="cpu")
    labels = hex_labels(40, 30, 4.0)
    for label in np.unique(labels)[::7]:
        region = labels == label
        expected = image[region].astype(np.float64).mean(axis=0)
        tolerance = 0.5 if np.dtype(dtype).kind == "u" else 1e-6
        np.testing.assert_allclose(out[region], np.broadcast_to(expected, out[region].shape), atol=tolerance)


# ------------------------------------------------------------------ chroma key distances (issue #27)
def _cat_on_white() -> tuple[np.ndarray, np.ndarray]:
    """The cat photo pasted on a white page: (image, mask of the photo)."""
    import cv2

    from tests.conftest import FIXTURES

    cat = cv2.imread(str(FIXTURES / "chelsea.jpg"))
    page = np.full((cat.shape[0] + 40, cat.shape[1] + 40, 3), 255, np.uint8)
    page[20:-20, 20:-20] = cat
    inside = np.zeros(page.shape[:2], bool)
    inside[20:-20, 20:-20] = True
    return page, inside


def test_white_key_removes_the_white_background_and_keeps_the_photo() -> None:
    page, inside = _cat_on_white()
    out = cvf.apply(page, "chroma_key:color=white", backend="cpu")
    assert (out[..., 3][~inside] == 0).all()  # the page is gone
    assert (out[..., 3][inside] == 0).mean() < 0.01  # the cat stays (chroma distance: 88% of it went)
    chroma_only = cvf.apply(page, "chroma_key:color=white,distance=chroma", backend="cpu")
    assert (chroma_only[..., 3][inside] == 0).mean() > 0.5  # why neutral keys need a lightness-aware distance


@pytest.mark.parametrize("key", ["black", "grey"])
def test_other_neutral_keys_keep_most_of_a_photo(key: str) -> None:
    page, inside = _cat_on_white()
    out = cvf.apply(page, "chroma_key", color=key, backend="cpu")
    assert (out[..., 3][inside] == 0).mean() < 0.15


def test_key_distances_match_their_formulas() -> None:
    import cv2

    rng = np.random.default_rng(5)
    image = rng.random((20, 30, 3)).astype(np.float32)
    key_rgb = (0.9, 0.85, 0.8)
    key_bgr = np.array(key_rgb[::-1])
    for distance, reference in (
        ("rgb", np.linalg.norm(image - key_bgr, axis=-1) / np.sqrt(3)),
        ("lab", np.linalg.norm(cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
                               - cv2.cvtColor(key_bgr.astype(np.float32)[None, None], cv2.COLOR_BGR2Lab),
                               axis=-1) / 100),
    ):
        out = cvf.apply(image, "chroma_key", color=key_rgb, tolerance=0.2, softness=0.0, spill=0.0,
                        distance=distance, backend="cpu")
        decided = np.abs(reference - 0.2) > 1e-4
        np.testing.assert_array_equal(out[..., 3][decided], (reference > 0.2)[decided].astype(np.float32))


def test_coloured_keys_still_use_chroma() -> None:
    image = photo(30, 40, 3, np.uint8)
    image[:, :10] = (30, 220, 40)  # a green screen strip (BGR)
    for key in ("lime", "#20e030", "blue"):
        auto = cvf.apply(image, "chroma_key", color=key, backend="cpu")
        np.testing.assert_array_equal(auto, cvf.apply(image, "chroma_key", color=key, distance="chroma", backend="cpu"))
    assert (cvf.apply(image, "chroma_key", backend="cpu")[:, :10, 3] == 0).all()  # the default green key


# --- from the survivors of the looks mutation run (docs/mutation.md) ---------------------------


def test_seed_is_declared_as_the_help_says() -> None:
    # _seed_param runs once at import (for grain, crystallize, pointillize); called here, its
    # declaration is checked against `cvfilters info grain`
    from cvfilters.filters.looks import _seed_param

    param = _seed_param()
    assert (param.name, param.kind, param.default, param.min, param.max, param.help) == (
        "seed", "int", 0, 0, 2**31 - 1, "random seed: the same seed gives the same result")


def test_from_chroma_is_the_bt601_ycbcr_inverse() -> None:
    from cvfilters.filters.looks import from_chroma

    bgr = np.random.default_rng(3).random((5, 7, 3))
    b, g, r = bgr[..., 0], bgr[..., 1], bgr[..., 2]
    y = 0.114 * b + 0.587 * g + 0.299 * r  # BT.601, written out
    cb, cr = (b - y) / 1.772, (r - y) / 1.402
    np.testing.assert_allclose(from_chroma(y, cb, cr), bgr, atol=1e-12)
