"""The ``cvfilters histogram`` command: it calls :mod:`cvfilters.viz.plots`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cvfilters.cli.app import app
from cvfilters.cli.common import check_named_output
from cvfilters.viz.plots import DEFAULT_SIZE, plot_format, require_matplotlib, write_histogram_plot

__all__ = ["histogram_command"]


@app.command("histogram", short_help="Plot the B, G, R and luminance histograms of images.")
def histogram_command(
    inputs: Annotated[list[Path], typer.Argument(metavar="INPUT [INPUT2]", hidden=True)],
    output: Annotated[Path, typer.Option("-o", "--output", help="Plot file: .png, .svg, .pdf or .jpg.")],
    log: Annotated[bool, typer.Option("--log", help="Logarithmic count axis.")] = False,
    bins: Annotated[int, typer.Option(min=2, max=65536, help="Bins over the full range (256: one per 8-bit level).")
                    ] = 256,
    width: Annotated[int, typer.Option(min=100, max=10000, help="Plot width in pixels.")] = DEFAULT_SIZE[0],
    height: Annotated[int, typer.Option(min=100, max=10000, help="Plot height in pixels.")] = DEFAULT_SIZE[1],
    title: Annotated[str | None, typer.Option(help="Plot title (default: the file names).")] = None,
    no_clobber: Annotated[bool, typer.Option("--no-clobber", help="Refuse to replace an existing plot file (it is "
                                                                  "replaced by default, as apply does).")] = False,
    overwrite: Annotated[bool, typer.Option(hidden=True, help="Replace an existing plot file (the default).")
                         ] = False,
) -> None:
    """Plot the histograms of an image: B, G, R and luminance curves (two images: before and after).

    INPUT [INPUT2]: an image, or two (before and after) overlaid.
    """
    from cvfilters.core.errors import UsageError

    require_matplotlib()
    if len(inputs) > 2:
        raise UsageError(f"histogram takes one or two inputs (before and after), not {len(inputs)}")
    plot_format(output)
    check_named_output(output, list(inputs), no_clobber and not overwrite)
    write_histogram_plot(output, list(inputs), log=log, bins=bins, size=(width, height), title=title,
                         overwrite=True)
