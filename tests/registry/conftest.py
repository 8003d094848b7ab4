"""Fixtures of the registry's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cvfilters.registry import catalog as registry


@pytest.fixture
def scratch() -> Iterator[list[str]]:
    """Names registered by a test are removed after it."""
    names: list[str] = []
    yield names
    for name in names:
        registry.unregister(name)
