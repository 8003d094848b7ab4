"""cvfilters.core.files: confined, regular, bounded reads, .npy headers and names shown as ``ls -b`` (issue 24)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from cvfilters.core.files import FileRefused, check_regular, confined, json_unique, npy_array, read_regular, shown


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
