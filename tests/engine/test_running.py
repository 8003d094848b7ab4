"""The report of a run (``--explain``): each step's footprint on the image it ran on, transfers and fallbacks.

Halos are worked out by hand from OpenCV's automatic Gaussian size
(``cvRound(sigma * (3 for 8-bit, else 4) * 2 + 1) | 1``; the halo is half of it): sigma 1.5
gives 11 (halo 5) on uint8 and 13 (halo 6) on float32. Stand-in filters give the footprint
kinds and halos the catalogue has no filter for (a global footprint with a halo).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from cvfilters.backends import Counters, execution, select
from cvfilters.core.context import ImageInfo
from cvfilters.core.transfer import resolve_linear
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.running import RunReport, run_plan
from cvfilters.engine.steps import Step
from cvfilters.registry.footprints import NO_HALO, Footprint, Geometric, Global, Halo, Local, Point, Positional, Whole

UINT8 = ImageInfo(20, 30, 3, np.dtype(np.uint8))


class StandIn:
    """A filter with a fixed footprint; ``output_info`` sets the dtype its ``to`` parameter names."""

    params = ()

    def __init__(self, name: str, footprint: Footprint) -> None:
        self.name, self.footprint, self.seen = name, footprint, []

    def footprint_for(self, params: Mapping[str, Any], info: ImageInfo) -> Footprint:
        self.seen.append(info)
        return self.footprint

    def output_info(self, params: Mapping[str, Any], info: ImageInfo) -> ImageInfo:
        return info.with_(dtype=np.dtype(params["to"])) if "to" in params else info


def step(filter_: StandIn, **params: Any) -> Step:
    return Step(filter_, params)  # type: ignore[arg-type]


def never(*_: Any) -> Any:
    raise AssertionError("not run")


def test_a_pipeline_reports_each_footprint_with_its_halo() -> None:
    pipe = Pipeline.parse("gaussian_blur:sigma=1.5 | invert | vignette | tilt_shift:sigma=1.5 | equalize"
                          " | resize:width=10,height=5 | pixellate:size=4 | box_blur:size=7")
    _, report = pipe.run(np.zeros((20, 30, 3), np.uint8), backend="cpu")
    assert report.info == UINT8
    assert report.footprints() == ["local, halo 5 px", "point", "positional", "positional, halo 5 px", "global",
                                   "whole", "geometric", "local, halo 3 px"]  # box: 7 // 2 on each side
    assert report.lines()[1:9] == [
        "  step 1: gaussian_blur:sigma=1.5 (local, halo 5 px)", "  step 2: invert (point)",
        "  step 3: vignette (positional)", "  step 4: tilt_shift:sigma=1.5 (positional, halo 5 px)",
        "  step 5: equalize (global)", "  step 6: resize:width=10,height=5 (whole)",
        "  step 7: pixellate:size=4 (geometric)", "  step 8: box_blur:size=7 (local, halo 3 px)"]


def test_a_step_sees_the_image_the_steps_before_it_made() -> None:
    blur = Pipeline.parse("gaussian_blur:sigma=1.5").steps[0]
    to_float = StandIn("to_float", Point())
    probe = StandIn("probe", Point())
    report = RunReport("cpu", "test", (step(to_float, to="float32"), blur, step(probe)), Counters(), UINT8)
    assert report.footprints() == ["point", "local, halo 6 px", "point"]  # float32: 13 // 2
    assert to_float.seen == [UINT8]
    assert probe.seen == [UINT8.with_(dtype=np.dtype(np.float32))]
    resized = RunReport("cpu", "test", (*Pipeline.parse("resize:width=10,height=5").steps, step(probe)),
                        Counters(), UINT8)
    assert resized.footprints() == ["whole", "point"]
    assert probe.seen[-1] == ImageInfo(5, 10, 3, np.dtype(np.uint8))


def test_halos_are_shown_for_local_positional_and_global_footprints_only() -> None:
    uneven = Halo(1, 2, 3, 4)
    plan = [Local(Halo.square(2)), Local(NO_HALO), Positional(never, Halo(0, 0, 1, 1)), Positional(never),
            Global(never, never, never, halo=uneven), Global(never, never, never), Point(), Whole("why"),
            Geometric(never, never, ImageInfo(1, 1, 3, np.dtype(np.uint8)))]
    report = RunReport("cpu", "test", tuple(step(StandIn(f"s{i}", f)) for i, f in enumerate(plan)), Counters(),
                       UINT8)
    assert report.footprints() == [
        "local, halo 2 px", "local", "positional, halo top 0, bottom 0, left 1, right 1 px", "positional",
        "global, halo top 1, bottom 2, left 3, right 4 px", "global", "point", "whole", "geometric"]


def test_without_the_input_info_every_footprint_is_unknown() -> None:
    probe = StandIn("probe", Point())
    report = RunReport("cpu", "test", (step(probe), step(probe), step(probe)), Counters())
    assert report.footprints() == ["footprint unknown"] * 3
    assert probe.seen == []
    assert report.lines()[1:4] == [f"  step {i}: probe (footprint unknown)" for i in (1, 2, 3)]


def test_lines_report_the_backend_transfers_and_sorted_fallbacks() -> None:
    plan = (step(StandIn("probe", Point())),)
    counters = Counters(uploads=1, downloads=2, constants=3, fallbacks=Counter({"warp": 2, "clahe": 1}))
    assert RunReport("opencl", "a GPU", plan, counters, UINT8).lines() == [
        "backend: opencl (a GPU)", "  step 1: probe (point)",
        "transfers: 1 upload(s), 2 download(s), 3 cached mask/map upload(s)", "host fallbacks: clahe x1, warp x2"]
    assert RunReport("cpu", "2 cores", plan, Counters(), UINT8).lines()[-2:] == [
        "transfers: 0 upload(s), 0 download(s), 0 cached mask/map upload(s)", "host fallbacks: none"]


# --- run_plan: its arguments reach the run ------------------------------------------------------------------------
def test_run_plan_defaults_to_hwc_and_names_the_device() -> None:
    image = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    out, report = run_plan(Pipeline.parse("invert").compile(), image)  # layout and backend left to their defaults
    np.testing.assert_array_equal(out, 255 - image)
    assert report.info == ImageInfo(2, 4, 3, np.dtype(np.uint8))
    if report.backend == "cpu":
        assert report.device.endswith(" OpenCV threads")  # "2 cores, 2 OpenCV threads"
    assert report.lines()[0] == f"backend: {report.backend} ({report.device})" and report.device


def test_run_plan_reads_a_chw_array_as_channels_first() -> None:
    chw = np.arange(24, dtype=np.uint8).reshape(3, 2, 4)
    out, report = run_plan(Pipeline.parse("flip:axis='horizontal'").compile(), chw, backend="cpu", layout="chw")
    np.testing.assert_array_equal(out, chw[:, :, ::-1])  # columns (the last axis) reversed
    assert report.info == ImageInfo(2, 4, 3, np.dtype(np.uint8))


def test_run_plan_follows_the_channel_order_it_is_given() -> None:
    red = np.zeros((2, 2, 3), np.uint8)
    red[..., 0] = 255
    gray = Pipeline.parse("grayscale").compile()
    # BT.601 luma: 0.299 * 255 = 76.2 for red (RGB), 0.114 * 255 = 29.1 for the same bytes read as blue (BGR)
    assert np.unique(run_plan(gray, red, backend="cpu", channel_order="rgb")[0]).tolist() == [76]
    assert np.unique(run_plan(gray, red, backend="cpu", channel_order="bgr")[0]).tolist() == [29]


def test_run_plan_mixes_light_through_the_transfer_it_is_given() -> None:
    stripes = np.zeros((3, 6, 3), np.uint8)
    stripes[:, 1::2] = 255
    blur = Pipeline.parse("box_blur:size=3").compile()
    # a 3-wide mean of alternating 0 and 1: 2/3 beside two lit columns, 1/3 beside two dark ones.
    # sRGB encoded (1.055 v^(1/2.4) - 0.055): 0.836 -> 213.2 and 0.612 -> 156.2; without a transfer 170 and 85
    linear, _ = run_plan(blur, stripes, backend="cpu", transfer=resolve_linear(True))
    plain, _ = run_plan(blur, stripes, backend="cpu")
    expected_linear = np.where(np.arange(6) % 2 == 0, 213, 156)
    assert np.abs(linear[..., 0].astype(int) - expected_linear).max() <= 1  # 1 level: the table's rounding
    assert np.abs(plain[..., 0].astype(int) - np.where(np.arange(6) % 2 == 0, 170, 85)).max() <= 1


@pytest.mark.parametrize(("spec", "point_only"), [("invert | grayscale", True), ("invert | box_blur", False)])
def test_run_plan_tells_the_backend_choice_whether_the_work_is_point_only(
        monkeypatch: pytest.MonkeyPatch, spec: str, point_only: bool) -> None:
    """Under ``auto`` point-only work stays on the host (``select``); recorded, as this host may have no GPU."""
    asked: list[tuple[str, bool]] = []

    def recording(name: str, image: Any, pixels: int, *, point_only: bool = False) -> Any:
        asked.append((name, point_only))
        return select(name, image, pixels, point_only=point_only)

    monkeypatch.setattr(execution, "select", recording)
    run_plan(Pipeline.parse(spec).compile(), np.zeros((2, 2, 3), np.uint8))
    assert asked == [("auto", point_only)]
