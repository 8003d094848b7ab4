"""Level views (cvfilters.filters._shared.levels) against numpy written out here.

The luma of each colour space by its formula: BT.601 ``Y = 0.299 R + 0.587 G + 0.114 B``,
``V = max(B, G, R)``, CIE ``L*`` of linear sRGB (D65); 16-bit levels as ``rint(value * 65535)``;
counts by ``np.bincount``; tables by numpy indexing. Tiny images on the cpu backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cvfilters.core.context import ImageInfo
from cvfilters.filters._shared.levels import apply_tables, host_context, level_view, view_counts

FULL: dict[Any, float] = {np.uint8: 255.0, np.uint16: 65535.0, np.float32: 1.0}
# cv2's float Lab reaches sRGB's gamma by a spline: its L* is off by up to ~0.18 (120 16-bit levels)
VIEW_TOLERANCE = {"ycrcb": 1.0, "hsv": 1.0, "lab": 150.0}


def host(image: object) -> np.ndarray:
    """An image the cpu backend made: a numpy array."""
    assert isinstance(image, np.ndarray)
    return image


def linear(c: np.ndarray) -> np.ndarray:
    """The sRGB decoding of values in 0..1."""
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def luma(space: str, bgr: np.ndarray) -> np.ndarray:
    """The luma of ``space`` of a BGR image in 0..1, as a fraction of its full scale (``L* / 100`` for lab)."""
    b, g, r = bgr[..., 0], bgr[..., 1], bgr[..., 2]
    if space == "ycrcb":
        return 0.299 * r + 0.587 * g + 0.114 * b
    if space == "hsv":
        return np.asarray(bgr.max(axis=-1), np.float64)
    y = 0.212671 * linear(r) + 0.715160 * linear(g) + 0.072169 * linear(b)
    f = np.where(y > 0.008856, np.cbrt(y), 7.787 * y + 16 / 116)
    return (116 * f - 16) / 100


def greyish(dtype: type, height: int = 6, width: int = 7) -> np.ndarray:
    """A mid-grey image with a faint tint per pixel: every colour stays in gamut when its luma moves a little."""
    rng = np.random.default_rng(5)
    values = np.clip(rng.uniform(0.25, 0.7, (height, width, 1)) + rng.uniform(-0.06, 0.06, (height, width, 3)), 0, 1)
    return values.astype(np.float32) if dtype is np.float32 else np.rint(values * FULL[dtype]).astype(dtype)


def noise(dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(11)
    if dtype is np.float32:
        return rng.random(shape).astype(np.float32)
    return rng.integers(0, int(FULL[dtype]) + 1, shape).astype(dtype)


def as_float(image: Any) -> np.ndarray:
    return np.asarray(image, np.float64)


# ---------------------------------------------------------------- host_context
def test_host_context_is_the_cpu_backend_with_the_image_info() -> None:
    image = np.zeros((3, 5, 4), np.uint16)
    ctx = host_context(image)
    assert ctx.backend.name == "cpu"
    assert ctx.info == ImageInfo(3, 5, 4, np.dtype(np.uint16))


# ---------------------------------------------------------------- level_view
@pytest.mark.parametrize(("dtype", "channels", "space", "levels"), [
    (np.uint8, 1, "ycrcb", 256), (np.uint16, 1, "lab", 65536),
    (np.uint8, 3, "per_channel", 256), (np.uint16, 3, "per_channel", 65536)])
def test_integer_views_are_the_image_itself(dtype: type, channels: int, space: str, levels: int) -> None:
    image = noise(dtype, (4, 5) if channels == 1 else (4, 5, channels))
    view = level_view(host_context(image), image, space)
    assert view.image is image and (view.levels, view.channels) == (levels, channels)
    done = image[::-1].copy()
    assert view.restore(done) is done


@pytest.mark.parametrize(("shape", "space"), [((4, 5), "hsv"), ((4, 5, 3), "per_channel")])
def test_float_views_are_16_bit_levels(shape: tuple[int, ...], space: str) -> None:
    image = noise(np.float32, shape)
    view = level_view(host_context(image), image, space)
    assert (view.levels, view.channels) == (65536, 1 if len(shape) == 2 else 3)
    assert host(view.image).dtype == np.uint16
    np.testing.assert_array_equal(view.image, np.rint(as_float(image) * 65535))
    done = np.asarray([[0, 1, 32768, 65534, 65535]] * 4, np.uint16)
    if len(shape) == 3:
        done = np.dstack([done, done[:, ::-1], done[::-1]])
    restored = host(view.restore(done))
    assert restored.dtype == np.float32
    np.testing.assert_allclose(restored, as_float(done) / 65535, rtol=1e-6, atol=0)


@pytest.mark.parametrize("space", ["ycrcb", "lab", "hsv"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_colour_views_are_the_luma_of_their_space(space: str, dtype: type) -> None:
    """The view is the luma in 256 or 65536 levels; restoring it gives the image back."""
    image = greyish(dtype)
    full, top = FULL[dtype], (255.0 if dtype is np.uint8 else 65535.0)
    view = level_view(host_context(image), image, space)
    assert (view.levels, view.channels) == (256 if dtype is np.uint8 else 65536, 1)
    assert host(view.image).dtype == (np.uint8 if dtype is np.uint8 else np.uint16)
    assert host(view.image).shape == image.shape[:2]
    tolerance = 1.0 if dtype is np.uint8 else VIEW_TOLERANCE[space]
    assert np.abs(as_float(view.image) - luma(space, as_float(image) / full) * top).max() <= tolerance
    back = host(view.restore(view.image))
    assert back.dtype == image.dtype and back.shape == image.shape
    trip = 1.0 if dtype is np.uint8 else 3.0 if space != "lab" else 150.0  # in 1 / top of full scale
    assert np.abs(as_float(back) - as_float(image)).max() / full * top <= trip


@pytest.mark.parametrize("space", ["ycrcb", "lab", "hsv"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_restore_puts_the_new_luma_under_the_old_colour(space: str, dtype: type) -> None:
    image = greyish(dtype)
    full, top = FULL[dtype], (255.0 if dtype is np.uint8 else 65535.0)
    view = level_view(host_context(image), image, space)
    done = np.clip(as_float(view.image) + top / 12, 0, top).astype(host(view.image).dtype)
    out = host(view.restore(done))
    assert out.dtype == image.dtype
    tolerance = 1.0 if dtype is np.uint8 else 3.0
    assert np.abs(luma(space, as_float(out) / full) * top - as_float(done)).max() <= tolerance
    if space == "ycrcb":  # Y moves every colour channel by the same amount (the inverse transform is Y + chroma)
        moved = (as_float(done) - luma(space, as_float(image) / full) * top)[..., None] * (full / top)
        assert np.abs(as_float(out) - as_float(image) - moved).max() <= 3.0 * full / top


@pytest.mark.parametrize("dtype", [np.uint16, np.float32])
def test_restore_clips_colours_pushed_out_of_range(dtype: type) -> None:
    """White luma under colour chroma: channels past full scale are clipped (float) or saturated (uint16)."""
    full = FULL[dtype]
    image = np.zeros((2, 3, 3), np.float64)
    image[0] = [[0.9, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.1, 0.9]]
    image[1] = [[0.2, 0.6, 0.7], [0.5, 0.5, 0.5], [0.7, 0.3, 0.1]]
    typed = (image * full).astype(np.float32) if dtype is np.float32 else np.rint(image * full).astype(dtype)
    view = level_view(host_context(typed), typed, "ycrcb")
    for level in (65535, 0):
        out = host(view.restore(np.full((2, 3), level, np.uint16)))
        expected = np.clip(image + (level / 65535 - luma("ycrcb", image))[..., None], 0, 1) * full
        assert out.dtype == dtype
        # cv2's inverse coefficients (1.403, 0.714, 0.344, 1.773) undo the forward ones only to ~1e-3 of the chroma
        assert np.abs(as_float(out) - expected).max() <= full / 1000


# ---------------------------------------------------------------- view_counts
@pytest.mark.parametrize(("dtype", "shape", "space"), [
    (np.uint8, (5, 6), "ycrcb"), (np.uint8, (5, 6, 3), "per_channel"), (np.uint16, (5, 6), "ycrcb"),
    (np.float32, (5, 6, 3), "per_channel"), (np.uint8, (5, 6, 3), "hsv")])
def test_counts_are_a_bincount_of_each_channel_of_the_view(dtype: type, shape: tuple[int, ...], space: str) -> None:
    image = noise(dtype, shape)
    ctx = host_context(image)
    view = level_view(ctx, image, space)
    planes = np.asarray(view.image).reshape(-1, view.channels)
    expected = np.stack([np.bincount(planes[:, c], minlength=view.levels) for c in range(view.channels)])
    counts = view_counts(ctx, view)
    assert counts.dtype == np.int64 and counts.shape == (view.channels, view.levels)
    np.testing.assert_array_equal(counts, expected)


# ---------------------------------------------------------------- apply_tables
def test_tables_that_keep_every_present_level_return_the_image_itself() -> None:
    """Levels not present may map anywhere; a colour round trip, which would move levels, is skipped."""
    image = greyish(np.uint8)
    ctx = host_context(image)
    view = level_view(ctx, image, "ycrcb")
    counts = view_counts(ctx, view)
    table = np.arange(256, dtype=np.int64)
    table[counts[0] == 0] = 7
    assert apply_tables(ctx, image, view, [table], counts) is image
    planes = np.zeros((4, 5, 3), np.uint16)
    planes[..., 1] = 300
    ctx = host_context(planes)
    view = level_view(ctx, planes, "per_channel")
    counts = view_counts(ctx, view)
    tables = [np.where(c > 0, np.arange(65536), 65535 - np.arange(65536)) for c in counts]
    assert apply_tables(ctx, planes, view, tables, counts) is planes


def test_tables_and_counts_must_pair_up() -> None:
    """One table for three channels is refused, even when it keeps the first channel's levels."""
    image = np.dstack([np.full((2, 2), 10, np.uint8), np.full((2, 2), 20, np.uint8), np.full((2, 2), 30, np.uint8)])
    ctx = host_context(image)
    view = level_view(ctx, image, "per_channel")
    table = np.arange(256)
    table[20] = 200
    with pytest.raises(ValueError):
        apply_tables(ctx, image, view, [table], view_counts(ctx, view))


@pytest.mark.parametrize(("dtype", "shape"), [(np.uint8, (5, 6)), (np.uint16, (5, 6)), (np.uint8, (5, 6, 3)),
                                               (np.uint16, (5, 6, 3)), (np.float32, (5, 6, 3))])
def test_tables_are_looked_up_per_channel(dtype: type, shape: tuple[int, ...]) -> None:
    image = noise(dtype, shape)
    ctx = host_context(image)
    view = level_view(ctx, image, "per_channel")
    levels = view.levels
    rng = np.random.default_rng(2)
    tables = [rng.integers(0, levels, levels).astype(np.int64) for _ in range(view.channels)]
    out = host(apply_tables(ctx, image, view, tables, view_counts(ctx, view)))
    levels_in = np.asarray(view.image).reshape(*shape[:2], view.channels)
    expected = np.dstack([tables[c][levels_in[..., c]] for c in range(view.channels)]).reshape(shape)
    assert out.dtype == dtype and out.shape == shape
    if dtype is np.float32:
        np.testing.assert_allclose(out, expected / 65535, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_a_luma_table_is_applied_to_the_luma_and_the_colour_kept(dtype: type) -> None:
    image = greyish(dtype)
    full, top = FULL[dtype], (255.0 if dtype is np.uint8 else 65535.0)
    ctx = host_context(image)
    view = level_view(ctx, image, "ycrcb")
    table = np.minimum(np.arange(view.levels) + int(top) // 10, int(top))
    out = host(apply_tables(ctx, image, view, [table], view_counts(ctx, view)))
    assert out.dtype == dtype and out.shape == image.shape
    expected = table[np.asarray(view.image)]
    assert np.abs(luma("ycrcb", as_float(out) / full) * top - expected).max() <= (1.0 if dtype is np.uint8 else 3.0)
