"""Built-in filters, one module per family.

Families are imported on first use of one of their filters: the registry reads
:mod:`cvfilters.registry.manifest` (regenerate it with ``python scripts/update_manifest.py``
after adding or changing a filter) to list them and to find the family of a name.
``cvfilters.registry.catalog.load_all()`` imports every family.
"""

FAMILIES = ("blend", "blur", "cartoon", "color", "convolve", "cube", "distort", "feather", "geometry", "histogram",
            "learned", "looks", "morphology", "photo", "stylize", "tone", "warp")

__all__ = ["FAMILIES"]
