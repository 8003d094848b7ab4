"""bloom, grain, chroma_key, crystallize, pointillize and hex_pixellate against numpy/scipy references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.filters.looks import cell_points, hex_labels, voronoi
from tests.conftest import CHANNELS, DTYPES, full_scale, photo, to_dtype


# ---------------------------------------------------------------- bloom
def screened_glow(image: np.ndarray, radius: float, intensity: float, threshold: float) -> np.ndarray:
    """The documented bloom before its final clip: the image screened with the blurred highlights."""
    bright = np.clip((image.astype(np.float64) - threshold) / (1 - threshold), 0, 1)
    glow = intensity * np.dstack([ndimage.gaussian_filter(bright[..., c], radius, mode="nearest", truncate=3.0)
                                  for c in range(3)])
    return image + glow - image * glow


def test_bloom_is_a_screened_blur_of_the_highlights(backend: str) -> None:
    image = photo(40, 50, 3, np.float32)
    out = cvf.apply(image, "bloom", radius=3.0, intensity=0.8, threshold=0.4, backend=backend)
    np.testing.assert_allclose(out, np.clip(screened_glow(image, 3.0, 0.8, 0.4), 0, 1), atol=2e-4)
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


def reference_grain(height: int, width: int, channels: int, size: float, seed: int, monochrome: bool) -> np.ndarray:
    """grain_field as its docstring says: one seeded normal draw (H, W, planes) in float32, each plane blurred
    by a Gaussian of sigma `size` (scipy, mirrored edges as OpenCV's default, kernel radius 3 sigma), over
    the std."""
    planes = 1 if monochrome or channels == 1 else channels
    noise = np.random.default_rng(seed).standard_normal((height, width, planes)).astype(np.float32)
    noise = noise.astype(np.float64)
    if size > 0:
        noise = np.dstack([ndimage.gaussian_filter(noise[..., p], size, mode="mirror", truncate=3.0)
                           for p in range(planes)])
    noise = noise / noise.std()
    return noise[..., 0] if channels == 1 else np.repeat(noise, channels // planes, axis=2)


@pytest.mark.parametrize(("channels", "size", "monochrome"), [
    (1, 0.8, True), (3, 0.8, True), (3, 1.3, False), (2, 0.4, False), (3, 0.0, False), (1, 0.0, True),
])
def test_grain_field_is_the_seeded_draw_blurred_and_rescaled(channels: int, size: float, monochrome: bool) -> None:
    from cvfilters.filters.looks import grain_field

    field = grain_field(19, 23, channels, size, 11, monochrome)
    expected = reference_grain(19, 23, channels, size, 11, monochrome)
    assert field.dtype == np.float32 and field.shape == expected.shape
    np.testing.assert_allclose(field, expected, rtol=0, atol=2e-5)  # float32 blur against scipy's float64
    np.testing.assert_array_equal(field, grain_field(19, 23, channels, size, 11, monochrome))  # the same seed


def test_grain_field_of_one_pixel_is_its_draw() -> None:
    from cvfilters.filters.looks import grain_field

    # one value has no spread to divide by: it stays the seed's first normal draw
    draw = np.float32(np.random.default_rng(4).standard_normal())
    np.testing.assert_allclose(grain_field(1, 1, 1, 0.8, 4, True), [[draw]], rtol=1e-6)
    np.testing.assert_allclose(cvf.apply(np.full((1, 1), 0.5, np.float32), "grain", amount=0.01, seed=4,
                                         backend="cpu"), [[0.5 + 0.01 * draw]], rtol=0, atol=1e-6)


def test_a_hard_edge_keys_out_exactly_the_key_colour() -> None:
    # tolerance 0, softness 0: a distance of exactly 0 (the key itself) is keyed out, anything else stays
    pixels = np.array([[[0.0, 1.0, 0.0], [0.0, 0.98, 0.0], [0.5, 0.5, 0.5]]], np.float32)
    out = cvf.apply(pixels, "chroma_key", color=(0.0, 1.0, 0.0), tolerance=0.0, softness=0.0, spill=0.0,
                    distance="rgb", backend="cpu")
    np.testing.assert_array_equal(out[0, :, 3], [0.0, 1.0, 1.0])


def test_lab_distance_is_delta_e_over_100() -> None:
    import cv2

    image = np.random.default_rng(8).random((12, 14, 3)).astype(np.float32)
    key_rgb = (0.2, 0.6, 0.3)
    delta_e = np.linalg.norm(cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
                             - cv2.cvtColor(np.array([[key_rgb[::-1]]], np.float32), cv2.COLOR_BGR2Lab), axis=-1)
    out = cvf.apply(image, "chroma_key", color=key_rgb, tolerance=0.0, softness=1.5, spill=0.0, distance="lab",
                    backend="cpu")
    t = np.clip(delta_e / 100 / 1.5, 0, 1)
    np.testing.assert_allclose(out[..., 3], t * t * (3 - 2 * t), rtol=0, atol=1e-5)


def spill_reference(bgr: np.ndarray, key_bgr: np.ndarray, spill: float) -> np.ndarray:
    """Spill suppression written out in BT.601 YCbCr: remove `spill` x the chroma along the key's, keep Y."""
    matrix = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]])
    ycc, key = ycbcr(bgr), ycbcr(key_bgr)
    unit = key[1:] / np.hypot(*key[1:])
    along = np.maximum(ycc[..., 1:] @ unit, 0.0) * spill
    ycc[..., 1:] -= along[..., None] * unit
    return (ycc @ np.linalg.inv(matrix).T)[..., ::-1]


def test_key_out_defaults_to_auto_and_suppresses_a_share_of_the_spill_then_clips() -> None:
    from cvfilters.filters.looks import key_out

    bgr = np.array([[0.0, 1.0, 1.0], [0.45, 0.65, 0.45], [0.2, 0.9, 0.0], [0.9, 0.1, 0.5], [0.0, 0.8, 0.6]])
    key = (0.0, 1.0, 0.0)  # BGR green
    colour, alpha = key_out(bgr, key, 0.1, 0.3, 0.5)  # no distance: auto, which is chroma for a coloured key
    unclipped = spill_reference(bgr, np.array(key), 0.5)
    assert unclipped.max() > 1.1  # yellow's red passes full scale once half its green cast is gone
    np.testing.assert_allclose(colour, np.clip(unclipped, 0, 1), rtol=0, atol=1e-6)
    distance = np.hypot(*(ycbcr(bgr)[..., 1:] - ycbcr(np.array(key))[1:]).T)
    t = np.clip((distance - 0.1) / 0.3, 0, 1)
    np.testing.assert_allclose(alpha, t * t * (3 - 2 * t), rtol=0, atol=1e-6)
    # a cyan key takes green out of a blue with a little green: below 0 before the clip
    blue = np.array([[1.0, 0.1, 0.0]])
    unclipped = spill_reference(blue, np.array([1.0, 1.0, 0.0]), 1.0)
    assert unclipped.min() < -0.04
    np.testing.assert_allclose(key_out(blue, (1.0, 1.0, 0.0), 0.1, 0.1, 1.0)[0], np.clip(unclipped, 0, 1),
                               rtol=0, atol=1e-6)


def test_a_neutral_key_has_no_spill_direction() -> None:
    image = np.random.default_rng(2).random((6, 7, 3)).astype(np.float32)
    for key in ("white", "black", "grey"):
        out = cvf.apply(image, "chroma_key", color=key, spill=1.0, backend="cpu")
        np.testing.assert_array_equal(out[..., :3], image)


def test_chroma_key_declares_four_channels() -> None:
    from cvfilters.core.context import ImageInfo
    from cvfilters.engine.pipeline import Pipeline
    from cvfilters.registry import catalog

    spec = ImageInfo(height=6, width=8, channels=3, dtype=np.dtype(np.uint16))
    params = {"color": (0.0, 1.0, 0.0), "tolerance": 0.15, "softness": 0.1, "spill": 0.5, "distance": "auto"}
    out = catalog.get("chroma_key").output_info(params, spec)
    assert (out.height, out.width, out.channels, out.dtype) == (6, 8, 4, np.dtype(np.uint16))
    # the next step sees the alpha channel: vibrance keeps it as it is
    image = photo(6, 8, 3, np.uint16)
    result, _ = Pipeline.parse("chroma_key | vibrance:amount=0").run(image, backend="cpu")
    np.testing.assert_array_equal(result, cvf.apply(image, "chroma_key", backend="cpu"))


def test_pointillize_maps_send_every_pixel_outside_a_dot_off_the_image() -> None:
    from cvfilters.filters.looks import cell_maps

    # spacing 10, dot 0.5: a dot of radius exactly 5 px, whose rim (offsets (3, 4), (5, 0)...) is inside it
    points = cell_points(40, 30, 10.0, 6)
    labels = brute_force_labels(40, 30, points)
    y, x = np.mgrid[0:30, 0:40]
    inside = (x - points[labels, 0]) ** 2 + (y - points[labels, 1]) ** 2 <= 25
    map_x, map_y = cell_maps(40, 30, 10.0, 6, 0.5)
    np.testing.assert_array_equal(map_x[inside], points[labels, 0][inside])
    np.testing.assert_array_equal(map_y[inside], points[labels, 1][inside])
    assert np.all((map_x[~inside] < -30) & (map_y[~inside] < -30))  # both coordinates far off the image
    image = photo(30, 40, 3, np.uint8)
    out = cvf.apply(image, "pointillize", radius=10.0, dot=0.5, fill="white", seed=6, backend="cpu")
    spots = points.astype(int)[labels]
    np.testing.assert_array_equal(out[inside], image[spots[..., 1], spots[..., 0]][inside])
    assert np.all(out[~inside] == 255)


def test_pointillize_paper_with_alpha_is_not_premultiplied() -> None:
    # alpha "all": the paper's colour is stored as given, with its alpha beside it
    image = photo(20, 30, 4, np.uint8)
    out = cvf.apply(image, "pointillize", radius=8.0, dot=0.2, fill=(1.0, 0.0, 0.0, 0.5), seed=1, backend="cpu")
    points = cell_points(30, 20, 8.0, 1)
    labels = brute_force_labels(30, 20, points)
    y, x = np.mgrid[0:20, 0:30]
    outside = (x - points[labels, 0]) ** 2 + (y - points[labels, 1]) ** 2 > (0.2 * 8.0) ** 2
    assert np.all(out[outside] == [0, 0, 255, 128])  # BGRA; 0.5 x 255 rounds to 128


# --- from the decorated-function survivors (sixth session, docs/mutation.md) --------------------


def test_a_strong_bloom_stops_at_full_scale(backend: str) -> None:
    # intensity above 1: the screen of a dark pixel and its glow passes 1 before the final clip
    image = photo(12, 14, 3, np.float32)
    out = cvf.apply(image, "bloom", radius=2.0, intensity=3.0, threshold=0.2, backend=backend)
    screened = screened_glow(image, 2.0, 3.0, 0.2)
    assert screened.max() > 1.5
    np.testing.assert_allclose(out, np.clip(screened, 0, 1), rtol=0, atol=2e-4)


def test_grain_on_bright_float_stops_at_full_scale() -> None:
    image = np.full((15, 17, 3), 0.9, np.float32)
    out = cvf.apply(image, "grain", amount=0.2, size=0.8, seed=3, backend="cpu")
    unclipped = 0.9 + 0.2 * reference_grain(15, 17, 3, 0.8, 3, True)
    assert unclipped.max() > 1.2
    np.testing.assert_allclose(out, np.clip(unclipped, 0, 1), rtol=0, atol=2e-5)


def test_the_cached_voronoi_cannot_be_changed_by_a_caller() -> None:
    # lru_cache hands every caller the same arrays: a write would change every later crystallize
    labels, best = voronoi(23, 17, 6.0, 4)
    points = cell_points(23, 17, 6.0, 4)
    y, x = np.mgrid[0:17, 0:23]
    np.testing.assert_array_equal(best, (x - points[labels, 0]) ** 2 + (y - points[labels, 1]) ** 2)
    for array in (labels, best):
        with pytest.raises(ValueError, match="read-only"):
            array[0, 0] = 0


@pytest.mark.parametrize(("width", "height", "size"), [(45, 33, 5.0), (11, 9, 0.5), (8, 13, 0.3), (3, 40, 1.0)])
def test_hex_labels_partition_at_any_size(width: int, height: int, size: float) -> None:
    # hex_labels is public and takes any circumradius (the filter's size starts at 1)
    labels = hex_labels(width, height, size)
    step_x, step_y = np.sqrt(3) * size, 1.5 * size
    rows, cols = int(height / step_y) + 3, int(width / step_x) + 3
    centres = [(c * step_x + (r % 2) * step_x / 2, r * step_y) for r in range(-1, rows) for c in range(-1, cols)]
    nearest = brute_force_labels(width, height, np.array(centres))
    pairs = set(zip(labels.ravel().tolist(), nearest.ravel().tolist(), strict=True))
    assert len(pairs) == len(np.unique(labels)) == len(np.unique(nearest))
    np.testing.assert_array_equal(np.unique(labels), np.arange(len(pairs)))  # dense indices 0..n-1
    assert not labels.flags.writeable


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_chroma_key_keeps_the_dtype(dtype: type) -> None:
    image = to_dtype(np.array([[[0, 255, 0], [200, 30, 90]]], np.uint8), dtype)  # a green screen pixel, a red one
    out = cvf.apply(image, "chroma_key", spill=0.0, backend="cpu")
    assert out.dtype == np.dtype(dtype) and out.shape == (1, 2, 4)
    np.testing.assert_array_equal(out[..., :3], image)
    np.testing.assert_array_equal(out[..., 3], [[0, full_scale(dtype)]])


@pytest.mark.parametrize(("width", "height", "spacing", "seed"), [(5, 3, 20.0, 1), (37, 23, 6.0, 0), (20, 30, 2.5, 2)])
def test_cell_points_are_the_seeded_jittered_grid(width: int, height: int, spacing: float, seed: int) -> None:
    # as the docstring says: point (i, j) at ((i + u) spacing, (j + v) spacing), (u, v) from
    # default_rng(seed).random((rows, columns, 2)), rounded to a pixel and kept inside the image
    columns, rows = int(np.ceil(width / spacing)), int(np.ceil(height / spacing))
    jitter = np.random.default_rng(seed).random((rows, columns, 2))
    expected = [(min(max(round((i + jitter[j, i, 0]) * spacing), 0), width - 1),
                 min(max(round((j + jitter[j, i, 1]) * spacing), 0), height - 1))
                for j in range(rows) for i in range(columns)]
    points = cell_points(width, height, spacing, seed)
    np.testing.assert_array_equal(points, np.array(expected, float))
    assert not points.flags.writeable
    if spacing == 2.5:  # rounding reaches both edges: points on the first and last column and row
        assert {0, width - 1} <= set(points[:, 0]) and {0, height - 1} <= set(points[:, 1])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_hex_pixellate_keeps_the_dtype_and_averages_colour_premultiplied(dtype: type) -> None:
    gray = photo(12, 14, 1, dtype)
    assert cvf.apply(gray, "hex_pixellate", size=3.0, backend="cpu").dtype == np.dtype(dtype)
    image = photo(12, 14, 4, dtype)
    out = cvf.apply(image, "hex_pixellate", size=3.0, backend="cpu")
    assert out.dtype == np.dtype(dtype) and out.shape == image.shape
    values = image.astype(np.float64) / full_scale(dtype)
    labels = hex_labels(14, 12, 3.0)
    tolerance = 1.0 / full_scale(dtype) if np.dtype(dtype).kind == "u" else 1e-5  # one rounding step
    for label in np.unique(labels):
        region = labels == label
        alpha = values[..., 3][region]
        colour = (values[..., :3][region] * alpha[:, None]).sum(axis=0) / alpha.sum()  # the premultiplied mean
        got = out[region].astype(np.float64) / full_scale(dtype)
        np.testing.assert_allclose(got[:, 3], alpha.mean(), rtol=0, atol=tolerance)
        np.testing.assert_allclose(got[:, :3], np.broadcast_to(colour, (region.sum(), 3)), rtol=0,
                                   atol=tolerance * 2)
