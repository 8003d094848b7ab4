"""The Backend protocol: where images live and the primitives filters are written with.

Filters never call ``cv2`` directly; they call primitives on ``ctx.be``. A backend
implements every primitive for its own image type (numpy array, ``cv2.UMat`` or
``cv2.cuda.GpuMat``). A primitive a backend cannot run on its device falls back
explicitly (download, run on the host, upload) and is counted in
:attr:`Backend.counters`, which ``--explain`` prints.
"""

from __future__ import annotations

import abc
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from ..locks import ForkSafeLock

BORDERS: dict[str, int] = {
    "reflect101": cv2.BORDER_REFLECT_101,
    "replicate": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT,
    "wrap": cv2.BORDER_WRAP,
    "constant": cv2.BORDER_CONSTANT,
}
BORDER_HELP = (
    "edge handling: reflect101 (gfedcb|abcdefgh|gfedcba, default), replicate (aaaaaa|abcdefgh|hhhhhhh, "
    "Core Image's clamp-to-extent), reflect (fedcba|abcdefgh|hgfedcb), wrap (cdefgh|abcdefgh|abcdefg), "
    "constant (000000|abcdefgh|0000000)"
)
CV_DEPTH: dict[np.dtype, int] = {
    np.dtype(np.uint8): cv2.CV_8U,
    np.dtype(np.uint16): cv2.CV_16U,
    np.dtype(np.int16): cv2.CV_16S,
    np.dtype(np.float32): cv2.CV_32F,
    np.dtype(np.float64): cv2.CV_64F,
}
CACHE_ENTRIES = 32


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run here, on which device, and if not, why."""

    name: str
    available: bool
    device: str = ""
    reason: str = ""
    is_gpu: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "available": self.available, "device": self.device,
                "reason": self.reason, "gpu": self.is_gpu}


@dataclass
class Counters:
    """Transfers and host fallbacks a backend performed.

    ``uploads``/``downloads`` count images moved by pipelines; ``constants`` counts
    masks and maps uploaded once and cached (see :meth:`Backend.cached`).
    """

    uploads: int = 0
    downloads: int = 0
    constants: int = 0
    fallbacks: Counter[str] = field(default_factory=Counter)

    def snapshot(self) -> Counters:
        return Counters(self.uploads, self.downloads, self.constants, Counter(self.fallbacks))

    def since(self, earlier: Counters) -> Counters:
        return Counters(self.uploads - earlier.uploads, self.downloads - earlier.downloads,
                        self.constants - earlier.constants, self.fallbacks - earlier.fallbacks)


class Backend(abc.ABC):
    """A place where images live, plus the primitive operations filters use."""

    name: str = ""

    def __init__(self) -> None:
        self._local = threading.local()
        self._cache: OrderedDict[Hashable, Any] = OrderedDict()
        self._cache_lock = ForkSafeLock()

    @property
    def counters(self) -> Counters:
        """What this backend did in the calling thread (each thread counts its own runs)."""
        counters = getattr(self._local, "counters", None)
        if counters is None:
            counters = self._local.counters = Counters()
        return counters

    # ------------------------------------------------------------ availability
    @classmethod
    @abc.abstractmethod
    def probe(cls) -> Availability:
        """Report whether this backend can run on this machine (never raises)."""

    # ------------------------------------------------------------ residency
    @abc.abstractmethod
    def is_native(self, image: Any) -> bool:
        """True if ``image`` already lives where this backend computes."""

    @abc.abstractmethod
    def to_device(self, array: np.ndarray) -> Any:
        """Copy a host array to the device (not counted; use :meth:`upload`)."""

    @abc.abstractmethod
    def to_host(self, image: Any) -> np.ndarray:
        """Copy a device image to the host (not counted; use :meth:`download`)."""

    def upload(self, array: np.ndarray) -> Any:
        """Move a host image to the backend's device, counted in ``counters.uploads``."""
        self.counters.uploads += 1
        return self.to_device(array)

    def download(self, image: Any) -> np.ndarray:
        """Move a device image to the host, counted in ``counters.downloads``."""
        self.counters.downloads += 1
        return self.to_host(image)

    def cached(self, key: Hashable, factory: Callable[[], np.ndarray]) -> Any:
        """A device copy of a host array built by ``factory``, built and uploaded once per key.

        Used for masks and maps that depend only on the image size and the parameters.
        Thread-safe: threads asking for the same key at once may both build it, and
        all of them get the one stored first.
        """
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        value = self.to_device(factory())  # outside the lock: factories may be slow or use the cache
        with self._cache_lock:
            if key not in self._cache:
                self.counters.constants += 1
                self._cache[key] = value
                if len(self._cache) > CACHE_ENTRIES:
                    self._cache.popitem(last=False)
            self._cache.move_to_end(key)
            return self._cache[key]

    def fallback(self, primitive: str, *args: Any, host_result: bool = False) -> Any:
        """Run the cpu backend's ``primitive`` on host copies of this backend's images.

        Device arguments (also inside lists) are copied to the host, the result is
        copied back (unless ``host_result``: statistics stay on the host), and
        ``counters.fallbacks[primitive]`` is incremented; those copies are not counted
        as pipeline uploads or downloads.
        """
        from .cpu import CpuBackend

        def host(arg: Any) -> Any:
            if self.is_native(arg):
                return self.to_host(arg)
            if isinstance(arg, (list, tuple)) and any(self.is_native(a) for a in arg):
                return [host(a) for a in arg]
            return arg

        result = getattr(_cpu_backend(CpuBackend), primitive)(*(host(arg) for arg in args))
        self.counters.fallbacks[primitive] += 1
        if host_result:
            return result
        return [self.to_device(r) for r in result] if isinstance(result, list) else self.to_device(result)

    def host_copy(self, image: Any, label: str) -> np.ndarray:
        """A numpy copy of a device image for work no primitive covers (statistics).

        Free on the cpu backend; elsewhere one download counted in
        ``counters.fallbacks[label]`` (shown by ``--explain``), not as a pipeline download.
        """
        if isinstance(image, np.ndarray):
            return image
        self.counters.fallbacks[label] += 1
        return np.ascontiguousarray(self.to_host(image))

    def on_host(self, image: Any, compute: Callable[[np.ndarray], np.ndarray], label: str) -> Any:
        """``compute`` (numpy in, numpy out) on a host copy of ``image``, the result back on the device.

        For whole-image algorithms no backend accelerates (k-means, stylization, large
        medians): one download and one upload per step, counted in
        ``counters.fallbacks[label]``. On the cpu backend it is a plain call.
        """
        if isinstance(image, np.ndarray):
            return compute(image)
        return self.to_device(np.ascontiguousarray(compute(self.host_copy(image, label))))

    # ------------------------------------------------------------ primitives
    # Every method below takes and returns native images of this backend.
    @abc.abstractmethod
    def convert(self, image: Any, dtype: np.dtype, alpha: float = 1.0, beta: float = 0.0) -> Any:
        """``saturate(image * alpha + beta)`` stored as ``dtype`` (rounded for integers)."""

    @abc.abstractmethod
    def split(self, image: Any) -> list[Any]: ...

    @abc.abstractmethod
    def merge(self, planes: Sequence[Any]) -> Any: ...

    @abc.abstractmethod
    def pad(self, image: Any, top: int, bottom: int, left: int, right: int, border: int,
            value: float = 0.0) -> Any: ...

    @abc.abstractmethod
    def crop(self, image: Any, x: int, y: int, width: int, height: int) -> Any:
        """A region of ``image``; may share memory with it."""

    @abc.abstractmethod
    def gaussian(self, image: Any, ksize: tuple[int, int], sigma: float, border: int) -> Any: ...

    @abc.abstractmethod
    def box(self, image: Any, ksize: tuple[int, int], border: int) -> Any:
        """Normalised box (mean) filter."""

    @abc.abstractmethod
    def filter2d(self, image: Any, kernel: np.ndarray, border: int, delta: float = 0.0,
                 ddepth: int = -1) -> Any:
        """Correlation with ``kernel`` (anchor at the centre) plus ``delta``."""

    @abc.abstractmethod
    def sep_filter2d(self, image: Any, kernel_x: np.ndarray, kernel_y: np.ndarray, border: int,
                     delta: float = 0.0, ddepth: int = -1) -> Any: ...

    @abc.abstractmethod
    def sobel(self, image: Any, ddepth: int, dx: int, dy: int, ksize: int, border: int) -> Any: ...

    @abc.abstractmethod
    def magnitude(self, x: Any, y: Any) -> Any:
        """Per-element ``sqrt(x**2 + y**2)`` of two float32 images."""

    @abc.abstractmethod
    def abs_convert(self, image: Any, dtype: np.dtype, alpha: float = 1.0) -> Any:
        """``saturate(|image| * alpha)`` stored as ``dtype`` (``cv2.convertScaleAbs`` for uint8)."""

    @abc.abstractmethod
    def clip(self, image: Any, low: float, high: float) -> Any:
        """Clamp every channel of a float32 image to ``[low, high]``."""

    @abc.abstractmethod
    def lut(self, image: Any, table: np.ndarray) -> Any:
        """Look-up table: 256 rows for uint8 images, 65536 for uint16; shape (N,) or (N, C) per channel.

        The table has the image's dtype.
        """

    @abc.abstractmethod
    def transform(self, image: Any, matrix: np.ndarray) -> Any:
        """Per-pixel matrix ``out = M @ [c0, c1, ..., 1]`` (``cv2.transform``); M is C' x C or C' x (C + 1)."""

    @abc.abstractmethod
    def threshold(self, image: Any, thresh: float, maxval: float, kind: int) -> Any:
        """``cv2.threshold`` with a ``cv2.THRESH_*`` kind (uint8, uint16 and float32)."""

    @abc.abstractmethod
    def calc_hist(self, image: Any, channels: int, levels: int) -> np.ndarray:
        """Counts of every level of each channel of a uint8 (256) or uint16 (65536) image.

        Returns a host int64 array of shape (channels, levels): a reduction, small
        whatever the image size.
        """

    @abc.abstractmethod
    def min_max(self, image: Any, channels: int) -> list[tuple[float, float]]:
        """Minimum and maximum of each channel, on the host."""

    @abc.abstractmethod
    def equalize_hist(self, image: Any) -> Any:
        """``cv2.equalizeHist`` on a single-channel uint8 image."""

    @abc.abstractmethod
    def clahe(self, image: Any, clip_limit: float, tiles: tuple[int, int]) -> Any:
        """``cv2.createCLAHE(clip_limit, tiles).apply`` on a single-channel uint8 or uint16 image."""

    @abc.abstractmethod
    def median(self, image: Any, ksize: int) -> Any:
        """Median over a ksize x ksize window (OpenCV: any odd size for uint8, at most 5 otherwise)."""

    @abc.abstractmethod
    def bilateral(self, image: Any, diameter: int, sigma_color: float, sigma_space: float, border: int) -> Any:
        """Edge-preserving bilateral filter (uint8 and float32, 1 or 3 channels)."""

    @abc.abstractmethod
    def morphology(self, image: Any, op: int, kernel: np.ndarray, iterations: int, border: int) -> Any:
        """``cv2.morphologyEx`` with a ``cv2.MORPH_*`` operation and a uint8 structuring element."""

    @abc.abstractmethod
    def multiply(self, a: Any, b: Any, scale: float = 1.0, dtype: np.dtype | None = None) -> Any: ...

    @abc.abstractmethod
    def divide(self, a: Any, b: Any, scale: float = 1.0, dtype: np.dtype | None = None) -> Any: ...

    @abc.abstractmethod
    def add_weighted(self, a: Any, wa: float, b: Any, wb: float, gamma: float = 0.0,
                     dtype: np.dtype | None = None) -> Any: ...

    @abc.abstractmethod
    def bitwise_not(self, image: Any) -> Any: ...

    @abc.abstractmethod
    def flip(self, image: Any, code: int) -> Any: ...

    @abc.abstractmethod
    def resize(self, image: Any, size: tuple[int, int], interpolation: int) -> Any: ...

    @abc.abstractmethod
    def cvt_color(self, image: Any, code: int) -> Any: ...

    @abc.abstractmethod
    def remap(self, image: Any, map_x: Any, map_y: Any, interpolation: int, border: int,
              value: float = 0.0) -> Any: ...

    @abc.abstractmethod
    def concat(self, images: Sequence[Any], axis: int) -> Any:
        """Stack images side by side (``axis=1``) or top to bottom (``axis=0``)."""


_CPU: list[Backend] = []


def _cpu_backend(cls: type[Backend]) -> Backend:
    """The one host backend that fallbacks run on (created on first use)."""
    if not _CPU:
        _CPU.append(cls())
    return _CPU[0]
