"""The cores a process may use: its affinity where Linux tells it, else the machine's count."""

from __future__ import annotations

import os

import pytest

from cvfilters.core import machine


def test_the_affinity_decides_where_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5})
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert machine.cores() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {4})
    assert machine.cores() == 1  # pinned to one core: one, however many the machine has


def test_without_an_affinity_call_the_cpu_count_decides_and_unknown_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert machine.cores() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert machine.cores() == 1
