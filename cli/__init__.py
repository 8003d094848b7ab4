"""The ``cvfilters`` command-line interface (installed as the package ``cvfilters.cli``)."""

from . import plots  # noqa: F401  (registers the plotting commands on the app)
from .app import app, main

__all__ = ["app", "main"]
