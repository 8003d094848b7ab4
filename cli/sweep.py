"""The ``cvfilters sweep`` command: a contact sheet of a filter over one or two parameter ranges."""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from cvfilters.cli.app import app
from cvfilters.cli.common import check_backend, check_named_output


@app.command("sweep", short_help="Contact sheet of a filter over parameter ranges.")
def sweep_command(
    image: Annotated[Path, typer.Argument(metavar="IMAGE", hidden=True)],
    specs: Annotated[list[str], typer.Option("-f", "--filter", metavar="SPEC",
                                             help="A spec with one or two ranges PARAM=A..B/N; repeat or join with |")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The contact sheet (any image format).")],
    tile: Annotated[int, typer.Option(min=32, max=4096, help="Longer side of each tile in pixels.")] = 256,
    work: Annotated[int | None, typer.Option(min=16, help="Run the filters on a copy this long on its longer "
                                                          "side (default: full size, as apply would).")] = None,
    backend: Annotated[str, typer.Option(help="auto, cpu, opencl or cuda.")] = "auto",
    no_clobber: Annotated[bool, typer.Option("--no-clobber", help="Refuse to replace an existing sheet (it is "
                                                                  "replaced by default, as apply does).")] = False,
    overwrite: Annotated[bool, typer.Option(hidden=True, help="Replace an existing sheet (the default).")] = False,
    large: Annotated[bool, typer.Option("--allow-large", help="Permit parameters that can run very long.")] = False,
) -> None:
    """Render a contact sheet of a filter over one or two parameter ranges, each tile labelled with its values.

    IMAGE: the image to filter.

    'vignette:intensity=0..2/6' gives one row of 6 tiles (0, 0.4 ... 2); a second range,
    'gaussian_blur:sigma=1..8/4,ksize=3..9/4', gives a grid. Other parameters are given as usual.
    """
    from cvfilters.io import reading, writing
    from cvfilters.registry.params import allow_large
    from cvfilters.viz.sheets import parse_sweep, sweep_sheet

    with allow_large(large):
        sweep = parse_sweep(specs)
        check_backend(backend)
        _check_sheet_path(output, image, no_clobber and not overwrite)
        source = _shrunk(reading.read(image), work)
        with _tile_progress(math.prod(sweep.shape)) as advance:
            sheet = sweep_sheet(source, sweep, tile=tile, backend=backend, progress=advance)
    writing.write(output, sheet, overwrite=True)


def _check_sheet_path(output: Path, image: Path, no_clobber: bool) -> None:
    from cvfilters.core.errors import ImageWriteError, UsageError
    from cvfilters.io import writing

    try:
        writing.output_dtype(output, np.uint8)
    except ImageWriteError as exc:
        raise UsageError(str(exc)) from None
    check_named_output(output, [image], no_clobber)


def _shrunk(image: np.ndarray, work: int | None) -> np.ndarray:
    if work is None or max(image.shape[:2]) <= work:
        return image
    from cvfilters.viz.sheets.display import shrink_by  # cv2: not for --help

    return shrink_by(image, work / max(image.shape[:2]), round)



@contextlib.contextmanager
def _tile_progress(total: int) -> Iterator[Any]:
    """A transient rich bar on a terminal (``advance`` after each tile); nothing when piped."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("rendering tiles"), BarColumn(), MofNCompleteColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("tiles", total=total)
        yield lambda: bar.advance(task)
