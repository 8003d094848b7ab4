"""cvfilters.core.files: confined, regular, bounded reads, .npy headers and names shown as ``ls -b`` (issue 24)."""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from cvfilters.core.files import (
    FileRefused,
    _kind,
    check_regular,
    confined,
    human_bytes,
    json_unique,
    npy_array,
    read_regular,
    shown,
)


@pytest.mark.skipif(shutil.which("ls") is None, reason="needs ls")
@pytest.mark.parametrize("name", ["plain.png", "a\x1b[2J\x1b[31mred.png", "two\nlines.png", "tab\there", "bell\a",
                                  "del\x7f.png", "éü.png"])
def test_shown_escapes_as_ls_b(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b"")
    listed = subprocess.run(["ls", "-b", str(tmp_path)], capture_output=True, env={**os.environ, "LC_ALL": "C.UTF-8"},
                            check=True).stdout.decode().rstrip("\n")
    assert shown(name) == listed
    assert shown(name).isprintable()
    assert shown("my photo.png") == "my photo.png"  # ls -b escapes spaces too; messages keep them readable


def test_regular_files_within_the_limit_are_read(tmp_path: Path) -> None:
    path = tmp_path / "k.csv"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    with pytest.raises(FileRefused, match=r"^is 100 bytes, larger than the limit of 99 bytes$"):
        read_regular(path, 99)
    assert check_regular(path, 100) == path.resolve()


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: os.mkfifo(p), "is a FIFO (named pipe), not a regular file"),
    (lambda p: p.symlink_to("/dev/zero"), "is a device, not a regular file"),
    (lambda p: p.symlink_to("/proc/self/mem"), "is a system file under /proc, not a regular file"),
    (lambda p: p.mkdir(), "is a directory, not a regular file"),
    (lambda p: None, "cannot be read (No such file or directory)"),
])
def test_other_files_are_refused_without_blocking(tmp_path: Path, make: object, reason: str) -> None:
    path = tmp_path / "special"
    make(path)  # type: ignore[operator]
    result: list[BaseException] = []
    reader = threading.Thread(target=lambda: result.append(pytest.raises(FileRefused, read_regular, path, 1 << 20)
                                                           .value), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "blocked"
    assert str(result[0]) == reason


def test_confinement_resolves_symlinks(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "secret.txt").write_text("s")
    (tmp_path / "root" / "inside.txt").write_text("i")
    (tmp_path / "root" / "link.txt").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "root" / "back.txt").symlink_to(tmp_path / "root" / "inside.txt")
    assert read_regular(tmp_path / "root" / "back.txt", 10, root=tmp_path / "root") == b"i"
    for name in ("link.txt", "../secret.txt"):
        with pytest.raises(FileRefused, match="is outside .*root \\(symlinks resolved\\)"):
            read_regular(tmp_path / "root" / name, 10, root=tmp_path / "root")
    assert confined(tmp_path / "root" / "sub" / ".." / "inside.txt", tmp_path / "root") == \
        (tmp_path / "root" / "inside.txt").resolve()


@pytest.mark.parametrize("array", [np.arange(12, dtype="<f8").reshape(3, 4), np.ones((2, 3), ">i2"),
                                   np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)), np.zeros(0)])
def test_npy_arrays_equal_numpy_load(array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, array)
    data = buffer.getvalue()
    got = npy_array(data, "a.npy", 100)
    expected = np.load(io.BytesIO(data))
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_npy_headers_are_checked_before_allocating() -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.zeros((2, 2)))
    data = buffer.getvalue()
    header_end = data.index(b"\n") + 1
    claim = data[:header_end].replace(b"'shape': (2, 2)", b"'shape': (9, 9)")
    with pytest.raises(FileRefused, match=r"is truncated or padded: its header says 9x9 float64 \(648 bytes\), "
                                          r"the file holds 32"):
        npy_array(claim + data[header_end:], "a.npy", 1000)
    huge = data[:header_end].replace(b"'shape': (2, 2)", b"'shape': (100000, 100000)")
    with pytest.raises(FileRefused, match=r"holds 100000x100000 = 10000000000 values, more than 65025"):
        npy_array(huge + b"\0" * 64, "a.npy", 255 * 255)
    with pytest.raises(FileRefused, match="is not a .npy array"):
        npy_array(b"not numpy", "a.npy", 10)


def test_json_keys_given_twice_are_refused() -> None:
    assert json_unique('{"a": 1, "b": {"a": 2}}') == {"a": 1, "b": {"a": 2}}
    with pytest.raises(ValueError, match="key 'a' is given twice"):
        json_unique('{"a": 1, "a": 2}')


@pytest.mark.parametrize(("count", "text"), [
    (0, "0 bytes"), (1023, "1023 bytes"), (1024, "1 KiB"), (1536, "1536 bytes"), (3072, "3 KiB"),
    (1 << 20, "1 MiB"), ((1 << 20) + 1024, "1025 KiB"), (2 << 20, "2 MiB"), (3 << 30, "3 GiB"),
])
def test_human_bytes_names_whole_units_only(count: int, text: str) -> None:
    assert human_bytes(count) == text


def test_shown_escapes_control_and_undecodable_characters_by_their_bytes() -> None:
    assert shown("a b") == "a b"
    assert shown("a b\x01") == "a b\\001"
    assert shown("x\x85y") == "x\\302\\205y"  # NEL: two UTF-8 bytes, each escaped
    assert shown("f\udcff.png") == "f\\377.png"  # a file name byte that is not UTF-8 (surrogateescape)


def test_npy_arrays_of_header_version_2_and_at_the_element_bound(tmp_path: Path) -> None:
    array = np.arange(6, dtype=np.int32).reshape(2, 3)
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=(2, 0))
    np.testing.assert_array_equal(npy_array(buffer.getvalue(), "v2.npy", 6), array)  # exactly at the bound
    fortran = io.BytesIO()
    np.lib.format.write_array(fortran, np.asfortranarray(array))
    np.testing.assert_array_equal(npy_array(fortran.getvalue(), "f.npy", 6), array)
    with pytest.raises(FileRefused) as caught:
        npy_array(b"hello, not an array", "h.npy", 6)
    assert caught.value.reason.startswith("is not a .npy array (the magic string is not correct")


def test_special_files_are_named_by_their_kind() -> None:
    """A socket cannot be opened (ENXIO), so its name shows only where a mode is read without opening."""
    assert _kind(stat.S_IFBLK | 0o600) == "a device" and _kind(stat.S_IFCHR | 0o600) == "a device"
    assert _kind(stat.S_IFSOCK | 0o600) == "a socket"
    assert _kind(0) == "a special file"
