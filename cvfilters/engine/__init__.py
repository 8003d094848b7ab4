"""Running filters: steps and the loop that runs them, fusion of consecutive steps,
sampling (remap with named interpolation and borders), pipelines and ``Pipeline.map``.

Imports ``registry``, ``backends`` and ``core``; never a filter family or a file format.
"""
