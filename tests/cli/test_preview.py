"""Tests of ``cvfilters preview``, ``cvfilters sweep``, :mod:`cvfilters.viz.sheets` and the gallery.

The preview runs for real in a subprocess on a private Xvfb server (skipped unless
``Xvfb`` and ``xdotool`` are installed: apt-get install xvfb xdotool). The test drives it
through its test hook (``CVFILTERS_PREVIEW_SCRIPT``: trackbar moves and key presses)
and reads the screen from the framebuffer file Xvfb keeps with ``-fbdir``: each step
waits until the window shows exactly the image expected (found by template matching),
so nothing depends on sleeps.
"""

from __future__ import annotations

import importlib.util
import io
import os
import queue
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.cli import main
from cvfilters.cli.display import DISPLAY_HINT
from cvfilters.cli.preview import preview_copy, sliders_for
from cvfilters.core.errors import ParameterError, SpecError, UsageError
from cvfilters.engine.steps import Step
from cvfilters.viz.sheets import (
    GAP,
    LABEL_HEIGHT,
    before_after,
    check_before_after_target,
    contact_sheet,
    full_scale,
    parse_sweep,
    sweep_sheet,
    to_display,
    write_before_after,
)
from tests.conftest import FIXTURES, photo

ROOT = FIXTURES.parent
ASTRONAUT = FIXTURES / "astronaut.png"
TIMEOUT = 15.0
REMAP_AFTER = 3.0


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, list[str]]:
    """Run the CLI in this process: its exit code and its stderr lines."""
    capsys.readouterr()
    code = main([str(arg) for arg in args])
    return code, capsys.readouterr().err.strip().splitlines()


# ---------------------------------------------------------------- sliders
def test_float_slider_spans_the_declared_range_on_round_values_and_keeps_the_current_value() -> None:
    (radius, intensity) = sliders_for(cvf.Pipeline.parse("vignette:intensity=0.33"))
    assert radius.name == "radius" and radius.values[0] == 0.01 and radius.values[-1] == 10.0
    assert intensity.values[0] == 0.0 and intensity.values[-1] == 2.0
    assert 0.02 in intensity.values and 0.33 in intensity.values
    assert 90 <= len(intensity.values) <= 110
    assert intensity.position(0.33) == intensity.values.index(0.33)


def test_int_choice_and_bool_sliders_offer_only_valid_values() -> None:
    sliders = {s.name: s for s in sliders_for(cvf.Pipeline.parse("median_blur | gaussian_blur | threshold"),
                                              resolution=20)}
    size = cvf.get_filter("median_blur").param("size")
    assert sliders["1.median_blur.size"].values == tuple(range(1, int(size.large or size.max) + 1, 2))  # odd only
    assert sliders["2.gaussian_blur.ksize"].values[:3] == (0, 1, 3)  # 0 = automatic, then odd
    assert sliders["2.gaussian_blur.border"].values[0] == "reflect101"
    assert sliders["3.threshold.invert"].values == (False, True)
    assert 15 <= len(sliders["2.gaussian_blur.sigma"].values) <= 25


def test_sliders_leave_out_kernels_points_and_paths() -> None:
    names = {s.param for s in sliders_for(cvf.Pipeline.parse("convolve:kernel=[[0,1,0]] | vignette"))}
    assert "kernel" not in names and "center" not in names
    assert {"bias", "scale", "normalize", "radius"} <= names


def test_large_bound_caps_a_slider_unless_allowed() -> None:
    slow = cvf.register("slow", category="blur", summary="test only", listed=False,
                        params=[cvf.Param("n", "int", default=5, min=1, max=100, large=10)])(
        lambda ctx, image, n: image)
    pipeline = cvf.Pipeline([Step(slow, {"n": 5})])
    assert sliders_for(pipeline)[0].values == tuple(range(1, 11))
    with cvf.allow_large():
        assert sliders_for(pipeline, allow_large=True)[0].values == tuple(range(1, 101))


def test_preview_copy_shrinks_only_large_images() -> None:
    small = np.zeros((1000, 1500, 3), np.uint8)
    assert preview_copy(small) is small
    shrunk = preview_copy(np.zeros((1500, 2000, 3), np.uint8))
    assert shrunk.shape[0] * shrunk.shape[1] <= 1_500_000 and abs(shrunk.shape[1] / shrunk.shape[0] - 4 / 3) < 0.01


# ---------------------------------------------------------------- sheets
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_before_after_keeps_the_input_depth_and_widest_channels(dtype: type) -> None:
    before, after = photo(48, 64, 3, dtype), photo(30, 50, 4, dtype)
    side = before_after(before, after)
    gap = side.shape[1] - 64 - 50
    assert side.dtype == dtype and side.shape == (48, 64 + gap + 50, 4) and gap >= 2
    split = before_after(before, after, mode="split", label=False)
    assert split.shape == (48, 64, 4)
    np.testing.assert_array_equal(split[:, :30, :3], before[:, :30])  # left half: the input, opaque
    assert (split[:, :30, 3] == full_scale(dtype)).all()
    gray = before_after(photo(20, 20, 1, dtype), photo(20, 20, 1, np.uint8), label=False)
    assert gray.ndim == 2 and gray.dtype == dtype


def test_before_after_labels_top_corners_and_converts_depth() -> None:
    before = photo(200, 300, 3, np.uint16)
    plain = before_after(before, before, mode="split", label=False)
    labelled = before_after(before, (before // 257).astype(np.uint8), mode="split")
    changed = np.any(labelled != plain, axis=2)
    assert changed[:40, :80].any() and changed[:40, -80:].any()
    assert not changed[60:].any()
    with pytest.raises(ValueError, match="side, split"):
        before_after(before, before, mode="diagonal")


def test_write_before_after_from_files_and_its_preflight_check(tmp_path: Path) -> None:
    output = tmp_path / "out.png"
    cvf.write(output, cvf.apply(cvf.read(ASTRONAUT), "sepia"))
    target = write_before_after(tmp_path / "compare.png", ASTRONAUT, output, mode="split")
    assert cvf.read(target).shape == (256, 256, 3)
    with pytest.raises(UsageError, match="exists already"):
        check_before_after_target(target)
    check_before_after_target(target, overwrite=True)
    with pytest.raises(UsageError, match="no encoder for .xyz"):
        check_before_after_target(tmp_path / "c.xyz")
    with pytest.raises(UsageError, match="'diagonal' is not one of side, split"):
        check_before_after_target(tmp_path / "c.png", mode="diagonal")


def test_contact_sheet_layout() -> None:
    tiles = [np.zeros((30, 40, 3), np.uint8)] * 5
    sheet = contact_sheet(tiles, list("abcde"), 3, title="t")
    assert sheet.shape == (LABEL_HEIGHT + GAP + 2 * (30 + LABEL_HEIGHT + GAP) + GAP, 3 * (40 + GAP) + GAP, 3)


def test_to_display_composites_alpha_over_white() -> None:
    rgba = np.zeros((2, 2, 4), np.float32)
    rgba[0, 0] = (0, 0, 0, 1)
    shown = to_display(rgba)
    assert shown.dtype == np.uint8 and shown[0, 0].tolist() == [0, 0, 0] and shown[1, 1].tolist() == [255] * 3


# ---------------------------------------------------------------- sweeps
def test_parse_sweep_one_and_two_ranges() -> None:
    line = parse_sweep(["vignette:intensity=0..2/6"])
    assert line.shape == (1, 6) and line.axes[0].values == (0.0, 0.4, 0.8, 1.2, 1.6, 2.0)
    grid = parse_sweep(["gaussian_blur:sigma=1..8/4,border=wrap,ksize=3..9/3"])
    assert grid.shape == (3, 4)
    label, pipeline = grid.cells()[5]
    assert label == "sigma=3.33333, ksize=5"
    assert pipeline.steps[0].params == {"sigma": 3.33333, "ksize": 5, "border": "wrap"}
    assert parse_sweep(["median_blur:size=1..21/5"]).axes[0].values == (1, 5, 11, 17, 21)  # odd
    piped = parse_sweep(["grayscale | vignette:radius=0.5..1/2"])
    assert [label for label, _ in piped.cells()] == ["vignette.radius=0.5", "vignette.radius=1"]


@pytest.mark.parametrize(("spec", "error", "message"), [
    ("vignette:intensity=0..5/6", ParameterError, "vignette: intensity=5 is outside [0, 2]"),
    ("vignette:intensity=0..2/1", SpecError, "intensity=0..2/1: a range needs"),
    ("vignette:intensity=0..x/3", SpecError, "intensity=0..x/3 is not a range"),
    ("gaussian_blur:border=0..2/3", SpecError, "border is a choice"),
    ("median_blur:size=1..3/5", SpecError, "size=1..3/5 repeats values"),
    ("vignette", SpecError, "no range"),
    ("gaussian_blur:sigma=1..2/2,ksize=3..5/2,border=wrap | vignette:intensity=0..1/2", SpecError, "3 ranges"),
])
def test_parse_sweep_errors_name_the_parameter(spec: str, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        parse_sweep([spec])
    assert message in str(info.value)


def test_sweep_sheet_tiles_are_the_filter_at_each_value() -> None:
    image = photo(40, 60)
    sheet = sweep_sheet(image, parse_sweep(["brightness_contrast:brightness=-100..100/3"]), tile=60)
    top = LABEL_HEIGHT + 2 * GAP
    assert sheet.shape == (top + 40 + LABEL_HEIGHT + GAP, 3 * (60 + GAP) + GAP, 3)
    for column, value in enumerate((-100, 0, 100)):
        x = GAP + column * (60 + GAP)
        expected = cvf.apply(image, "brightness_contrast", brightness=value)
        np.testing.assert_array_equal(sheet[top:top + 40, x:x + 60], expected)


def test_sweep_cli_writes_a_sheet_and_refuses_bad_ranges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sheet = tmp_path / "sheet.png"
    assert run_cli(capsys, "sweep", ASTRONAUT, "-f", "vignette:intensity=0..2/6", "-o", sheet, "--tile", "64",
                   "--backend", "cpu") == (0, [])
    assert cv2.imread(str(sheet)).shape == (LABEL_HEIGHT + 2 * GAP + 64 + LABEL_HEIGHT + GAP,
                                            6 * (64 + GAP) + GAP, 3)
    code, errors = run_cli(capsys, "sweep", ASTRONAUT, "-f", "vignette:intensity=0..2/3", "-o", sheet, "--no-clobber")
    assert code == 2 and "--no-clobber refuses to replace it" in errors[0]
    assert run_cli(capsys, "sweep", ASTRONAUT, "-f", "vignette:intensity=0..2/3", "-o", sheet, "--tile", "64",
                   "--backend", "cpu") == (0, [])  # replaced, as apply replaces a named output
    assert cv2.imread(str(sheet)).shape[1] == 3 * (64 + GAP) + GAP
    bad = tmp_path / "bad.png"
    code, errors = run_cli(capsys, "sweep", ASTRONAUT, "-f", "vignette:intensity=0..5/6", "-o", bad)
    assert (code, errors) == (2, ["error: vignette: intensity=5 is outside [0, 2]"])
    assert not bad.exists()


def test_sweep_cli_tiles_are_256_px_by_default_and_allow_large_lets_slow_values_in(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sheet = tmp_path / "sheet.png"
    assert run_cli(capsys, "sweep", ASTRONAUT, "-f", "vignette:intensity=0..2/2", "-o", sheet,
                   "--backend", "cpu") == (0, [])
    image = cv2.imread(str(sheet))
    assert image is not None
    assert image.shape == (LABEL_HEIGHT + 2 * GAP + 256 + LABEL_HEIGHT + GAP, 2 * (256 + GAP) + GAP, 3)
    code, errors = run_cli(capsys, "sweep", ASTRONAUT, "-f", "median_blur:size=99..101/2", "-o", sheet, "--work", "32")
    assert code == 2 and "--allow-large" in errors[0]
    assert run_cli(capsys, "sweep", ASTRONAUT, "-f", "median_blur:size=99..101/2", "-o", sheet, "--work", "32",
                   "--tile", "32", "--backend", "cpu", "--allow-large") == (0, [])


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _last_frame(shown: str) -> list[str]:
    """The words of the last progress frame a terminal got, before the cursor went up to erase it."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.split("\r")[-2]).split()  # without the colour codes


def test_sweep_progress_is_a_transient_bar_on_a_terminal_and_nothing_when_piped(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal: "rendering tiles", a bar and the tiles done of all on standard error, erased at the end."""
    from cvfilters.cli.sweep import _tile_progress

    with _tile_progress(3) as advance:  # captured: not a terminal
        assert advance is None
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with _tile_progress(3) as advance:
        for _ in range(3):
            advance()
    shown = terminal.getvalue()
    plain = _last_frame(shown)
    assert plain[:2] == ["rendering", "tiles"] and set(plain[2]) == {"\u2501"} and plain[3:] == ["3/3"]
    assert shown.endswith("\x1b[1A\x1b[2K")  # transient: the line is cleared
    assert capsys.readouterr().out == ""


def test_sweep_cli_on_a_terminal_counts_every_tile_of_the_sweep(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3 x 2 sweep with standard error a terminal: the bar's last frame says 6/6 (the count of tiles, each
    counted as it is done). Catches the total or the callback not handed to the sheet (0/6, 6/?)."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["sweep", str(ASTRONAUT), "-f", "gaussian_blur:sigma=1..3/3,ksize=3..5/2", "-o",
                 str(tmp_path / "sheet.png"), "--tile", "32", "--work", "64", "--backend", "cpu"]) == 0
    assert _last_frame(terminal.getvalue())[-1] == "6/6"


def test_sweep_cli_runs_the_filters_on_the_backend_asked(device_backend: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--backend opencl (or cuda): each of the 3 tiles is uploaded to that device and downloaded from it once, as
    its counters show. Catches the sheet rendered on the cpu whatever the option says."""
    from cvfilters.backends import get_backend

    device = get_backend(device_backend)
    before = device.counters.snapshot()
    assert run_cli(capsys, "sweep", ASTRONAUT, "-f", "gaussian_blur:sigma=1..3/3", "-o", tmp_path / "sheet.png",
                   "--tile", "32", "--work", "64", "--backend", device_backend) == (0, [])
    done = device.counters.since(before)
    assert (done.uploads, done.downloads) == (3, 3)


def test_sweep_cli_refuses_a_sheet_it_cannot_write_before_reading(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    for name, why in (("sheet.xyz", ".xyz"), ("sheet", "a name without extension")):
        target = tmp_path / name
        code, errors = run_cli(capsys, "sweep", tmp_path / "missing.png", "-f", "vignette:intensity=0..2/3",
                               "-o", target)
        assert (code, errors) == (2, [f"error: {target}: cannot be written: no encoder for {why}"])
        assert not target.exists()


def test_sweep_cli_work_runs_the_filters_on_a_shrunk_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--work 32 on a 96 x 48 image: the filters see it area-averaged to 32 x 16 (OpenCV's INTER_AREA, called
    here), so each 32-pixel tile is cv2.GaussianBlur of that copy within 1 level; without --work the blur
    runs at full size and the tile is shrunk afterwards, which differs by far more."""
    source, sheet = tmp_path / "wide.png", tmp_path / "sheet.png"
    image = photo(48, 96)
    cv2.imwrite(str(source), image)
    small = cv2.resize(image, (32, 16), interpolation=cv2.INTER_AREA)
    top = LABEL_HEIGHT + 2 * GAP
    for work in (["--work", "32"], ["--work", "96"], []):
        assert run_cli(capsys, "sweep", source, "-f", "gaussian_blur:sigma=1..2/2", "-o", sheet, "--tile", "32",
                       "--backend", "cpu", *work) == (0, [])
        out = cv2.imread(str(sheet))
        assert out is not None and out.shape == (top + 16 + LABEL_HEIGHT + GAP, 2 * (32 + GAP) + GAP, 3)
        for column, sigma in enumerate((1, 2)):
            x = GAP + column * (32 + GAP)
            if work == ["--work", "32"]:
                reference = cv2.GaussianBlur(small, (0, 0), sigma, borderType=cv2.BORDER_REFLECT_101)
            else:  # 96 is the image's own size: nothing shrunk before the filter
                blurred = cv2.GaussianBlur(image, (0, 0), sigma, borderType=cv2.BORDER_REFLECT_101)
                reference = cv2.resize(blurred, (32, 16), interpolation=cv2.INTER_AREA)
            assert np.abs(out[top:top + 16, x:x + 32].astype(int) - reference).max() <= 1
        if not work:
            full_size = out[top:top + 16, GAP + 32 + GAP:GAP + 2 * 32 + GAP].astype(int)
            assert np.abs(full_size - cv2.GaussianBlur(small, (0, 0), 2, borderType=cv2.BORDER_REFLECT_101)).max() > 10


# ---------------------------------------------------------------- gallery
def _gallery_module() -> object:
    spec = importlib.util.spec_from_file_location("gallery", ROOT / "scripts" / "gallery.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_committed_gallery_shows_every_registered_filter() -> None:
    gallery = _gallery_module()
    path = gallery.DEFAULT_OUTPUT  # type: ignore[attr-defined]
    assert path.exists(), "run: python scripts/gallery.py"
    shown = gallery.gallery_names(path)  # type: ignore[attr-defined]
    registered = [flt.name for flt in cvf.list_filters()]
    missing, stale = sorted(set(registered) - set(shown)), sorted(set(shown) - set(registered))
    assert not missing and not stale, f"gallery is stale (missing {missing}, removed {stale}): " \
                                      "run: python scripts/gallery.py"
    assert path.stat().st_size < 800_000


# ---------------------------------------------------------------- preview without a display
def test_preview_without_a_display_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert run_cli(capsys, "preview", ASTRONAUT, "-f", "vignette") == (2, [f"error: {DISPLAY_HINT}"])
    monkeypatch.setenv("DISPLAY", ":987")
    code, errors = run_cli(capsys, "preview", ASTRONAUT, "-f", "vignette")
    assert code == 2 and errors == [f"error: {DISPLAY_HINT}; cannot connect to DISPLAY=:987"]


def test_preview_reads_its_pipeline_file_and_allow_large_before_the_display(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """-p and --allow-large are read before the display is asked for: a valid line fails only there."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text("version: 1\nsteps:\n  - filter: vignette\n")
    assert run_cli(capsys, "preview", ASTRONAUT, "-p", pipeline) == (2, [f"error: {DISPLAY_HINT}"])
    code, errors = run_cli(capsys, "preview", ASTRONAUT, "-f", "median_blur:size=101")
    assert code == 2 and "--allow-large" in errors[0]
    assert run_cli(capsys, "preview", ASTRONAUT, "-f", "median_blur:size=101", "--allow-large") == \
        (2, [f"error: {DISPLAY_HINT}"])


# ---------------------------------------------------------------- preview under Xvfb
@pytest.fixture(scope="module")
def xvfb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A private Xvfb server: its DISPLAY and the file holding its screen (XWD format)."""
    binary = shutil.which("Xvfb")
    if binary is None or shutil.which("xdotool") is None:
        pytest.skip("Xvfb and xdotool are needed (apt-get install xvfb xdotool)")
    fbdir = tmp_path_factory.mktemp("xvfb")
    read_end, write_end = os.pipe()
    server = subprocess.Popen([binary, "-displayfd", str(write_end), "-screen", "0", "800x600x24", "-nolisten", "tcp",
                               "-fbdir", str(fbdir)], pass_fds=(write_end,), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    os.close(write_end)
    try:
        yield f":{_display_number(read_end)}", fbdir / "Xvfb_screen0"
    finally:
        server.terminate()  # SIGTERM: Xvfb removes its socket and lock files
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        os.close(read_end)


def _display_number(fd: int) -> int:
    """Read the display number Xvfb writes to ``-displayfd`` once it accepts clients."""
    text, deadline = b"", time.monotonic() + TIMEOUT
    while not text.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 16) if ready else b""
        if not chunk:
            pytest.fail("Xvfb did not start")
        text += chunk
    return int(text)


def grab(screen: Path) -> np.ndarray:
    """The Xvfb screen as BGR, from its XWD framebuffer file (24-bit depth, 32 bits per pixel)."""
    data = screen.read_bytes()
    header = np.frombuffer(data[:100], ">u4")
    size, width, height, line, colours = int(header[0]), int(header[4]), int(header[5]), int(header[12]), \
        int(header[19])
    pixels = np.frombuffer(data, np.uint8, height * line, size + 12 * colours).reshape(height, line // 4, 4)
    return np.ascontiguousarray(pixels[:, :width, :3])


def mismatch(screen: Path, expected: np.ndarray) -> float:
    """Mean squared error between ``expected`` and the best matching place on the screen."""
    return float(cv2.matchTemplate(grab(screen), expected, cv2.TM_SQDIFF).min()) / expected.size


def shows(screen: Path, expected: np.ndarray) -> bool:
    """True when ``expected`` appears pixel for pixel (within 2 levels of rounding) on the screen."""
    return mismatch(screen, expected) < 4.0


class Driven:
    """A preview subprocess, its script file and its stdout lines."""

    def __init__(self, display: str, tmp_path: Path, *args: object) -> None:
        self.display = display
        self.script = tmp_path / "script.txt"
        self.script.touch()
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "CVFILTERS_PREVIEW_SCRIPT": str(self.script)}
        self.errors = tmp_path / "stderr.txt"
        with self.errors.open("w") as errors:
            self.process = subprocess.Popen([sys.executable, "-m", "cvfilters", "preview", *map(str, args)],
                                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.lines.put(line.rstrip("\n"))

    def send(self, *commands: str) -> None:
        with self.script.open("a") as script:
            script.write("".join(f"{command}\n" for command in commands))

    def wait_for(self, screen: Path, expected: np.ndarray, what: str) -> None:
        """Wait until the screen shows ``expected`` (a failure if the preview exits or it takes too long).

        Qt on an X server without a window manager now and then misses the first Expose
        of a window that is resized while it is mapped (as highgui's window is when its
        trackbars are added) and leaves it black; mapping it again repaints it.
        """
        start = time.monotonic()
        deadline, remap = start + TIMEOUT, start + REMAP_AFTER
        while not shows(screen, expected):
            if time.monotonic() > remap:
                self.remap()
                remap = deadline
            if self.process.poll() is not None:
                pytest.fail(f"preview exited with {self.process.returncode} before showing {what}: {self.stop()[1]}")
            if time.monotonic() > deadline:
                cv2.imwrite(str(self.errors.with_name("screen.png")), grab(screen))
                pytest.fail(f"the screen never showed {what} (best match: mean squared error "
                            f"{mismatch(screen, expected):.1f}; screen in {self.errors.parent}/screen.png); "
                            f"stderr: {self.errors.read_text()}")
            time.sleep(0.05)

    def remap(self) -> None:
        """Unmap and map the preview window again (xdotool)."""
        env = {**os.environ, "DISPLAY": self.display}
        found = subprocess.run(["xdotool", "search", "--name", "^cvfilters preview"], env=env, capture_output=True,
                               text=True, timeout=TIMEOUT)
        for window in found.stdout.split():
            for action in ("windowunmap", "windowmap"):
                subprocess.run(["xdotool", action, "--sync", window], env=env, timeout=TIMEOUT, check=False)

    def expect(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"preview printed no line matching {pattern!r}; stderr: {self.stop()[1]}")
            match = re.search(pattern, line)
            if match:
                return match

    def stop(self) -> tuple[int, str]:
        """Kill the preview if it still runs; its exit code and stderr."""
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait(timeout=10), self.errors.read_text()

    def finish(self) -> tuple[int, str]:
        """Wait for the preview to exit; its exit code and stderr."""
        return self.process.wait(timeout=TIMEOUT), self.errors.read_text()


def test_preview_shows_the_filter_and_follows_trackbars_and_keys(xvfb: tuple[str, Path], tmp_path: Path) -> None:
    display, screen = xvfb
    original = cv2.imread(str(ASTRONAUT))
    preview = Driven(display, tmp_path, ASTRONAUT, "-f", "vignette", "--backend", "cpu")
    try:
        default, strongest = cvf.apply(original, "vignette"), cvf.apply(original, "vignette", intensity=2.0)
        preview.wait_for(screen, default, "the filtered image")
        preview.send("key space")
        preview.wait_for(screen, original, "the input after space (before)")
        preview.send("key space", "set intensity 101", "key p")  # the last of 102 positions (0.75 among them)
        preview.expect(r"^cvfilters apply \S*astronaut.png -o astronaut-filtered.png -f vignette:intensity=2$")
        preview.expect(r"^# pipeline file")
        preview.wait_for(screen, strongest, "the image with the trackbar at its maximum")
        assert not shows(screen, default)
        preview.send("key s")
        saved = tmp_path / preview.expect(r"^saved (.+)$")[1]
        np.testing.assert_array_equal(cvf.read(saved), strongest)
        preview.send("key q")
        code, errors = preview.finish()
        assert code == 0, errors
    finally:
        preview.stop()


def test_preview_shrinks_a_large_image_and_says_so(xvfb: tuple[str, Path], tmp_path: Path) -> None:
    display, _ = xvfb
    large = tmp_path / "large.png"
    cv2.imwrite(str(large), cv2.resize(cv2.imread(str(ASTRONAUT)), (1600, 1000)))
    preview = Driven(display, tmp_path, large, "-f", "invert", "--backend", "cpu")
    try:
        preview.send("key p", "key q")
        preview.expect(r"-f invert$")
        code, errors = preview.finish()
        assert code == 0, errors
        assert "preview: 1600x1000 (1.6 MP) is shown at 1549x968" in errors
    finally:
        preview.stop()
