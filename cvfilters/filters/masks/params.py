"""The mask family's parameter kinds (existing files, masks as a shape or a file, sub-pipelines) and its feather radius.

Each is a :class:`~cvfilters.registry.params.Kind` record added the way every kind is, so a
declaration names it like a built-in one: ``Param("mask", "mask", None, ...)``.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

import numpy as np

from cvfilters.core.errors import ParameterError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters.masks.feathering import LARGE_FEATHER, MAX_FEATHER
from cvfilters.filters.masks.shapes import is_shape_text, parse_shape
from cvfilters.filters.masks.sources import file_stamp
from cvfilters.registry.params import PATH, STR, Param, Source, add_kind

MAX_NESTING = 4


def feather_param(name: str = "feather", default: float = 0.0, help: str = "") -> Param:
    """The feather radius parameter (px, [0, 1000], above 300 only with ``allow_large``)."""
    return Param(name, "float", default, min=0.0, max=MAX_FEATHER, unit="px", large=LARGE_FEATHER,
                 help=help or "feather radius of the mask's edge (0: the mask as it is)")


_NESTING: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("cvfilters_masked_nesting", default=())


def _existing_file(param: Param, value: Any, source: Source, shapes: bool = False) -> Any:
    if isinstance(value, np.ndarray) and not param.image:
        hint = "cvfilters.apply_masked(image, pipeline, mask)" if shapes else "a file"
        raise ParameterError(source.filter_name, param.name, f"takes a file path, not an array; use {hint}")
    path = PATH.coerce(param, value, source)
    if isinstance(path, str) and not os.path.isfile(path):
        hint = " or a shape such as 'ellipse:0.5,0.5,0.3,0.4'" if shapes else ""
        raise ParameterError(source.filter_name, param.name, f"={value}: no such file (give @FILE{hint})")
    return path


def _mask(param: Param, value: Any, source: Source) -> Any:
    if isinstance(value, str) and is_shape_text(value):
        try:
            return parse_shape(value).to_text()
        except ValueError as exc:
            raise ParameterError(source.filter_name, param.name, f"={value!r}: {exc}") from None
    return _existing_file(param, value, source, shapes=True)


def _pipeline(param: Param, value: Any, source: Source) -> Any:
    if value is None:
        return STR.coerce(param, value, source)
    filter_name = source.filter_name
    chain = _NESTING.get()
    if len(chain) >= MAX_NESTING:
        raise ParameterError(filter_name, param.name, f"nests {filter_name} deeper than {MAX_NESTING} levels")
    token = None
    try:
        if isinstance(value, Pipeline):
            pipe, canonical = value, value.to_spec()
        elif isinstance(value, str) and value.strip().startswith("@"):
            path = source.file(value.strip()[1:], param.name)
            label = os.path.abspath(path)
            if label in chain:
                raise ParameterError(filter_name, param.name, f"={value}: the pipeline file includes itself")
            token = _NESTING.set((*chain, label))
            pipe, canonical = Pipeline.load(path), "@" + os.fspath(path)
        elif isinstance(value, str):
            token = _NESTING.set((*chain, "<spec>"))
            pipe = Pipeline.parse(value, base_dir=source.base_dir, confine=source.confine)
            canonical = pipe.to_spec()
            # Spec values are quoted with ' or " and have no escapes: one holding both cannot be written back.
            if ("'" in canonical and '"' in canonical) or Pipeline.parse(canonical) != pipe:
                raise ParameterError(filter_name, param.name, "is nested too deeply to be written back as one "
                                     "spec; put the inner steps in a pipeline file (@steps.yaml)")
        else:
            raise ParameterError(filter_name, param.name, f"={value!r} must be a filter spec string")
    except ParameterError as exc:
        if exc.filter_name == filter_name and exc.param == param.name:
            raise
        raise ParameterError(filter_name, param.name, f"has a bad step: {exc}") from None
    except UsageError as exc:
        raise ParameterError(filter_name, param.name, f"has a bad step: {exc}") from None
    finally:
        if token is not None:
            _NESTING.reset(token)
    if not pipe.steps:
        raise ParameterError(filter_name, param.name, "is empty; give at least one filter step")
    return canonical


# "file": a path to a file that must exist when the parameter is resolved. ``@file`` values are
# relative to the pipeline file's folder, like every ``@file`` (and, from a pipeline file, must
# stay inside it); a missing file is a usage error before anything runs.
add_kind(replace(PATH, name="file", coerce=_existing_file))
# "mask": a shape text (kept in canonical form) or an existing image file.
add_kind(replace(PATH, name="mask", coerce=_mask))
# "pipeline": a sub-pipeline given as a spec string, a Pipeline, or @steps.yaml. It is parsed when
# the parameter is resolved, so a bad nested step is a usage error before anything runs. A spec
# is kept as its canonical one-line form, in which nested @file values are already resolved
# against the right folder (and, inside a pipeline file, confined to it); @file is kept as
# @path (joined to the pipeline file's folder) and read again when the step runs. Files nest at
# most MAX_NESTING levels deep and a file that includes itself is refused.
add_kind(replace(STR, name="pipeline", coerce=_pipeline))


def parse_steps(spec: str) -> list[Any]:
    """The steps to run for a canonical sub-pipeline value (a spec, or ``@path`` of a pipeline file).

    Parsed once per spec (and file version), fused like any pipeline, and cached.
    """
    key: Hashable = (spec, file_stamp(spec[1:])) if spec.startswith("@") else spec
    steps = _STEPS.get(key)
    if steps is None:
        pipe = Pipeline.load(spec[1:]) if spec.startswith("@") else Pipeline.parse(spec)
        steps = pipe.compile()
        if len(_STEPS) > 256:
            _STEPS.clear()
        _STEPS[key] = steps
    return steps


_STEPS: dict[Hashable, list[Any]] = {}
