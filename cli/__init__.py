"""The ``cvfilters`` command-line interface (installed as the package ``cvfilters.cli``)."""

from . import plots, preview, sweep  # noqa: F401  (register their commands on the app)
from .app import app, main

__all__ = ["app", "main"]
