"""cvfilters.core.atomic: the one durable write (temporary file, fsync, rename, fsync the folder)."""

from __future__ import annotations

import errno
import os
import re
import stat
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


def test_replacing_hides_the_extension_by_default_and_makes_missing_folders(tmp_path: Path) -> None:
    # a `*.png` scan of the folder during the write must not see the half-written file
    target = tmp_path / "new" / "deeper" / "out.png"
    with atomic.replacing(target) as temporary:
        match = TEMPORARY.match(temporary.name)
        assert match and match["name"] == "out.png" and match["suffix"] is None
        assert temporary.parent.is_dir()
        temporary.write_bytes(b"pixels")
    assert target.read_bytes() == b"pixels"


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


@pytest.mark.parametrize(("umask", "mode"), [(0o027, 0o640), (0o002, 0o664), (0o000, 0o666)])
def test_a_new_file_gets_0o666_less_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        atomic.write_bytes(tmp_path / "new.bin", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.bin").st_mode) == mode  # not mkstemp's 0o600, never executable


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755])
def test_a_replaced_file_keeps_its_mode(tmp_path: Path, mode: int) -> None:
    for name, write in (("w.bin", lambda p: atomic.write_bytes(p, b"new")), ("r.bin", _replace_with_new)):
        target = tmp_path / name
        target.write_bytes(b"old")
        os.chmod(target, mode)
        write(target)
        assert target.read_bytes() == b"new" and stat.S_IMODE(os.stat(target).st_mode) == mode, name


def _replace_with_new(target: Path) -> None:
    with atomic.replacing(target) as temporary:
        temporary.write_bytes(b"new")


def test_a_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real, link = tmp_path / "dated.png", tmp_path / "latest.png"
    real.write_bytes(b"old")
    link.symlink_to(real.name)
    atomic.write_bytes(link, b"new")
    assert link.is_symlink() and os.readlink(link) == "dated.png" and real.read_bytes() == b"new"
    _replace_with_new_text(link, b"newer")
    assert link.is_symlink() and real.read_bytes() == b"newer"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dated.png", "latest.png"]


def _replace_with_new_text(target: Path, data: bytes) -> None:
    with atomic.replacing(target) as temporary:
        temporary.write_bytes(data)


def test_temporary_names_follow_the_one_rule(tmp_path: Path) -> None:
    plain = atomic.temporary_name(tmp_path / "out.png")
    assert re.fullmatch(r"\.out\.png\.[0-9a-f]{16}\.tmp", plain.name) and plain.parent == tmp_path
    kept = atomic.temporary_name(tmp_path / "clip.mp4", keep_suffix=True)
    assert re.fullmatch(r"\.clip\.[0-9a-f]{16}\.tmp\.mp4", kept.name)
    long = atomic.temporary_name(tmp_path / ("n" * 300 + ".png"))  # within a 255-byte name limit
    assert long.name.startswith("." + "n" * 100 + ".") and len(long.name) == 1 + 100 + 1 + 16 + 4
    long_kept = atomic.temporary_name(tmp_path / ("s" * 300 + ".png"), keep_suffix=True)
    assert long_kept.name == f".{'s' * 100}.{long_kept.name[102:118]}.tmp.png"
    assert atomic.temporary_name(tmp_path / "a.png") != atomic.temporary_name(tmp_path / "a.png")


@pytest.mark.parametrize(("name", "expected"), [
    (".a.png.0123456789abcdef.tmp", True), (".a.0123456789abcdef.tmp.mp4", True),
    (".a.0123456789abcdef.tmp.webm", True), (".a.0123456789abcdef.tmp.A1b2C", True),
    ("a.png.0123456789abcdef.tmp", False),  # not hidden
    (".a.png.0123456789ABCDEF.tmp", False),  # upper-case hex: not uuid4().hex
    (".a.png.0123456789abcde.tmp", False), (".a.png.0123456789abcdef0.tmp", False),  # 15 or 17 digits
    (".a.0123456789abcdef.tmp.toolong", False), (".a.0123456789abcdef.tmp.", False),
    (".a.png.0123456789abcdef.tmpx", False), ("..0123456789abcdef.tmp", False),  # no name before the digits
    ("x.a.png.0123456789abcdef.tmp", False), (".a.png.0123456789abcdef.tmp\n", False),
])
def test_is_temporary_name(name: str, expected: bool) -> None:
    assert atomic.is_temporary_name(name) is expected


def test_write_text_is_utf8(tmp_path: Path) -> None:
    atomic.write_text(tmp_path / "t.txt", "gré€")
    assert (tmp_path / "t.txt").read_bytes() == b"gr\xc3\xa9\xe2\x82\xac"


def test_sync_directory_false_leaves_the_folder_to_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[bool] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.path.isdir(f"/proc/self/fd/{fd}")), real(fd)))
    atomic.write_bytes(tmp_path / "a.bin", b"x", sync_directory=False)
    assert synced == [False]
    synced.clear()
    atomic.fsync_directory(tmp_path)
    assert synced == [True]


def test_replacing_fsyncs_the_file_and_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[bool] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.path.isdir(f"/proc/self/fd/{fd}")), real(fd)))
    _replace_with_new(tmp_path / "v.bin")
    assert synced == [False, True]


def test_fsync_directory_never_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    atomic.fsync_directory(tmp_path / "missing")  # cannot be opened: nothing to sync
    closed: list[int] = []
    real_close = os.close

    def fail(fd: int) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")  # as some file systems answer a folder's fsync

    monkeypatch.setattr(os, "fsync", fail)
    monkeypatch.setattr(os, "close", lambda fd: (closed.append(fd), real_close(fd))[1])
    atomic.fsync_directory(tmp_path)
    assert len(closed) == 1  # the folder's descriptor is closed even then


def test_a_failed_write_to_a_new_file_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Unwritable:
        def __buffer__(self, flags: int) -> memoryview:
            raise OSError(errno.EIO, "I/O error")

    with pytest.raises((OSError, TypeError)):
        atomic.write_bytes(tmp_path / "new.bin", Unwritable())
    assert list(tmp_path.iterdir()) == []


def test_the_temporary_file_is_created_exclusively(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = tmp_path / ".out.bin.0123456789abcdef.tmp"
    taken.write_bytes(b"another writer's")  # the same name drawn twice: never share the file
    monkeypatch.setattr(atomic, "temporary_name", lambda target, keep_suffix=False: taken)
    with pytest.raises(FileExistsError):
        atomic.write_bytes(tmp_path / "out.bin", b"mine")
    assert taken.read_bytes() == b"another writer's" and not (tmp_path / "out.bin").exists()


def test_the_rename_happens_while_the_file_is_still_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_at_rename: list[bool] = []
    real = os.replace

    def replace(source: Path, target: Path) -> None:
        held = {os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                if os.path.exists(f"/proc/self/fd/{fd}")}
        open_at_rename.append(os.path.realpath(source) in held)  # a concurrent sweep sees it held open
        real(source, target)

    monkeypatch.setattr(os, "replace", replace)
    atomic.write_bytes(tmp_path / "out.bin", b"x")
    assert open_at_rename == [True] and (tmp_path / "out.bin").read_bytes() == b"x"


def test_a_refused_change_of_owner_still_keeps_the_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "theirs.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)

    def refuse(*args: object) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")  # what a non-root user gets

    monkeypatch.setattr(os, "fchown", refuse)
    atomic.write_bytes(target, b"new")
    assert target.read_bytes() == b"new" and stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_a_failed_cleanup_does_not_hide_the_write_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def refused(path: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "fsync", no_space)
    monkeypatch.setattr(os, "unlink", refused)
    with pytest.raises(OSError, match="No space left"):  # the cause, not the failed removal after it
        atomic.write_bytes(tmp_path / "out.bin", b"x")
