"""Placeholder: the `cvfilters histogram` command is being written here."""

from .app import app

__all__ = ["app"]
