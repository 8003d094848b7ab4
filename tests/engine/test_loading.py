"""Tests of cvfilters.engine.loading: pipeline files read into steps, each error located by file and line.

Every message and line number below is written out by hand from the file's text (lines count from 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cvfilters.core.errors import ParameterError, SpecError, UnknownFilterError, UsageError
from cvfilters.engine.loading import read_pipeline_file, steps_from_dict

LOOK = """\
# a look
version: 1
steps:
  - filter: invert
  - filter: gaussian_blur
    params:
      sigma: 3
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def located_error(path: Path) -> str:
    """The message of the error that reading ``path`` into steps raises (confined to its folder)."""
    data, where = read_pipeline_file(path)
    with pytest.raises(UsageError) as caught:
        steps_from_dict(data, base_dir=path.parent, confine=True, where=where)
    return str(caught.value)


def test_a_yaml_file_gives_its_data_and_the_lines_of_its_nodes(tmp_path: Path) -> None:
    path = write(tmp_path / "look.yaml", LOOK)
    data, where = read_pipeline_file(str(path))  # a str path is read like a Path
    assert data == {"version": 1, "steps": [{"filter": "invert"},
                                            {"filter": "gaussian_blur", "params": {"sigma": 3}}]}
    assert where() == f"{path}:2: "  # the top-level mapping starts after the comment
    assert where(key="steps") == f"{path}:3: "
    assert where(step=1) == f"{path}:4: "
    assert where(step=2) == f"{path}:5: "
    assert where(step=2, key="params") == f"{path}:6: "
    assert where(step=2, key="params", param="sigma") == f"{path}:7: "


def test_a_part_not_in_the_file_is_located_at_the_nearest_node_that_is(tmp_path: Path) -> None:
    path = write(tmp_path / "look.yaml", LOOK)
    _, where = read_pipeline_file(path)
    assert where(key="version") == f"{path}:2: "  # its key is on the mapping's first line
    assert where(key="nope") == f"{path}:2: "
    assert where(step=1, key="params") == f"{path}:4: "  # step 1 has no params: the step
    assert where(step=1, key="params", param="sigma") == f"{path}:4: "
    assert where(step=2, key="params", param="radius") == f"{path}:6: "  # no radius: the params key
    assert where(step=2, key="nope", param="sigma") == f"{path}:5: "


def test_steps_that_are_no_list_are_located_at_the_top(tmp_path: Path) -> None:
    path = write(tmp_path / "p.yaml", "\n\nversion: 1\nsteps: {filter: invert}\n")
    _, where = read_pipeline_file(path)
    assert where(step=1) == f"{path}:3: "
    assert where(step=1, key="filter") == f"{path}:3: "
    path = write(tmp_path / "list.yaml", "# steps only\n- filter: invert\n")
    _, where = read_pipeline_file(path)
    assert where(step=1) == where(key="steps") == f"{path}:2: "


def test_a_json_file_is_located_by_its_name_alone(tmp_path: Path) -> None:
    path = write(tmp_path / "look.json", json.dumps({"version": 1, "steps": [{"filter": "invert"}]}))
    data, where = read_pipeline_file(path)
    assert data == {"version": 1, "steps": [{"filter": "invert"}]}
    assert where() == where(step=1, key="params", param="sigma") == f"{path}: "


def test_steps_from_a_dict_with_and_without_params() -> None:
    steps = steps_from_dict({"version": 1, "steps": [
        {"filter": "invert"}, {"filter": "gaussian_blur", "params": {"sigma": 3}},
        {"filter": "gaussian_blur", "params": None}, {"filter": "gaussian_blur", "params": {}}]})
    assert [step.filter.name for step in steps] == ["invert", "gaussian_blur", "gaussian_blur", "gaussian_blur"]
    assert steps[0].params == {}
    assert steps[1].params == {"sigma": 3.0, "ksize": 0, "border": "reflect101"}
    assert steps[2].params["sigma"] == steps[3].params["sigma"] == 2.0  # the default


@pytest.mark.parametrize(("data", "message"), [
    ([{"filter": "invert"}], "a pipeline file must hold a mapping with 'version' and 'steps'"),
    ({"version": 1, "steps": [{"filter": "invert"}], "Steps": 1},
     "unknown key 'Steps' (did you mean 'steps'?) (allowed: version, steps)"),
    ({"verison": 1, "steps": [{"filter": "invert"}]},
     "unknown key 'verison' (did you mean 'version'?) (allowed: version, steps)"),
    ({"version": 1, "steps": [{"filter": "invert"}], "extra": 1}, "unknown key 'extra' (allowed: version, steps)"),
    ({"version": 1, "steps": [{"filter": "invert"}], 7: 1}, "unknown key 7 (allowed: version, steps)"),
    ({"steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not None"),
    ({"version": 2, "steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not 2"),
    ({"version": 1.0, "steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not 1.0"),
    ({"version": "1", "steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not '1'"),
    ({"version": True, "steps": [{"filter": "invert"}]}, "pipeline file version must be 1, not True"),
    ({"version": 1}, "'steps' must be a non-empty list of {filter: NAME, params: {...}}"),
    ({"version": 1, "steps": []}, "'steps' must be a non-empty list of {filter: NAME, params: {...}}"),
    ({"version": 1, "steps": ({"filter": "invert"},)}, "'steps' must be a non-empty list of {filter: NAME, "
                                                       "params: {...}}"),
    ({"version": 1, "steps": [{"filter": "invert"}, "invert"]},
     "step 2 must be a mapping with 'filter' and optional 'params'"),
    ({"version": 1, "steps": [{"filter": "invert"}, {"filter": "invert", "parms": {}}]},
     "step 2: unknown key 'parms' (did you mean 'params'?)"),
    ({"version": 1, "steps": [{"Filter": "invert"}]}, "step 1: unknown key 'Filter' (did you mean 'filter'?)"),
    ({"version": 1, "steps": [{"filter": "invert", "mask": "x"}]}, "step 1: unknown key 'mask'"),
    ({"version": 1, "steps": [{"filter": "invert"}, {"params": {}}]}, "step 2 needs a 'filter' key"),
    ({"version": 1, "steps": [{"filter": "invert", "params": ["x"]}]}, "step 1: 'params' must be a mapping"),
    ({"version": 1, "steps": [{"filter": "invert"}, {"filter": 5}]},
     "step 2: unknown filter '5'; `cvfilters list` shows them all"),
    ({"version": 1, "steps": [{"filter": "invert"}, {"filter": "gaussian_blur", "params": {"sigma": -1}}]},
     "step 2: gaussian_blur: sigma=-1 is outside [0.1, 100]"),
])
def test_structure_errors_are_written_out(data: Any, message: str) -> None:
    """Without ``where`` a message has no location, only the step and the key at fault."""
    with pytest.raises(UsageError) as caught:
        steps_from_dict(data)
    assert str(caught.value) == message
    assert isinstance(caught.value, SpecError) or "step 2: " in message


@pytest.mark.parametrize(("text", "message"), [
    ("version: 1\nsteps:\n  - filter: invert\n  - filter: gaussian_blur\n    parms:\n      sigma: 3\n",
     "5: step 2: unknown key 'parms' (did you mean 'params'?)"),
    ("# v1\nversoin: 1\nsteps: [{filter: invert}]\n",
     "2: unknown key 'versoin' (did you mean 'version'?) (allowed: version, steps)"),
    ("steps: [{filter: invert}]\nversion: 2\n", "2: pipeline file version must be 1, not 2"),
    ("steps: [{filter: invert}]\n", "1: pipeline file version must be 1, not None"),
    ("version: 1\nsteps: [{filter: invert}]\nextra: 1\n", "3: unknown key 'extra' (allowed: version, steps)"),
    ("version: 1\n\nsteps: []\n", "3: 'steps' must be a non-empty list of {filter: NAME, params: {...}}"),
    ("- filter: invert\n", "1: a pipeline file must hold a mapping with 'version' and 'steps'"),
    ("version: 1\nsteps:\n  - filter: invert\n  - invert\n",
     "4: step 2 must be a mapping with 'filter' and optional 'params'"),
    ("version: 1\nsteps:\n  - filter: invert\n  - params: {}\n", "4: step 2 needs a 'filter' key"),
    ("version: 1\nsteps:\n  - filter: invert\n  - filter: gaussian_blur\n    params: 3\n",
     "5: step 2: 'params' must be a mapping"),
])
def test_structure_errors_carry_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "look.yaml", text)
    assert located_error(path) == f"{path}:{message}"


def test_filter_and_parameter_errors_point_at_their_key(tmp_path: Path) -> None:
    """An unknown filter is located at ``filter:``; a bad value at its parameter's key, else ``params:``."""
    head = "version: 1\nsteps:\n  - filter: invert\n"
    path = write(tmp_path / "a.yaml", head + "  - params: {sigma: 3}\n    filter: pixelate\n")
    assert located_error(path).startswith(f"{path}:5: step 2: unknown filter 'pixelate' (did you mean pixellate")
    path = write(tmp_path / "b.yaml", head + "  - filter: gaussian_blur\n    params:\n      ksize: 3\n"
                                             "      sigma: -1\n")
    assert located_error(path) == f"{path}:7: step 2: gaussian_blur: sigma=-1 is outside [0.1, 100]"
    path = write(tmp_path / "c.yaml", head + "  - filter: gaussian_blur\n    params:\n      ksize: 3\n"
                                             "      sigm: 1\n")
    assert located_error(path).startswith(f"{path}:7: step 2: gaussian_blur: sigm is not a parameter")
    path = write(tmp_path / "d.yaml", head + "  - filter: convolve\n    params:\n      kernel: '@k.txt'\n")
    assert located_error(path) == (f"{path}:6: step 2: convolve: kernel file {tmp_path / 'k.txt'} cannot be read "
                                   "(No such file or directory)")  # read from the file's folder
    path = write(tmp_path / "e.yaml", head + "  - filter: convolve\n    params:\n      kernel:\n        - [1, 2]\n"
                                             "        - [3]\n")  # the key's line, not its value's
    assert located_error(path) == f"{path}:6: step 2: convolve: kernel=[[1, 2], [3]] must be a rectangular 2-D list " \
                                  "of numbers"


def test_errors_keep_their_type(tmp_path: Path) -> None:
    head = "version: 1\nsteps:\n  - filter: invert\n"
    for body, kind in [("  - filter: pixelate\n", UnknownFilterError),
                       ("  - filter: gaussian_blur\n    params: {sigma: -1}\n", ParameterError),
                       ("  - filter: invert\n    x: 1\n", SpecError)]:
        data, where = read_pipeline_file(write(tmp_path / "p.yaml", head + body))
        with pytest.raises(kind):
            steps_from_dict(data, where=where)


def test_a_nested_file_locates_its_own_error_once(tmp_path: Path) -> None:
    """A file that names itself fails in the nested read; that read's location is not prefixed again."""
    text = ("version: 1\nsteps:\n- filter: masked\n  params:\n    mask: rect:0,0,1,1\n"
            "    filter: '@loop.yaml'\n")
    path = write(tmp_path / "loop.yaml", text)
    message = f"{path}:6: step 1: masked: filter=@loop.yaml: the pipeline file includes itself"
    assert located_error(path) == message
    with pytest.raises(ParameterError) as caught:  # from a dict (no location of its own) the same message
        steps_from_dict(json.loads(json.dumps({"version": 1, "steps": [
            {"filter": "masked", "params": {"mask": "rect:0,0,1,1", "filter": "@loop.yaml"}}]})), base_dir=tmp_path)
    assert str(caught.value) == message


def test_file_values_are_read_from_base_dir_and_confined_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "k.txt").write_text("0 1 0\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    data = {"version": 1, "steps": [{"filter": "convolve", "params": {"kernel": "@../k.txt"}}]}
    steps = steps_from_dict(data, base_dir=inner)
    assert steps[0].params["kernel"] == ((0.0, 1.0, 0.0),)
    with pytest.raises(ParameterError) as caught:
        steps_from_dict(data, base_dir=inner, confine=True)
    assert str(caught.value).startswith("step 1: convolve: kernel") and "outside the pipeline file's folder" in \
        str(caught.value)
    local = {"version": 1, "steps": [{"filter": "convolve", "params": {"kernel": "@k.txt"}}]}
    assert steps_from_dict(local, base_dir=tmp_path, confine=True)[0].params["kernel"] == ((0.0, 1.0, 0.0),)
