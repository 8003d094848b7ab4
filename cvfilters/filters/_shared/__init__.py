"""Machinery the filter families share: borders and kernels for correlation, level
tables and histogram counts, reference images, and k-means palettes.

Registers no filter; imports ``io`` and the layers below it.
"""
