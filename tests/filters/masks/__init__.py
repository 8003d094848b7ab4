"""Tests of the mask helpers (cvfilters.filters.masks), module by module."""
