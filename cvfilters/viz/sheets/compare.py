"""Before/after comparisons: side by side or split down the middle, in the input's depth."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np

from cvfilters.core.errors import ImageWriteError, UsageError
from cvfilters.core.pixels import full_scale
from cvfilters.io import reading, writing
from cvfilters.viz.sheets.display import _channels, convert_channels, convert_depth

COMPARE_MODES = ("side", "split")


def before_after(before: np.ndarray, after: np.ndarray, *, mode: str = "side", label: bool = True) -> np.ndarray:
    """Compose an image and its filtered result into one image.

    Parameters
    ----------
    before, after : numpy.ndarray
        uint8, uint16 or float32; 1, 3 or 4 channels; sizes may differ (a rotation with
        ``expand``): each is centred on a common canvas, padded with white (transparent
        when either image has alpha).
    mode : {"side", "split"}
        ``side``: both whole, before on the left, a small gap between. ``split``: the left
        half of ``before`` and the right half of ``after`` with a gray line between.
    label : bool
        Write "before" and "after" in the top corners.

    Returns
    -------
    numpy.ndarray
        ``before``'s dtype; gray if both are gray, BGRA if either has alpha, else BGR.

    Raises
    ------
    ValueError
        An unknown mode.
    """
    if mode not in COMPARE_MODES:
        raise ValueError(f"mode must be one of {', '.join(COMPARE_MODES)}, not {mode!r}")
    before, after = np.asarray(before), np.asarray(after)
    channels = 4 if 4 in (_channels(before), _channels(after)) else max(_channels(before), _channels(after))
    first, second = (convert_channels(convert_depth(image, before.dtype), channels) for image in (before, after))
    height = max(first.shape[0], second.shape[0])
    if mode == "side":
        gap = max(2, max(first.shape[1], second.shape[1]) // 100)
        out = _canvas(first, height, first.shape[1] + gap + second.shape[1])
        _paste(out, first, 0, first.shape[1])
        _paste(out, second, first.shape[1] + gap, second.shape[1])
        corners = (0, first.shape[1] + gap)
    else:
        width = max(first.shape[1], second.shape[1])
        out, right = _canvas(first, height, width), _canvas(first, height, width)
        _paste(out, first, 0, width)
        _paste(right, second, 0, width)
        middle, line = width // 2, max(2, width // 400)
        out[:, middle:] = right[:, middle:]
        out[:, middle - line // 2:middle - line // 2 + line] = _color(out, 0.5)
        corners = (0, width)
    if label:
        _caption(out, "before", corners[0], align_right=False)
        _caption(out, "after", corners[1], align_right=mode == "split")
    return out


def _color(image: np.ndarray, level: float) -> tuple[float, ...]:
    """A gray at ``level`` of full scale, opaque, in the image's channels."""
    value = full_scale(image.dtype) * level
    return (value,) * min(_channels(image), 3) + ((full_scale(image.dtype),) if _channels(image) == 4 else ())


def _canvas(like: np.ndarray, height: int, width: int) -> np.ndarray:
    """A ``height`` x ``width`` canvas of ``like``'s dtype and channels: white, or transparent with alpha."""
    fill = 0.0 if _channels(like) == 4 else full_scale(like.dtype)
    return np.full((height, width, *like.shape[2:]), fill, like.dtype)


def _paste(canvas: np.ndarray, image: np.ndarray, left: int, width: int) -> None:
    """Copy ``image`` into the columns ``left`` to ``left + width`` of ``canvas``, centred."""
    top, x = (canvas.shape[0] - image.shape[0]) // 2, left + (width - image.shape[1]) // 2
    canvas[top:top + image.shape[0], x:x + image.shape[1]] = image


def _caption(image: np.ndarray, text: str, x: int, *, align_right: bool) -> None:
    """Draw white ``text`` on a black box in a top corner, sized to the image.

    ``cv2.putText`` draws on 8-bit images only, so the caption is drawn on an 8-bit
    patch and converted to the image's depth and channels.
    """
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(0.4, min(image.shape[:2]) / 800)
    thickness = max(1, round(scale * 1.5))
    (text_w, text_h), baseline = cv2.getTextSize(text, font, scale, thickness)
    pad = max(3, text_h // 3)
    patch = np.zeros((min(text_h + baseline + 2 * pad, image.shape[0]), text_w + 2 * pad), np.uint8)
    cv2.putText(patch, text, (pad, pad + text_h), font, scale, 255, thickness, cv2.LINE_AA)
    left = max(0, x - patch.shape[1]) if align_right else x
    patch = convert_channels(convert_depth(patch[:, :image.shape[1] - left], image.dtype), _channels(image))
    if _channels(image) == 4:
        patch[..., 3] = full_scale(image.dtype)
    image[:patch.shape[0], left:left + patch.shape[1]] = patch.reshape(patch.shape[0], patch.shape[1],
                                                                       *image.shape[2:])


def check_before_after_target(path: str | os.PathLike[str], *, mode: str = "side", overwrite: bool = False) -> None:
    """Refuse, before any work, a comparison that :func:`write_before_after` could not write.

    Raises
    ------
    UsageError
        An unknown mode, an extension without an encoder, or an existing file without ``overwrite``.
    """
    if mode not in COMPARE_MODES:
        raise UsageError(f"--compare-mode {mode!r} is not one of {', '.join(COMPARE_MODES)}")
    try:
        writing.output_dtype(path, np.uint8)
    except ImageWriteError as exc:
        raise UsageError(str(exc)) from None
    if not overwrite and os.path.lexists(path):
        raise UsageError(f"{os.fspath(path)}: exists already (pass --overwrite to replace it)")


def write_before_after(path: str | os.PathLike[str], before: np.ndarray | str | os.PathLike[str],
                       after: np.ndarray | str | os.PathLike[str], *, mode: str = "side", label: bool = True,
                       quality: int | None = None, overwrite: bool = True) -> Path:
    """Write :func:`before_after` of two images (arrays or image files) atomically.

    Parameters
    ----------
    path : path
        The comparison image; its extension picks the format (depth converted as
        :func:`cvfilters.io.writing.write` does).
    before, after : numpy.ndarray or path
        The input and the filtered result; files are read with :func:`cvfilters.io.reading.read`.
    mode, label
        As for :func:`before_after`.
    quality, overwrite
        As for :func:`cvfilters.io.writing.write`.

    Raises
    ------
    ValueError
        An unknown mode (:func:`check_before_after_target` reports it as a usage error).
    ImageReadError, ImageWriteError, OutputExistsError
        As :func:`cvfilters.io.reading.read` and :func:`cvfilters.io.writing.write` raise them.
    """
    pair = [image if isinstance(image, np.ndarray) else reading.read(image) for image in (before, after)]
    return writing.write(path, before_after(*pair, mode=mode, label=label), quality=quality, overwrite=overwrite)
