"""Shared test fixtures: the backend matrix, test images and the tolerance table.

``pytest --backend=cpu,opencl,cuda`` (or ``all``; default all, environment fallback
``CVFILTERS_TEST_BACKENDS``) parametrises every test that takes the ``backend``
fixture. A backend that cannot run here skips with the reason the probe gave.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from cvfilters.backends import availability
from cvfilters.registry import catalog

# The command-line tests start hundreds of Python processes. Where the environment turns
# bytecode writing off (as CI's containers do), each of them would compile cvfilters from
# source again (about a third of a second), which an installed package never does.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# This process too: with bytecode writing off, pytest rewrote the assertions of every test module from
# source in every session (about 6 s of collection on 2 cores) and cached none. Modules imported from here
# on (every test module, rewritten) are cached in __pycache__ as any installed package's are. Not under
# scripts/mutation.sh, which turns it off so that no process writes the mutants' bytecode while another reads it.
if "MUTANT_UNDER_TEST" not in os.environ:
    sys.dont_write_bytecode = False

ALL_BACKENDS = ("cpu", "opencl", "cuda")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DTYPES = (np.uint8, np.uint16, np.float32)
CHANNELS = (1, 3, 4)

# Largest allowed |a - b| between two backends, as a fraction of full scale. Integer
# results may differ by one rounding step; float32 by accumulated single-precision error.
PARITY_TOLERANCE = {np.dtype(np.uint8): 1.0 / 255, np.dtype(np.uint16): 2.0 / 65535, np.dtype(np.float32): 1e-4}

# What OpenCV's own CUDA tests allow per primitive (levels of an integer image, and the
# float32 tolerance), where that is more than one rounding step: a real GPU gives this much.
CUDA_PRIMITIVE_TOLERANCE = {
    "gaussian": (4, 1e-4),  # opencv_contrib cudafilters/test/test_filters.cpp GaussianBlur
    "median": (1, 1e-4),  # test_filters.cpp Median (interior only; the backend pads the border)
    "clahe": (1, 1e-4),  # cudaimgproc/test/test_histogram.cpp CLAHE
    "resize-area": (1, 1e-2),  # cudawarping/test/test_resize.cpp ResizeSameAsHost, INTER_AREA
}
# The filters whose device path runs each of those primitives (the output error of a
# filter can exceed its primitive's where later steps amplify it: widen it here then).
CUDA_FILTER_PRIMITIVES = {
    "gaussian_blur": "gaussian", "tilt_shift": "gaussian", "unsharp_mask": "gaussian", "high_pass": "gaussian",
    "sketch": "gaussian", "smooth_toon": "gaussian", "adaptive_threshold": "gaussian", "feather_mask": "gaussian",
    "median_blur": "median", "cartoon": "median", "clahe": "clahe", "pixellate": "resize-area",
    "halftone": "resize-area",
}


def _levels(dtype: np.dtype, levels: float, float_tolerance: float) -> float:
    if dtype.kind == "f":
        return max(PARITY_TOLERANCE[dtype], float_tolerance)
    return max(PARITY_TOLERANCE[dtype], levels / np.iinfo(dtype).max)


DEVICE_TOLERANCE = {("cuda", name): {dtype: _levels(dtype, *CUDA_PRIMITIVE_TOLERANCE[primitive])
                                     for dtype in PARITY_TOLERANCE}
                    for name, primitive in CUDA_FILTER_PRIMITIVES.items()}


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the session's type-checking tests: numpy and Pillow are analysed once."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture(autouse=True, scope="session")
def _in_repository_root() -> None:
    """Run from the checkout's root: declared examples (``lut``'s ``fixtures/warm.cube``) are relative to it."""
    os.chdir(FIXTURES.parent)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--backend", default=os.environ.get("CVFILTERS_TEST_BACKENDS", "all"),
                     help="comma-separated backends to test: cpu, opencl, cuda or all (default all)")


def _chosen(config: pytest.Config) -> list[str]:
    value = config.getoption("--backend")
    names = ALL_BACKENDS if value == "all" else tuple(v.strip() for v in value.split(",") if v.strip())
    unknown = set(names) - set(ALL_BACKENDS)
    if unknown:
        raise pytest.UsageError(f"--backend: unknown {sorted(unknown)}; use cpu, opencl, cuda or all")
    return list(names)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", _chosen(metafunc.config), indirect=True)
    if "device_backend" in metafunc.fixturenames:
        devices = [b for b in _chosen(metafunc.config) if b != "cpu"]
        metafunc.parametrize("device_backend", devices, indirect=True)


def _require(name: str) -> str:
    status = availability(name)
    if not status.available:
        if name in os.environ.get("CVFILTERS_REQUIRE_BACKENDS", "").split(","):
            pytest.fail(f"{name} backend is required (CVFILTERS_REQUIRE_BACKENDS) but unavailable: {status.reason}")
        pytest.skip(f"{name} backend unavailable: {status.reason}")
    return name


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """A backend name from the matrix; skipped when it cannot run here."""
    return _require(request.param)


@pytest.fixture
def device_backend(request: pytest.FixtureRequest) -> str:
    """A non-cpu backend (opencl, cuda) from the matrix, to compare against cpu."""
    return _require(request.param)


@functools.cache
def _astronaut() -> np.ndarray:
    """The astronaut fixture decoded once per session (thousands of tests start from it), read-only."""
    base = cv2.imread(str(FIXTURES / "astronaut.png"))
    assert base is not None, "fixtures/astronaut.png cannot be read"
    base.setflags(write=False)
    return base


def photo(height: int = 48, width: int = 64, channels: int = 3, dtype: type = np.uint8) -> np.ndarray:
    """A crop of the astronaut fixture at the requested size, channel count and dtype.

    The alpha channel (4 channels) is a diagonal ramp from transparent to opaque, so
    premultiplied filtering is exercised at every alpha level. A new, writable array each call.
    """
    bgr = cv2.resize(_astronaut(), (width, height), interpolation=cv2.INTER_AREA)
    if channels == 1:
        image = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    elif channels == 4:
        ramp = np.add.outer(np.arange(height), np.arange(width)) * 255.0 / max(height + width - 2, 1)
        image = np.dstack([bgr, ramp.round().astype(np.uint8)])
    else:
        image = bgr
    return to_dtype(image, dtype)


def photo16(height: int = 160, width: int = 200, channels: int = 3) -> np.ndarray:
    """A genuine 16-bit image: tens of thousands of distinct levels per channel.

    The astronaut is reduced in float32 (area averages fall between 8-bit levels) and a
    smooth field of +-2% is added, so neighbouring pixels differ by a few 16-bit levels,
    as in a real 16-bit photo; ``photo(..., dtype=np.uint16)`` is 8-bit x 257 (at most 256
    levels). Deterministic; a new, writable copy each call (the image is made once per size).
    """
    image: np.ndarray = _photo16(height, width, channels).copy()
    return image


@functools.cache
def _photo16(height: int, width: int, channels: int) -> np.ndarray:
    base = _astronaut().astype(np.float32) / 255
    bgr = cv2.resize(base, (width, height), interpolation=cv2.INTER_AREA).astype(np.float64)
    y, x = np.mgrid[0:height, 0:width]
    field = np.dstack([0.02 * np.sin(x / 17.0 + c) * np.cos(y / 23.0 - 0.5 * c) for c in range(3)])
    values = np.clip(0.96 * bgr + 0.02 + field, 0.0, 1.0)
    if channels == 1:
        values = values @ np.array([0.114, 0.587, 0.299])
    image = np.rint(values * 65535).astype(np.uint16)
    image.setflags(write=False)
    return image


def to_dtype(image8: np.ndarray, dtype: type) -> np.ndarray:
    """Scale a uint8 image to uint16 (x257) or float32 (/255)."""
    if dtype == np.uint16:
        return image8.astype(np.uint16) * 257
    if dtype == np.float32:
        return image8.astype(np.float32) / 255
    return image8.copy()


def full_scale(dtype: np.dtype | type) -> float:
    dtype = np.dtype(dtype)
    return float(np.iinfo(dtype).max) if dtype.kind == "u" else 1.0


def visible(image: np.ndarray) -> np.ndarray:
    """Colour weighted by alpha for 4-channel images (what a viewer shows), as float64 0..1.

    Where alpha is near zero the un-premultiplied colour is arbitrary, so backends are
    compared on what is visible.
    """
    values = image.astype(np.float64) / full_scale(image.dtype)
    if values.ndim == 3 and values.shape[2] == 4:
        return np.dstack([values[..., :3] * values[..., 3:], values[..., 3]])
    return values


@pytest.fixture
def names() -> Iterator[list[str]]:
    """Filter names a test registers, unregistered after it."""
    made: list[str] = []
    yield made
    for name in made:
        catalog.unregister(name)
