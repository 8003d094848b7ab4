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


def check_named_output(output: Path, inputs: list[Path], no_clobber: bool) -> None:
    """The one overwrite rule of a named output file (apply, sweep, histogram): it is replaced, as ``cp`` does,
    unless ``--no-clobber``; never an input (a hard link too); its folder must exist. Usage errors (exit 2)."""
    import os

    from cvfilters.core.errors import UsageError

    if any(p.exists() and output.exists() and os.path.samefile(p, output) for p in inputs):
        raise UsageError(f"{output}: is the input file; cvfilters never overwrites its input")
    if no_clobber and os.path.lexists(output):
        raise UsageError(f"{output}: exists; --no-clobber refuses to replace it")
    if not output.parent.is_dir():
        raise UsageError(f"-o {output}: folder {output.parent} does not exist")
