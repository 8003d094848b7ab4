"""Histogram plots: the B, G, R and luminance curves of one image, or two (before and after).

Plots are drawn by matplotlib with its Agg renderer (a ``Figure`` with a
``FigureCanvasAgg``: no pyplot, no display, no global state), imported only when a
plot is made. Without matplotlib the command prints one line,
``error: the histogram plot needs matplotlib: pip install "cvfilters[plot]"``, and
exits with 2.

``cvfilters histogram`` and ``cvfilters apply ... --histogram plot.png`` (the last one)
call these::

    from cvfilters.viz.plots import write_histogram_plot, write_before_after_plot
    write_histogram_plot("hist.png", [image])                      # B, G, R and luminance
    write_before_after_plot("ba.png", "in.jpg", "out.jpg", log=True)
"""

from __future__ import annotations

import io as _io
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cvfilters.core.errors import OutputExistsError, UsageError

# histograms and io (cv2) are imported where a plot is made: `cvfilters --help` loads this module.

MATPLOTLIB_HINT = 'the histogram plot needs matplotlib: pip install "cvfilters[plot]"'
DEFAULT_SIZE = (960, 540)
DPI = 100
PLOT_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf", ".jpg": "jpeg", ".jpeg": "jpeg"}
_COLOUR_CURVES = (("B", 0, "tab:blue"), ("G", 1, "tab:green"), ("R", 2, "tab:red"))
_STYLES = ("-", "--")

__all__ = ["MATPLOTLIB_HINT", "PLOT_FORMATS", "plot_format", "render_histogram_plot", "require_matplotlib",
           "write_before_after_plot", "write_histogram_plot"]


def require_matplotlib() -> None:
    """Raise :class:`cvfilters.UsageError` (CLI exit code 2) with the install hint if matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(MATPLOTLIB_HINT) from None


def _curves(image: np.ndarray, bins: int) -> list[tuple[str, str, np.ndarray]]:
    """(name, colour, fraction of pixels per bin) for B, G, R and luminance, or gray."""
    from cvfilters.filters._shared.histograms import histogram

    pixels = image.shape[0] * image.shape[1]
    if image.ndim == 2 or image.shape[2] == 1:
        return [("gray", "black", histogram(image, bins, channels=0) / pixels)]
    curves = [(name, colour, histogram(image, bins, channels=c) / pixels) for name, c, colour in _COLOUR_CURVES]
    return [*curves, ("luminance", "black", histogram(image, bins, channels="luminance") / pixels)]


def _bin_centres(dtype: np.dtype, bins: int, native: bool) -> tuple[np.ndarray, str]:
    """Bin centres in the image's units (``native``) or as a fraction of full scale, and the axis label."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (np.arange(bins) + 0.5) / bins, "value (float32, 0 to 1)"
    full = float(np.iinfo(dtype).max)
    centres = (np.arange(bins) + 0.5) * (full + 1) / bins - 0.5
    if native:
        return centres, f"value ({dtype.name}, 0 to {int(full)})"
    return centres / full, "value (fraction of full scale)"


def render_histogram_plot(images: Sequence[np.ndarray], labels: Sequence[str] | None = None, *, log: bool = False,
                          bins: int = 256, size: tuple[int, int] = DEFAULT_SIZE, title: str | None = None,
                          fmt: str = "png") -> bytes:
    """Draw the histograms of one or two images (before, after) and return the encoded plot.

    Parameters
    ----------
    images : sequence of numpy.ndarray
        One or two uint8, uint16 or float32 images (gray, BGR or BGRA; alpha is left out).
    labels : sequence of str, optional
        A name per image for the legend (default "image", or "before" and "after").
    log : bool
        Logarithmic count axis (empty bins leave gaps).
    bins : int
        Equal-width bins over the full range, 2 to 65536 (see ``cvfilters.histogram``).
    size : (int, int)
        Width and height of the plot in pixels (raster formats) or in points x 100/72 (svg, pdf).
    title : str, optional
        Defaults to the labels.
    fmt : str
        A matplotlib format: png, svg, pdf or jpeg.

    Returns
    -------
    bytes
        One axes with B, G, R (blue, green, red) and BT.601 luminance (black) curves, or
        gray, as the fraction of pixels per bin; the second image dashed.

    Raises
    ------
    UsageError
        matplotlib is not installed, or more than two images.
    """
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not 1 <= len(images) <= 2:
        raise UsageError(f"a histogram plot shows one or two images (before and after), not {len(images)}")
    labels = list(labels) if labels else (["image"] if len(images) == 1 else ["before", "after"])
    width, height = size
    # Half a pixel more than asked: Agg truncates width * dpi, which float error can put just below.
    figure = Figure(figsize=((width + 0.5) / DPI, (height + 0.5) / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    native = len({np.dtype(image.dtype) for image in images}) == 1
    for image, label, style in zip(images, labels, _STYLES, strict=False):
        x, xlabel = _bin_centres(image.dtype, bins, native)
        for name, colour, fractions in _curves(np.asarray(image), bins):
            y = np.where(fractions > 0, fractions, np.nan) if log else fractions
            legend = name if len(images) == 1 else f"{name} ({label})"
            axes.plot(x, y, style, color=colour, linewidth=1.0, label=legend, alpha=0.9)
    if log:
        axes.set_yscale("log")
    else:
        axes.set_ylim(bottom=0)
    axes.set_xlabel(xlabel)
    axes.set_ylabel("fraction of pixels per bin" + (" (log scale)" if log else ""))
    axes.set_title(title if title is not None else " vs ".join(labels))
    axes.grid(True, alpha=0.3)
    axes.legend(loc="best", fontsize="small", ncol=2 if len(images) == 2 else 1)
    figure.tight_layout()
    buffer = _io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=DPI)
    return buffer.getvalue()


def plot_format(path: Path) -> str:
    try:
        return PLOT_FORMATS[path.suffix.lower()]
    except KeyError:
        raise UsageError(f"{path}: a plot is written as {', '.join(PLOT_FORMATS)} (by its extension)") from None


def _as_image(image: np.ndarray | str | os.PathLike[str]) -> np.ndarray:
    from cvfilters.io.reading import read

    if isinstance(image, np.ndarray):
        return image
    return read(image)


def write_histogram_plot(path: str | os.PathLike[str], images: Sequence[np.ndarray | str | os.PathLike[str]],
                         labels: Sequence[str] | None = None, *, log: bool = False, bins: int = 256,
                         size: tuple[int, int] = DEFAULT_SIZE, title: str | None = None,
                         overwrite: bool = True) -> Path:
    """Write the histogram plot of one or two images (arrays or image files) to ``path``, atomically.

    The format comes from the extension (.png, .svg, .pdf, .jpg); see
    :func:`render_histogram_plot` for the other parameters. Image files are labelled
    by their names unless ``labels`` is given.

    Raises
    ------
    UsageError
        matplotlib is missing, an unknown extension, or not one or two images.
    OutputExistsError
        ``path`` exists and ``overwrite`` is False.
    ImageReadError, ImageWriteError
        An input cannot be read; the plot cannot be written.
    """
    require_matplotlib()
    path = Path(path)
    fmt = plot_format(path)
    if not overwrite and os.path.lexists(path):
        raise OutputExistsError(path)
    if labels is None and all(isinstance(image, (str, os.PathLike)) for image in images):
        labels = [Path(image).name for image in images]  # type: ignore[arg-type]
    arrays = [_as_image(image) for image in images]
    from cvfilters.io.writing import write_bytes

    write_bytes(path, render_histogram_plot(arrays, labels, log=log, bins=bins, size=size, title=title, fmt=fmt))
    return path


def write_before_after_plot(path: str | os.PathLike[str], before: np.ndarray | str | os.PathLike[str],
                            after: np.ndarray | str | os.PathLike[str], *, log: bool = False, bins: int = 256,
                            size: tuple[int, int] = DEFAULT_SIZE, labels: tuple[str, str] = ("before", "after"),
                            title: str | None = None, overwrite: bool = True) -> Path:
    """Write one plot with the histograms of ``before`` (solid) and ``after`` (dashed).

    ``before`` and ``after`` are images (numpy arrays) or image files. This is what
    ``cvfilters apply INPUT -o OUT --histogram PLOT`` writes: the input and the output.
    Call :func:`require_matplotlib` before any work to fail early (exit code 2).
    """
    return write_histogram_plot(path, [before, after], list(labels), log=log, bins=bins, size=size, title=title,
                                overwrite=overwrite)
