"""Writing pipelines back (cvfilters.engine.saving): the dict form, and its JSON and YAML files.

The expected dicts and texts are written out by hand (the file format of docs and
``cvfilters info``); the files are read back with ``json`` and PyYAML, not with the loader.
"""

from __future__ import annotations

import json

import pytest
import yaml

from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.saving import save_steps, steps_to_dict

SPEC = "gaussian_blur:sigma=3,ksize=0 | grayscale | vignette:center=[0.25,0.75] | flip:axis=vertical"

# ksize=0 and the other defaults are left out; a step with no override has no "params";
# tuples become lists.
WANT = {
    "version": 1,
    "steps": [
        {"filter": "gaussian_blur", "params": {"sigma": 3.0}},
        {"filter": "grayscale"},
        {"filter": "vignette", "params": {"center": [0.25, 0.75]}},
        {"filter": "flip", "params": {"axis": "vertical"}},
    ],
}

WANT_JSON = """{
  "version": 1,
  "steps": [
    {
      "filter": "gaussian_blur",
      "params": {
        "sigma": 3.0
      }
    },
    {
      "filter": "grayscale"
    },
    {
      "filter": "vignette",
      "params": {
        "center": [
          0.25,
          0.75
        ]
      }
    },
    {
      "filter": "flip",
      "params": {
        "axis": "vertical"
      }
    }
  ]
}
"""

# Keys in the order written (version before steps: not sorted), block style.
WANT_YAML = """version: 1
steps:
- filter: gaussian_blur
  params:
    sigma: 3.0
- filter: grayscale
- filter: vignette
  params:
    center:
    - 0.25
    - 0.75
- filter: flip
  params:
    axis: vertical
"""


def test_steps_to_dict_keeps_only_overrides_as_json_values() -> None:
    data = steps_to_dict(Pipeline.parse(SPEC).steps)
    assert data == WANT
    assert isinstance(data["steps"][2]["params"]["center"], list)
    assert steps_to_dict([]) == {"version": 1, "steps": []}
    kernel = steps_to_dict(Pipeline.parse("convolve:kernel=[[0,1],[2,3]]").steps)
    assert kernel == {"version": 1, "steps": [{"filter": "convolve", "params": {"kernel": [[0.0, 1.0], [2.0, 3.0]]}}]}


@pytest.mark.parametrize("name", ["look.json", "LOOK.JSON", "look.Json"])
def test_a_json_suffix_in_any_case_writes_indented_json(tmp_path, name: str) -> None:
    path = tmp_path / name
    save_steps(path, Pipeline.parse(SPEC).steps)
    text = path.read_text(encoding="utf-8")
    assert text == WANT_JSON
    assert json.loads(text) == WANT


@pytest.mark.parametrize("name", ["look.yaml", "look.yml", "look.jsonc", "look"])
def test_any_other_suffix_writes_yaml_in_the_order_written(tmp_path, name: str) -> None:
    path = tmp_path / name
    save_steps(str(path), Pipeline.parse(SPEC).steps)
    text = path.read_text(encoding="utf-8")
    assert text == WANT_YAML
    assert yaml.safe_load(text) == WANT


def test_saving_replaces_a_file_and_leaves_nothing_else(tmp_path) -> None:
    path = tmp_path / "look.yaml"
    path.write_text("old\n" * 100)
    save_steps(path, Pipeline.parse("grayscale").steps)
    assert path.read_text(encoding="utf-8") == "version: 1\nsteps:\n- filter: grayscale\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["look.yaml"]
