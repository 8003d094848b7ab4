"""Contracts every registered filter keeps, generated over the whole registry.

A filter is covered here the moment it is registered: dtype x channels keep shape and
dtype, alpha is untouched where promised, tiny images do not crash, parameters
round-trip through spec strings, YAML and JSON, and out-of-range values are rejected
with a message naming the filter and the parameter.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import yaml

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.registry.params import Param
from tests.conftest import CHANNELS, DTYPES, photo

FILTERS = cvf.list_filters()
NAMES = [f.name for f in FILTERS]


def example_params(flt: cvf.Filter) -> dict[str, Any]:
    """The smallest valid parameter set: the examples of required parameters."""
    return {p.name: p.example for p in flt.params if p.required}


def non_default_value(param: Param) -> Any:
    """A valid value different from the default, derived from the declaration."""
    if param.kind == "bool":
        return not param.default
    if param.kind == "choice":
        return next(c for c in reversed(param.choices) if c != param.default)
    if param.kind in ("int", "float"):
        low = param.min if param.min is not None else -10
        high = param.max if param.max is not None else (param.default or 0) + 10
        value = low + (high - low) * 0.25
        if param.kind == "int":
            value = int(value) | 1 if param.odd else int(value)
            value = value if value != param.default else value + (2 if param.odd else 1)
        return value
    if param.kind == "point":
        low, high = param.min or 0.0, param.max if param.max is not None else 1.0
        return (low + (high - low) * 0.25, low + (high - low) * 0.75)
    return param.example if param.example is not None else param.default


def test_registry_is_not_empty_and_names_are_unique() -> None:
    assert len(NAMES) >= 9
    assert len(NAMES) == len(set(NAMES))


@pytest.mark.parametrize("name", NAMES)
def test_declaration_is_complete(name: str) -> None:
    flt = cvf.get_filter(name)
    assert flt.summary and flt.description
    for param in flt.params:
        assert param.help, f"{name}.{param.name} has no help"
        if param.kind in ("int", "float"):
            assert param.min is not None and param.max is not None, f"{name}.{param.name} needs a range"
        if not param.required and param.default is not None:
            assert flt.resolve({**example_params(flt), param.name: param.default})[param.name] == param.default


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("channels", CHANNELS)
def test_shape_dtype_and_alpha_kept(name: str, dtype: type, channels: int) -> None:
    flt = cvf.get_filter(name)
    image = photo(24, 32, channels, dtype)
    params = example_params(flt)
    out = cvf.apply(image, name, backend="cpu", **params)
    assert_spec(out, flt, params, image)
    if channels == 4 and flt.alpha == "passthrough":
        np.testing.assert_array_equal(out[..., 3], image[..., 3])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("size", [(1, 1), (2, 2), (3, 3), (1, 7)], ids=str)
@pytest.mark.parametrize("channels", CHANNELS)
def test_tiny_images(name: str, size: tuple[int, int], channels: int) -> None:
    flt = cvf.get_filter(name)
    image = photo(*size, channels, np.uint8) if size != (1, 1) else np.full((1, 1, channels), 200, np.uint8)
    image = image.reshape(size) if channels == 1 else image.reshape(*size, channels)
    out = cvf.apply(image, name, backend="cpu", **example_params(flt))
    assert_spec(out, flt, example_params(flt), image)


def assert_spec(out: np.ndarray, flt: cvf.Filter, params: dict[str, Any], image: np.ndarray) -> None:
    """The output has the spec the filter declares (the input's, unless it declares a change)."""
    declared = flt.output_info(flt.resolve(params), cvf.ImageInfo.of(image))
    assert cvf.ImageInfo.of(out) == declared
    if declared == cvf.ImageInfo.of(image):
        assert out.shape == image.shape


@pytest.mark.parametrize("name", NAMES)
def test_params_round_trip(name: str, tmp_path) -> None:
    flt = cvf.get_filter(name)
    values = {**example_params(flt), **{p.name: non_default_value(p) for p in flt.params}}
    pipe = Pipeline([(name, values), (name, example_params(flt))])
    assert Pipeline.parse(pipe.to_spec()) == pipe
    assert Pipeline.from_dict(yaml.safe_load(yaml.safe_dump(pipe.to_dict()))) == pipe
    assert Pipeline.from_dict(json.loads(json.dumps(pipe.to_dict()))) == pipe
    if any(p.kind_record.files for p in flt.params):
        return  # a saved file reads paths relative to its own folder: tested in test_pipeline
    for suffix in (".yaml", ".json"):
        pipe.save(tmp_path / f"p{suffix}")
        assert Pipeline.load(tmp_path / f"p{suffix}") == pipe


def _out_of_range_cases() -> list[tuple[str, str, float]]:
    cases = []
    for flt in FILTERS:
        for param in flt.params:
            if param.kind in ("int", "float", "point"):
                step = 1 if param.kind == "int" else 0.5
                if param.min is not None:
                    cases.append((flt.name, param.name, param.min - step))
                if param.max is not None:
                    cases.append((flt.name, param.name, param.max + step))
    return cases


@pytest.mark.parametrize(("name", "param", "value"), _out_of_range_cases())
def test_out_of_range_rejected(name: str, param: str, value: float) -> None:
    flt = cvf.get_filter(name)
    kind = flt.param(param).kind
    given = [value, value] if kind == "point" else (int(value) if kind == "int" else value)
    with pytest.raises(ParameterError) as err:
        flt.resolve({**example_params(flt), param: given})
    assert str(err.value).startswith(f"{name}: {param}=")
    assert "outside" in str(err.value)


NUMERIC = [(f.name, p.name) for f in FILTERS for p in f.params if p.kind in ("int", "float")]


@pytest.mark.parametrize(("name", "param"), NUMERIC)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "abc", True, [1, 2, 3]], ids=repr)
def test_hostile_values_rejected(name: str, param: str, bad: Any) -> None:
    flt = cvf.get_filter(name)
    with pytest.raises(ParameterError, match=f"^{name}: {param}"):
        flt.resolve({**example_params(flt), param: bad})


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_rejected(name: str) -> None:
    with pytest.raises(ParameterError, match=f"^{name}: no_such_param is not a parameter"):
        cvf.get_filter(name).resolve({**example_params(cvf.get_filter(name)), "no_such_param": 1})


def test_category_is_the_family_module_and_the_families_are_the_modules() -> None:
    from pathlib import Path

    from cvfilters.filters import FAMILIES
    from cvfilters.registry.manifest import FILTERS

    folder = Path(cvf.__file__).parent / "filters"
    modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    assert modules == set(FAMILIES), "every module of cvfilters/filters is a family (machinery goes in _shared/)"
    for name, entry in FILTERS.items():
        assert entry["category"] == entry["module"], name
    assert {entry["module"] for entry in FILTERS.values()} == set(FAMILIES)
