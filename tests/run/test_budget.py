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


@pytest.mark.parametrize(("text", "what", "message"), [
    ("lots", "--memory", "--memory 'lots' is not a size (examples: 512M, 2G, 1.5GiB, 1000000000)"),
    (True, "--memory", "--memory True is not a size (examples: 512M, 2G, 1.5GiB, 1000000000)"),
    ("10M", "--memory", "--memory '10M' is below the smallest budget, 64M"),
    (-1, "--memory", "--memory -1 is below the smallest budget, 64M"),
    ("1K", "memory=", "memory= '1K' is below the smallest budget, 64M"),
])
def test_size_messages_are_written_out(text: str | int, what: str, message: str) -> None:
    """The whole message: the option as given, the text as typed, the smallest budget in MiB; a bool is no size."""
    with pytest.raises(UsageError) as caught:
        if what == "--memory":
            budget.parse_size(text)
        else:
            budget.parse_size(text, what=what)
    assert str(caught.value) == message


@pytest.mark.parametrize(("proc", "expected"), [
    ("0::/user.slice/session-2.scope\n", ("/user.slice/session-2.scope", None)),
    ("12:cpu,cpuacct:/\n4:memory:/docker/abc\n1:name=systemd:/docker/abc\n", (None, "/docker/abc")),
    ("4:memory:/docker/abc\n0::/docker/abc\n", ("/docker/abc", "/docker/abc")),
    ("12:cpu,cpuacct:/\n", (None, None)),
    ("", (None, None)),
])
def test_cgroup_paths_of_v1_v2_and_hybrid_files(tmp_path: Path, proc: str, expected: tuple[str | None, ...]) -> None:
    """The v2 line is ``0::PATH``; the v1 memory controller's line names ``memory``; either may be absent."""
    (tmp_path / "cgroup").write_text(proc)
    assert budget._cgroup_paths(tmp_path / "cgroup") == expected


def test_cgroup_paths_may_hold_colons_and_any_letter(tmp_path: Path) -> None:
    """containerd's systemd driver names a cgroup ``...slice:cri-containerd:ID``; only the first two colons split."""
    path = "X11.slice/kubepods.slice:cri-containerd:ab12"
    root, proc = _tree(tmp_path, f"0::/{path}\n", {
        f"{path}/memory.max": str(3 * 2**30), f"{path}/memory.current": str(2**30),
    })
    assert budget.cgroup_room(root, proc) == 2 * 2**30


def test_cgroup_v1_memory_among_other_controllers(tmp_path: Path) -> None:
    """A v1 hierarchy mounted with several controllers lists them with commas."""
    root, proc = _tree(tmp_path, "4:hugetlb,memory:/job\n", {
        "memory/job/memory.limit_in_bytes": str(2**31), "memory/job/memory.usage_in_bytes": str(2**29),
    })
    assert budget.cgroup_room(root, proc) == 3 * 2**29


def test_cgroup_room_is_never_negative_and_a_missing_usage_counts_as_none(tmp_path: Path) -> None:
    """Usage over the limit (reclaim pending) leaves no room; an unreadable usage leaves all of the limit."""
    root, proc = _tree(tmp_path, "0::/job\n", {"job/memory.max": str(2**30), "job/memory.current": str(2**30 + 4096)})
    assert budget.cgroup_room(root, proc) == 0
    root, proc = _tree(tmp_path / "b", "0::/job\n", {"job/memory.max": str(2**30)})
    assert budget.cgroup_room(root, proc) == 2**30


@pytest.mark.parametrize(("limit", "expected"), [(2**60 - 1, 2**60 - 1), (2**60, None), (2**63 - 1, None)])
def test_limits_from_2_to_the_60_on_mean_no_limit(tmp_path: Path, limit: int, expected: int | None) -> None:
    """cgroup v1 writes a page-rounded 2^63 - 1 for "no limit"; 2^60 bytes and above are treated alike."""
    root, proc = _tree(tmp_path, "4:memory:/job\n", {"memory/job/memory.limit_in_bytes": str(limit)})
    assert budget.cgroup_room(root, proc) == expected


def test_one_gib_where_nothing_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither ``MemAvailable`` nor a cgroup limit: the machine's bytes are unknown and the budget is 1 GiB."""
    monkeypatch.setattr(budget, "available_bytes", lambda: None)
    monkeypatch.setattr(budget, "cgroup_room", lambda: None)
    assert budget.machine_bytes() is None
    assert budget.resolve() == 1073741824


def test_shares_are_whole_bytes_and_describe_switches_at_one_gib() -> None:
    """Floor division (an ``int``), one worker or none keeps the whole budget; 1 GiB itself reads ``1.0 GiB``."""
    third = budget.share(2**30, 3)
    assert third == 357913941 and type(third) is int
    assert budget.share(2**30, 1) == 2**30
    assert budget.share(2**30, 0) == 2**30
    assert budget.describe(2**30) == "1.0 GiB"
    assert budget.describe(2**30 - 2**20) == "1023 MiB"
