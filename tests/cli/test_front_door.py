"""The shell front door, by subprocess: version, completion, help, info, helpful errors, colours, progress.

Expected colours are written by hand (a CSS name's RGB triple, reversed into the BGR
pixel OpenCV stores); expected luma uses the BT.601 weights, not the code under test.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import ParameterError, SpecError
from cvfilters.registry.params import Param
from cvfilters.run import executors
from cvfilters.viz.describe import describe_filter
from tests.cli_runner import run_cli

PLACEHOLDER = re.compile(r"<(bool|str|int|float|path|list|text)", re.IGNORECASE)


def cli(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={**os.environ, "COLUMNS": "80", **(env or {})})


def usage_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("front") / "in.png"
    cv2.imwrite(str(path), np.full((6, 8, 3), 100, np.uint8))
    return path


# ------------------------------------------------------------------ version, completion, help, info
def test_version_and_completion() -> None:
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"cvfilters {cvf.__version__}"
    # The script `--show-completion` prints, asked for bash by name (the option itself guesses the
    # shell from the process tree, which a test run need not have).
    proc = cli(env={"_CVFILTERS_COMPLETE": "source_bash"})
    assert proc.returncode == 0 and "_CVFILTERS_COMPLETE=complete_bash" in proc.stdout, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "cvfilters"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "_CVFILTERS_COMPLETE": "complete_bash", "COMP_WORDS": "cvfilters ap",
                               "COMP_CWORD": "1"})
    assert proc.stdout.split() == ["apply"]


@pytest.mark.parametrize("command", [[], ["apply"], ["list"], ["info"], ["backends"], ["histogram"], ["preview"],
                                     ["sweep"]])
def test_help_reads_well_at_80_columns(command: list[str]) -> None:
    proc = cli(*command, "--help")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert not PLACEHOLDER.search(proc.stdout), PLACEHOLDER.findall(proc.stdout)
    assert "│" not in proc.stdout  # plain text, no boxes that cut words
    commands = [line for line in lines if line.startswith("  ") and line.rstrip().endswith("...")]
    assert not commands, commands  # command summaries are never cut short
    if command in ([], ["apply"]):
        assert "Examples:" in proc.stdout and "cvfilters apply" in proc.stdout.split("Examples:")[1]


def test_info_renders_plain_text_and_the_colour_syntax_once() -> None:
    proc = cli("info", "VIGNETTE_EFFECT")
    assert proc.returncode == 0
    assert "`" not in proc.stdout
    assert proc.stdout.count("colours: RGB(A) order") == 1 and "#rrggbb" in proc.stdout
    for flt in cvf.list_filters():  # every filter, in-process: the same renderer
        text = describe_filter(flt)
        assert "`" not in text, flt.name
        assert ("colours:" in text) == any(p.kind == "color" for p in flt.params), flt.name


def test_list_takes_a_category_in_any_case() -> None:
    upper, lower = cli("list", "--category", "Blur"), cli("list", "--category", "blur")
    assert upper.returncode == 0 and upper.stdout == lower.stdout and "gaussian_blur" in upper.stdout
    line = usage_error(cli("list", "--category", "blurr"))
    assert "did you mean 'blur'" in line


# ------------------------------------------------------------------ errors that help
def test_spec_errors_suggest(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.png"
    assert "did you mean 'sigma'" in usage_error(cli("apply", source, "-o", out, "-f", "gaussian_blur:sigm=3"))
    line = usage_error(cli("apply", source, "-o", out, "-f", "gaussian_blur:sigma=3 pixellate"))
    assert "'gaussian_blur:sigma=3 | pixellate'" in line
    line = usage_error(cli("apply", source, "-o", out, "-f", "invert pixellate:size=4"))
    assert "'invert | pixellate:size=4'" in line
    assert "did you mean gaussian_blur" in usage_error(cli("apply", source, "-o", out, "-f", "gausian_blur"))
    assert not out.exists()
    proc = cli("apply", source, "-o", out, "-f", "GAUSSIAN_BLUR:sigma=2")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(cv2.imread(str(out)), cvf.apply(cv2.imread(str(source)), "gaussian_blur", sigma=2))


def test_python_keyword_errors_suggest() -> None:
    with pytest.raises(ParameterError, match=r"sigm is not a parameter of gaussian_blur \(did you mean 'sigma'\?"):
        cvf.apply(np.zeros((4, 4), np.uint8), "gaussian_blur", sigm=3)


def test_pipeline_file_errors_name_file_line_and_key(source: Path, tmp_path: Path) -> None:
    look = tmp_path / "look.yaml"
    look.write_text("version: 1\nsteps:\n  - filter: invert\n  - filter: gaussian_blur\n    parms:\n      sigma: 3\n")
    line = usage_error(cli("apply", source, "-o", tmp_path / "out.png", "-p", look))
    assert line == f"error: {look}:5: step 2: unknown key 'parms' (did you mean 'params'?)"
    look.write_text("version: 1\nsteps:\n  - filter: invert\n  - filter: Gaussian_Blur\n    params:\n"
                    "      sigma: 3\n      sigm: 3\n")
    line = usage_error(cli("apply", source, "-o", tmp_path / "out.png", "-p", look))
    assert line.startswith(f"error: {look}:7: step 2: gaussian_blur: sigm is not a parameter") and "'sigma'" in line
    look.write_text("version: 1\nsteps:\n  - filter: invert\n  - filter: pixelate\n")
    assert usage_error(cli("apply", source, "-o", tmp_path / "out.png", "-p", look)).startswith(
        f"error: {look}:4: step 2: unknown filter 'pixelate' (did you mean pixellate")
    look.write_text("versoin: 1\nsteps: [{filter: invert}]\n")
    with pytest.raises(SpecError, match=r"look.yaml:1: unknown key 'versoin' \(did you mean 'version'\?\)"):
        cvf.Pipeline.load(look)
    data = tmp_path / "look.json"
    data.write_text('{"version": 1, "steps": [{"filter": "invert"}, {"filter": "gaussian_blur", "parms": {}}]}')
    with pytest.raises(SpecError, match=r"^\S*look.json: step 2: unknown key 'parms' \(did you mean 'params'\?\)$"):
        cvf.Pipeline.load(data)
    assert not (tmp_path / "out.png").exists()


# ------------------------------------------------------------------ colours
@pytest.mark.parametrize("written", ["red", "RED", "#ff0000", "#f00", "#ff0000ff", "rgb(255,0,0)",
                                     "rgba(255, 0, 0, 1)", "rgb(100%,0%,0%)", "[1,0,0]", "[1,0,0,1]"])
def test_colours_are_rgb_as_people_write_them(written: str) -> None:
    param = Param("color", "color", (0.0, 0.0, 0.0), min=0.0, max=1.0)
    assert param.coerce(written, "f")[:3] == (1.0, 0.0, 0.0)


def test_colour_forms_and_errors() -> None:
    param = Param("color", "color", (0.0, 0.0, 0.0), min=0.0, max=1.0)
    assert param.coerce("navy", "f") == (0.0, 0.0, 128 / 255)
    assert param.coerce("#11223380", "f") == (0x11 / 255, 0x22 / 255, 0x33 / 255, 0x80 / 255)
    assert param.coerce("#1238", "f") == (0x11 / 255, 0x22 / 255, 0x33 / 255, 0x88 / 255)
    assert param.coerce("rgba(0, 0, 255, 0.25)", "f") == (0.0, 0.0, 1.0, 0.25)
    assert param.coerce("transparent", "f") == (0.0, 0.0, 0.0, 0.0)
    assert param.coerce((0.5,), "f") == (0.5,)
    for bad, message in [("redd", "did you mean 'red'"), ("#ff00f", "#rrggbb"), ("rgb(1,2)", "rgb(r, g, b)"),
                         ("rgb(300,0,0)", "out of range"), ("rgb(a,b,c)", "must hold numbers"),
                         ("[1,0,0,0,1]", "1 to 4 numbers"), ("[2,0,0]", "outside [0, 1]")]:
        with pytest.raises(ParameterError, match=re.escape(message)):
            param.coerce(bad, "f")


def test_colour_parameters_reach_the_image_in_its_bgr_order(source: Path, tmp_path: Path) -> None:
    image = cv2.imread(str(source))
    for spec, pixel in [("vignette_effect:color=red,radius=0,falloff=0", [0, 0, 255]),
                        ("vignette_effect:color=[1,0,0],radius=0,falloff=0", [0, 0, 255]),
                        ("vignette_effect:color='rgb(0,0,255)',radius=0,falloff=0", [255, 0, 0]),
                        ("vignette_effect:color=#00ff00,radius=0,falloff=0", [0, 255, 0])]:
        out = tmp_path / "out.png"
        out.unlink(missing_ok=True)
        proc = cli("apply", source, "-o", out, "-f", spec)
        assert proc.returncode == 0, proc.stderr
        result = cv2.imread(str(out))
        assert result[0, 0].tolist() == pixel, spec
        np.testing.assert_array_equal(result, cvf.Pipeline.parse(spec)(image))  # the CLI and Python agree
    # a gray image takes the luma of the colour: BT.601, 0.299 R + 0.587 G + 0.114 B
    gray = cvf.apply(np.ones((4, 4), np.float32), "vignette_effect", color="red", radius=0.0, falloff=0.0)
    np.testing.assert_allclose(gray[0, 0], 0.299, atol=1e-6)
    assert cvf.Pipeline.parse("vignette_effect:color=red").to_spec() == "vignette_effect:color=[1,0,0]"


# ------------------------------------------------------------------ progress and workers
def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the CLI with stderr on a pseudo-terminal; return what it wrote there."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "cvfilters", *args], stdout=subprocess.DEVNULL,
                            stderr=follower, env={**os.environ, **env})
    os.close(follower)
    chunks, deadline = [], time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0
    return b"".join(chunks).decode(errors="replace")


def test_a_slow_single_image_shows_elapsed_time_on_a_terminal_only(tmp_path: Path) -> None:
    source = tmp_path / "big.png"
    cv2.imwrite(str(source), np.random.default_rng(0).integers(0, 255, (600, 800, 3), np.uint8))
    args = ["apply", str(source), "-o", str(tmp_path / "out.png"), "-f", "bilateral:d=15", "--backend", "cpu",
            "--overwrite"]
    shown = _on_a_terminal(args, {"CVFILTERS_PROGRESS_DELAY": "0"})
    assert "filtering big.png" in shown and re.search(r"0:00:0\d", shown), shown
    assert re.search("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]", shown), shown  # rich's "dots" spinner
    quiet = _on_a_terminal(args, {"CVFILTERS_PROGRESS_DELAY": "60"})  # a quick image shows nothing
    assert "filtering" not in quiet
    piped = cli(*args, env={"CVFILTERS_PROGRESS_DELAY": "0"})
    assert piped.returncode == 0 and piped.stderr == ""


def test_a_batch_and_a_video_show_a_bar_with_counts_and_rate_on_a_terminal(tmp_path: Path) -> None:
    image = np.random.default_rng(1).integers(0, 255, (32, 48, 3), np.uint8)
    files = [tmp_path / f"in{i}.png" for i in range(3)]
    for path in files:
        cv2.imwrite(str(path), image)
    shown = _on_a_terminal(["apply", *map(str, files), "-o", str(tmp_path / "out"), "-f", "invert", "-j1"], {})
    assert "filtering files" in shown and "3/3" in shown and "100%" in shown, shown
    assert re.search(r"\d+\.\d/s", shown), shown  # the rate: files done / seconds elapsed
    assert "\x1b[2Kdone 3, failed 0" in shown, shown  # the bar is erased (transient) before the summary
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 5, (48, 32))
    for _ in range(4):
        writer.write(image)
    writer.release()
    shown = _on_a_terminal(["apply", str(video), "-o", str(tmp_path / "out.avi"), "-f", "invert"], {})
    assert "filtering frames" in shown and "4/4" in shown, shown


def test_process_start_is_the_start_of_this_interpreter() -> None:
    """The batch summary's time counts from the interpreter's start: earlier than any test's own run."""
    from cvfilters.cli.progress import process_start

    started = process_start()
    assert started < time.perf_counter() - 0.5  # the suite has run longer than this before any test
    assert abs(started - process_start()) < 0.1  # a fixed moment, not "now"


def test_worker_count_follows_the_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = []
    for i in range(4):
        files.append(tmp_path / f"in{i}.png")
        cv2.imwrite(str(files[-1]), np.zeros((100, 100), np.uint8))  # 0.01 MP each
    assert executors.worker_count(3, files) == 3 and executors.worker_count(8, files) == 4
    assert executors.worker_count(0, files[:1]) == 1
    assert executors.worker_count(0, files) == 1  # 0.04 MP: a pool costs more than it saves
    monkeypatch.setattr(executors, "POOL_MIN_MEGAPIXELS", 0.03)
    cores = len(os.sched_getaffinity(0))
    assert executors.worker_count(0, files) == (min(cores, 4) if cores > 1 else 1)
    monkeypatch.undo()
    proc = cli("apply", *files, "-o", tmp_path / "out", "-f", "invert", "--explain")
    assert proc.returncode == 0
    assert "batch: 4 files, chosen from the work: this process" in proc.stderr
    proc = cli("apply", *files, "-o", tmp_path / "out2", "-f", "invert", "--explain", "--jobs", "2")
    assert "batch: 4 files, --jobs: a pool of 2" in proc.stderr


@pytest.mark.parametrize("argv", [
    ["apply", "a.png", "-o", "b.png", "-f", "invert"],
    ["apply", "a.png", "b.png", "-o", "out", "-f", "invert", "-f", "sepia", "--jobs", "2", "--no-fuse", "--overwrite",
     "-r", "--format", "jpg", "--quality", "90", "--suffix", "_x", "--explain", "--allow-large", "--frames", "0:3"],
    ["apply", "--output=o.png", "in.png", "-pfile.yaml", "--backend", "cpu", "--max-pixels", "100", "-j1"],
    ["apply", "-", "-o", "-", "--format", "png", "--compare", "c.png", "--histogram", "h.png", "--no-overwrite",
     "--fuse", "--quality", "1", "--quality", "100", "--dry-run", "--no-clobber", "--devices", "0"],
    ["apply", "a.png", "-o", "b.jpg", "--quality", "1"],  # a value at its range's lower end is in range
    ["list", "--category", "Blur", "--json"], ["list"], ["info", "invert", "--json"], ["info", "x"], ["backends"],
])
def test_plain_lines_reach_the_command_exactly_as_through_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                                 ) -> None:
    """The fast path (no Typer) gives the command the same values as Typer's own parsing and coercion."""
    import typer.main

    from cvfilters.cli import commands
    from cvfilters.cli.app import app
    from cvfilters.cli.fast import plain_call

    fast = plain_call(argv)
    assert fast is not None
    function, values = fast
    seen: list[dict[str, object]] = []
    monkeypatch.setattr(commands, function, lambda **kwargs: seen.append(kwargs))
    typer.main.get_command(app).main(args=argv, prog_name="cvfilters", standalone_mode=False)
    assert seen == [values]


@pytest.mark.parametrize("argv", [["apply", "a.png", "-o", "b.png", "--jobs", "x"], ["apply", "-o", "b.png"],
                                  ["apply", "a.png", "-o", "b.png", "--quality", "500"], ["apply", "--help"],
                                  ["--debug", "apply", "a.png", "-o", "b.png"], ["info"], ["info", "a", "b"],
                                  ["apply", "a.png", "-o"], ["apply", "a.png", "-o", "b", "--bogus"],
                                  ["apply", "a.png", "-o", "b", "-rj2"], ["apply", "a.png", "-o", "b", "--", "-x"],
                                  ["apply", "a.png", "-o", "b", "--overwrite=yes"], ["histogram", "a.png"]])
def test_anything_else_goes_through_typer(argv: list[str]) -> None:
    from cvfilters.cli.fast import plain_call

    assert plain_call(argv) is None


def test_an_option_set_from_the_environment_goes_through_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    from cvfilters.cli.fast import plain_call

    monkeypatch.setenv("CVFILTERS_SCHEDULER", "tcp://nowhere:8786")
    assert plain_call(["apply", "a.png", "-o", "b.png"]) is None


def test_the_fast_path_table_is_fresh() -> None:
    """Fails when an option of a core command changed without ``python scripts/update_cli_options.py``."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "scripts" / "update_cli_options.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
