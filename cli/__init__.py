"""The ``cvfilters`` command-line interface (installed as the package ``cvfilters.cli``).

``app`` (the Typer app) is imported on first use: a plain core command never imports Typer.
"""

from typing import Any

from cvfilters.cli.main import main  # plots, preview and sweep register their commands when main() needs them

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from cvfilters.cli.app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
