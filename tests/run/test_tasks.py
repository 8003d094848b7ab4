"""cvfilters.run.tasks: what the options of a batch give each worker."""

from __future__ import annotations

import pytest

from cvfilters.engine.pipeline import Pipeline
from cvfilters.run.tasks import Options

INVERT = Pipeline.parse("invert").to_dict()


def test_options_split_the_machine_between_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    from cvfilters.core import machine

    monkeypatch.setattr(machine, "cores", lambda: 6)
    assert Options(INVERT).tile_workers() == 6 and Options(INVERT, workers=0).tile_workers() == 6
    assert Options(INVERT, workers=2).tile_workers() == 1
    gib = 2**30
    assert Options(INVERT, memory=3 * gib).budget() == 3 * gib
    assert Options(INVERT, memory=3 * gib, workers=3).budget() == gib
