"""Built-in filters, one module per family; a filter's category is its family's name.

Shared machinery lives in :mod:`cvfilters.filters._shared` and masks in
:mod:`cvfilters.filters.masks`; every other module here is a family named in :data:`FAMILIES`.

Families are imported on first use of one of their filters: the registry reads
:mod:`cvfilters.registry.manifest` (regenerate it with ``python scripts/update_manifest.py``
after adding or changing a filter) to list them and to find the family of a name.
``cvfilters.registry.catalog.load_all()`` imports every family.
"""

from typing import get_args

from cvfilters.core.types import Category

FAMILIES: tuple[str, ...] = get_args(Category)
"""The family modules: a filter's category is the family module that defines it."""

__all__ = ["FAMILIES"]
