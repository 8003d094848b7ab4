"""What a filter knows while it runs: the backend and the image's geometry and type.

A ``cv2.UMat`` does not expose its shape, so the pipeline carries an
:class:`ImageInfo` (size, channels, dtype) beside the device image and hands both to every filter.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from cvfilters.core.pixels import full_scale

if TYPE_CHECKING:
    from cvfilters.backends.base import Backend

SUPPORTED_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))
SUPPORTED_CHANNELS = (1, 3, 4)


@dataclass(frozen=True)
class ImageInfo:
    """Height, width, channel count and dtype of an image."""

    height: int
    width: int
    channels: int
    dtype: np.dtype

    @classmethod
    def of(cls, array: np.ndarray) -> ImageInfo:
        """The info of a numpy image (2-D gray or H x W x C)."""
        channels = 1 if array.ndim == 2 else array.shape[2]
        return cls(array.shape[0], array.shape[1], channels, array.dtype)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)``, the order OpenCV functions take."""
        return (self.width, self.height)

    @property
    def pixels(self) -> int:
        return self.width * self.height

    @property
    def max_value(self) -> float:
        """The value of full intensity: 255, 65535, or 1.0 for float32."""
        return full_scale(self.dtype)

    def with_(self, **changes: Any) -> ImageInfo:
        return replace(self, **changes)


@dataclass(frozen=True)
class Context:
    """The backend a filter runs on and the :class:`ImageInfo` of the image it receives."""

    backend: Backend
    info: ImageInfo

    def with_info(self, **changes: Any) -> Context:
        return Context(self.backend, self.info.with_(**changes))
