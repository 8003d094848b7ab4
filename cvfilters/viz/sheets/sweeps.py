"""Parameter sweeps: ``name:param=a..b/n`` over one or two parameters, rendered as a contact sheet."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from cvfilters.core.errors import SpecError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.spec import split_spec
from cvfilters.registry.catalog import get
from cvfilters.registry.params import Param
from cvfilters.viz.sheets.contact import contact_sheet
from cvfilters.viz.sheets.display import fit, to_display

MAX_SWEEP_VALUES = 50
MAX_SWEEP_TILES = 400
_NUMBER = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^\s*({_NUMBER})\s*\.\.\s*({_NUMBER})\s*/\s*(\d+)\s*$")
_LOOKS_LIKE_RANGE = re.compile(r"^\s*[-+.\d].*\.\.")


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


