"""The preview window's logic in this process: highgui replaced by a recorder, no display needed.

tests/cli/test_preview.py drives a real preview under Xvfb in a subprocess (what the screen
shows); here :class:`cvfilters.cli.preview.Preview` runs in the test process against
:class:`Highgui`, which records every frame shown, title, status line and trackbar and feeds
keys, so each method's effect is checked exactly. Expected frames come from numpy formulas
(``255 - image`` for invert) or the public API on the cpu backend; expected lines are written
out by hand.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.cli import preview as preview_module
from cvfilters.cli.preview import Preview, Slider, sliders_for
from cvfilters.core.errors import UsageError
from cvfilters.engine.steps import Step

TITLE = "cvfilters preview"
KEYS = "space: before/after  s: save  p: print spec  q/Esc: quit"


class Highgui:
    """What the preview asks of OpenCV's highgui, recorded; keys come from ``keys`` (-1 when none)."""

    def __init__(self, keys: list[int] | None = None, *, status_bar: bool = True, window: bool = True) -> None:
        self.keys = list(keys or [])
        self.status_bar, self.window = status_bar, window
        self.windows: list[tuple[str, int]] = []
        self.frames: list[np.ndarray] = []
        self.titles: list[str] = []
        self.statuses: list[str] = []
        self.trackbars: dict[str, list[Any]] = {}
        self.waits: list[int] = []
        self.closed_after: int | None = None
        self.destroyed = False

    def install(self, monkeypatch: pytest.MonkeyPatch) -> Highgui:
        for name in ("namedWindow", "createTrackbar", "setTrackbarPos", "imshow", "setWindowTitle",
                     "displayStatusBar", "waitKey", "getWindowProperty", "destroyAllWindows"):
            monkeypatch.setattr(cv2, name, getattr(self, name))
        return self

    def namedWindow(self, name: str, flags: int) -> None:  # highgui's names
        if not self.window:
            raise cv2.error("no display")
        self.windows.append((name, flags))

    def createTrackbar(self, name: str, window: str, position: int, count: int,
                       callback: Callable[[int], None]) -> None:
        assert window == TITLE
        self.trackbars[name] = [position, count, callback]
        callback(position)  # highgui calls back with the first position

    def setTrackbarPos(self, name: str, window: str, position: int) -> None:
        assert window == TITLE
        self.trackbars[name][0] = position
        self.trackbars[name][2](position)

    def imshow(self, window: str, frame: np.ndarray) -> None:
        assert window == TITLE
        self.frames.append(frame.copy())

    def setWindowTitle(self, window: str, title: str) -> None:
        assert window == TITLE
        self.titles.append(title)

    def displayStatusBar(self, window: str, text: str, delay: int = 0) -> None:
        assert window == TITLE
        if not self.status_bar:
            raise cv2.error("no Qt")
        self.statuses.append(text)

    def waitKey(self, delay: int) -> int:
        self.waits.append(delay)
        return self.keys.pop(0) if self.keys else -1

    def getWindowProperty(self, window: str, prop: int) -> float:
        assert window == TITLE and prop == cv2.WND_PROP_VISIBLE
        return 0.0 if self.closed_after is not None and len(self.waits) >= self.closed_after else 1.0

    def destroyAllWindows(self) -> None:
        self.destroyed = True


def gradient(height: int = 24, width: int = 32) -> np.ndarray:
    y, x = np.mgrid[0:height, 0:width]
    return np.dstack([x * 7 % 256, y * 9 % 256, (x + y) * 3 % 256]).astype(np.uint8)


@pytest.fixture()
def picture(tmp_path: Path) -> Path:
    path = tmp_path / "pic.png"
    assert cv2.imwrite(str(path), gradient())
    return path


def make(path: Path, spec: str, **options: Any) -> Preview:
    settings: dict[str, Any] = {"backend": "cpu", "resolution": 100, "allow_large": False, "save_dir": path.parent}
    return Preview(path, cvf.Pipeline.parse(spec), **{**settings, **options})


def vignette(image: np.ndarray, intensity: float) -> np.ndarray:
    return cvf.apply(image, "vignette", intensity=intensity, backend="cpu")


# ---------------------------------------------------------------- the state before the window
def test_a_new_preview_holds_the_image_the_steps_and_nothing_filtered_yet(picture: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    preview = make(picture, "vignette:intensity=0.5 | invert", resolution=10)
    np.testing.assert_array_equal(preview.original, gradient())
    np.testing.assert_array_equal(preview.before, gradient())
    np.testing.assert_array_equal(preview.source, gradient())
    assert preview.path == picture and preview.save_dir == picture.parent and preview.backend.name == "cpu"
    assert preview.pipeline.to_spec() == "vignette:intensity=0.5 | invert"
    assert [s.name for s in preview.sliders] == ["1.vignette.radius", "1.vignette.intensity"]
    assert preview.sliders[1].values == (0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)  # resolution 10
    assert preview.after is None and preview.error is None and preview.timing == ""
    assert (preview.stale, preview.dirty, preview.showing_before, preview.ready) == (True, True, False, False)
    assert capsys.readouterr().err == ""  # a small image is shown as it is


def test_a_preview_of_a_large_image_filters_a_shrunk_copy_and_says_so(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big.png"
    assert cv2.imwrite(str(path), np.full((1000, 1550, 3), 40, np.uint8))
    preview = make(path, "invert")
    assert preview.original.shape == (1000, 1550, 3) and preview.source.shape == (983, 1524, 3)
    assert preview.before.shape == (983, 1524, 3) and (preview.before == 40).all()
    assert capsys.readouterr().err == ("preview: 1550x1000 (1.6 MP) is shown at 1524x983; sizes in pixels act on "
                                       "the smaller copy, s saves at full size\n")  # 1.55 MP, rounded up


def test_auto_runs_a_small_image_here(picture: Path) -> None:
    assert make(picture, "invert", backend="auto").backend.name == "cpu"


def test_allow_large_reaches_the_sliders(picture: Path) -> None:
    assert make(picture, "median_blur").sliders[0].values[-1] == 51  # size's large bound
    with cvf.allow_large():
        assert make(picture, "median_blur", allow_large=True).sliders[0].values[-1] == 101


# ---------------------------------------------------------------- the window
def test_open_makes_the_window_and_a_trackbar_per_slider_at_the_current_value(
        picture: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    gui = Highgui().install(monkeypatch)
    preview = make(picture, "threshold:value=0.3,invert=true")
    preview.open()
    assert gui.windows == [(TITLE, cv2.WINDOW_AUTOSIZE | cv2.WINDOW_KEEPRATIO | cv2.WINDOW_GUI_EXPANDED)]
    value = preview.sliders[0]
    assert value.name == "value" and gui.trackbars["value"][:2] == [value.values.index(0.3), len(value.values) - 1]
    assert gui.trackbars["invert"][:2] == [1, 1]
    assert preview.ready and preview.pipeline.to_spec() == "threshold:value=0.3,invert=true"  # creation moved nothing
    assert capsys.readouterr().err == f"keys: {KEYS}\n"
    gui.setTrackbarPos("invert", TITLE, 0)
    assert preview.pipeline.to_spec() == "threshold:value=0.3" and preview.stale and preview.dirty


def test_open_without_a_display_is_a_usage_error(picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Highgui(window=False).install(monkeypatch)
    with pytest.raises(UsageError, match="needs a display"):
        make(picture, "invert").open()


def test_render_shows_the_filtered_frame_titled_with_the_spec_and_its_time(
        picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui().install(monkeypatch)
    preview = make(picture, "invert")
    preview.render()
    np.testing.assert_array_equal(gui.frames[-1], 255 - gradient())
    assert not preview.stale and not preview.dirty
    assert re.fullmatch(r"\d+\.\d ms/frame \(filter \d+\.\d ms\)", preview.timing), preview.timing
    assert gui.titles == [f"{TITLE}: invert | after | {preview.timing} [cpu]"]
    assert gui.statuses == [f"after | {preview.timing} | {KEYS}"]
    timing = preview.timing
    preview.press(32)  # space: the input, without filtering again
    assert preview.dirty and preview.showing_before
    preview.render()
    np.testing.assert_array_equal(gui.frames[-1], gradient())
    assert gui.titles[-1] == f"{TITLE}: invert | before | {timing} [cpu]" and preview.timing == timing
    assert gui.statuses[-1] == f"before | {timing} | {KEYS}"


def test_a_frame_shown_before_any_filtering_is_the_input(picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui().install(monkeypatch)
    preview = make(picture, "invert")
    preview.press(32)
    preview.render()  # before: nothing filtered, nothing timed
    np.testing.assert_array_equal(gui.frames[-1], gradient())
    assert preview.after is None and preview.stale and preview.timing == ""
    assert gui.titles == [f"{TITLE}: invert | before |  [cpu]"]
    preview.press(32)
    preview.render()
    np.testing.assert_array_equal(gui.frames[-1], 255 - gradient())


def test_the_title_times_the_whole_frame_and_the_filter(picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui().install(monkeypatch)
    ticks = iter(range(1, 100))
    monkeypatch.setattr(preview_module, "perf_counter", lambda: next(ticks) / 10)  # 0.1 s a call
    preview = make(picture, "invert")
    preview.render()  # frame from tick 1 to 4, filter from 2 to 3
    assert preview.timing == "300.0 ms/frame (filter 100.0 ms)"
    assert gui.titles == [f"{TITLE}: invert | after | 300.0 ms/frame (filter 100.0 ms) [cpu]"]


def test_without_a_status_bar_the_title_says_it_all(picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui(status_bar=False).install(monkeypatch)
    preview = make(picture, "invert")
    preview.render()
    assert len(gui.titles) == 1 and gui.statuses == []


def test_a_moved_trackbar_refilters_and_a_refused_value_is_shown_as_the_error(
        picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui().install(monkeypatch)
    preview = make(picture, "vignette")
    preview.open()
    preview.render()
    np.testing.assert_array_equal(gui.frames[-1], vignette(gradient(), 0.75))
    intensity = next(s for s in preview.sliders if s.param == "intensity")
    gui.setTrackbarPos("intensity", TITLE, len(intensity.values) - 1)
    assert preview.pipeline.to_spec() == "vignette:intensity=2" and preview.dirty and preview.stale
    preview.render()
    np.testing.assert_array_equal(gui.frames[-1], vignette(gradient(), 2.0))
    count = len(gui.frames)
    gui.setTrackbarPos("intensity", TITLE, len(intensity.values) - 1)  # the same value: nothing to do
    assert not preview.dirty and not preview.stale and len(gui.frames) == count


def test_a_refused_value_is_the_error_until_a_good_one(picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui().install(monkeypatch)
    preview = make(picture, "vignette")
    preview.open()
    preview.render()
    radius = Slider("radius", 0, "radius", (1.0, -5.0, 3.0))  # -5: below radius's minimum
    preview.move(radius, 1)
    assert preview.error is not None and "radius" in preview.error and preview.stale and preview.dirty
    assert preview.pipeline.to_spec() == "vignette"
    preview.render()
    assert gui.titles[-1] == f"{TITLE}: vignette | after | error: {preview.error} [cpu]"
    preview.move(radius, 2)
    assert preview.error is None and preview.pipeline.to_spec() == "vignette:radius=3"
    preview.render()
    np.testing.assert_array_equal(gui.frames[-1], cvf.apply(gradient(), "vignette", radius=3.0, backend="cpu"))


def test_a_filter_failing_at_run_time_keeps_the_last_frame_and_shows_its_last_line(
        picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui().install(monkeypatch)
    preview = make(picture, "invert")
    preview.render()

    def fails(self: Any, image: Any, backend: str = "auto") -> Any:
        raise cvf.CvfError("first line\nsecond line\nthe reason  \n")

    monkeypatch.setattr(cvf.Pipeline, "__call__", fails)
    preview.stale = True
    preview.render()
    assert preview.error == "the reason" and not preview.stale
    np.testing.assert_array_equal(gui.frames[-1], 255 - gradient())  # the last good frame
    assert gui.titles[-1] == f"{TITLE}: invert | after | error: the reason [cpu]"


# ---------------------------------------------------------------- keys
@pytest.mark.parametrize("key", [27, ord("q")])
def test_q_and_esc_quit_and_other_keys_do_not(picture: Path, key: int) -> None:
    preview = make(picture, "invert")
    assert preview.press(key) is False
    for other in (ord("x"), ord("Q"), 28, 0):
        assert preview.press(other) is True
    assert not preview.showing_before


def test_space_toggles_before_and_after(picture: Path) -> None:
    preview = make(picture, "invert")
    preview.dirty = False
    assert preview.press(32) is True and preview.showing_before and preview.dirty
    preview.dirty = False
    assert preview.press(32) is True and not preview.showing_before and preview.dirty


def test_s_saves_the_full_size_result_under_the_first_free_name(picture: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = picture.parent / "saved"
    out.mkdir()
    preview = make(picture, "invert", save_dir=out)
    (out / "pic-preview-2.png").write_bytes(b"taken")
    for number in (1, 3, 4):
        assert preview.press(ord("s")) is True
        assert capsys.readouterr().out == f"saved {out / f'pic-preview-{number}.png'}\n"
        np.testing.assert_array_equal(cv2.imread(str(out / f"pic-preview-{number}.png"), cv2.IMREAD_UNCHANGED),
                                      255 - gradient())
    assert (out / "pic-preview-2.png").read_bytes() == b"taken"


def test_a_saved_image_keeps_the_input_s_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from PIL import Image

    exif = Image.Exif()
    exif[0x013B] = "the artist"  # Artist
    Image.fromarray(gradient()[..., ::-1]).save(tmp_path / "pic.png", exif=exif)
    make(tmp_path / "pic.png", "invert").save()
    assert capsys.readouterr().out == f"saved {tmp_path / 'pic-preview-1.png'}\n"
    with Image.open(tmp_path / "pic-preview-1.png") as saved:
        assert saved.getexif().get(0x013B) == "the artist"


def test_a_failed_save_is_an_error_line_and_the_preview_goes_on(picture: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (picture.parent / "a file").write_bytes(b"")
    preview = make(picture, "invert", save_dir=picture.parent / "a file")
    assert preview.press(ord("s")) is True
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and "a file" in captured.err
    assert captured.err.count("\n") == 1


def test_p_prints_the_apply_command_and_the_pipeline_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "my pic.png"
    assert cv2.imwrite(str(path), gradient())
    preview = make(path, "vignette:intensity=2 | invert")
    assert preview.press(ord("p")) is True
    assert capsys.readouterr().out == (
        f"cvfilters apply '{path}' -o 'my pic-filtered.png' -f 'vignette:intensity=2 | invert'\n"
        "# pipeline file for -p:\nversion: 1\nsteps:\n- filter: vignette\n  params:\n    intensity: 2.0\n"
          "- filter: invert\n")


# ---------------------------------------------------------------- the event loop and its script
def test_run_draws_waits_and_quits_on_q(picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui(keys=[-1, ord("x") | 0x100, 32, -1, ord("q") | 0x10000]).install(monkeypatch)
    preview = make(picture, "invert")
    preview.run()
    assert gui.waits == [15] * 5  # every key bit above the low byte is ignored (q with a modifier quits)
    assert len(gui.frames) == 2  # the first frame, then before after space
    np.testing.assert_array_equal(gui.frames[0], 255 - gradient())
    np.testing.assert_array_equal(gui.frames[1], gradient())


def test_run_ends_when_the_window_is_closed(picture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gui = Highgui().install(monkeypatch)
    gui.closed_after = 3
    make(picture, "invert").run()
    assert len(gui.waits) == 3 and len(gui.frames) == 1


def test_a_script_moves_trackbars_and_presses_keys_one_command_a_frame(
        picture: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    gui = Highgui().install(monkeypatch)
    preview = make(picture, "vignette")
    preview.open()

    class Script(io.StringIO):
        """A file that grows: each read returns the next piece (a line may come in two)."""

        def __init__(self, pieces: list[str]) -> None:
            super().__init__()
            self.pieces = pieces

        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            return self.pieces.pop(0) if self.pieces else ""

    intensity = next(s for s in preview.sliders if s.param == "intensity")
    top = len(intensity.values) - 1
    preview.run(Script(["", "set inten", f"sity {top}\n", "key space\n", "key space\n", "key p\n", "key esc\n"]))
    assert preview.pipeline.to_spec() == "vignette:intensity=2"
    printed = capsys.readouterr().out
    assert printed.startswith(f"cvfilters apply {picture} -o pic-filtered.png -f vignette:intensity=2\n")
    shown = [vignette(gradient(), 0.75), vignette(gradient(), 2.0), gradient(), vignette(gradient(), 2.0)]
    assert len(gui.frames) == len(shown)
    for frame, want in zip(gui.frames, shown, strict=True):
        np.testing.assert_array_equal(frame, want)


@pytest.mark.parametrize(("line", "key"), [("key space", 32), ("key esc", 27), ("key q", ord("q")),
                                           ("key s", ord("s")), ("key 1", ord("1"))])
def test_a_script_key_is_its_code(picture: Path, line: str, key: int) -> None:
    assert make(picture, "invert")._scripted(line) == key


@pytest.mark.parametrize("line", ["key", "key qq", "key ", "keys q", "press q", "set radius", "set radius x",
                                  "set  3x", ""])
def test_a_script_line_that_is_no_command_is_a_usage_error(picture: Path, line: str) -> None:
    with pytest.raises(UsageError) as raised:
        make(picture, "invert")._scripted(line)
    assert str(raised.value) == f"CVFILTERS_PREVIEW_SCRIPT: {line!r} is not 'set TRACKBAR POSITION' or 'key K'"


def test_a_script_set_names_the_trackbar_with_spaces_and_returns_no_key(picture: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    moved: list[tuple[str, str, int]] = []
    monkeypatch.setattr(cv2, "setTrackbarPos", lambda *args: moved.append(args))
    preview = make(picture, "invert")
    assert preview._scripted("set 2.vignette.radius 12") == -1
    assert preview._scripted("set a name with spaces 0") == -1
    assert moved == [("2.vignette.radius", TITLE, 12), ("a name with spaces", TITLE, 0)]


# ---------------------------------------------------------------- sliders (positions)
def test_a_slider_position_is_the_value_s_index_else_the_nearest_number_else_0() -> None:
    slider = Slider("x", 0, "x", (0.0, 0.5, 1.0, 2.0))
    assert [slider.position(v) for v in (0.0, 0.5, 2.0, 1.0)] == [0, 1, 3, 2]
    assert [slider.position(v) for v in (0.2, 0.3, 1.6, -5, 9)] == [0, 1, 3, 0, 3]
    assert slider.position("thing") == 0 and slider.position(None) == 0
    flags = Slider("f", 0, "f", (False, True))
    assert flags.position(True) == 1 and flags.position(False) == 0
    choices = Slider("c", 0, "c", ("a", "b", "c"))
    assert choices.position("c") == 2 and choices.position("z") == 0


def test_slider_steps_and_names_in_a_pipeline() -> None:
    sliders = sliders_for(cvf.Pipeline.parse("invert | threshold | vignette"))
    assert [(s.name, s.step, s.param) for s in sliders] == [
        ("2.threshold.value", 1, "value"), ("2.threshold.invert", 1, "invert"),
        ("3.vignette.radius", 2, "radius"), ("3.vignette.intensity", 2, "intensity")]


def one_param(param: cvf.Param) -> cvf.Pipeline:
    """A pipeline of one unlisted test filter with ``param`` at its default."""
    flt = cvf.register("preview_test", category="blur", summary="test only", listed=False, params=[param])(
        lambda ctx, image, **values: image)
    return cvf.Pipeline([Step(flt, {param.name: param.default})])


def test_float_sliders_take_round_steps_near_range_over_resolution() -> None:
    def intensity(resolution: int) -> tuple[Any, ...]:
        (_, values) = sliders_for(cvf.Pipeline.parse("vignette:intensity=0.75"), resolution=resolution)
        return values.values

    tenths = tuple(sorted({k / 10 for k in range(21)} | {0.75}))
    assert intensity(20) == tenths and intensity(22) == tenths  # 2 / 22 = 0.09: 0.1 is nearest by ratio
    assert intensity(40) == tuple(k / 20 for k in range(41))  # 0.05 steps, 0.75 among them
    assert intensity(13) == tuple(sorted({k / 5 for k in range(11)} | {0.75}))  # 2 / 13 = 0.154: 0.2


def test_the_default_resolution_is_100() -> None:
    pipeline = one_param(cvf.Param("x", "float", default=0.0, min=0.0, max=1.42))
    assert sliders_for(pipeline)[0].values == sliders_for(pipeline, resolution=100)[0].values
    assert sliders_for(pipeline)[0].values[:3] == (0.0, 0.02, 0.04)  # 1.42 / 100 = 0.0142: 0.02 (0.01 at 101)


def test_a_float_slider_below_zero_starts_at_its_minimum() -> None:
    bias = next(s for s in sliders_for(cvf.Pipeline.parse("convolve:kernel=[[1]]")) if s.param == "bias")
    assert bias.values == tuple(round(-1 + k / 50, 10) for k in range(101))  # -1 to 1 by 0.02


def test_int_sliders_hold_ints_and_step_past_1000_positions() -> None:
    wide = one_param(cvf.Param("n", "int", default=500, min=500, max=3000))
    (slider,) = sliders_for(wide)
    assert slider.values == tuple(range(500, 3001, 2))  # 2500 / 1000 = 2.5: step 2
    assert all(type(v) is int for v in slider.values)
    (size,) = sliders_for(cvf.Pipeline.parse("median_blur"))
    assert all(type(v) is int for v in size.values)


@pytest.mark.parametrize("param", [
    cvf.Param("x", "float", default=1.0, min=1.0, max=5.0, large=1.0),  # nothing between min and the large bound
    cvf.Param("x", "float", default=1.0, min=0.0),  # no max
    cvf.Param("n", "int", default=1, max=5),  # no min
    cvf.Param("c", "choice", default="only", choices=("only",)),  # one position
], ids=["large-is-min", "no-max", "no-min", "one-choice"])
def test_parameters_without_two_positions_get_no_slider(param: cvf.Param) -> None:
    assert sliders_for(one_param(param)) == []


def test_a_float_slider_below_a_large_bound_is_as_fine_as_its_range_to_that_bound() -> None:
    pipeline = one_param(cvf.Param("x", "float", default=1.0, min=0.0, max=100.0, large=10.0))
    assert sliders_for(pipeline)[0].values == tuple(k / 10 for k in range(101))  # 0 to 10 by 0.1, not by 1
    with cvf.allow_large():
        assert sliders_for(pipeline, allow_large=True)[0].values == tuple(range(101))


def test_the_cli_gives_the_trackbars_resolution_100_and_allow_large(picture: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``cvfilters preview`` hands its ``--resolution`` (100 unless given) and ``--allow-large`` to the window:
    a float 0..1.42 gets steps of 0.02 (1.42 / 100 = 0.0142; at 101, 0.01) and an int 1..20 with a large bound
    at 10 stops there unless ``--allow-large``. Catches the option's default or either flag not reaching the
    trackbars (the sliders' own defaults are right, so only the command shows it)."""
    from cvfilters.cli import main
    from cvfilters.registry import catalog

    cvf.register("test_preview_cli", category="blur", summary="Test only.", replace=True, params=[
        cvf.Param("x", "float", default=0.0, min=0.0, max=1.42),
        cvf.Param("n", "int", default=1, min=1, max=20, large=10)])(lambda ctx, image, **values: image)
    monkeypatch.setattr(preview_module, "require_display", lambda: None)
    try:
        for options, x_positions, n_positions in (([], 72, 10), (["--allow-large"], 72, 20),
                                                  (["--resolution", "142"], 143, 10)):
            gui = Highgui(keys=[ord("q")]).install(monkeypatch)
            assert main(["preview", str(picture), "-f", "test_preview_cli", "--backend", "cpu", *options]) == 0
            assert (gui.trackbars["x"][1], gui.trackbars["n"][1]) == (x_positions - 1, n_positions - 1)  # top index
    finally:
        catalog.unregister("test_preview_cli")
