"""Declared filters: ``Filter`` and ``register()``, typed parameters and their kinds,
alpha policies, generated signatures and the manifest of built-in families.

One declaration per filter drives validation, the CLI, ``info``, signatures and the stub.
Imports ``core`` and ``backends``.
"""
