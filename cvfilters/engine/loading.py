"""Reading pipeline files: YAML or JSON, safely, with errors located by file and line.

A pipeline file is ``{version: 1, steps: [{filter: NAME, params: {...}}]}``
(:mod:`cvfilters.engine.saving` writes it). YAML is parsed with the safe loader and without
aliases; files over :data:`cvfilters.engine.bounds.MAX_PIPELINE_FILE` are refused; an error names the file, the line
and the key (``look.yaml:5: step 2: unknown key 'parms' (did you mean 'params'?)``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cvfilters.core.errors import SpecError, UsageError
from cvfilters.engine import bounds
from cvfilters.engine.saving import PIPELINE_VERSION
from cvfilters.engine.steps import Step
from cvfilters.registry import catalog as registry

Where = Callable[..., str]
"""``where(step=None, key=None, param=None)``: the prefix that locates a problem (``look.yaml:4: ``)."""


def read_pipeline_file(path: str | os.PathLike[str]) -> tuple[Any, Where]:
    """The data of a YAML or JSON pipeline file and the locator of its lines.

    YAML is parsed with the safe loader (no object construction), without aliases (no
    "billion laughs") and within the bounds of :mod:`cvfilters.engine.bounds` (1 MiB regular
    files, 32 levels, no key twice).
    """
    path = Path(path)
    data, node = bounds.parse_document(path, bounds.read_pipeline_text(path))
    return data, _locator(path, node)


def steps_from_dict(data: Any, *, base_dir: str | os.PathLike[str] | None = None, confine: bool = False,
                    where: Where | None = None) -> list[Step]:
    """The steps of the dict form of a pipeline file (``version`` and ``steps``).

    With ``confine``, file values must stay inside ``base_dir``; ``where`` locates problems
    in the file (:func:`read_pipeline_file` returns one).
    """
    at = where or (lambda **_: "")
    if not isinstance(data, Mapping):
        raise SpecError(f"{at()}a pipeline file must hold a mapping with 'version' and 'steps'")
    for key in data:
        if key not in ("version", "steps"):
            raise SpecError(f"{at(key=key)}unknown key {key!r}{_did_you_mean(key, ('version', 'steps'))} "
                            "(allowed: version, steps)")
    version = data.get("version")
    if type(version) is not int or version != PIPELINE_VERSION:
        raise SpecError(f"{at(key='version')}pipeline file version must be {PIPELINE_VERSION}, not {version!r}")
    items = data.get("steps")
    if not isinstance(items, list) or not items:
        raise SpecError(f"{at(key='steps')}'steps' must be a non-empty list of {{filter: NAME, params: {{...}}}}")
    steps = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            raise SpecError(f"{at(step=i)}step {i} must be a mapping with 'filter' and optional 'params'")
        for key in item:
            if key not in ("filter", "params"):
                raise SpecError(f"{at(step=i, key=key)}step {i}: unknown key {key!r}"
                                f"{_did_you_mean(key, ('filter', 'params'))}")
        if "filter" not in item:
            raise SpecError(f"{at(step=i)}step {i} needs a 'filter' key")
        params = item.get("params") or {}
        if not isinstance(params, Mapping):
            raise SpecError(f"{at(step=i, key='params')}step {i}: 'params' must be a mapping")
        try:
            flt = registry.get(str(item["filter"]))
            steps.append(Step(flt, flt.resolve(params, base_dir=base_dir, confine=confine)))
        except UsageError as exc:
            if not getattr(exc, "located", False):  # a pipeline file nested in this one located it already
                param = getattr(exc, "param", "") or None
                prefix = at(step=i, key="params" if param else "filter", param=param)
                exc.args = (f"{prefix}step {i}: {exc}",)
                exc.located = where is not None  # type: ignore[attr-defined]
            raise
    return steps


def _did_you_mean(word: Any, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(word).lower(), choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _locator(path: Path, root: Any) -> Callable[..., str]:
    """``where(step, key, param)`` for :func:`steps_from_dict`: ``"look.yaml:4: "`` from YAML node marks.

    The line is that of the most specific node found (the parameter's key, the step's
    key, the step, the top-level key); a JSON file (no marks) gives ``"look.json: "``.
    """
    from yaml.nodes import MappingNode, SequenceNode

    def child(node: Any, key: Any) -> tuple[Any, Any]:
        if isinstance(node, MappingNode):
            for k, v in node.value:
                if k.value == key:
                    return k, v
        return None, None

    def where(step: int | None = None, key: str | None = None, param: str | None = None) -> str:
        mark_node = None
        if root is not None:
            mark_node = root
            node = root
            if step is not None:
                _, items = child(root, "steps")
                node = items.value[step - 1] if isinstance(items, SequenceNode) else None
                mark_node = node or mark_node
            if key is not None and node is not None:
                key_node, value = child(node, key)
                mark_node = key_node or mark_node
                if param is not None and value is not None:
                    mark_node = child(value, param)[0] or mark_node
        line = f"{mark_node.start_mark.line + 1}:" if mark_node is not None else ""
        return f"{path}:{line} "

    return where
