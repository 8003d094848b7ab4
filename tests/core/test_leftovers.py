"""cvfilters.core.leftovers: which temporaries of killed writes are removed, and when (the
documented minute, the hour where open files cannot be listed, only names of the pattern)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cvfilters.core import leftovers
from cvfilters.core.atomic import is_temporary_name

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


@pytest.mark.parametrize("name", [f".clip.{HEX}.tmp.mp4", f".clip.{HEX}.tmp.jpeg", f".a.png.{HEX}.tmp",
                                  f".clip.{HEX}.tmp.M4V"])
def test_pattern_takes_the_names_atomic_writes_use(name: str) -> None:
    assert is_temporary_name(name)


@pytest.mark.parametrize("name", [f"a.png.{HEX}.tmp", f".a.png.{HEX[:-1]}.tmp", f".a.png.{HEX}.tmp.toolong",
                                  f".a.png.{HEX}.tmpx", f".{HEX}.mux.", f".{HEX}.mux.mp4.x", f".a.png.{HEX}.tmp."])
def test_pattern_refuses_other_names(name: str) -> None:
    assert not is_temporary_name(name)


def test_folders_and_missing_directories_are_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / f".a.png.{HEX}.tmp"
    folder.mkdir()
    os.utime(folder, (time.time() - 120, time.time() - 120))
    assert leftovers.remove_stale(tmp_path) == [] and folder.is_dir()
    assert leftovers.remove_stale(tmp_path / "missing") == []


def test_files_another_process_holds_open_are_listed(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / f".a.png.{HEX}.tmp"
    aged(path, 120)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; f = open(sys.argv[1]); print(1, flush=True); "
                               "time.sleep(60)", str(path)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"1"
        info = path.stat()
        assert (info.st_dev, info.st_ino) in (leftovers._open_files() or set())
        assert leftovers.remove_stale(tmp_path) == [] and path.exists()
    finally:
        holder.kill()
        holder.wait()


def test_other_old_files_are_never_touched(tmp_path: Path) -> None:
    others = [aged(tmp_path / name, 7200) for name in ("photo.png", f"a.png.{HEX}.tmp", ".notes")]
    assert leftovers.remove_stale(tmp_path) == []
    assert all(p.exists() for p in others)


def test_one_failure_does_not_stop_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [aged(tmp_path / f".{name}.png.{HEX}.tmp", 120) for name in "abc"]
    real, failed = Path.unlink, []

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if not failed:
            failed.append(self)
            raise PermissionError(13, "denied")
        real(self, missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    removed = leftovers.remove_stale(tmp_path)
    assert len(removed) == 2 and failed[0] not in removed and set(removed) | set(failed) == set(paths)


def _holder(path: Path, seconds: float) -> subprocess.Popen[str]:
    """A process that holds ``path`` open for ``seconds`` (it says when it has it open)."""
    script = "import sys, time\nf = open(sys.argv[1])\nprint('open', flush=True)\ntime.sleep(float(sys.argv[2]))"
    proc = subprocess.Popen([sys.executable, "-c", script, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "open\n"
    return proc


def test_an_orphan_is_removed_once_its_dying_writer_lets_go(tmp_path: Path) -> None:
    target = tmp_path / "001.png"
    orphan = tmp_path / ".001.png.0123456789abcdef.tmp"
    orphan.write_bytes(b"partial")
    other = tmp_path / ".002.png.0123456789abcdef.tmp"  # another output's write: not this target's
    other.write_bytes(b"partial")
    holder = _holder(orphan, 0.3)
    try:
        assert leftovers.remove_orphans_of(target, wait=5.0) == [orphan]  # waited for the holder to exit
    finally:
        holder.wait()
    assert not orphan.exists() and other.exists()


def test_an_orphan_still_held_after_the_wait_is_kept(tmp_path: Path) -> None:
    orphan = tmp_path / ".001.png.0123456789abcdef.tmp"
    orphan.write_bytes(b"partial")
    holder = _holder(orphan, 30.0)
    try:
        assert leftovers.remove_orphans_of(tmp_path / "001.png", wait=0.1) == []
        assert orphan.exists()
    finally:
        holder.kill()
        holder.wait()
