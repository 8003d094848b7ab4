"""``cvfilters histogram``: the plot file it writes (read back by OpenCV, or as SVG text) and its refusals."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest

from tests.cli_runner import run_cli
from tests.conftest import FIXTURES

pytest.importorskip("matplotlib", reason="the plot extra is not installed")
ASTRONAUT = FIXTURES / "astronaut.png"


def test_the_plot_has_the_asked_size(tmp_path: Path) -> None:
    proc = run_cli("histogram", ASTRONAUT, "-o", tmp_path / "h.png", "--width", 300, "--height", 200, "--log",
                   "--bins", 64)
    assert proc.returncode == 0, proc.stderr
    plot = cv2.imread(str(tmp_path / "h.png"))
    assert plot is not None and plot.shape[:2] == (200, 300)


def test_two_inputs_are_overlaid_under_the_given_title(tmp_path: Path) -> None:
    proc = run_cli("histogram", ASTRONAUT, FIXTURES / "badge-rgba.png", "-o", tmp_path / "h.svg",
                   "--title", "Before/after")
    assert proc.returncode == 0, proc.stderr
    assert "Before/after" in (tmp_path / "h.svg").read_text()


@pytest.mark.parametrize(("extra", "message"), [
    (["-o", "{tmp}/h.png", str(ASTRONAUT), str(ASTRONAUT)],
     "histogram takes one or two inputs (before and after), not 3"),
    (["-o", str(ASTRONAUT)], "is the input file; cvfilters never overwrites its input"),
    (["-o", "{tmp}/h.tga"], ".tga"),
])
def test_refusals_are_usage_errors(tmp_path: Path, extra: list[str], message: str) -> None:
    proc = run_cli("histogram", ASTRONAUT, *[arg.format(tmp=tmp_path) for arg in extra])
    assert proc.returncode == 2 and message in proc.stderr and not list(tmp_path.iterdir())


def test_no_clobber_keeps_an_existing_plot(tmp_path: Path) -> None:
    (tmp_path / "h.png").write_bytes(b"mine")
    refused = run_cli("histogram", ASTRONAUT, "-o", tmp_path / "h.png", "--no-clobber")
    assert refused.returncode == 2 and (tmp_path / "h.png").read_bytes() == b"mine"
    replaced = run_cli("histogram", ASTRONAUT, "-o", tmp_path / "h.png")
    assert replaced.returncode == 0 and cv2.imread(str(tmp_path / "h.png")) is not None


@pytest.mark.parametrize(("options", "log", "bins"), [((), False, 256), (("--log", "--bins", 64), True, 64)])
def test_the_options_and_their_defaults_reach_the_plot(tmp_path: Path, options: tuple[object, ...], log: bool,
                                                       bins: int) -> None:
    """The documented defaults (a linear count axis, 256 bins) and the given options, pixel for pixel."""
    from cvfilters.viz.plots import write_histogram_plot

    assert run_cli("histogram", ASTRONAUT, "-o", tmp_path / "cli.png", *options).returncode == 0
    write_histogram_plot(tmp_path / "ref.png", [ASTRONAUT], log=log, bins=bins)
    write_histogram_plot(tmp_path / "other.png", [ASTRONAUT], log=not log, bins=bins + 1)
    cli, ref, other = (cv2.imread(str(tmp_path / name)) for name in ("cli.png", "ref.png", "other.png"))
    assert cli is not None and ref is not None and other is not None
    assert (cli == ref).all() and (cli != other).any()
