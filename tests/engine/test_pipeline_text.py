"""Pipeline text and files: splitting, quoting, parse errors, pipeline-file errors, image checks.

Every expected message is written out here: each is a one-line error the user reads
(the CLI contract), and each row guards a branch (mutation survivors of pipeline.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from cvfilters.backends.execution import info_of
from cvfilters.core.errors import InvalidImageError, SpecError
from cvfilters.engine.bounds import MAX_PIPELINE_FILE
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.spec import split_spec


@pytest.mark.parametrize(("text", "sep", "parts"), [
    ("a|b|c", "|", ["a", "b", "c"]),
    ("a:k=[1,2],m=3", ",", ["a:k=[1,2]", "m=3"]),
    ("k=[1,2],m=(3,4)", ",", ["k=[1,2]", "m=(3,4)"]),
    ("k='a,b',m=\"c|d\"", ",", ["k='a,b'", 'm="c|d"']),
    ("x='it''s'", ",", ["x='it''s'"]),
    ("", "|", [""]),
    ("a|", "|", ["a", ""]),
])
def test_split_spec_outside_brackets_and_quotes(text: str, sep: str, parts: list[str]) -> None:
    assert split_spec(text, sep) == parts


@pytest.mark.parametrize(("text", "message"), [
    ("k=[1,2", "unbalanced brackets in 'k=[1,2'"),
    ("k='a", "unbalanced quote in \"k='a\""),
    ("k=1]", "unbalanced brackets in 'k=1]'"),
])
def test_split_spec_refuses_unbalanced_text(text: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        split_spec(text, ",")
    assert str(caught.value) == message


@pytest.mark.parametrize(("spec", "message"), [
    ("gaussian_blur||invert", "empty filter step (two '|' in a row, or a trailing '|')"),
    ("gaussian_blur:sigma", "gaussian_blur: expected key=value, got 'sigma'"),
    ("gaussian_blur:=3", "gaussian_blur: expected key=value, got '=3'"),
    ("gaussian_blur:sigma=2,sigma=3", "gaussian_blur: sigma is given twice"),
])
def test_parse_errors_are_one_line(spec: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        Pipeline.parse(spec)
    assert str(caught.value) == message


@pytest.mark.parametrize("spec", [
    "gaussian_blur:sigma=3,border=wrap",
    "masked:mask='rect:0.5,0,0.5,1',filter='gaussian_blur:sigma=8 | pixellate:size=4'",
    "masked:mask=\"rect:0,0,1,1\",filter=invert",
    "masked:mask='rect:0,0,1,1',filter=\"masked:mask='rect:0,0,0.5,1',filter=invert\"",  # ' inside: "..."
    "convolve:kernel=[[0,-1,0],[-1,5,-1],[0,-1,0]]",
    "vignette",
])
def test_specs_round_trip_through_text(spec: str) -> None:
    pipe = Pipeline.parse(spec)
    again = Pipeline.parse(pipe.to_spec())
    assert again == pipe and again.to_spec() == pipe.to_spec()


def test_values_are_unquoted_once() -> None:
    (step,) = Pipeline.parse("masked:mask='rect:0,0,1,1',filter=\"invert\"").compile()
    assert step.params["mask"] == "rect:0,0,1,1" and step.params["filter"] == "invert"
    assert Pipeline.parse("masked:mask='rect:0,0,1,1',filter=invert").to_spec() == \
        "masked:mask='rect:0,0,1,1',filter=invert"


# ---------------------------------------------------------------- pipeline files
def write(path: Path, data: object) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize(("data", "message"), [
    ([1, 2], "a pipeline file must hold a mapping with 'version' and 'steps'"),
    ({"version": 1, "steps": [], "extra": 1}, "unknown key 'extra' (allowed: version, steps)"),
    ({"version": 2, "steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not 2"),
    ({"version": True, "steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not True"),
    ({"steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not None"),
    ({"version": 1, "steps": []}, "'steps' must be a non-empty list of {filter: NAME, params: {...}}"),
    ({"version": 1, "steps": {"filter": "invert"}},
     "'steps' must be a non-empty list of {filter: NAME, params: {...}}"),
    ({"version": 1, "steps": [{"filter": "invert"}, {"params": {}}]},
     "step 2 needs a 'filter' key"),
    ({"version": 1, "steps": [{"filter": "invert", "extra": 1}]},
     "step 1: unknown key 'extra'"),
    ({"version": 1, "steps": ["invert"]}, "step 1 must be a mapping with 'filter' and optional 'params'"),
    ({"version": 1, "steps": [{"filter": "invert", "params": [1]}]}, "step 1: 'params' must be a mapping"),
])
def test_pipeline_file_structure_errors(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        Pipeline.load(write(tmp_path / "p.json", data))
    assert str(caught.value) == f"{tmp_path / 'p.json'}: {message}"  # the file, then what is wrong


def test_pipeline_file_params_null_means_none(tmp_path: Path) -> None:
    pipe = Pipeline.load(write(tmp_path / "p.json", {"version": 1, "steps": [{"filter": "invert", "params": None}]}))
    assert pipe.to_spec() == "invert"


def test_pipeline_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    # The bound is on the file's bytes, before either parser sees the text: checked with JSON padded
    # by whitespace, which loads in a fraction of a second (a YAML comment of 1 MiB took PyYAML's
    # pure-Python scanner over 3 s, in three passes). The next test refuses a YAML file one byte over.
    text = '{"version": 1, "steps": [{"filter": "invert"}]}\n'
    path = write(tmp_path / "max.json", text + " " * (MAX_PIPELINE_FILE - len(text)))
    assert path.stat().st_size == MAX_PIPELINE_FILE and Pipeline.load(path).to_spec() == "invert"


def test_pipeline_file_read_errors(tmp_path: Path) -> None:
    missing = tmp_path / "gone.yaml"
    with pytest.raises(SpecError, match=r"^.*gone\.yaml: pipeline file cannot be read \(No such file or directory\)$"):
        Pipeline.load(missing)
    big = write(tmp_path / "big.yaml", "#" * (MAX_PIPELINE_FILE + 1))
    with pytest.raises(SpecError) as caught:
        Pipeline.load(big)
    assert str(caught.value) == (f"{big}: pipeline file is {MAX_PIPELINE_FILE + 1} bytes, larger than the limit "
                                 "of 1 MiB")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SpecError, match=r"bin\.yaml: pipeline file is not UTF-8 text$"):
        Pipeline.load(binary)


def test_pipeline_file_syntax_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"p\.json: not a valid pipeline file \(Expecting"):
        Pipeline.load(write(tmp_path / "p.json", "{version: 1"))
    with pytest.raises(SpecError, match=r"p\.yaml: not a valid pipeline file \("):
        Pipeline.load(write(tmp_path / "p.yaml", "steps: [\n"))
    aliases = "version: 1\nsteps:\n- &a {filter: invert}\n- *a\n"
    with pytest.raises(SpecError) as caught:
        Pipeline.load(write(tmp_path / "a.yml", aliases))
    assert str(caught.value) == f"{tmp_path / 'a.yml'}: YAML aliases (*name) are not allowed in pipeline files"
    yaml_ok = "version: 1\nsteps:\n- filter: gaussian_blur\n  params: {sigma: 3}\n"
    assert Pipeline.load(write(tmp_path / "ok.YAML", yaml_ok)).to_spec() == "gaussian_blur:sigma=3"


# ---------------------------------------------------------------- images
LAYOUT = "is not H x W or H x W x C with C in 1, 2 (gray + alpha), 3, 4"


@pytest.mark.parametrize(("image", "message"), [
    (np.zeros((4, 4, 2), np.uint8), f"image shape (4, 4, 2) {LAYOUT}"),
    (np.zeros((4,), np.uint8), f"image shape (4,) {LAYOUT}"),
    (np.zeros((2, 2, 2, 3), np.uint8), f"image shape (2, 2, 2, 3) {LAYOUT}"),
    (np.zeros((4, 4), np.int32), "image dtype int32 is not supported (use uint8, uint16 or float32)"),
    (np.zeros((0, 4), np.uint8), "image is empty (0 pixels)"),
    (np.zeros((3, 0, 3), np.float32), "image is empty (0 pixels)"),
    ([[1, 2]], "expected a numpy array, cv2.UMat or cv2.cuda.GpuMat, not list"),
])
def test_spec_of_refusals(image: object, message: str) -> None:
    with pytest.raises(InvalidImageError) as caught:
        info_of(image)
    assert str(caught.value) == message


def test_spec_of_reads_shape_channels_and_dtype() -> None:
    spec = info_of(np.zeros((5, 7, 4), np.uint16))
    assert (spec.height, spec.width, spec.channels, spec.dtype) == (5, 7, 4, np.dtype(np.uint16))
    gray = info_of(cv2.UMat(np.zeros((3, 2), np.float32)))
    assert (gray.height, gray.width, gray.channels, gray.dtype) == (3, 2, 1, np.dtype(np.float32))


@pytest.mark.parametrize(("spec", "message"), [
    ("gaussian_blur:sigma=3 pixellate", "gaussian_blur: sigma=3 pixellate must be a number; steps are separated by "
                                        "'|': did you mean 'gaussian_blur:sigma=3 | pixellate'?"),
    ("invert vignette:radius=1", "unknown filter 'invert vignette' (did you mean vignette?); `cvfilters list` shows "
                                 "them all; steps are separated by '|': did you mean 'invert | vignette:radius=1'?"),
])
def test_a_missing_bar_is_pointed_out(spec: str, message: str) -> None:
    with pytest.raises(Exception) as caught:  # a ParameterError or an UnknownFilterError
        Pipeline.parse(spec)
    assert str(caught.value) == message


def test_pipeline_from_strings_tuples_and_files(tmp_path: Path) -> None:
    (tmp_path / "k.txt").write_text("0 1 0\n")
    pipe = Pipeline(["gamma:gamma=2 | invert", ("convolve", {"kernel": "@k.txt"})], base_dir=tmp_path)
    assert [s.filter.name for s in pipe.steps] == ["gamma", "invert", "convolve"]
    assert pipe.steps[2].params["kernel"] == ((0.0, 1.0, 0.0),)  # read from base_dir
    assert [s.filter.name for s in pipe.compile()] == ["fused[gamma:gamma=2 | invert]", "convolve"]  # fuses by default


def test_pipeline_file_errors_carry_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "p.yaml", "version: 1\nsteps:\n  - filter: invert\n    params: 3\n")
    with pytest.raises(SpecError) as caught:
        Pipeline.load(path)
    assert str(caught.value) == f"{path}:4: step 1: 'params' must be a mapping"
