"""The ``cvfilters`` command-line interface (installed as the package ``cvfilters.cli``)."""

from cvfilters.cli.app import app
from cvfilters.cli.main import main  # plots, preview and sweep register their commands when main() needs them

__all__ = ["app", "main"]
