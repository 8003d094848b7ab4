"""Process-wide defaults of the Python API, and the channel order of the run in progress.

Arrays are BGR(A) by default, as OpenCV's. ``set_defaults(channel_order="rgb")`` makes
``read``, ``write``, ``apply``, ``Pipeline`` runs, ``histogram`` and
``quantize_palette`` treat arrays as RGB(A) unless a call says otherwise. While a
pipeline runs, :func:`active_channel_order` tells filters the order of the images the
caller gave as parameter values (reference and overlay arrays), which cross the
boundary after the main image was swapped to BGR.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, get_args

ChannelOrder = Literal["bgr", "rgb"]
CHANNEL_ORDERS: tuple[str, ...] = get_args(ChannelOrder)

_DEFAULTS: dict[str, str | bool] = {"channel_order": "bgr", "linear": False}
_ACTIVE: ContextVar[str | None] = ContextVar("cvfilters_channel_order", default=None)


def set_defaults(*, channel_order: ChannelOrder | None = None, linear: bool | None = None) -> None:
    """Set process-wide defaults of the Python API.

    Parameters
    ----------
    channel_order : {"bgr", "rgb"}, optional
        The order of the colour channels of arrays given to and returned by
        ``read``, ``write``, ``apply``, ``Pipeline`` and the statistics; ``None``
        leaves it as it is. OpenCV's order (``"bgr"``) is the initial default.
    linear : bool, optional
        Run the filters that mix light (blurs, resizing, warps, sharpening) on linear
        values, with the sRGB transfer function, in ``apply`` and ``Pipeline`` runs that
        do not say otherwise. ``False`` (OpenCV's results) is the initial default.

    Examples
    --------
    >>> set_defaults(channel_order="rgb")   # doctest: +SKIP
    """
    if channel_order is not None:
        _DEFAULTS["channel_order"] = check_channel_order(channel_order)
    if linear is not None:
        if not isinstance(linear, bool):
            raise ValueError(f"linear={linear!r} must be True or False")
        _DEFAULTS["linear"] = linear


def get_defaults() -> dict[str, str | bool]:
    """The current process-wide defaults (a copy)."""
    return dict(_DEFAULTS)


def check_channel_order(value: object) -> str:
    """``value`` if it is a channel order, else a one-line ``ValueError``."""
    if value not in CHANNEL_ORDERS:
        raise ValueError(f"channel_order={value!r} is not one of {', '.join(CHANNEL_ORDERS)}")
    return str(value)


def resolve_channel_order(value: str | None) -> str:
    """A call's channel order: its own ``value``, else the process default."""
    return str(_DEFAULTS["channel_order"]) if value is None else check_channel_order(value)


def active_channel_order() -> str:
    """The channel order of the pipeline run in progress in this thread (the default outside runs)."""
    return _ACTIVE.get() or str(_DEFAULTS["channel_order"])


@contextmanager
def running_in(order: str) -> Iterator[None]:
    """Mark the code inside as a run whose caller's arrays are in ``order``."""
    token = _ACTIVE.set(order)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
