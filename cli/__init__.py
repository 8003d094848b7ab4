"""The ``cvfilters`` command-line interface (installed as the package ``cvfilters.cli``)."""

from .app import app
from .main import main  # plots, preview and sweep register their commands when main() needs them

__all__ = ["app", "main"]
