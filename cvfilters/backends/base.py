"""The Backend protocol: where images live and the primitives filters are written with.

Filters never call ``cv2`` directly; they call primitives on ``ctx.backend``. A backend
implements every primitive for its own image type (numpy array, ``cv2.UMat`` or
``cv2.cuda.GpuMat``). A primitive a device backend cannot run on its device falls back
explicitly (:class:`~cvfilters.backends.device.DeviceBackend`: download, run on the
host, upload) and is counted in :attr:`Backend.counters`, which ``--explain`` prints.
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

from cvfilters.core.locks import ForkSafeLock
from cvfilters.core.types import DType, Image

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


def pooled_ranges(ranges: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """One ``(minimum, maximum)`` over the ``(minimum, maximum)`` of each channel."""
    return [(min(lo for lo, _ in ranges), max(hi for _, hi in ranges))]


def auto_gaussian_ksize(sigma: float, dtype: DType) -> int:
    """OpenCV's own rule for a Gaussian's ksize=0: 6 sigma + 1 for uint8, 8 sigma + 1 otherwise, made odd."""
    return int(round(sigma * (3 if np.dtype(dtype) == np.uint8 else 4) * 2 + 1)) | 1


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
    def convert(self, image: Image, dtype: DType, alpha: float = 1.0, beta: float = 0.0) -> Image:
        """``saturate(image * alpha + beta)`` stored as ``dtype`` (rounded for integers)."""

    @abc.abstractmethod
    def split(self, image: Image) -> list[Image]: ...

    @abc.abstractmethod
    def merge(self, planes: Sequence[Image]) -> Image: ...

    @abc.abstractmethod
    def pad(self, image: Image, top: int, bottom: int, left: int, right: int, border: int,
            value: float = 0.0) -> Image: ...

    @abc.abstractmethod
    def crop(self, image: Image, x: int, y: int, width: int, height: int) -> Image:
        """A region of ``image``; may share memory with it."""

    @abc.abstractmethod
    def gaussian(self, image: Image, ksize: tuple[int, int], sigma: float, border: int) -> Image: ...

    @abc.abstractmethod
    def box(self, image: Image, ksize: tuple[int, int], border: int) -> Image:
        """Normalised box (mean) filter."""

    @abc.abstractmethod
    def filter2d(self, image: Image, kernel: np.ndarray, border: int, delta: float = 0.0,
                 ddepth: int = -1) -> Image:
        """Correlation with ``kernel`` (anchor at the centre) plus ``delta``."""

    @abc.abstractmethod
    def sep_filter2d(self, image: Image, kernel_x: np.ndarray, kernel_y: np.ndarray, border: int,
                     delta: float = 0.0, ddepth: int = -1) -> Image: ...

    @abc.abstractmethod
    def sobel(self, image: Image, ddepth: int, dx: int, dy: int, ksize: int, border: int) -> Image: ...

    @abc.abstractmethod
    def magnitude(self, x: Image, y: Image) -> Image:
        """Per-element ``sqrt(x**2 + y**2)`` of two float32 images."""

    @abc.abstractmethod
    def abs_convert(self, image: Image, dtype: DType, alpha: float = 1.0) -> Image:
        """``saturate(|image| * alpha)`` stored as ``dtype`` (``cv2.convertScaleAbs`` for uint8)."""

    @abc.abstractmethod
    def clip(self, image: Image, low: float, high: float) -> Image:
        """Clamp every channel of a float32 image to ``[low, high]``."""

    @abc.abstractmethod
    def lut(self, image: Image, table: np.ndarray) -> Image:
        """Look-up table: 256 rows for uint8 images, 65536 for uint16; shape (N,) or (N, C) per channel.

        The table has the image's dtype.
        """

    @abc.abstractmethod
    def transform(self, image: Image, matrix: np.ndarray) -> Image:
        """Per-pixel matrix ``out = M @ [c0, c1, ..., 1]`` (``cv2.transform``); M is C' x C or C' x (C + 1)."""

    @abc.abstractmethod
    def threshold(self, image: Image, thresh: float, maxval: float, kind: int) -> Image:
        """``cv2.threshold`` with a ``cv2.THRESH_*`` kind (uint8, uint16 and float32)."""

    @abc.abstractmethod
    def calc_hist(self, image: Image, channels: int, levels: int) -> np.ndarray:
        """Counts of every level of each channel of a uint8 (256) or uint16 (65536) image.

        Returns a host int64 array of shape (channels, levels): a reduction, small
        whatever the image size.
        """

    @abc.abstractmethod
    def min_max(self, image: Image, channels: int, pooled: bool = False) -> list[tuple[float, float]]:
        """Minimum and maximum of each channel, on the host (``pooled``: one pair over all channels)."""

    @abc.abstractmethod
    def equalize_hist(self, image: Image) -> Image:
        """``cv2.equalizeHist`` on a single-channel uint8 image."""

    @abc.abstractmethod
    def clahe(self, image: Image, clip_limit: float, tiles: tuple[int, int]) -> Image:
        """``cv2.createCLAHE(clip_limit, tiles).apply`` on a single-channel uint8 or uint16 image."""

    @abc.abstractmethod
    def median(self, image: Image, ksize: int) -> Image:
        """Median over a ksize x ksize window (OpenCV: any odd size for uint8, at most 5 otherwise)."""

    @abc.abstractmethod
    def bilateral(self, image: Image, diameter: int, sigma_color: float, sigma_space: float, border: int) -> Image:
        """Edge-preserving bilateral filter (uint8 and float32, 1 or 3 channels)."""

    @abc.abstractmethod
    def morphology(self, image: Image, op: int, kernel: np.ndarray, iterations: int, border: int) -> Image:
        """``cv2.morphologyEx`` with a ``cv2.MORPH_*`` operation and a uint8 structuring element."""

    @abc.abstractmethod
    def multiply(self, a: Image, b: Image, scale: float = 1.0, dtype: DType | None = None) -> Image: ...

    @abc.abstractmethod
    def divide(self, a: Image, b: Image, scale: float = 1.0, dtype: DType | None = None) -> Image: ...

    @abc.abstractmethod
    def add_weighted(self, a: Image, wa: float, b: Image, wb: float, gamma: float = 0.0,
                     dtype: DType | None = None) -> Image: ...

    @abc.abstractmethod
    def bitwise_not(self, image: Image) -> Image: ...

    @abc.abstractmethod
    def flip(self, image: Image, code: int) -> Image: ...

    @abc.abstractmethod
    def resize(self, image: Image, size: tuple[int, int], interpolation: int) -> Image: ...

    @abc.abstractmethod
    def cvt_color(self, image: Image, code: int) -> Image: ...

    @abc.abstractmethod
    def remap(self, image: Image, map_x: Image, map_y: Image, interpolation: int, border: int,
              value: float = 0.0) -> Image: ...

    @abc.abstractmethod
    def concat(self, images: Sequence[Image], axis: int) -> Image:
        """Stack images side by side (``axis=1``) or top to bottom (``axis=0``)."""

    @abc.abstractmethod
    def sqrt(self, image: Image) -> Image:
        """Per-element square root of a float32 image (``cv2.sqrt``)."""

    @abc.abstractmethod
    def minimum(self, a: Image, b: Image) -> Image:
        """Per-element minimum of two images of one type (``cv2.min``)."""

    @abc.abstractmethod
    def maximum(self, a: Image, b: Image) -> Image:
        """Per-element maximum of two images of one type (``cv2.max``)."""

    @abc.abstractmethod
    def compare(self, a: Image, b: Image, op: int) -> Image:
        """``cv2.compare`` with a ``cv2.CMP_*`` op: a uint8 image, 255 where ``a op b`` holds, else 0."""

    @abc.abstractmethod
    def select(self, mask: Image, yes: Image, no: Image) -> Image:
        """``yes`` where the uint8 ``mask`` (one channel, or the images' channels) is non-zero, else ``no``."""

