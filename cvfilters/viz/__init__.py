"""Pictures and pages about images and filters: histogram plots, contact sheets and
comparisons, and documentation generated from the registry.

The top of the library beside ``run``; imports every layer below.
"""
