"""The ``cvfilters`` command-line interface (installed as the package ``cvfilters.cli``)."""

from .app import app, main

__all__ = ["app", "main"]
