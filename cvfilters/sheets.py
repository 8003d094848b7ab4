"""Images about images: contact sheets, parameter sweeps and before/after comparisons.

Three compositions, all plain numpy/OpenCV:

* :func:`contact_sheet` lays equally sized 8-bit tiles out in a labelled grid (the
  gallery in ``docs/`` and ``cvfilters sweep``).
* :func:`parse_sweep` and :func:`sweep_sheet` render a filter over one or two parameter
  ranges, written ``name:param=a..b/n`` (``n`` values from ``a`` to ``b`` inclusive);
  the other parameters of the spec are given as usual.
* :func:`before_after` puts an image and its filtered result side by side or splits
  them down the middle, in the input's depth (``cvfilters apply --compare``).

Example::

    import cvfilters as cvf
    from cvfilters.sheets import before_after, parse_sweep, sweep_sheet
    image = cvf.read("fixtures/astronaut.png")
    cvf.write("sheet.png", sweep_sheet(image, parse_sweep(["vignette:intensity=0..2/6"])))
    cvf.write("ba.png", before_after(image, cvf.apply(image, "sepia"), mode="split"))
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .errors import SpecError, UsageError
from .params import Param
from .pipeline import Pipeline, split_spec
from .pixels import full_scale
from .registry import get

LABEL_HEIGHT = 18
GAP = 4
WHITE = (255, 255, 255)
COMPARE_MODES = ("side", "split")
MAX_SWEEP_VALUES = 50
MAX_SWEEP_TILES = 400
_NUMBER = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^\s*({_NUMBER})\s*\.\.\s*({_NUMBER})\s*/\s*(\d+)\s*$")
_LOOKS_LIKE_RANGE = re.compile(r"^\s*[-+.\d].*\.\.")

__all__ = ["COMPARE_MODES", "GAP", "LABEL_HEIGHT", "Axis", "Sweep", "before_after", "check_before_after_target",
           "contact_sheet", "convert_channels", "convert_depth", "fit", "full_scale", "label_strip", "parse_sweep",
           "sweep_sheet", "to_display", "write_before_after"]


# ---------------------------------------------------------------- pixels
def convert_depth(image: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """Rescale an image to another depth (uint8, uint16 or float32 0..1), rounding to integers.

    Parameters
    ----------
    image : numpy.ndarray
        uint8, uint16, float32 or float64 pixels.
    dtype : numpy dtype
        The depth wanted.

    Returns
    -------
    numpy.ndarray
        ``image`` itself when it already has ``dtype``; float input is clipped to 0..1.
    """
    dtype = np.dtype(dtype)
    if image.dtype == dtype:
        return image
    scaled = image.astype(np.float32) * np.float32(full_scale(dtype) / full_scale(image.dtype))
    if dtype.kind == "f":
        return scaled.astype(dtype)
    return np.rint(np.clip(scaled, 0, full_scale(dtype), out=scaled), out=scaled).astype(dtype)


def _channels(image: np.ndarray) -> int:
    return 1 if image.ndim == 2 else image.shape[2]


def convert_channels(image: np.ndarray, channels: int) -> np.ndarray:
    """Gray to BGR(A) and BGR to BGRA (opaque); an image with that many channels is returned as is.

    Parameters
    ----------
    image : numpy.ndarray
        (H, W), (H, W, 1), (H, W, 3) or (H, W, 4).
    channels : int
        1, 3 or 4, not fewer than the image has (nothing is dropped).
    """
    have = _channels(image)
    if have == channels:
        return image
    if have > channels:
        raise ValueError(f"cannot reduce {have} channels to {channels}")
    code = {(1, 3): cv2.COLOR_GRAY2BGR, (1, 4): cv2.COLOR_GRAY2BGRA, (3, 4): cv2.COLOR_BGR2BGRA}[have, channels]
    return cv2.cvtColor(image.reshape(image.shape[:2]) if have == 1 else image, code)


def to_display(image: np.ndarray) -> np.ndarray:
    """Any cvfilters image as 8-bit BGR for the screen: depth scaled, gray repeated, alpha over white.

    Parameters
    ----------
    image : numpy.ndarray
        uint8, uint16 or float32 (0..1); 1, 3 or 4 channels.

    Returns
    -------
    numpy.ndarray
        (H, W, 3) uint8.
    """
    image = convert_depth(np.asarray(image), np.uint8)
    if _channels(image) == 4:
        alpha = image[..., 3:].astype(np.float32) / 255
        return np.rint(image[..., :3] * alpha + 255 * (1 - alpha)).astype(np.uint8)
    return convert_channels(image, 3)


def fit(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Scale an 8-bit BGR image to fit a ``width`` x ``height`` box, keeping its aspect, centred on white.

    Shrinking averages (``INTER_AREA``); enlarging repeats pixels (``INTER_NEAREST``) so
    pixel-level effects stay visible.
    """
    h, w = image.shape[:2]
    factor = min(width / w, height / h)
    size = (max(1, min(width, round(w * factor))), max(1, min(height, round(h * factor))))
    resized = cv2.resize(image, size, interpolation=cv2.INTER_AREA if factor < 1 else cv2.INTER_NEAREST)
    canvas = np.full((height, width, 3), WHITE, np.uint8)
    top, left = (height - size[1]) // 2, (width - size[0]) // 2
    canvas[top:top + size[1], left:left + size[0]] = resized
    return canvas


# ---------------------------------------------------------------- contact sheets
def label_strip(text: str, width: int, color: tuple[int, int, int] = (0, 0, 0),
                height: int = LABEL_HEIGHT) -> np.ndarray:
    """A white 8-bit BGR strip with ``text`` centred, the font shrunk (to a limit) until it fits.

    Parameters
    ----------
    text : str
        ASCII text (OpenCV's Hershey fonts have no other glyphs).
    width, height : int
        Strip size in pixels.
    color : tuple of int
        BGR text colour.
    """
    strip = np.full((height, width, 3), WHITE, np.uint8)
    font, scale = cv2.FONT_HERSHEY_SIMPLEX, 0.45 * height / LABEL_HEIGHT
    (text_w, text_h), _ = cv2.getTextSize(text, font, scale, 1)
    while text_w > width - 4 and scale > 0.3:
        scale -= 0.05
        (text_w, text_h), _ = cv2.getTextSize(text, font, scale, 1)
    origin = (max(2, (width - text_w) // 2), (height + text_h) // 2)
    cv2.putText(strip, text, origin, font, scale, color, 1, cv2.LINE_AA)
    return strip


def contact_sheet(tiles: Sequence[np.ndarray], labels: Sequence[str], columns: int, *, title: str | None = None,
                  colors: Sequence[tuple[int, int, int]] | None = None) -> np.ndarray:
    """Lay tiles out in a grid, each with a label strip below it, row by row.

    Parameters
    ----------
    tiles : sequence of numpy.ndarray
        8-bit BGR images of one size (see :func:`to_display` and :func:`fit`).
    labels : sequence of str
        One per tile.
    columns : int
        Tiles per row.
    title : str, optional
        A strip across the top.
    colors : sequence of BGR tuples, optional
        Label colours (default black).

    Returns
    -------
    numpy.ndarray
        The 8-bit BGR sheet on white, ``GAP`` pixels between and around the cells.
    """
    if not tiles or len(tiles) != len(labels):
        raise ValueError(f"a contact sheet needs tiles and as many labels ({len(tiles)} tiles, {len(labels)} labels)")
    tile_h, tile_w = tiles[0].shape[:2]
    columns = max(1, min(columns, len(tiles)))
    cell_w, cell_h = tile_w + GAP, tile_h + LABEL_HEIGHT + GAP
    top = LABEL_HEIGHT + GAP if title else 0
    rows = -(-len(tiles) // columns)
    sheet = np.full((top + rows * cell_h + GAP, columns * cell_w + GAP, 3), WHITE, np.uint8)
    if title:
        sheet[GAP:GAP + LABEL_HEIGHT, GAP:-GAP] = label_strip(title, sheet.shape[1] - 2 * GAP)
    for i, (tile, text) in enumerate(zip(tiles, labels, strict=True)):
        y, x = top + GAP + (i // columns) * cell_h, GAP + (i % columns) * cell_w
        sheet[y:y + tile_h, x:x + tile_w] = tile
        color = colors[i] if colors else (0, 0, 0)
        sheet[y + tile_h:y + tile_h + LABEL_HEIGHT, x:x + tile_w] = label_strip(text, tile_w, color)
    return sheet


# ---------------------------------------------------------------- sweeps
@dataclass(frozen=True)
class Axis:
    """One swept parameter: where it sits in the spec and the values it takes."""

    step: int
    item: int
    filter: str
    param: Param
    values: tuple[Any, ...]

    def assignment(self, value: Any) -> str:
        """``param=value`` as spec text."""
        return f"{self.param.name}={self.param.format(value)}"


@dataclass(frozen=True)
class Sweep:
    """A pipeline spec with one or two parameter ranges (see :func:`parse_sweep`).

    ``steps`` holds each step as its filter name and its ``key=value`` items as written;
    the first axis varies along each row of the sheet, the second (if any) from row to row.
    """

    steps: tuple[tuple[str, tuple[str, ...]], ...]
    axes: tuple[Axis, ...]
    text: str

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the sheet."""
        return (len(self.axes[1].values) if len(self.axes) > 1 else 1), len(self.axes[0].values)

    def cells(self) -> list[tuple[str, Pipeline]]:
        """``(label, pipeline)`` for every tile, row by row; parsing validates every value."""
        qualified = len(self.steps) > 1
        cells = []
        for row, column in product(range(self.shape[0]), range(self.shape[1])):
            chosen = [(self.axes[0], self.axes[0].values[column])]
            if len(self.axes) > 1:
                chosen.append((self.axes[1], self.axes[1].values[row]))
            label = ", ".join((f"{a.filter}." if qualified else "") + a.assignment(v) for a, v in chosen)
            cells.append((label, self._pipeline(chosen)))
        return cells

    def _pipeline(self, chosen: list[tuple[Axis, Any]]) -> Pipeline:
        items = [list(step_items) for _, step_items in self.steps]
        for axis, value in chosen:
            items[axis.step][axis.item] = axis.assignment(value)
        names = (name for name, _ in self.steps)
        texts = [f"{name}:{','.join(parts)}" if parts else name for name, parts in zip(names, items, strict=True)]
        return Pipeline.parse(texts)


def parse_sweep(specs: Sequence[str]) -> Sweep:
    """Parse specs in which one or two parameters are ranges ``a..b/n``.

    Parameters
    ----------
    specs : sequence of str
        Pipeline specs (``|`` joins steps), e.g. ``["gaussian_blur:sigma=1..8/4,border=wrap"]``.
        ``a..b/n`` gives ``n`` evenly spaced values from ``a`` to ``b`` inclusive (2 to
        50 values, 400 tiles at most); int parameters are rounded (to odd numbers where
        the parameter must be odd) and must not repeat.

    Returns
    -------
    Sweep
        Every tile's pipeline has been parsed, so any invalid value has been reported.

    Raises
    ------
    SpecError, ParameterError, UnknownFilterError
        Naming the filter and parameter: a malformed range, a range on a parameter that
        is not int or float, a value outside the declared range, no range or more than two.
    """
    text = " | ".join(specs)
    steps, axes = [], []
    for index, part in enumerate(p.strip() for spec in specs for p in split_spec(spec, "|")):
        name, _, rest = part.partition(":")
        items = tuple(item.strip() for item in split_spec(rest, ",")) if rest.strip() else ()
        flt = get(name.strip())
        steps.append((flt.name, items))
        for position, item in enumerate(items):
            key, _, value = item.partition("=")
            if _LOOKS_LIKE_RANGE.match(value):
                axes.append(_axis(index, position, flt.name, flt.param(key.strip()), value))
    if not 1 <= len(axes) <= 2:
        found = "no range" if not axes else f"{len(axes)} ranges"
        raise SpecError(f"a sweep takes one or two ranges such as intensity=0..2/6 ({found} in {text!r})")
    sweep = Sweep(tuple(steps), tuple(axes), text)
    if math.prod(sweep.shape) > MAX_SWEEP_TILES:
        raise SpecError(f"{text!r} makes {math.prod(sweep.shape)} tiles; a sheet holds at most {MAX_SWEEP_TILES}")
    sweep.cells()  # parses every tile's pipeline: reports any invalid value before anything runs
    return sweep


def _axis(step: int, item: int, filter_name: str, param: Param, text: str) -> Axis:
    where = f"{filter_name}: {param.name}={text.strip()}"
    match = _RANGE.match(text)
    if match is None:
        raise SpecError(f"{where} is not a range; write a..b/n for n values from a to b")
    if param.kind not in ("int", "float"):
        raise SpecError(f"{where}: only int and float parameters take a range ({param.name} is a {param.kind})")
    first, last, count = float(match[1]), float(match[2]), int(match[3])
    if not 2 <= count <= MAX_SWEEP_VALUES or first == last:
        raise SpecError(f"{where}: a range needs a != b and 2 to {MAX_SWEEP_VALUES} values")
    for end in (first, last):  # the declared range is checked at both ends, naming the parameter
        param.coerce(param.format(_snap(param, end)), filter_name)
    values = tuple(_snap(param, v) for v in np.linspace(first, last, count))
    if len(set(values)) < count:
        raise SpecError(f"{where} repeats values ({', '.join(map(param.format, values))}); ask for fewer")
    return Axis(step, item, filter_name, param, values)


def _snap(param: Param, value: float) -> int | float:
    if param.kind == "float":
        return float(f"{value:.6g}")
    number = round(value)
    return 2 * round((number - 1) / 2) + 1 if param.odd and number % 2 == 0 and number != 0 else number


def sweep_sheet(image: np.ndarray, sweep: Sweep, *, tile: int = 256, backend: str = "cpu",
                progress: Callable[[], None] | None = None) -> np.ndarray:
    """Render every tile of a sweep and lay them out with their values as labels.

    Parameters
    ----------
    image : numpy.ndarray
        The image the filters run on, at the size they should run at.
    sweep : Sweep
        From :func:`parse_sweep`.
    tile : int
        Longer side of each tile in pixels.
    backend : str
        Where the filters run (``auto``, ``cpu``, ``opencl``, ``cuda``).
    progress : callable, optional
        Called after each tile.

    Returns
    -------
    numpy.ndarray
        8-bit BGR: a title strip with the spec, then one row per value of the second
        parameter and one column per value of the first.
    """
    height, width = image.shape[:2]
    box = (max(1, round(width * tile / max(height, width))), max(1, round(height * tile / max(height, width))))
    tiles, labels = [], []
    for label, pipeline in sweep.cells():
        tiles.append(fit(to_display(pipeline(image, backend=backend)), *box))
        labels.append(label)
        if progress is not None:
            progress()
    return contact_sheet(tiles, labels, sweep.shape[1], title=sweep.text)


# ---------------------------------------------------------------- before / after
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
    from . import io
    from .errors import ImageWriteError

    if mode not in COMPARE_MODES:
        raise UsageError(f"--compare-mode {mode!r} is not one of {', '.join(COMPARE_MODES)}")
    try:
        io.output_dtype(path, np.uint8)
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
        :func:`cvfilters.io.write` does).
    before, after : numpy.ndarray or path
        The input and the filtered result; files are read with :func:`cvfilters.io.read`.
    mode, label
        As for :func:`before_after`.
    quality, overwrite
        As for :func:`cvfilters.io.write`.

    Raises
    ------
    ValueError
        An unknown mode (:func:`check_before_after_target` reports it as a usage error).
    ImageReadError, ImageWriteError, OutputExistsError
        As :func:`cvfilters.io.read` and :func:`cvfilters.io.write` raise them.
    """
    from . import io

    pair = [image if isinstance(image, np.ndarray) else io.read(image) for image in (before, after)]
    return io.write(path, before_after(*pair, mode=mode, label=label), quality=quality, overwrite=overwrite)
