"""Tests of registry."""
