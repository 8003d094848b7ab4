"""Option handling the commands share: building the pipeline and checking the backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def build_pipeline(specs: list[str] | None, pipeline_file: Path | None) -> Any:
    """The pipeline of ``-p FILE`` then ``-f SPEC`` options; a usage error when both are absent."""
    from cvfilters.core.errors import UsageError
    from cvfilters.engine.pipeline import Pipeline

    pipeline = Pipeline(Pipeline.load(pipeline_file).steps if pipeline_file else [])
    pipeline.steps += Pipeline.parse(specs).steps if specs else []
    if not pipeline.steps:
        raise UsageError("give at least one filter with -f SPEC or a pipeline file with -p FILE")
    return pipeline


def check_backend(backend: str) -> None:
    """A usage error for an unknown backend name or a named backend that cannot run here."""
    from cvfilters.backends import BACKEND_NAMES, get_backend
    from cvfilters.core.errors import UsageError

    if backend not in BACKEND_NAMES:
        raise UsageError(f"--backend {backend!r} is not one of {', '.join(BACKEND_NAMES)}")
    if backend != "auto":
        get_backend(backend)
