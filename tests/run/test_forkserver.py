"""The early forkserver start: when a batch is likely to run in a pool, and the start itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cvfilters.run import forkserver, lifeline

MB = 1024 * 1024


def sized(path: Path, size: int) -> str:
    with open(path, "wb") as file:
        file.truncate(size)  # sparse: the size is what counts
    return str(path)


def test_explicit_jobs_decide_without_looking_at_sizes(tmp_path: Path) -> None:
    one, two = sized(tmp_path / "a.jpg", 10), sized(tmp_path / "b.jpg", 10)
    assert not forkserver.likely(1, [one, two]) and not forkserver.likely(1, [str(tmp_path)])
    assert not forkserver.likely(2, [one])  # one file: never a pool
    assert forkserver.likely(2, [one, two]) and forkserver.likely(3, [str(tmp_path)])


def test_by_default_eight_megabytes_of_input_make_a_pool_likely(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "nested").mkdir()
    sized(folder / "nested" / "big.jpg", 64 * MB)  # a folder's own files only
    for index in range(3):
        sized(folder / f"{index}.jpg", 2 * MB)
    assert not forkserver.likely(0, [str(folder)])  # 6 MB
    sized(folder / "3.jpg", 2 * MB)
    assert forkserver.likely(0, [str(folder)])  # 8 MB
    assert forkserver.likely(0, [sized(tmp_path / "x.tif", 5 * MB), sized(tmp_path / "y.tif", 3 * MB)])
    assert not forkserver.likely(0, [str(tmp_path / "missing.jpg"), sized(tmp_path / "z.tif", MB)])
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not forkserver.likely(0, [str(folder)])  # one core: no pool


def test_start_runs_one_forkserver_that_knows_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from multiprocessing import forkserver as server

    monkeypatch.setenv(lifeline.PARENT_ENV, "0")  # restored after the test
    forkserver.start()
    first = server._forkserver._forkserver_pid  # type: ignore[attr-defined]
    forkserver.start()
    assert first is not None and server._forkserver._forkserver_pid == first  # type: ignore[attr-defined]
    assert os.environ[lifeline.PARENT_ENV] == str(os.getpid())
    assert lifeline.alive(first)


def test_the_guess_counts_bytes_exactly_and_reads_past_what_it_cannot(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    short = [sized(tmp_path / "a.jpg", forkserver.POOL_MIN_BYTES - 1)]
    assert not forkserver.likely(0, short)  # one byte short
    assert forkserver.likely(0, [*short, sized(tmp_path / "b.jpg", 1)])  # exactly the threshold
    # a file that cannot be read is skipped, and the files after it still count
    assert forkserver.likely(0, [str(tmp_path / "missing.jpg"), sized(tmp_path / "c.jpg", 8 * MB)])


def test_without_an_affinity_call_the_cpu_count_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity")  # not Linux
    big = [sized(tmp_path / "a.jpg", 8 * MB)]
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert forkserver.likely(0, big)
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: taken as one core
    assert not forkserver.likely(0, big)
