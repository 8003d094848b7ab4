"""Many files through one pipeline: batch planning, executors (process pool, GPUs, Dask),
worker lifelines and resource limits.

The top of the library beside ``viz``; imports every layer below.
"""
