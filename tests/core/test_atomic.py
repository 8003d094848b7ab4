"""cvfilters.core.atomic: the one durable write (temporary file, fsync, rename, fsync the folder)."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from cvfilters.core import atomic
from cvfilters.engine.pipeline import Pipeline

TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{16}\.tmp(?P<suffix>\.\w+)?$")


def test_write_bytes_replaces_the_target_and_leaves_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.bin"
    atomic.write_bytes(target, b"old")
    atomic.write_bytes(target, memoryview(b"new bytes"))
    assert target.read_bytes() == b"new bytes"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.bin"]


def test_write_bytes_fsyncs_the_file_and_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[bool] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.path.isdir(f"/proc/self/fd/{fd}")), real(fd)))
    atomic.write_bytes(tmp_path / "a.bin", b"x")
    assert synced == [False, True]  # the temporary file, then the folder holding the rename


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path: Path, monkeypatch, failing) -> None:
    target = tmp_path / "keep.bin"
    target.write_bytes(b"old")

    def fail(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, failing, fail)
    with pytest.raises(OSError, match="No space"):
        atomic.write_bytes(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["keep.bin"]


def test_replacing_renames_on_success_and_cleans_up_on_error(tmp_path: Path) -> None:
    target = tmp_path / "clip.mp4"
    with atomic.replacing(target, keep_suffix=True) as temporary:
        match = TEMPORARY.match(temporary.name)
        assert match and match["name"] == "clip" and match["suffix"] == ".mp4"  # encoders pick by extension
        temporary.write_bytes(b"frames")
    assert target.read_bytes() == b"frames"
    with pytest.raises(RuntimeError), atomic.replacing(target) as temporary:
        temporary.write_bytes(b"half")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"frames" and [p.name for p in tmp_path.iterdir()] == ["clip.mp4"]


def test_pipeline_files_are_saved_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "look.yaml"
    Pipeline.parse("gaussian_blur:sigma=3").save(path)
    before = path.read_bytes()
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    with pytest.raises(OSError):
        Pipeline.parse("vignette").save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["look.yaml"]
    assert Pipeline.load(path) == Pipeline.parse("gaussian_blur:sigma=3")


def test_write_bytes_creates_every_missing_parent(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c" / "out.bin"  # three levels that do not exist yet
    atomic.write_bytes(target, b"deep")
    assert target.read_bytes() == b"deep"


def test_fsync_file_opens_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # outputs may be read-only by then (a umask, a --mode); a write open would fail for non-root users
    (tmp_path / "f.bin").write_bytes(b"x")
    flags: list[int] = []
    real = os.open
    monkeypatch.setattr(os, "open", lambda path, flag, *rest: (flags.append(flag), real(path, flag, *rest))[1])
    atomic.fsync_file(tmp_path / "f.bin")
    assert flags and flags[0] & (os.O_WRONLY | os.O_RDWR) == 0
