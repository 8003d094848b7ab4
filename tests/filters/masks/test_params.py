"""The mask family's parameter kinds (file, mask, pipeline), its feather radius and parse_steps.

Every refusal is checked as the whole message a user reads and the filter and parameter the
error names (``masked``'s nested steps are wrapped once, as "has a bad step: ..."). Nesting
counts inline specs and pipeline files alike; inline specs inside a pipeline file read their
``@file`` values from that file's folder, wherever the process runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters.masks.params import feather_param, parse_steps
from cvfilters.registry.params import Param

SHAPE_HINT = " or a shape such as 'ellipse:0.5,0.5,0.3,0.4'"
ALL = "rect:0,0,1,1"


def refused(call: Callable[[], object], message: str, filter_name: str, param: str) -> None:
    """``call()`` raises a ParameterError whose text ends with ``message`` (after any file location)."""
    with pytest.raises(ParameterError) as caught:
        call()
    assert re.fullmatch(r"(\S+:\d+: step \d+: )?" + re.escape(message), str(caught.value)), str(caught.value)
    assert (caught.value.filter_name, caught.value.param) == (filter_name, param)


def masked(filter: object, mask: object = ALL) -> dict[str, object]:
    return cvf.get_filter("masked").resolve({"mask": mask, "filter": filter})


def write_steps(path: Path, filter: str, mask: str = ALL) -> Path:
    path.write_text(yaml.safe_dump({"version": 1, "steps": [{"filter": "masked",
                                                             "params": {"mask": mask, "filter": filter}}]}))
    return path


# ----------------------------------------------------------------------------- file and mask kinds
def test_feather_param_is_declared_as_info_shows_it() -> None:
    assert feather_param().describe() == {
        "name": "feather", "type": "float", "default": 0.0, "min": 0.0, "max": 1000.0, "unit": "px",
        "help": "feather radius of the mask's edge (0: the mask as it is)", "required": False, "large": 300.0}
    custom = feather_param("soft", 2.0, "how soft").describe()
    assert (custom["name"], custom["default"], custom["help"]) == ("soft", 2.0, "how soft")


def test_a_file_parameter_takes_an_existing_path_only(tmp_path: Path) -> None:
    present = tmp_path / "lut.cube"
    present.write_text("x")
    plain = Param("lut", "file")
    assert plain.coerce(str(present), "mine") == str(present)
    assert plain.coerce(present, "mine") == str(present)
    refused(lambda: plain.coerce(np.zeros((2, 2)), "mine"), "mine: lut takes a file path, not an array; use a file",
            "mine", "lut")
    missing = tmp_path / "missing.cube"
    refused(lambda: plain.coerce(str(missing), "mine"), f"mine: lut={missing}: no such file (give @FILE)",
            "mine", "lut")
    refused(lambda: cvf.get_filter("blend").resolve({"source": str(missing)}),
            f"blend: source={missing}: no such file (give @FILE)", "blend", "source")


def test_a_mask_parameter_names_shapes_in_its_refusals(tmp_path: Path) -> None:
    missing = tmp_path / "missing.png"
    refused(lambda: masked("invert", str(missing)), f"masked: mask={missing}: no such file (give @FILE{SHAPE_HINT})",
            "masked", "mask")
    refused(lambda: masked("invert", np.ones((4, 4))),
            "masked: mask takes a file path, not an array; use cvfilters.apply_masked(image, pipeline, mask)",
            "masked", "mask")
    refused(lambda: masked("invert", "ellipse:0.5"),
            "masked: mask='ellipse:0.5': ellipse takes 4 numbers (ellipse:cx,cy,rx,ry), not 1", "masked", "mask")
    assert masked("invert", " Rect:0,0,1,1 ")["mask"] == "rect:0,0,1,1"  # kept in canonical form


# ----------------------------------------------------------------------------- pipeline kind
def test_a_pipeline_must_be_a_non_empty_spec() -> None:
    refused(lambda: masked(5), "masked: filter=5 must be a filter spec string", "masked", "filter")
    refused(lambda: masked(Pipeline([])), "masked: filter is empty; give at least one filter step", "masked", "filter")
    refused(lambda: masked(None), "masked: filter is required", "masked", "filter")
    assert masked(Pipeline.parse("invert | grayscale"))["filter"] == "invert | grayscale"


def test_bad_nested_steps_are_wrapped_once(tmp_path: Path) -> None:
    refused(lambda: masked("invert:'"), "masked: filter has a bad step: unbalanced quote in \"invert:'\"",
            "masked", "filter")
    # the inner step is masked too, but its parameter is another: still a bad step of `filter`
    inner = f"masked:mask=@{tmp_path / 'gone.png'},filter=invert"
    refused(lambda: masked(inner), f"masked: filter has a bad step: masked: mask=@{tmp_path / 'gone.png'}: no such "
            f"file (give @FILE{SHAPE_HINT})", "masked", "filter")


def test_three_inline_levels_are_refused_with_a_hint() -> None:
    two = "masked:mask='rect:0,0,1,1',filter=\"masked:mask='rect:0,0,1,1',filter='invert | grayscale'\""
    refused(lambda: masked(two), "masked: filter is nested too deeply to be written back as one spec; put the inner "
            "steps in a pipeline file (@steps.yaml)", "masked", "filter")


def test_a_file_outside_the_pipeline_folder_is_refused_naming_the_parameter(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    refused(lambda: Pipeline.load(write_steps(folder / "p.yaml", "@../loop.yaml")),
            "masked: filter file '../loop.yaml' is outside the pipeline file's folder; files named in a pipeline "
            "file must be inside its folder", "masked", "filter")


def test_files_nest_four_levels(tmp_path: Path) -> None:
    for level in range(5):
        write_steps(tmp_path / f"f{level}.yaml", f"@f{level + 1}.yaml" if level < 4 else "invert")
    refused(lambda: Pipeline.load(tmp_path / "f0.yaml"), "masked: filter nests masked deeper than 4 levels",
            "masked", "filter")
    assert len(Pipeline.load(tmp_path / "f1.yaml")) == 1


def test_inline_specs_count_as_levels(tmp_path: Path) -> None:
    # g0 and g1 each hold an inline masked step naming the next file: two levels per file
    for level in range(3):
        inner = f"masked:mask='{ALL}',filter=@g{level + 1}.yaml" if level < 2 else "invert"
        write_steps(tmp_path / f"g{level}.yaml", inner)
    refused(lambda: Pipeline.load(tmp_path / "g0.yaml"), "masked: filter nests masked deeper than 4 levels",
            "masked", "filter")
    assert len(Pipeline.load(tmp_path / "g1.yaml")) == 1


def test_inline_specs_read_files_from_the_pipeline_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "inner.yaml").write_text(yaml.safe_dump({"version": 1, "steps": [{"filter": "invert"}]}))
    write_steps(folder / "p.yaml", f"masked:mask='{ALL}',filter=@inner.yaml")
    monkeypatch.chdir(tmp_path)  # not the pipeline's folder
    pipe = Pipeline.load(folder / "p.yaml")
    assert str(folder / "inner.yaml") in pipe.steps[0].params["filter"]
    image = np.arange(24, dtype=np.uint8).reshape(4, 6)
    np.testing.assert_array_equal(pipe(image, backend="cpu"), 255 - image)


# ----------------------------------------------------------------------------- parse_steps
def test_parse_steps_caches_a_spec() -> None:
    steps = parse_steps("invert | grayscale")
    assert [step.filter.name for step in steps] == ["invert", "grayscale"]
    assert parse_steps("invert | grayscale") is steps


def test_parse_steps_reads_a_file_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "steps.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "steps": [{"filter": "invert"}]}))
    first = parse_steps(f"@{path}")
    assert [step.filter.name for step in first] == ["invert"]
    assert parse_steps(f"@{path}") is first
    path.write_text(yaml.safe_dump({"version": 1, "steps": [{"filter": "grayscale"}]}))  # another size
    assert [step.filter.name for step in parse_steps(f"@{path}")] == ["grayscale"]
