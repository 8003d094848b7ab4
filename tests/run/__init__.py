"""Tests of run."""
