"""cvfilters.core.leftovers: which temporaries of killed writes are removed, and when (the
documented minute, the hour where open files cannot be listed, only names of the pattern)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cvfilters.core import leftovers

HEX = "0123456789abcdef"


def aged(path: Path, seconds: float) -> Path:
    path.write_bytes(b"x")
    os.utime(path, (time.time() - seconds, time.time() - seconds))
    return path


def test_a_minute_is_the_documented_age(tmp_path: Path) -> None:
    young = aged(tmp_path / f".a.png.{HEX}.tmp", 50)
    old = aged(tmp_path / f".b.png.{HEX}.tmp", 70)
    assert leftovers.remove_stale(tmp_path) == [old]
    assert young.exists() and not old.exists()


def test_without_a_list_of_open_files_an_hour_is_the_age(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leftovers, "_open_files", lambda: None)
    young = aged(tmp_path / f".a.png.{HEX}.tmp", 3500)
    old = aged(tmp_path / f".b.png.{HEX}.tmp", 3700)
    assert leftovers.remove_stale(tmp_path) == [old]
    assert young.exists()


def test_open_files_are_listed_from_proc(tmp_path: Path) -> None:
    path = tmp_path / "held"
    path.write_bytes(b"x")
    with open(path, "rb"):
        held = leftovers._open_files()
        info = path.stat()
        assert held is not None and (info.st_dev, info.st_ino) in held
    assert (info.st_dev, info.st_ino) not in (leftovers._open_files() or set())


@pytest.mark.parametrize("name", [f".clip.{HEX}.tmp.mp4", f".clip.{HEX}.tmp.jpeg", f".{HEX}.mux.mkv",
                                  f".{HEX}.mux.M4V"])
def test_pattern_takes_the_names_atomic_writes_use(name: str) -> None:
    assert leftovers.PATTERN.match(name)


@pytest.mark.parametrize("name", [f"a.png.{HEX}.tmp", f".a.png.{HEX[:-1]}.tmp", f".a.png.{HEX}.tmp.toolong",
                                  f".a.png.{HEX}.tmpx", f".{HEX}.mux.", f".{HEX}.mux.mp4.x", f".a.png.{HEX}.tmp."])
def test_pattern_refuses_other_names(name: str) -> None:
    assert not leftovers.PATTERN.match(name)


def test_folders_and_missing_directories_are_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / f".a.png.{HEX}.tmp"
    folder.mkdir()
    os.utime(folder, (time.time() - 120, time.time() - 120))
    assert leftovers.remove_stale(tmp_path) == [] and folder.is_dir()
    assert leftovers.remove_stale(tmp_path / "missing") == []
