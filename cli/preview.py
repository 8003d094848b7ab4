"""Placeholder: the `cvfilters preview` and `cvfilters sweep` commands are being written here."""

from .app import app

__all__ = ["app"]
