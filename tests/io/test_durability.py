"""No data lost: atomic writes under SIGKILL, inputs never modified, refused and full
destinations, concurrent runs into one directory.

What a SIGKILLed writer leaves: it cannot clean up, so its temporary file
``.NAME.<16 hex>.tmp`` (hidden, ending in ``.tmp``, which no batch picks up as an input)
may stay beside the target. The target itself is always the old file, absent, or a
complete new file: it is only ever created by ``os.replace`` of a fully written and
fsynced temporary file.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters
from cvfilters.core import atomic
from cvfilters.io import reading, writing
from cvfilters.run import planning
from tests import cli_runner

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{16}\.tmp$")
BIG = (4000, 4000)  # uint16 noise: a 32 MB PNG
MEDIUM = (1000, 1000)  # 2 MB: enough to stop a write half-way
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a writer to SIGKILL it (POSIX only)")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def noise(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)


def encoded(image: np.ndarray, ext: str = ".png") -> bytes:
    """The bytes ``cvfilters.write`` stores for an image it needs not convert, without metadata."""
    ok, data = cv2.imencode(ext, image)
    assert ok
    return data.tobytes()


def litter(directory: Path, target: Path) -> list[str]:
    """Names in ``directory`` other than the target and temporaries of it; must be empty."""
    return [p.name for p in directory.iterdir()
            if p != target and not (TEMPORARY.match(p.name) and TEMPORARY.match(p.name)["name"] == target.name)]


def temporaries(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if TEMPORARY.match(p.name)]


def run_cli(*args: object, prefix: tuple[str, ...] = (), **kwargs: object) -> subprocess.CompletedProcess[str]:
    """The command in this process, or in a new one under a command ``prefix`` or with process ``kwargs``."""
    env = {k: v for k, v in os.environ.items() if k != "CVFILTERS_MAX_PIXELS"}
    if not prefix and not kwargs:
        return cli_runner.run_cli(*args, cwd=ROOT, env=env)
    return subprocess.run([*prefix, sys.executable, "-m", "cvfilters", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, **kwargs)


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


def without_dac_override() -> tuple[str, ...] | None:
    """A command prefix under which permission bits apply (root: setpriv drops CAP_DAC_OVERRIDE)."""
    if not IS_ROOT:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    return prefix if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0 else None


# ---------------------------------------------------------------- SIGKILL mid-write
@contextmanager
def forked(work: Callable[[int], None]) -> Iterator[tuple[int, int]]:
    """Run ``work(signal_fd)`` in a forked child (imports and arrays are inherited, so it starts
    at once); yield ``(pid, read_fd)``; the child is SIGKILLed and reaped on exit."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_fd)
            work(write_fd)
        except BaseException:
            os.write(write_fd, b"E")
        finally:
            os._exit(0)
    os.close(write_fd)
    try:
        yield pid, read_fd
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read_fd)


def wait_for(read_fd: int, timeout: float = 60.0, expect: bytes = b"!") -> None:
    import select

    ready, _, _ = select.select([read_fd], [], [], timeout)
    assert ready, "the child did not reach the expected point"
    assert os.read(read_fd, 1) == expect, "the child failed before the expected point"


def pause_forever(signal_fd: int) -> None:
    os.write(signal_fd, b"!")
    while True:
        time.sleep(60)


class HalfWriter:
    """Stands in for the temporary file object: writes half of the data, then waits to be killed."""

    def __init__(self, file: object, signal_fd: int) -> None:
        self.file, self.signal_fd = file, signal_fd

    def __enter__(self) -> HalfWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()  # type: ignore[attr-defined]

    def write(self, data: object) -> int:
        view = memoryview(data).cast("B")  # type: ignore[arg-type]
        self.file.write(view[: len(view) // 2])  # type: ignore[attr-defined]
        self.file.flush()  # type: ignore[attr-defined]
        pause_forever(self.signal_fd)
        return 0


PHASES = ["half-written", "before-fsync", "before-rename", "after-rename"]


def stop_at(phase: str, signal_fd: int) -> None:
    """Patch (in the child only) the step of :func:`cvfilters.core.atomic.write_bytes` where the child waits to be
    killed."""
    if phase == "half-written":
        atomic.open = lambda fd, mode: HalfWriter(open(fd, mode), signal_fd)  # type: ignore[attr-defined]
    elif phase == "before-fsync":
        os.fsync = lambda fd: pause_forever(signal_fd)
    elif phase == "before-rename":
        os.replace = lambda src, dst: pause_forever(signal_fd)
    else:
        real = os.replace

        def replace_then_stop(src: object, dst: object) -> None:
            real(src, dst)  # type: ignore[arg-type]
            pause_forever(signal_fd)

        os.replace = replace_then_stop


def image_set(shape: tuple[int, int]) -> dict[str, object]:
    """Images A and B (its inverse) of ``shape``, a small old image, and the hash of each one's PNG."""
    a = noise(shape, np.uint16, 1)
    b = np.bitwise_not(a)
    old = noise((16, 16), np.uint16, 2)
    data = {"a": encoded(a), "b": encoded(b), "old": encoded(old)}
    return {"a": a, "b": b, "old": old, "size": {k: len(v) for k, v in data.items()},
            "sha": {sha(v): k for k, v in data.items()}}


@pytest.fixture(scope="module")
def big_images() -> dict[str, object]:
    return image_set(BIG)


@pytest.fixture(scope="module")
def medium_images() -> dict[str, object]:
    return image_set(MEDIUM)


@needs_fork
@pytest.mark.parametrize("existing", [True, False], ids=["replacing", "new"])
@pytest.mark.parametrize("phase", PHASES)
def test_sigkill_at_each_step_of_an_atomic_write(tmp_path: Path, medium_images: dict, phase: str,
                                                 existing: bool) -> None:
    images = medium_images
    target = tmp_path / "out.png"
    if existing:
        writing.write(target, images["old"])

    def work(signal_fd: int) -> None:
        stop_at(phase, signal_fd)
        writing.write(target, images["a"])

    with forked(work) as (_, read_fd):
        wait_for(read_fd)
    assert litter(tmp_path, target) == []
    left = temporaries(tmp_path)
    if phase == "after-rename":
        assert images["sha"].get(sha(target.read_bytes())) == "a" and left == []
        return
    # killed before the rename: the target is untouched, and the temporary file stays
    if existing:
        assert images["sha"].get(sha(target.read_bytes())) == "old"
    else:
        assert not target.exists()
    assert len(left) == 1, left  # SIGKILL leaves it: documented, hidden and named *.tmp
    expected = images["size"]["a"] // 2 if phase == "half-written" else images["size"]["a"]
    assert left[0].stat().st_size == expected
    tasks, _ = planning.plan([str(tmp_path)], str(tmp_path / "again"))  # a later batch does not take it as an input
    assert left[0] not in {task.source for task in tasks}


@needs_fork
@pytest.mark.parametrize("writer", ["write", "atomic_write"])
def test_sigkill_at_random_moments_never_leaves_a_partial_target(tmp_path: Path, big_images: dict,
                                                                 writer: str) -> None:
    """A child writes the 32 MB PNG in a loop (alternating two images); it is killed after
    various delays. Each time the target is a complete file: the old one, A or B.

    ``write`` spends most of its time encoding; the ``atomic_write`` loop (pre-encoded bytes)
    spends it writing, fsyncing and renaming, so those kills land mid-write.
    """
    target = tmp_path / "loop.png"
    writing.write(target, big_images["old"])
    seen: list[str] = []
    mid_write = 0
    if writer == "write":
        delays = (0.05, 0.3, 0.45)  # one write takes about 0.4 s: encoding, then 0.03 s of writing
    else:
        delays = (0.003, 0.015, 0.04, 0.08, 0.15)
        data = {key: np.frombuffer(encoded(big_images[key]), np.uint8) for key in ("a", "b")}

    def work(signal_fd: int) -> None:
        os.write(signal_fd, b"!")
        for i in range(10**6):
            key = "b" if i % 2 else "a"
            if writer == "write":
                writing.write(target, big_images[key])
            else:
                writing.write_bytes(target, data[key])
            os.write(signal_fd, b"w")

    for delay in (*delays, None):  # None: killed right after its first complete write, however slow
        with forked(work) as (_, read_fd):
            wait_for(read_fd)
            if delay is None:
                wait_for(read_fd, expect=b"w")
            else:
                time.sleep(delay)
        assert litter(tmp_path, target) == []
        content = big_images["sha"].get(sha(target.read_bytes()))
        assert content is not None, f"after {delay} s the target is not a complete file"
        seen.append(content)
        for temporary in temporaries(tmp_path):
            mid_write += 1
            temporary.unlink()
    assert {"a", "b"} & set(seen), seen  # the loop did replace the target at least once
    print(f"\nrandom SIGKILLs of {writer}: targets {seen}, {mid_write} left a temporary file (killed mid-write)")
    np.testing.assert_array_equal(reading.read(target), big_images[seen[-1]])


# ---------------------------------------------------------------- inputs are never modified
def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    """Content hash, mode and mtime of every file under root."""
    return {p.relative_to(root).as_posix(): (sha(p.read_bytes()), p.stat().st_mode, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def make_inputs(root: Path, names: list[str], size: tuple[int, int] = (48, 64)) -> None:
    for i, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        writing.write(path, noise((*size, 3), np.uint8, 10 + i))


def test_inputs_are_unchanged_by_a_batch_writing_beside_them(tmp_path: Path) -> None:
    """Outputs into the input tree itself, with --overwrite: every file that was there before
    a run (the first run's outputs are inputs of the second) keeps its bytes, mode and mtime."""
    src = tmp_path / "src"
    make_inputs(src, ["a.png", "b.jpg", "sub/c.tif", "sub/deep/d.webp"])
    runs = [(["--suffix", "_inv", "--jobs", "2"], {"a_inv.png", "b_inv.jpg", "sub/c_inv.tif", "sub/deep/d_inv.webp"}),
            (["--format", "bmp", "--jobs", "1"], {"a.bmp", "b.bmp", "sub/c.bmp", "sub/deep/d.bmp", "a_inv.bmp",
                                                  "b_inv.bmp", "sub/c_inv.bmp", "sub/deep/d_inv.bmp"})]
    for args, outputs in runs:
        before = snapshot(src)
        time.sleep(0.01)  # so that a rewrite would change the mtime
        proc = run_cli("apply", src, "-o", src, *args, "-f", "invert", "--recursive", "--overwrite",
                       "--backend", "cpu")
        assert proc.returncode == 0, proc.stderr
        assert error_lines(proc) == []
        after = snapshot(src)
        assert {k: v for k, v in after.items() if k in before} == before
        assert set(after) - set(before) == outputs


def test_an_output_never_replaces_another_input_format_change(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_inputs(src, ["c.jpg", "c.png"])
    before = snapshot(src)
    run_cli("apply", src, "-o", src, "--format", "png", "--overwrite", "-f", "invert", "--jobs", "1")
    assert snapshot(src)["c.png"] == before["c.png"]


def test_an_output_never_replaces_another_input_suffix(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_inputs(src, ["a.png", "a_x.png"])
    before = snapshot(src)
    run_cli("apply", src, "-o", src, "--suffix", "_x", "--overwrite", "-f", "invert", "--jobs", "1")
    assert snapshot(src)["a_x.png"] == before["a_x.png"]


# ---------------------------------------------------------------- refused and full destinations
def test_read_only_destination_fails_cleanly(tmp_path: Path) -> None:
    prefix = without_dac_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: a read-only directory cannot refuse a write")
    make_inputs(tmp_path / "in", ["a.png", "sub/b.png"])
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:  # a.png: the temporary file cannot be created; sub/b.png: the folder sub cannot be
        proc = run_cli("apply", tmp_path / "in", "-o", locked, "--recursive", "-f", "invert", "--backend", "cpu",
                       "--jobs", "1", prefix=prefix)
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    assert sorted(error_lines(proc)) == [f"error: {locked / 'a.png'}: cannot be written: Permission denied",
                                         f"error: {locked / 'sub' / 'b.png'}: cannot be written: Permission denied"]
    assert list(locked.iterdir()) == []


def _can_mount_tmpfs() -> bool:
    unshare = shutil.which("unshare")
    if not IS_ROOT or unshare is None:
        return False
    probe = subprocess.run([unshare, "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs root and unshare/mount for a 64 KiB tmpfs")
def test_full_filesystem_fails_cleanly(tmp_path: Path) -> None:
    """A 64 KiB tmpfs in a private mount namespace: the small output fits, the large one
    fails with ENOSPC part-way through, and nothing of it is left, not even the temporary."""
    src = tmp_path / "in"
    make_inputs(src, ["small.png"], size=(8, 8))
    make_inputs(src, ["large.png"], size=(300, 300))  # about 270 KB of noise
    mount = tmp_path / "mnt"
    mount.mkdir()
    listing = tmp_path / "listing.txt"
    script = ('mount -t tmpfs -o size=64k tmpfs "$0" || exit 99; shift; "$@"; rc=$?; '
              'ls -A "$MNT" > "$LISTING"; exit $rc')
    env = {**os.environ, "MNT": str(mount / "out"), "LISTING": str(listing)}
    env.pop("CVFILTERS_MAX_PIXELS", None)
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, str(mount), "--", sys.executable, "-m",
                           "cvfilters", "apply", str(src), "-o", str(mount / "out"), "-f", "invert", "--jobs", "1",
                           "--backend", "cpu"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert error_lines(proc) == [f"error: {mount / 'out' / 'large.png'}: cannot be written: No space left on device"]
    assert listing.read_text().split() == ["small.png"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE and EFBIG as on Linux")
def test_file_size_limit_fails_cleanly(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes the kernel refuse the write part-way (EFBIG): no root needed."""
    import resource

    src = tmp_path / "in"
    make_inputs(src, ["small.png"], size=(8, 8))
    make_inputs(src, ["large.png"], size=(300, 300))
    out = tmp_path / "out"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    proc = run_cli("apply", src, "-o", out, "-f", "invert", "--jobs", "1", "--backend", "cpu", preexec_fn=limit)
    assert proc.returncode == 1, proc.stderr
    assert error_lines(proc) == [f"error: {out / 'large.png'}: cannot be written: File too large"]
    assert sorted(p.name for p in out.iterdir()) == ["small.png"]


# ---------------------------------------------------------------- concurrent runs
def test_concurrent_runs_into_one_directory_do_not_corrupt_each_other(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    names = [f"img{i:02d}.png" for i in range(16)]
    make_inputs(src, names, size=(512, 768))
    env = {k: v for k, v in os.environ.items() if k != "CVFILTERS_MAX_PIXELS"}
    runs = [subprocess.Popen([sys.executable, "-m", "cvfilters", "apply", str(src), "-o", str(out), "-f", spec,
                              "--overwrite", "--jobs", "1", "--backend", "cpu"], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for spec in ("invert", "flip")]
    results = [run.communicate(timeout=120) for run in runs]
    for run, (_, stderr) in zip(runs, results, strict=True):
        assert run.returncode == 0, stderr
        assert "Traceback" not in stderr and "error:" not in stderr, stderr
    assert sorted(p.name for p in out.iterdir()) == names  # no temporary left behind
    both = {"invert": 0, "flip": 0}  # which run wrote last varies; each file is one whole result
    for name in names:
        source = cvfilters.read(src / name)
        got = cv2.imread(str(out / name), cv2.IMREAD_UNCHANGED)
        assert got is not None, name
        for spec in both:
            if np.array_equal(got, cvfilters.apply(source, spec, backend="cpu")):
                both[spec] += 1
                break
        else:
            pytest.fail(f"{name} is neither result")
