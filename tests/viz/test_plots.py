"""The plot helpers' own contracts (cvfilters.viz.plots); the plots themselves: tests/cli/test_plots.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.core.errors import UsageError
from cvfilters.viz import plots


def test_before_after_plot_passes_its_documented_defaults_and_values_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defaults as documented: linear counts, 256 bins, 960 x 540, "before"/"after", no title, overwrite."""
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    monkeypatch.setattr(plots, "write_histogram_plot", lambda *args, **kwargs: seen.append((args, kwargs)))
    plots.write_before_after_plot("p.png", "a.png", "b.png")
    plots.write_before_after_plot("q.png", "a.png", "b.png", log=True, bins=64, size=(320, 200), labels=("in", "out"),
                                  title="T", overwrite=False)
    assert seen == [
        (("p.png", ["a.png", "b.png"], ["before", "after"]),
         {"log": False, "bins": 256, "size": (960, 540), "title": None, "overwrite": True}),
        (("q.png", ["a.png", "b.png"], ["in", "out"]),
         {"log": True, "bins": 64, "size": (320, 200), "title": "T", "overwrite": False}),
    ]


def test_require_matplotlib_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(UsageError) as caught:
        plots.require_matplotlib()
    assert str(caught.value) == 'the histogram plot needs matplotlib: pip install "cvfilters[plot]"'


def _numpy_centres(bins: int, low: float, high: float) -> np.ndarray:
    edges = np.histogram_bin_edges([], bins=bins, range=(low, high))
    return (edges[:-1] + edges[1:]) / 2


@pytest.mark.parametrize(("dtype", "bins", "full"), [(np.uint8, 256, 255), (np.uint8, 16, 255), (np.uint16, 64, 65535)])
def test_plot_x_axis_puts_each_bin_at_its_centre_in_image_units(dtype: type, bins: int, full: int) -> None:
    """A shifted or scaled x axis (bin k's curve point away from the middle of its values) is caught."""
    centres, label = plots._bin_centres(np.dtype(dtype), bins, True)
    # bin k holds integer values from k * w up to (k + 1) * w - 1: its centre as np.histogram's over [-0.5, full + 0.5)
    np.testing.assert_allclose(centres, _numpy_centres(bins, -0.5, full + 0.5), rtol=0, atol=1e-9)
    assert label == f"value ({np.dtype(dtype).name}, 0 to {full})"
    fractions, label = plots._bin_centres(np.dtype(dtype), bins, False)
    np.testing.assert_allclose(fractions, _numpy_centres(bins, -0.5, full + 0.5) / full, rtol=0, atol=1e-12)
    assert label == "value (fraction of full scale)"


def test_plot_x_axis_of_a_float_image_runs_from_0_to_1() -> None:
    """float32 bins split [0, 1]: their centres (not shifted by a bin, not integer-scaled) and the label."""
    for native in (True, False):
        centres, label = plots._bin_centres(np.dtype(np.float32), 10, native)
        np.testing.assert_allclose(centres, _numpy_centres(10, 0.0, 1.0), rtol=0, atol=1e-12)
        assert label == "value (float32, 0 to 1)"


def _fractions(values: np.ndarray, bins: int) -> np.ndarray:
    counts, _ = np.histogram(values, bins=bins, range=(0, 256))
    return counts / values.size


def test_plot_curves_are_the_fraction_of_pixels_per_bin_of_b_g_r_and_luminance() -> None:
    """Curves named and coloured B, G, R, luminance, each numpy's counts over H * W pixels (not H * H, not x)."""
    image = np.random.default_rng(3).integers(0, 256, (5, 7, 4), dtype=np.uint8)  # BGRA: alpha left out
    curves = plots._curves(image, 16)
    assert [(name, colour) for name, colour, _ in curves] == [
        ("B", "tab:blue"), ("G", "tab:green"), ("R", "tab:red"), ("luminance", "black")]
    luma = cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    expected = [_fractions(image[..., c], 16) for c in range(3)] + [_fractions(luma, 16)]
    for (_, _, got), want in zip(curves, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 7), (5, 7, 1)])
def test_plot_curve_of_a_gray_image_is_one_black_gray_curve(shape: tuple[int, ...]) -> None:
    """A gray image (2-D or one channel) gives one curve, "gray" in black, numpy's fractions per bin."""
    image = np.random.default_rng(4).integers(0, 256, shape, dtype=np.uint8)
    [(name, colour, fractions)] = plots._curves(image, 16)
    assert (name, colour) == ("gray", "black")
    np.testing.assert_allclose(fractions, _fractions(image, 16), rtol=0, atol=1e-12)


def _bgr_image() -> np.ndarray:
    return np.random.default_rng(5).integers(0, 256, (12, 10, 3), dtype=np.uint8)


def test_histogram_plot_is_a_png_of_the_asked_size_with_blue_green_and_red_curves() -> None:
    """The default format is a PNG (cv2 decodes it) of width x height, with the B, G and R curves in colour."""
    png = plots.render_histogram_plot([_bgr_image()], size=(320, 200))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    plot = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert plot.shape == (200, 320, 3)
    for rgb in ((31, 119, 180), (44, 160, 44), (214, 39, 40)):  # tab:blue, tab:green, tab:red
        near = np.abs(plot.astype(int) - rgb[::-1]).max(axis=2) <= 40
        assert near.sum() >= 20, rgb


def test_histogram_plot_defaults_are_linear_256_bins_and_labels_as_documented() -> None:
    """Defaults: linear, 256 bins, "image" or "before"/"after", title the labels joined by " vs "."""
    one, two = [_bgr_image()], [_bgr_image(), 255 - _bgr_image()]
    small = {"size": (240, 160)}
    assert plots.render_histogram_plot(one, **small) == plots.render_histogram_plot(
        one, ["image"], log=False, bins=256, title="image", fmt="png", **small)
    assert plots.render_histogram_plot(two, **small) == plots.render_histogram_plot(
        two, ["before", "after"], title="before vs after", **small)
    assert plots.render_histogram_plot(one, ["mine"], **small) != plots.render_histogram_plot(one, **small)


def test_histogram_plot_of_three_images_is_refused() -> None:
    with pytest.raises(UsageError, match="one or two images"):
        plots.render_histogram_plot([_bgr_image()] * 3)


def test_histogram_plot_does_not_depend_on_the_users_matplotlib_figure_dpi() -> None:
    """A figure left at matplotlib's figure.dpi would lay out (tight_layout) differently for another setting."""
    import matplotlib

    small = {"size": (240, 160)}
    with matplotlib.rc_context({"figure.dpi": 37}):
        odd = plots.render_histogram_plot([_bgr_image()], **small)
    assert odd == plots.render_histogram_plot([_bgr_image()], **small)


def _figure_of(monkeypatch: pytest.MonkeyPatch, *args: Any, draw: Any = None, **kwargs: Any) -> Any:
    """The matplotlib figure ``draw`` (``render_histogram_plot`` unless given) draws, caught as it is saved."""
    from matplotlib.figure import Figure

    saved: list[Figure] = []
    original = Figure.savefig

    def keep(self: Figure, *a: Any, **k: Any) -> None:
        saved.append(self)
        original(self, *a, **k)

    monkeypatch.setattr(Figure, "savefig", keep)
    (draw or plots.render_histogram_plot)(*args, **kwargs)
    assert len(saved) == 1
    return saved[0]


def test_histogram_plot_draws_what_its_docstring_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before (solid) and after (dashed): B, G, R and luminance curves in blue, green, red and black, 1 px wide,
    legend names with the image's label, the axes' labels, a title "before vs after", a faint grid, counts from 0.
    Log scale: empty bins are gaps (NaN), the count axis says so. Catches styling, labels or the scale lost."""
    pytest.importorskip("matplotlib")
    from matplotlib.font_manager import FontProperties

    image = np.zeros((4, 4, 3), np.uint8)
    image[:2] = (10, 200, 90)
    figure = _figure_of(monkeypatch, [image, 255 - image], bins=16)
    axes = figure.axes[0]
    lines = axes.get_lines()
    assert [line.get_label() for line in lines] == [f"{name} ({label})" for label in ("before", "after")
                                                    for name in ("B", "G", "R", "luminance")]
    assert [line.get_linestyle() for line in lines] == ["-"] * 4 + ["--"] * 4
    assert [line.get_color() for line in lines[:4]] == ["tab:blue", "tab:green", "tab:red", "black"]
    assert {line.get_linewidth() for line in lines} == {1.0} and {line.get_alpha() for line in lines} == {0.9}
    assert axes.get_xlabel() == "value (uint8, 0 to 255)"
    assert axes.get_ylabel() == "fraction of pixels per bin"
    assert axes.get_title() == "before vs after" and axes.get_ylim()[0] == 0.0 and axes.get_yscale() == "linear"
    assert all(line.get_visible() and line.get_alpha() == 0.3 for line in axes.get_xgridlines())
    legend = axes.get_legend()
    assert [text.get_text() for text in legend.get_texts()] == [line.get_label() for line in lines]
    assert legend._ncols == 2  # matplotlib keeps the column count only here
    small = FontProperties(size="small").get_size_in_points()
    assert {text.get_fontsize() for text in legend.get_texts()} == {small}
    assert not np.isnan(lines[0].get_ydata()).any()  # linear counts: empty bins at 0, no gaps
    assert lines[0].get_xdata()[-1] > 200  # bin centres in image units, not bin numbers
    assert plots.render_histogram_plot([image], fmt="svg").lstrip().startswith(b"<?xml")
    logged = _figure_of(monkeypatch, [image], log=True, bins=16, title="mine").axes[0]
    assert logged.get_yscale() == "log" and logged.get_title() == "mine"
    assert logged.get_ylabel() == "fraction of pixels per bin (log scale)"
    first = logged.get_lines()[0]
    assert first.get_label() == "B" and np.isnan(first.get_ydata()).sum() == 15  # B: 0 and 10 share bin 0 of 16
    assert logged.get_legend()._ncols == 1


def test_a_histogram_plot_of_files_names_its_curves_after_them_and_replaces_an_old_plot(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``write_histogram_plot`` of two files: legends with the files' names, 256 bins unless asked, an existing
    plot replaced by default; 16 bins when asked. Catches the names, the bins or the default lost on the way."""
    pytest.importorskip("matplotlib")
    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((4, 4, 3), np.uint8))
    cv2.imwrite(str(tmp_path / "b.png"), np.full((4, 4, 3), 99, np.uint8))
    (tmp_path / "plot.png").write_bytes(b"old")
    files = [tmp_path / "a.png", tmp_path / "b.png"]
    axes = _figure_of(monkeypatch, tmp_path / "plot.png", files, draw=plots.write_histogram_plot).axes[0]
    assert [line.get_label() for line in axes.get_lines()][::4] == ["B (a.png)", "B (b.png)"]
    assert len(axes.get_lines()[0].get_xdata()) == 256
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
    asked = _figure_of(monkeypatch, tmp_path / "plot.png", files, bins=16, draw=plots.write_histogram_plot)
    assert len(asked.axes[0].get_lines()[0].get_xdata()) == 16


def test_a_plot_of_another_extension_is_refused_listing_the_ones_there_are() -> None:
    with pytest.raises(UsageError) as caught:
        plots.plot_format(Path("plot.bmp"))
    assert str(caught.value) == "plot.bmp: a plot is written as .png, .svg, .pdf, .jpg, .jpeg (by its extension)"
