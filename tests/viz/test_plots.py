"""The plot helpers' own contracts (cvfilters.viz.plots); the plots themselves: tests/cli/test_plots.py."""

from __future__ import annotations

import sys
from typing import Any

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
