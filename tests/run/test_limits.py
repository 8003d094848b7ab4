"""Memory limits: the peak estimate written out, and MemAvailable read from a /proc/meminfo given here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cvfilters.core.errors import ResourceLimitError
from cvfilters.run import limits

MEMINFO = "MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:    5242880 kB\nBuffers: 1 kB\n"


@pytest.mark.parametrize(("itemsize", "per_sample"), [(1, 2 + 12), (2, 4 + 12), (4, 8 + 12)])
def test_the_peak_is_input_output_and_three_float32_copies(itemsize: int, per_sample: int) -> None:
    assert limits.estimate_bytes(10, 20, 3, itemsize) == 10 * 20 * 3 * per_sample


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """/proc/meminfo and sysconf as this test says (``meminfo`` None: the file cannot be read)."""
    state: dict[str, object] = {"meminfo": MEMINFO, "pages": 1000, "page size": 4096}
    real_read = Path.read_text

    def read_text(self: Path, *args: object, **kwargs: object) -> str:
        if str(self) == "/proc/meminfo":
            if state["meminfo"] is None:
                raise PermissionError(13, "Permission denied", "/proc/meminfo")
            return str(state["meminfo"])
        if "meminfo" in str(self).lower():
            raise FileNotFoundError(2, "No such file", str(self))
        return real_read(self, *args, **kwargs)  # type: ignore[arg-type]

    def sysconf(name: str) -> int:
        if state["pages"] is None:
            raise ValueError("unrecognized configuration name")
        return {"SC_AVPHYS_PAGES": int(state["pages"]), "SC_PAGE_SIZE": int(state["page size"])}[name]  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", read_text)
    monkeypatch.setattr(os, "sysconf", sysconf)
    return state


def test_available_memory_is_memavailable_in_bytes(machine: dict[str, object]) -> None:
    assert limits.available_bytes() == 5242880 * 1024


@pytest.mark.parametrize("meminfo", [None, "MemTotal: 24000000 kB\nMemFree: 1000 kB\n", "memavailable: 7 kB\n"])
def test_without_memavailable_the_free_pages_count(machine: dict[str, object], meminfo: str | None) -> None:
    machine["meminfo"] = meminfo
    assert limits.available_bytes() == 1000 * 4096
    machine["pages"] = None
    assert limits.available_bytes() is None


def test_check_memory_refuses_what_cannot_fit(machine: dict[str, object]) -> None:
    machine["meminfo"] = "MemAvailable: 1048576 kB\n"  # 1 GiB
    needed = 4000 * 3000 * 3 * (2 + 12)  # 0.47 GiB
    limits.check_memory("big.png", 3000, 4000, 3, 1, workers=2)
    with pytest.raises(ResourceLimitError) as info:
        limits.check_memory("big.png", 3000, 4000, 3, 1, workers=3)
    assert str(info.value).endswith(f"needs about {needed / 2**30:.1f} GiB to filter (4000x3000, 3 channels) x 3 "
                                    "worker(s), but only 1.0 GiB is available; use fewer --jobs")
    with pytest.raises(ResourceLimitError, match=r"\(4000x3000, 3 channels, 20 frames\) x 1 worker"):
        limits.check_memory("anim.gif", 3000, 4000, 3, 1, frames=20)  # 19 decoded frames more: 0.64 GiB
    machine["meminfo"] = "MemAvailable: 14 kB\n"  # exactly 32 x 32 gray 8-bit: 1024 x (2 + 12) bytes
    limits.check_memory("fits.png", 32, 32, 1, 1)
    with pytest.raises(ResourceLimitError, match=r"\(32x32, 1 channels\) x 2 worker"):
        limits.check_memory("fits.png", 32, 32, 1, 1, workers=2)
    machine["meminfo"] = "MemAvailable: 17 kB\n"  # 16-bit, 2 frames: 1024 x (4 + 12) + 1024 x 2 = 18 kB
    with pytest.raises(ResourceLimitError, match=r"\(32x32, 1 channels, 2 frames\) x 1 worker"):
        limits.check_memory("two.tif", 32, 32, 1, 2, frames=2)
    machine["meminfo"] = "MemAvailable: 36 kB\n"
    limits.check_memory("two.tif", 32, 32, 1, 2, frames=2, workers=2)
    machine["meminfo"], machine["pages"] = None, None
    limits.check_memory("huge.png", 100000, 100000, 4, 4, workers=8)  # unknown memory: not refused
