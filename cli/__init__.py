"""The ``cvfilters`` command-line interface (installed as the package ``cvfilters.cli``)."""

from .app import app, main  # plots and preview register their commands when main() needs them

__all__ = ["app", "main"]
