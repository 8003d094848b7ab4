"""The ``cvfilters preview`` command (``cvfilters sweep`` is in :mod:`cvfilters.cli.sweep`).

``preview`` opens an OpenCV highgui window with the filtered image and one trackbar
per adjustable parameter of each step: int and float parameters over their declared
range (floats on a grid of about ``--resolution`` round values), choices and booleans
as an index. Kernels, points, colours, paths and text keep their values. Keys: space
toggles before/after, ``s`` saves the filtered image at full size, ``p`` prints the
current pipeline as a command line and as a pipeline file, ``q`` or Esc quits. The
window title (and Qt's status bar) shows the spec and the frame time: filtering,
download and ``imshow``. Images over 1.5 MP are previewed on a shrunken copy.

Test hook: when the environment variable ``CVFILTERS_PREVIEW_SCRIPT`` names a file,
the preview reads it line by line as it grows, one command after each drawn frame:
``set TRACKBAR POSITION`` moves a trackbar (through highgui, as a mouse would) and
``key K`` presses a key (a character, ``space`` or ``esc``). Tests drive a preview
under Xvfb with it.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import os
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import IO, Annotated, Any

import numpy as np
import typer

from cvfilters.cli.app import app
from cvfilters.cli.common import build_pipeline, check_backend
from cvfilters.cli.display import DISPLAY_HINT, require_display

WINDOW = "cvfilters preview"
PREVIEW_MAX_PIXELS = 1_500_000
MAX_INT_POSITIONS = 1000
SCRIPT_ENV = "CVFILTERS_PREVIEW_SCRIPT"
WAIT_MS = 15
KEYS_HELP = "space: before/after  s: save  p: print spec  q/Esc: quit"
_KEY_NAMES = {"space": 32, "esc": 27}
_SET = re.compile(r"^set (?P<name>.+) (?P<position>\d+)$")

__all__ = ["Slider", "preview_command", "preview_copy", "sliders_for"]


# ---------------------------------------------------------------- sliders
@dataclass(frozen=True)
class Slider:
    """A trackbar for one parameter of one step: position ``i`` means ``values[i]``."""

    name: str
    step: int
    param: str
    values: tuple[Any, ...]

    def position(self, value: Any) -> int:
        """The position showing ``value``, or the nearest one for a number between positions."""
        if value in self.values:
            return self.values.index(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(np.argmin([abs(v - value) for v in self.values]))
        return 0


def sliders_for(pipeline: Any, *, resolution: int = 100, allow_large: bool = False) -> list[Slider]:
    """One :class:`Slider` per int, float, bool and choice parameter of each step.

    Parameters
    ----------
    pipeline : cvfilters.Pipeline
        Its current values are among the positions, so nothing changes until a trackbar moves.
    resolution : int
        About how many positions a float parameter gets: round values (1, 2 or 5 times a
        power of ten apart) from its min to its max.
    allow_large : bool
        Let int and float trackbars go past the parameter's ``large`` bound up to its max.

    Returns
    -------
    list of Slider
        Named after the parameter, or ``STEP.FILTER.PARAM`` (1-based step) when the
        pipeline has several steps. Parameters without a min and max are left out.
    """
    sliders = []
    for index, step in enumerate(pipeline.steps):
        for param in step.filter.params:
            values = _positions(param, step.params[param.name], resolution, allow_large, step.filter.name)
            if len(values) > 1:
                name = param.name if len(pipeline.steps) == 1 else f"{index + 1}.{step.filter.name}.{param.name}"
                sliders.append(Slider(name, index, param.name, values))
    return sliders


def _positions(param: Any, current: Any, resolution: int, allow_large: bool, filter_name: str) -> tuple[Any, ...]:
    if param.kind == "bool":
        return (False, True)
    if param.kind == "choice":
        return tuple(param.choices)
    if param.kind not in ("int", "float") or param.min is None or param.max is None:
        return ()
    top = param.max if allow_large or param.large is None else min(param.max, param.large)
    if top <= param.min:
        return ()
    grid: Iterable[float]
    if param.kind == "int":
        grid = range(int(param.min), int(top) + 1, max(1, int(_round_step((top - param.min) / MAX_INT_POSITIONS))))
    else:
        step = _round_step((top - param.min) / resolution)
        grid = (k * step for k in range(math.ceil(param.min / step), math.floor(top / step) + 1))
    candidates = {param.min, top, *grid} | ({current} if isinstance(current, (int, float)) else set())
    return tuple(v for v in sorted(_clean(param, v) for v in candidates) if _valid(param, v, filter_name))


def _round_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, the nearest to ``raw`` (> 0) by ratio."""
    power = 10.0 ** math.floor(math.log10(raw))
    return min((m * power for m in (1, 2, 5, 10)), key=lambda step: abs(math.log(step / raw)))


def _clean(param: Any, value: float) -> int | float:
    return int(round(value)) if param.kind == "int" else float(f"{value:.10g}")


def _valid(param: Any, value: Any, filter_name: str) -> bool:
    from cvfilters.core.errors import ParameterError

    try:
        param.coerce(value, filter_name)
    except ParameterError:
        return False
    return True


def preview_copy(image: np.ndarray, max_pixels: int = PREVIEW_MAX_PIXELS) -> np.ndarray:
    """``image``, or a copy shrunk (area average) to at most ``max_pixels``, aspect kept."""
    height, width = image.shape[:2]
    if height * width <= max_pixels:
        return image
    from cvfilters.viz.sheets.display import shrink_by  # cv2: not for --help

    return shrink_by(image, math.sqrt(max_pixels / (height * width)), int)


# ---------------------------------------------------------------- the window
class Preview:
    """One preview window: the pipeline's state, its trackbars and its keys."""

    def __init__(self, path: Path, pipeline: Any, *, backend: str, resolution: int, allow_large: bool,
                 save_dir: Path) -> None:
        from cvfilters.backends import select
        from cvfilters.io import reading
        from cvfilters.viz.sheets import to_display

        self.path, self.save_dir = path, save_dir
        self.original, self.metadata = reading.read_with_metadata(path)
        shown = preview_copy(self.original)
        if shown is not self.original:
            (h, w), (sh, sw) = self.original.shape[:2], shown.shape[:2]
            typer.echo(f"preview: {w}x{h} ({w * h / 1e6:.1f} MP) is shown at {sw}x{sh}; "
                       "sizes in pixels act on the smaller copy, s saves at full size", err=True)
        self.backend = select(backend, shown, shown.shape[0] * shown.shape[1])
        self.source = self.backend.upload(shown) if self.backend.name != "cpu" else shown
        self.before = to_display(shown)
        self.steps = list(pipeline.steps)
        self.sliders = sliders_for(pipeline, resolution=resolution, allow_large=allow_large)
        self.after: np.ndarray | None = None
        self.stale, self.dirty, self.showing_before, self.ready = True, True, False, False
        self.error: str | None = None
        self.timing = ""

    @property
    def pipeline(self) -> Any:
        from cvfilters.engine.pipeline import Pipeline

        return Pipeline(self.steps)

    # ------------------------------------------------------------ window
    def open(self) -> None:
        """Create the window and its trackbars (a :class:`UsageError` if highgui cannot)."""
        import cv2

        from cvfilters.core.errors import UsageError

        try:
            cv2.namedWindow(WINDOW, cv2.WINDOW_AUTOSIZE | cv2.WINDOW_KEEPRATIO | cv2.WINDOW_GUI_EXPANDED)
        except cv2.error:
            raise UsageError(DISPLAY_HINT) from None
        for slider in self.sliders:
            value = self.steps[slider.step].params[slider.param]
            cv2.createTrackbar(slider.name, WINDOW, slider.position(value), len(slider.values) - 1,
                               functools.partial(self.move, slider))
        self.ready = True  # creating a trackbar calls back with its first position: not a move
        typer.echo(f"keys: {KEYS_HELP}", err=True)

    def move(self, slider: Slider, position: int) -> None:
        """A trackbar moved: set the parameter (validated with the others) and redraw."""
        from cvfilters.core.errors import UsageError
        from cvfilters.engine.steps import Step

        step = self.steps[slider.step]
        value = slider.values[position]
        if not self.ready or step.params[slider.param] == value:
            return
        try:
            self.steps[slider.step] = Step(step.filter, step.filter.resolve({**step.params, slider.param: value}))
            self.error = None
        except UsageError as exc:
            self.error = str(exc)
        self.stale = self.dirty = True

    def render(self) -> None:
        """Filter (if a parameter changed) and show the current frame; time both."""
        import cv2

        start = perf_counter()
        filter_ms = self._refilter() if self.stale and not self.showing_before else None
        frame = self.before if self.showing_before or self.after is None else self.after
        cv2.imshow(WINDOW, frame)
        if filter_ms is not None:
            total_ms = (perf_counter() - start) * 1000
            self.timing = f"{total_ms:.1f} ms/frame (filter {filter_ms:.1f} ms)"
        self.dirty = False
        self._show_state()

    def _refilter(self) -> float:
        import cv2

        from cvfilters.core.errors import CvfError
        from cvfilters.viz.sheets import to_display

        start = perf_counter()
        try:
            result = self.pipeline(self.source, backend=self.backend.name)
            self.after = to_display(result if isinstance(result, np.ndarray) else self.backend.download(result))
        except (CvfError, cv2.error) as exc:
            self.error = str(exc).strip().splitlines()[-1]
        self.stale = False
        return (perf_counter() - start) * 1000

    def _show_state(self) -> None:
        import cv2

        shown = "before" if self.showing_before else "after"
        state = f"error: {self.error}" if self.error else self.timing
        cv2.setWindowTitle(WINDOW, f"{WINDOW}: {self.pipeline.to_spec()} | {shown} | {state} [{self.backend.name}]")
        try:
            cv2.displayStatusBar(WINDOW, f"{shown} | {state} | {KEYS_HELP}")
        except cv2.error:  # highgui without Qt has no status bar; the title says it all
            pass

    # ------------------------------------------------------------ keys
    def press(self, key: int) -> bool:
        """Handle a key; False means quit."""
        if key in (27, ord("q")):
            return False
        if key == 32:
            self.showing_before = not self.showing_before
            self.dirty = True
        elif key == ord("s"):
            self.save()
        elif key == ord("p"):
            self.print_spec()
        return True

    def save(self) -> None:
        """Filter the full-size input and write it to the first free ``STEM-preview-N``; print its name.

        A failure is printed as an error line on stderr and the window stays open.
        """
        from cvfilters.core.errors import CvfError, OutputExistsError
        from cvfilters.io import writing

        try:
            result = self.pipeline(self.original, backend=self.backend.name)
            for number in itertools.count(1):
                target = self.save_dir / f"{self.path.stem}-preview-{number}{self.path.suffix}"
                with contextlib.suppress(OutputExistsError):
                    typer.echo(f"saved {writing.write(target, result, metadata=self.metadata, overwrite=False)}")
                    return
        except CvfError as exc:
            typer.echo(f"error: {exc}", err=True)

    def print_spec(self) -> None:
        """Print the pipeline as an ``apply`` command line and as a YAML pipeline file."""
        import yaml

        output = f"{self.path.stem}-filtered{self.path.suffix}"
        command = ["cvfilters", "apply", str(self.path), "-o", output, "-f", self.pipeline.to_spec()]
        typer.echo(shlex.join(command))
        typer.echo("# pipeline file for -p:\n" + yaml.safe_dump(self.pipeline.to_dict(), sort_keys=False).rstrip())

    def run(self, script: IO[str] | None = None) -> None:
        """The event loop: redraw when needed, wait for keys, then one script command."""
        import cv2

        pending = ""
        while True:
            if self.dirty:
                self.render()
            key = cv2.waitKey(WAIT_MS)
            if key == -1 and script is not None:
                pending += script.readline()
                if pending.endswith("\n"):
                    key, pending = self._scripted(pending.strip()), ""
            if key != -1 and not self.press(key & 0xFF):
                return
            if cv2.getWindowProperty(WINDOW, cv2.WND_PROP_VISIBLE) < 1:
                return

    def _scripted(self, line: str) -> int:
        """Run one test-hook command; a ``key`` command returns the key code, others -1."""
        import cv2

        from cvfilters.core.errors import UsageError

        moved = _SET.match(line)
        if moved:
            cv2.setTrackbarPos(moved["name"], WINDOW, int(moved["position"]))
            return -1
        command, _, argument = line.partition(" ")
        if command == "key" and (argument in _KEY_NAMES or len(argument) == 1):
            return _KEY_NAMES.get(argument) or ord(argument)
        raise UsageError(f"{SCRIPT_ENV}: {line!r} is not 'set TRACKBAR POSITION' or 'key K'")


@contextlib.contextmanager
def _script() -> Iterator[IO[str] | None]:
    path = os.environ.get(SCRIPT_ENV)
    if not path:
        yield None
        return
    with open(path) as script:
        yield script


@app.command("preview", short_help="Try a pipeline live in a window, with sliders.")
def preview_command(
    image: Annotated[Path, typer.Argument(metavar="IMAGE", hidden=True)],
    specs: Annotated[list[str] | None, typer.Option("-f", "--filter", metavar="SPEC",
                                                    help="name or name:key=value,...; repeat or join with |")] = None,
    pipeline_file: Annotated[Path | None, typer.Option("-p", "--pipeline", help="YAML/JSON pipeline file.")] = None,
    backend: Annotated[str, typer.Option(help="auto, cpu, opencl or cuda.")] = "auto",
    resolution: Annotated[int, typer.Option(min=2, max=1000, help="About how many positions a float trackbar has.")
                          ] = 100,
    save_dir: Annotated[Path, typer.Option(help="Where s saves IMAGE-preview-N.EXT.")] = Path("."),
    large: Annotated[bool, typer.Option("--allow-large", help="Let trackbars reach very slow values.")] = False,
) -> None:
    """Show a pipeline on an image in a window, with a trackbar per numeric or choice parameter.

    IMAGE: the image to preview.

    Keys: space before/after, s save (full size, name printed), p print the spec and a
    pipeline file, q or Esc quit. Images over 1.5 MP are previewed on a smaller copy.
    """
    from cvfilters.registry.params import allow_large

    with allow_large(large):
        pipeline = build_pipeline(specs, pipeline_file)
        check_backend(backend)
        require_display()
        preview = Preview(image, pipeline, backend=backend, resolution=resolution, allow_large=large,
                          save_dir=save_dir)
        preview.open()
        try:
            with _script() as script:
                preview.run(script)
        finally:
            import cv2

            cv2.destroyAllWindows()
