"""Tests of cvfilters.run.budget: sizes, cgroup v1/v2 limits (fake trees) and the default budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from cvfilters.core.errors import UsageError
from cvfilters.run import budget


@pytest.mark.parametrize(("text", "expected"), [
    ("512M", 512 * 2**20), ("2G", 2 * 2**30), ("1.5GiB", 3 * 2**29), ("300mb", 300 * 2**20),
    ("100000000", 100_000_000), (" 1 t ", 2**40), (2**30, 2**30), ("65536K", 64 * 2**20),
])
def test_sizes(text: str | int, expected: int) -> None:
    assert budget.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "2X", "-1G", "1.2.3G", "G", "10M"])
def test_bad_sizes_are_usage_errors_naming_the_option(text: str) -> None:
    with pytest.raises(UsageError, match="--memory"):
        budget.parse_size(text)


def _tree(tmp_path: Path, proc: str, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for name, value in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(value + "\n")
    (tmp_path / "proc").write_text(proc)
    return root, tmp_path / "proc"


def test_cgroup_v2_limit_less_usage(tmp_path: Path) -> None:
    root, proc = _tree(tmp_path, "0::/job/task\n", {
        "job/task/memory.max": str(4 * 2**30), "job/task/memory.current": str(2**30),
        "job/memory.max": "max", "job/memory.current": str(3 * 2**30),
    })
    assert budget.cgroup_room(root, proc) == 3 * 2**30


def test_a_parent_cgroup_limit_binds(tmp_path: Path) -> None:
    root, proc = _tree(tmp_path, "0::/job/task\n", {
        "job/task/memory.max": "max", "job/task/memory.current": str(2**30),
        "job/memory.max": str(2 * 2**30), "job/memory.current": str(1536 * 2**20),
    })
    assert budget.cgroup_room(root, proc) == 512 * 2**20


def test_cgroup_v1_memory_controller(tmp_path: Path) -> None:
    root, proc = _tree(tmp_path, "5:cpu:/\n4:memory:/docker/abc\n", {
        "memory/docker/abc/memory.limit_in_bytes": str(2**31), "memory/docker/abc/memory.usage_in_bytes": str(2**30),
        "memory/memory.limit_in_bytes": str(9223372036854771712),  # v1's "unlimited"
    })
    assert budget.cgroup_room(root, proc) == 2**30


def test_no_cgroup_limit(tmp_path: Path) -> None:
    root, proc = _tree(tmp_path, "0::/\n", {"memory.max": "max"})
    assert budget.cgroup_room(root, proc) is None
    assert budget.cgroup_room(tmp_path / "absent", tmp_path / "absent-proc") is None


def test_default_is_a_share_of_the_tightest_room(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "available_bytes", lambda: 8 * 2**30)
    monkeypatch.setattr(budget, "cgroup_room", lambda: 2 * 2**30)
    assert budget.resolve() == int(2 * 2**30 * budget.DEFAULT_SHARE)
    monkeypatch.setattr(budget, "cgroup_room", lambda: None)
    assert budget.resolve() == int(8 * 2**30 * budget.DEFAULT_SHARE)
    monkeypatch.setattr(budget, "available_bytes", lambda: 10 * 2**20)
    assert budget.resolve() == budget.MIN_BUDGET
    assert budget.resolve("3G") == 3 * 2**30


def test_share_and_describe() -> None:
    assert budget.share(2**30, 4) == 2**28
    assert budget.share(2**27, 4) == budget.MIN_BUDGET
    assert budget.describe(3 * 2**29) == "1.5 GiB"
    assert budget.describe(512 * 2**20) == "512 MiB"
