"""``cvfilters.apply``: one filter, a spec string or a pipeline, applied to one image."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

import cv2
from numpy.typing import NDArray

from cvfilters.core.arrays import ArrayLike, Layout
from cvfilters.core.defaults import ChannelOrder
from cvfilters.core.transfer import Transfer
from cvfilters.engine.pipeline import Pipeline, as_pipeline
from cvfilters.registry.catalog import Filter

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage


@overload
def apply(image: PILImage, filter: str | Filter | Pipeline, /, *, backend: str = ...,
          channel_order: ChannelOrder | None = ..., layout: Layout = ..., linear: bool | Transfer | None = ...,
          **params: Any) -> PILImage: ...
@overload
def apply(image: cv2.UMat, filter: str | Filter | Pipeline, /, *, backend: str = ...,
          channel_order: ChannelOrder | None = ..., layout: Layout = ..., linear: bool | Transfer | None = ...,
          **params: Any) -> cv2.UMat: ...
@overload
def apply(image: cv2.cuda.GpuMat, filter: str | Filter | Pipeline, /, *, backend: str = ...,
          channel_order: ChannelOrder | None = ..., layout: Layout = ..., linear: bool | Transfer | None = ...,
          **params: Any) -> cv2.cuda.GpuMat: ...
@overload
def apply(image: NDArray[Any] | ArrayLike, filter: str | Filter | Pipeline, /, *, backend: str = ...,
          channel_order: ChannelOrder | None = ..., layout: Layout = ..., linear: bool | Transfer | None = ...,
          **params: Any) -> NDArray[Any]: ...


def apply(image: Any, filter: str | Filter | Pipeline, /, *, backend: str = "auto",
          channel_order: ChannelOrder | None = None, layout: Layout = "hwc", linear: bool | Transfer | None = None,
          **params: Any) -> Any:
    """Apply one filter, a spec string or a pipeline to an image.

    Arrays are BGR(A), OpenCV's order, unless ``channel_order="rgb"`` (or
    ``cvfilters.set_defaults(channel_order="rgb")``) says they are RGB(A); PIL images
    are RGB. Colour parameters are RGB(A) as people write colours, whatever the order.

    Parameters
    ----------
    image : numpy.ndarray, PIL.Image.Image, array-like, cv2.UMat or cv2.cuda.GpuMat
        uint8, uint16, float32 (0..1), float64 or int16; gray, gray + alpha, 3 or 4
        channels (see :meth:`Pipeline.run`).
    filter : str, Filter or Pipeline
        A registered filter name, a filter object, a spec string such as
        ``"gaussian_blur:sigma=3 | pixellate:size=8"``, or a :class:`Pipeline`.
    backend : {"auto", "cpu", "opencl", "cuda"}
    channel_order : {"bgr", "rgb"}, optional
        The order of the colour channels of ``image`` and of the result (default BGR,
        or the process default).
    layout : {"hwc", "chw"}
        ``chw`` for C x H x W arrays.
    linear : bool or Transfer, optional
        Run the filters that mix light on linear values (``True``: the sRGB transfer
        function); None follows ``cvfilters.set_defaults(linear=...)``.
    **params
        The filter's parameters (``cvfilters info NAME`` lists them), for a filter
        name or object. ``image`` and ``filter`` are positional-only, so filters may
        have parameters of those names.

    Returns
    -------
    The same kind of image as ``image``: type, shape and dtype.

    Examples
    --------
    >>> out = apply(rgb, "sepia", channel_order="rgb")             # doctest: +SKIP
    >>> out = apply(img, "gaussian_blur:sigma=3 | pixellate:size=8")  # doctest: +SKIP
    """
    return as_pipeline(filter, params).run(image, backend=backend, channel_order=channel_order, layout=layout,
                                           linear=linear)[0]
