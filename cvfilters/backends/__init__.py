"""Backend registry and selection (``auto``, ``cpu``, ``opencl``, ``cuda``).

``auto`` picks cuda when OpenCV sees a CUDA device, else opencl when the default
OpenCL device is a GPU, else cpu; an image smaller than :data:`AUTO_MIN_PIXELS`, and
work made only of point operations (each output pixel from the same input pixel: colour
tables, matrices, inversion), run on cpu because the transfer would cost more than it
saves (a point operation reads and writes each pixel once, as the upload and download do). A CPU OpenCL device (pocl)
is never chosen by ``auto``: it is slower than plain OpenCV. Asking for an
unavailable backend by name is an error, never a silent fallback.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

import cv2
import numpy as np

from cvfilters.backends.base import BORDER_HELP, BORDERS, Availability, Backend, Counters, auto_gaussian_ksize
from cvfilters.backends.cpu import CpuBackend, host
from cvfilters.backends.cuda import CudaBackend
from cvfilters.backends.opencl import OpenclBackend
from cvfilters.core.errors import BackendUnavailableError, UsageError

BACKEND_CLASSES: dict[str, type[Backend]] = {"cpu": CpuBackend, "opencl": OpenclBackend, "cuda": CudaBackend}
BACKEND_NAMES = ("auto", *BACKEND_CLASSES)
# Below this many pixels, auto stays on cpu. Not yet measured on a GPU machine: a
# 512 x 512 image is where published OpenCV CUDA/OpenCL numbers start to pay off.
AUTO_MIN_PIXELS = 512 * 512

__all__ = ["BACKEND_NAMES", "BORDERS", "BORDER_HELP", "AUTO_MIN_PIXELS", "Availability", "Backend",
           "Counters", "adopt", "auto_gaussian_ksize", "availability", "get_backend", "native_backend", "probe_soon",
           "probed", "select"]


_PROBED: dict[str, Availability] = {}
_PROBE_LOCK = threading.Lock()


def availability(name: str) -> Availability:
    """Probe a backend once per process (a probe running on :func:`probe_soon`'s thread is waited for)."""
    with _PROBE_LOCK:
        if name not in _PROBED:
            _PROBED[name] = BACKEND_CLASSES[name].probe()
        return _PROBED[name]


def probed() -> dict[str, Availability]:
    """The probe answers this process holds (to hand to its worker processes, see :func:`adopt`)."""
    with _PROBE_LOCK:
        return dict(_PROBED)


def adopt(answers: dict[str, Availability]) -> None:
    """Take the probe answers of the process that started this one (same machine, same devices), so
    that a worker does not probe again: an OpenCL probe costs a worker tenths of a second and the
    memory of the driver (pocl loads LLVM: about 60 MB)."""
    with _PROBE_LOCK:
        for name, answer in answers.items():
            _PROBED.setdefault(name, answer)


def probe_soon(names: tuple[str, ...] = ("cuda", "opencl")) -> None:
    """Start probing ``names`` on a background thread, so that ``auto`` later finds the answers ready.

    The CLI calls it at the start of ``apply --backend auto``: initialising an OpenCL
    runtime takes tens of milliseconds (more on a loaded machine) and releases the GIL,
    so it overlaps the imports and the reading of the first image. Not a daemon thread:
    the interpreter waits for it rather than exit in the middle of a driver's start-up.
    """
    thread = threading.Thread(target=lambda: [availability(name) for name in names], name="cvfilters-probe")
    thread.start()


@cache
def get_backend(name: str) -> Backend:
    """The process-wide instance of a backend, or an error saying why it cannot run.

    Raises
    ------
    BackendUnavailableError
        When the backend is known but cannot run on this machine.
    """
    if name not in BACKEND_CLASSES:
        raise UsageError(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
    status = availability(name)
    if not status.available:
        raise BackendUnavailableError(name, status.reason)
    return host() if name == "cpu" else BACKEND_CLASSES[name]()


def native_backend(image: Any) -> str | None:
    """The backend whose native type ``image`` is (None for numpy arrays)."""
    if isinstance(image, cv2.UMat):
        return "opencl"
    if isinstance(image, cv2.cuda.GpuMat):
        return "cuda"
    return None


def select(name: str, image: Any, pixels: int, *, point_only: bool = False) -> Backend:
    """Resolve a backend name (``auto`` included) for one image.

    A device image (UMat, GpuMat) runs on its own backend under ``auto``; a host image
    goes to a GPU only when it has :data:`AUTO_MIN_PIXELS` or more and the work is not
    ``point_only`` (then the GPUs are not even probed).
    """
    if name != "auto":
        return get_backend(name)
    native = native_backend(image)
    if native is not None:
        return get_backend(native)
    if isinstance(image, np.ndarray) and pixels >= AUTO_MIN_PIXELS and not point_only:
        if availability("cuda").available:
            return get_backend("cuda")
        opencl = availability("opencl")
        if opencl.available and opencl.is_gpu:
            return get_backend("opencl")
    return get_backend("cpu")
