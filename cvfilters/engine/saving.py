"""Writing pipelines back: the dict form of a pipeline file, saved as YAML or JSON atomically.

Parameters equal to their defaults are left out; :mod:`cvfilters.engine.loading` reads the
file back to the same steps.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cvfilters.core import atomic
from cvfilters.engine.steps import Step

PIPELINE_VERSION = 1


def steps_to_dict(steps: Sequence[Step]) -> dict[str, Any]:
    """The pipeline-file form of ``steps``; parameters equal to their defaults are left out."""
    entries = []
    for step in steps:
        entry: dict[str, Any] = {"filter": step.filter.name}
        values = step.overrides()
        if values:
            entry["params"] = {k: step.filter.param(k).to_json(v) for k, v in values.items()}
        entries.append(entry)
    return {"version": PIPELINE_VERSION, "steps": entries}


def save_steps(path: str | os.PathLike[str], steps: Sequence[Step]) -> None:
    """Write a ``.json`` file, or YAML for any other suffix, atomically (:mod:`cvfilters.core.atomic`)."""
    import yaml

    path = Path(path)
    data = steps_to_dict(steps)
    text = json.dumps(data, indent=2) + "\n" if path.suffix.lower() == ".json" else yaml.safe_dump(
        data, sort_keys=False)
    atomic.write_text(path, text)
