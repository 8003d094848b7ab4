"""Tests of the ``cvfilters`` command line, run as a subprocess on real files.

Each subprocess costs about half a second, so every invocation checks all it can:
exit code, stderr lines, the files written (and not written) and their pixels.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters
from cvfilters.backends import availability
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
ASTRONAUT = FIXTURES / "astronaut.png"
BADGE = FIXTURES / "badge-rgba.png"
CAMERA16 = FIXTURES / "camera-16bit.png"
PIPELINE_FILE = FIXTURES / "blur-pixellate.yaml"
SHARPEN = [[0, -1, 0], [-1, 5, -1], [0, -1, 0]]
Pipeline = cvfilters.Pipeline


# ---------------------------------------------------------------- helpers
def stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """Non-empty stderr lines, after checking that no traceback leaked out."""
    assert "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.strip()]


def assert_usage_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit 2 with exactly one ``error:`` line on stderr holding every fragment."""
    lines = stderr_lines(proc)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "internal error" not in lines[0]
    return lines[0]


def tree(root: Path) -> set[str]:
    """Relative POSIX paths of every file under ``root``."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def assert_no_hidden(root: Path) -> None:
    """No temporary (dot-named) file or folder was left behind."""
    hidden = [p for p in root.rglob("*") if p.name.startswith(".")]
    assert not hidden, hidden


def load(path: Path) -> np.ndarray:
    """Read an output with OpenCV directly, depth and channels as stored."""
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    assert image is not None, f"{path} is not readable"
    return image


def expected(source: Path, spec: str | Pipeline) -> np.ndarray:
    """What the Python API gives on the cpu backend."""
    pipe = spec if isinstance(spec, cvfilters.Pipeline) else cvfilters.Pipeline.parse(spec)
    return pipe(cvfilters.read(source), backend="cpu")


def assert_same_image(path: Path, want: np.ndarray) -> None:
    got = load(path)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got, want)


def summary_counts(lines: list[str]) -> dict[str, int]:
    """done / skipped / failed counts from the summary line."""
    summary = [line for line in lines if re.match(r"done \d+", line)]
    assert len(summary) == 1, lines
    return {key: int(n) for key, n in re.findall(r"(done|skipped|failed) (\d+)", summary[0])}


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A source tree of 3 good images in nested folders, a corrupt bad.png and a text notes.png,
    run once with ``--recursive --jobs 1`` (shared by the batch tests)."""
    base = tmp_path_factory.mktemp("batch")
    src = base / "src"
    (src / "sub" / "deep").mkdir(parents=True)
    shutil.copy(ASTRONAUT, src / "a.png")
    shutil.copy(BADGE, src / "sub" / "b.png")
    shutil.copy(CAMERA16, src / "sub" / "deep" / "c.png")
    (src / "bad.png").write_bytes(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    (src / "notes.png").write_text("not an image, just notes\n")
    proc = run_cli("apply", src, "-o", base / "out", "--recursive", "--jobs", "1", "-f", "gaussian_blur:sigma=2",
                   "--backend", "cpu")
    return {"base": base, "src": src, "out": base / "out", "proc": proc}


GOOD = {"a.png": ASTRONAUT, "sub/b.png": BADGE, "sub/deep/c.png": CAMERA16}


# ---------------------------------------------------------------- single files
@pytest.mark.parametrize("source, shape, dtype", [
    (ASTRONAUT, (256, 256, 3), np.uint8),
    (BADGE, None, np.uint8),
    (CAMERA16, None, np.uint16),
], ids=["bgr", "bgra", "gray16"])
def test_single_file_equals_python_api(tmp_path: Path, source: Path, shape: tuple | None, dtype: type) -> None:
    original = cvfilters.read(source)
    target = tmp_path / "new" / "dir" / "result.png"  # a single named output goes into an existing folder (as cp)
    proc = run_cli("apply", source, "-o", target, "-f", "gaussian_blur:sigma=3", "--backend", "cpu")
    assert proc.returncode == 2 and "folder" in proc.stderr and "does not exist" in proc.stderr
    assert not (tmp_path / "new").exists()
    target.parent.mkdir(parents=True)
    proc = run_cli("apply", source, "-o", target, "-f", "gaussian_blur:sigma=3", "--backend", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert not stderr_lines(proc)
    assert tree(tmp_path) == {"new/dir/result.png"}
    got = load(target)
    assert got.dtype == dtype and got.shape == original.shape
    if shape:
        assert got.shape == shape
    if source == BADGE:
        assert got.ndim == 3 and got.shape[2] == 4
    if source == CAMERA16:
        assert got.ndim == 2 and got.max() > 255  # really 16-bit data, not 8-bit widened
    assert_same_image(target, cvfilters.apply(original, "gaussian_blur", sigma=3, backend="cpu"))
    assert not np.array_equal(got, original)


def test_chains_and_pipeline_file_equal_python_pipeline(tmp_path: Path) -> None:
    want = expected(ASTRONAUT, Pipeline.load(PIPELINE_FILE))
    assert want.shape == (256, 256, 3)
    variants = {
        "repeated.png": ["-f", "gaussian_blur:sigma=1.5", "-f", "pixellate:size=8"],
        "joined.png": ["-f", "gaussian_blur:sigma=1.5 | pixellate:size=8"],
        "file.png": ["-p", PIPELINE_FILE, "--explain"],
    }
    for name, args in variants.items():
        proc = run_cli("apply", ASTRONAUT, "-o", tmp_path / name, *args, "--backend", "cpu")
        assert proc.returncode == 0, (name, proc.stderr)
        assert_same_image(tmp_path / name, want)
    # --explain (last run) reports the backend, the steps, transfers and fallbacks
    explained = proc.stdout + proc.stderr
    assert "backend: cpu" in explained and "transfers" in explained and "fallbacks" in explained
    assert "gaussian_blur:sigma=1.5" in explained and "pixellate" in explained
    assert "Traceback" not in proc.stderr
    # -p then -f: the file's steps first
    proc = run_cli("apply", ASTRONAUT, "-o", tmp_path / "both.png", "-p", PIPELINE_FILE, "-f", "invert",
                   "--backend", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert_same_image(tmp_path / "both.png", expected(ASTRONAUT, "gaussian_blur:sigma=1.5|pixellate:size=8|invert"))


def test_kernel_file_equals_inline_kernel(tmp_path: Path) -> None:
    # @file relative to the working directory, as a user types it from the repository root
    from_file = run_cli("apply", "fixtures/astronaut.png", "-o", tmp_path / "file.png",
                        "-f", "convolve:kernel=@fixtures/sharpen.csv", "--backend", "cpu", cwd=ROOT)
    inline = run_cli("apply", "fixtures/astronaut.png", "-o", tmp_path / "inline.png",
                     "-f", "convolve:kernel=[[0,-1,0],[-1,5,-1],[0,-1,0]]", "--backend", "cpu", cwd=ROOT)
    assert from_file.returncode == 0 and inline.returncode == 0, (from_file.stderr, inline.stderr)
    assert (tmp_path / "file.png").read_bytes() == (tmp_path / "inline.png").read_bytes()
    assert_same_image(tmp_path / "file.png",
                      cvfilters.apply(cvfilters.read(ASTRONAUT), "convolve", kernel=SHARPEN, backend="cpu"))


# ---------------------------------------------------------------- usage errors
def _cuda_available() -> bool:
    return availability("cuda").available


USAGE_ERRORS = [
    pytest.param(["-f", "gausian_blur"], ["unknown filter", "'gausian_blur'", "did you mean gaussian_blur"],
                 id="unknown-filter"),
    pytest.param(["-f", "vignette:intensity=5"], ["error: vignette: intensity=5 is outside [0, 2]"],
                 id="out-of-range"),
    pytest.param(["-f", "vignette:strength=1"], ["vignette", "strength", "intensity"], id="unknown-parameter"),
    pytest.param([], ["-f", "-p"], id="no-filter"),
    pytest.param(["-f", "invert", "--backend", "gpu"], ["'gpu'", "cpu", "opencl", "cuda"], id="bad-backend"),
    pytest.param(["-f", "invert", "--backend", "cuda"], ["cuda", "unavailable"], id="cuda-absent",
                 marks=pytest.mark.skipif(_cuda_available(), reason="CUDA is available here")),
    pytest.param(["-f", "gaussian_blur|"], ["empty filter step"], id="empty-step"),
]


@pytest.mark.parametrize("args, fragments", USAGE_ERRORS)
def test_usage_error_exits_2_and_writes_nothing(tmp_path: Path, args: list[str], fragments: list[str]) -> None:
    single = run_cli("apply", ASTRONAUT, "-o", tmp_path / "out" / "one.png", *args)
    line = assert_usage_error(single, *fragments)
    if "intensity=5" in fragments[0]:
        assert line == fragments[0]
    assert not (tmp_path / "out").exists()
    assert single.stdout == ""


def test_usage_error_in_batch_writes_nothing(tmp_path: Path) -> None:
    proc = run_cli("apply", ASTRONAUT, BADGE, "-o", tmp_path / "outdir", "-f", "invert", "-f", "vignette:intensity=5")
    assert_usage_error(proc, "vignette: intensity=5 is outside [0, 2]")
    assert not (tmp_path / "outdir").exists()


@pytest.mark.parametrize("args", [["-o", "x.jpg", "-f", "invert", "--quality", "101"], ["-f", "invert"]],
                         ids=["quality-out-of-range", "missing-output"])
def test_option_parsing_error_exits_2(tmp_path: Path, args: list[str]) -> None:
    proc = run_cli("apply", ASTRONAUT, *args, cwd=tmp_path)
    assert not (tmp_path / "x.jpg").exists()
    assert_usage_error(proc)


def test_debug_shows_traceback(tmp_path: Path) -> None:
    proc = run_cli("--debug", "apply", ASTRONAUT, "-o", tmp_path / "o.png", "-f", "vignette:intensity=5")
    assert proc.returncode == 2
    assert "Traceback" in proc.stderr and "ParameterError" in proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1] == "error: vignette: intensity=5 is outside [0, 2]"
    assert not (tmp_path / "o.png").exists()


# ---------------------------------------------------------------- batches
def test_batch_recursive_mirrors_tree_and_reports_failures(batch: dict) -> None:
    proc, out = batch["proc"], batch["out"]
    lines = stderr_lines(proc)
    assert proc.returncode == 1, proc.stderr
    assert tree(out) == set(GOOD)
    assert_no_hidden(out)
    for relative, source in GOOD.items():
        assert_same_image(out / relative, expected(source, "gaussian_blur:sigma=2"))
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 2, lines
    assert any("bad.png" in line for line in errors) and any("notes.png" in line for line in errors)
    assert summary_counts(lines) == {"done": 3, "failed": 2}
    assert batch["src"].joinpath("bad.png").stat().st_size == 4096  # inputs untouched


def test_batch_without_recursive_skips_subfolders(batch: dict) -> None:
    out = batch["base"] / "flat"
    proc = run_cli("apply", batch["src"], "-o", out, "-f", "invert", "--jobs", "1")
    lines = stderr_lines(proc)
    assert proc.returncode == 1
    assert tree(out) == {"a.png"}
    assert summary_counts(lines) == {"done": 1, "failed": 2}


def test_jobs_2_is_byte_identical_to_jobs_1(batch: dict) -> None:
    out2 = batch["base"] / "jobs2"
    proc = run_cli("apply", batch["src"], "-o", out2, "--recursive", "--jobs", "2", "-f", "gaussian_blur:sigma=2",
                   "--backend", "cpu")
    assert proc.returncode == 1, proc.stderr
    assert summary_counts(stderr_lines(proc)) == {"done": 3, "failed": 2}
    assert tree(out2) == set(GOOD)
    assert_no_hidden(out2)
    for relative in GOOD:
        assert (out2 / relative).read_bytes() == (batch["out"] / relative).read_bytes(), relative


def test_format_jpg_renames_and_warns_for_16bit(batch: dict) -> None:
    out = batch["base"] / "jpg"
    proc = run_cli("apply", batch["src"] / "sub", "-o", out, "--recursive", "--format", "jpg", "-f", "invert")
    lines = stderr_lines(proc)
    assert proc.returncode == 0, proc.stderr
    assert tree(out) == {"b.jpg", "deep/c.jpg"}
    warnings = [line for line in lines if line.startswith("warning:")]
    assert any("c.png" in line or "c.jpg" in line for line in warnings), lines
    assert not any(line.startswith("error:") for line in lines)
    converted = load(out / "deep" / "c.jpg")
    assert converted.dtype == np.uint8 and converted.shape == cvfilters.read(CAMERA16).shape
    assert load(out / "b.jpg").shape[2] == 3  # JPEG holds no alpha


def test_glob_keeps_relative_names(batch: dict) -> None:
    base = batch["base"]
    proc = run_cli("apply", "src/*/*.png", "-o", "globbed", "-f", "invert", cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert tree(base / "globbed") == {"sub/b.png"}
    proc = run_cli("apply", "src/sub/**/*.png", "-o", "globbed-r", "--recursive", "-f", "invert", cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert tree(base / "globbed-r") == {"b.png", "deep/c.png"}
    assert_same_image(base / "globbed-r" / "deep" / "c.png", expected(CAMERA16, "invert"))


def test_glob_with_one_match_writes_into_directory(batch: dict) -> None:
    base = batch["base"]
    proc = run_cli("apply", "src/sub/*.png", "-o", "results.d", "-f", "invert", cwd=base)
    assert (proc.returncode, tree(base / "results.d") if (base / "results.d").is_dir() else None) == (0, {"b.png"})


# ---------------------------------------------------------------- existing outputs, the input
def test_existing_output_skipped_unless_overwrite(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    shutil.copy(ASTRONAUT, src / "a.png")
    shutil.copy(BADGE, src / "b.png")
    shutil.copy(BADGE, out / "a.png")  # an unrelated existing output
    before = (out / "a.png").read_bytes()
    proc = run_cli("apply", src, "-o", out, "-f", "invert", "--jobs", "1")
    lines = stderr_lines(proc)
    assert proc.returncode == 0, proc.stderr
    assert (out / "a.png").read_bytes() == before
    assert any("a.png" in line and "skipped" in line for line in lines), lines
    assert summary_counts(lines) == {"done": 1, "skipped": 1, "failed": 0}
    assert_same_image(out / "b.png", expected(BADGE, "invert"))

    proc = run_cli("apply", src, "-o", out, "-f", "invert", "--jobs", "1", "--overwrite")
    lines = stderr_lines(proc)
    assert proc.returncode == 0, proc.stderr
    assert summary_counts(lines) == {"done": 2, "failed": 0}
    assert_same_image(out / "a.png", expected(ASTRONAUT, "invert"))
    assert_no_hidden(out)


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["plain", "overwrite"])
def test_input_is_never_overwritten(tmp_path: Path, overwrite: list[str]) -> None:
    image = tmp_path / "photo.png"
    shutil.copy(ASTRONAUT, image)
    original = image.read_bytes()
    proc = run_cli("apply", image, "-o", image, "-f", "invert", *overwrite)
    assert_usage_error(proc, "photo.png", "would replace an input file")
    assert image.read_bytes() == original
    assert tree(tmp_path) == {"photo.png"}


def test_directory_output_onto_itself_keeps_inputs(tmp_path: Path) -> None:
    shutil.copy(ASTRONAUT, tmp_path / "a.png")
    shutil.copy(BADGE, tmp_path / "b.png")
    proc = run_cli("apply", tmp_path, "-o", tmp_path, "-f", "invert", "--overwrite", "--jobs", "1")
    lines = stderr_lines(proc)
    assert proc.returncode == 2  # a usage error: nothing runs
    assert len(lines) == 2 and all(line.startswith("error:") and "would replace an input" in line for line in lines)
    assert (tmp_path / "a.png").read_bytes() == ASTRONAUT.read_bytes()
    assert (tmp_path / "b.png").read_bytes() == BADGE.read_bytes()
    assert tree(tmp_path) == {"a.png", "b.png"}


# ---------------------------------------------------------------- list, info, backends
def test_list_json_and_category() -> None:
    proc = run_cli("list", "--json")
    assert proc.returncode == 0, proc.stderr
    everything = json.loads(proc.stdout)
    assert isinstance(everything, list) and len(everything) >= 5
    for item in everything:
        assert {"name", "category", "summary"} <= set(item) and item["summary"]
    names = {item["name"] for item in everything}
    assert {"gaussian_blur", "box_blur", "convolve", "pixellate", "vignette"} <= names

    proc = run_cli("list", "--category", "blur", "--json")
    assert proc.returncode == 0, proc.stderr
    blur = json.loads(proc.stdout)
    assert blur and all(item["category"] == "blur" for item in blur)
    assert {item["name"] for item in blur} == {i["name"] for i in everything if i["category"] == "blur"}
    assert "gaussian_blur" in {item["name"] for item in blur}


def test_info_json_params() -> None:
    proc = run_cli("info", "convolve", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["name"] == "convolve"
    params = {p["name"]: p for p in data["params"]}
    assert {"kernel", "mode", "bias", "scale", "border"} <= set(params)
    for param in data["params"]:
        assert {"name", "type", "default"} <= set(param), param
        if param["type"] == "choice":
            assert param["default"] in param["choices"]
        if param["type"] in ("int", "float"):
            assert param["min"] <= param["default"] <= param["max"]
    assert params["mode"]["choices"] == ["correlate", "convolve"]
    assert (params["bias"]["min"], params["bias"]["max"], params["bias"]["default"]) == (-1, 1, 0)


def test_info_unknown_filter_exits_2() -> None:
    assert_usage_error(run_cli("info", "nosuch"), "unknown filter", "'nosuch'")


def test_backends_json() -> None:
    proc = run_cli("backends", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert set(rows) == {"cpu", "opencl", "cuda"}
    for row in rows.values():
        assert isinstance(row["available"], bool) and {"device", "reason"} <= set(row)
        assert row["device"] if row["available"] else row["reason"], row
    assert rows["cpu"]["available"] is True
    assert rows["cuda"]["available"] == _cuda_available()


def test_compare_writes_before_and_after(tmp_path: Path) -> None:
    proc = run_cli("apply", ASTRONAUT, "-o", tmp_path / "out.png", "-f", "invert", "--compare", tmp_path / "cmp.png")
    assert proc.returncode == 0, proc.stderr
    before, after = cv2.imread(str(ASTRONAUT)), cv2.imread(str(tmp_path / "out.png"))
    sheet = cv2.imread(str(tmp_path / "cmp.png"))
    assert sheet.shape[1] >= 2 * before.shape[1] and sheet.shape[0] >= before.shape[0]
    lower = before.shape[0] // 2  # below the labels both images appear unchanged, side by side
    np.testing.assert_array_equal(sheet[lower:before.shape[0], :before.shape[1]], before[lower:])
    np.testing.assert_array_equal(sheet[lower:after.shape[0], -after.shape[1]:], after[lower:])
    several = run_cli("apply", ASTRONAUT, BADGE, "-o", tmp_path / "d", "-f", "invert", "--compare", tmp_path / "x.png")
    assert several.returncode == 2 and "--compare needs exactly one input image" in several.stderr


def test_histogram_option_plots_input_and_output(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    proc = run_cli("apply", ASTRONAUT, "-o", tmp_path / "out.png", "-f", "equalize", "--histogram", tmp_path / "h.png")
    assert proc.returncode == 0, proc.stderr
    plot = cv2.imread(str(tmp_path / "h.png"))
    assert plot is not None and plot.shape[:2] == (540, 960)
    wrong = run_cli("apply", ASTRONAUT, "-o", tmp_path / "o2.png", "-f", "invert", "--histogram", tmp_path / "o2.png")
    assert wrong.returncode == 2 and "--histogram" in wrong.stderr and not (tmp_path / "o2.png").exists()
