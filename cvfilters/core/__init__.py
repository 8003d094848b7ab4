"""The lowest layer: facts every other layer shares.

Type aliases, errors, locks that survive ``fork``, process defaults, pixel facts (full
scale, luma, premultiplied alpha), signed 16-bit depths, array-likes and PIL images at the
API boundary, the running filter's context, and atomic file writes with their temporary
names. Imports nothing else from cvfilters (the backend type is named for type checkers
only).
"""
