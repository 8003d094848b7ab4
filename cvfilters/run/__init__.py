"""Many files through one pipeline: planning a batch, processing one task and running many,
executors (process pool, GPUs, Dask), worker lifelines and resource limits.

The top of the library beside ``viz``; imports every layer below.
"""
