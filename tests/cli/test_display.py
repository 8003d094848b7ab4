"""Whether a window can open, checked without a display: X servers stood in for by listening sockets.

An X client (libxcb) reaches DISPLAY ``[host]:n[.screen]`` through the abstract unix socket
``"\\0/tmp/.X11-unix/Xn"``, then the path ``/tmp/.X11-unix/Xn``, when the host is empty or
``unix``, and through TCP port 6000 + n of the host otherwise (of ``localhost`` for an empty
host whose unix sockets do not answer; at every address of the host, IPv6 too). A socket listening there stands
for a server that answers; the display numbers are unusual ones (20000 and up, or a free TCP
port less 6000) that no real server here uses.
"""

from __future__ import annotations

import random
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import pytest

from cvfilters.cli.display import _highgui_speaks_wayland, _x_server_answers, require_display
from cvfilters.core.errors import UsageError

HINT = "preview needs a display (set DISPLAY or run under Xvfb)"  # the text users see, written out
SOCKETS = Path("/tmp/.X11-unix")


def _answers(family: socket.AddressFamily, address: str | tuple[str, int]) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(address)
        except OSError:
            return False
        return True


def _silent(number: int) -> bool:
    """Nothing answers for display ``number``: no abstract or path socket, no TCP port on 127.0.0.1."""
    return not (_answers(socket.AF_UNIX, f"\0/tmp/.X11-unix/X{number}") or (SOCKETS / f"X{number}").exists()
                or _answers(socket.AF_INET, ("127.0.0.1", 6000 + number)))


def _silent_number() -> int:
    while True:
        number = random.randrange(20000, 50000)
        if _silent(number):
            return number


@pytest.fixture
def abstract_display() -> Iterator[int]:
    """A display number whose abstract unix socket listens (and nothing else does)."""
    while True:
        number = _silent_number()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(f"\0/tmp/.X11-unix/X{number}")
        except OSError:
            server.close()
            continue
        break
    with server:
        server.listen()
        yield number


@pytest.fixture
def tcp_display() -> Iterator[int]:
    """A display number n whose TCP port 6000 + n listens on 127.0.0.1 (and no unix socket does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        number = server.getsockname()[1] - 6000
        assert number > 0, "an ephemeral port above 6000"
        if _answers(socket.AF_UNIX, f"\0/tmp/.X11-unix/X{number}") or (SOCKETS / f"X{number}").exists():
            pytest.skip(f"a unix socket for display {number} exists")
        yield number


@pytest.fixture
def linux(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Linux, with neither DISPLAY nor WAYLAND_DISPLAY set."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return monkeypatch


def _qt_platforms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, plugins: list[str] | None) -> None:
    """Make ``cv2`` look installed in ``tmp_path/cv2`` with these Qt platform plugins (None: no Qt folder)."""
    package = tmp_path / "cv2"
    package.mkdir()
    if plugins is not None:
        platforms = package / "qt" / "plugins" / "platforms"
        platforms.mkdir(parents=True)
        for plugin in plugins:
            (platforms / plugin).write_bytes(b"")
    monkeypatch.setattr(cv2, "__file__", str(package / "__init__.py"))


def _refusal(expected: str) -> None:
    with pytest.raises(UsageError) as refused:
        require_display()
    assert str(refused.value) == expected


# ---------------------------------------------------------------- X servers
def test_local_displays_answer_through_the_abstract_socket(abstract_display: int) -> None:
    n = abstract_display
    for display in (f":{n}", f":{n}.0", f"unix:{n}", f"unix:{n}.1"):
        assert _x_server_answers(display), display
    assert not _x_server_answers(f"127.0.0.1:{n}")  # a host's display is on TCP, where nothing listens


def test_local_displays_answer_through_the_path_socket_when_no_abstract_one_listens(tmp_path: Path) -> None:
    if not (SOCKETS.is_dir() and SOCKETS.stat().st_mode & 0o002):
        pytest.skip(f"{SOCKETS} is not a folder everyone may write")
    number = _silent_number()
    path = SOCKETS / f"X{number}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        try:
            server.listen()
            assert _x_server_answers(f":{number}") and _x_server_answers(f"unix:{number}")
        finally:
            path.unlink()


def test_hosts_displays_answer_through_tcp_port_6000_plus_the_number(tcp_display: int) -> None:
    n = tcp_display
    for display in (f"127.0.0.1:{n}", f"localhost:{n}.0"):
        assert _x_server_answers(display), display
    for display in (f"127.0.0.1:{n + 1}", f"127.0.0.1:{n - 1}", f"unix:{n}"):
        assert not _x_server_answers(display), display


def test_a_local_display_without_unix_sockets_is_reached_over_tcp_on_localhost(tcp_display: int) -> None:
    """libxcb's fallback for ``:n`` (an X server on Windows seen from WSL 1 listens on TCP only)."""
    for display in (f":{tcp_display}", f":{tcp_display}.0"):
        assert _x_server_answers(display), display
    assert not _x_server_answers(f"unix:{tcp_display}")  # ``unix`` names the socket only


def test_unix_means_the_socket_even_where_a_host_is_named_so(monkeypatch: pytest.MonkeyPatch, tcp_display: int) -> None:
    lookup = socket.getaddrinfo

    def resolve(host: str, *args: object, **kwargs: object) -> object:
        return lookup("127.0.0.1" if host == "unix" else host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    assert not _x_server_answers(f"unix:{tcp_display}")


def test_a_host_whose_only_address_is_ipv6_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as server:
        try:
            server.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback")
        server.listen()
        port = server.getsockname()[1]
        if _answers(socket.AF_INET, ("127.0.0.1", port)):
            pytest.skip(f"127.0.0.1:{port} listens too")
        lookup = socket.getaddrinfo

        def resolve(host: str, *args: object, **kwargs: object) -> object:
            return lookup("::1" if host == "x-server.test" else host, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(socket, "getaddrinfo", resolve)
        assert _x_server_answers(f"x-server.test:{port - 6000}")


def test_numbers_past_the_tcp_ports_and_host_names_idna_refuses_do_not_answer(linux: pytest.MonkeyPatch) -> None:
    for display in ("127.0.0.1:70000", f":{80000 + random.randrange(10000)}", "a" * 64 + ":0"):
        assert not _x_server_answers(display), display[:20]
    linux.setenv("DISPLAY", "127.0.0.1:70000.0")
    _refusal(f"{HINT}; cannot connect to DISPLAY=127.0.0.1:70000.0")


def test_nothing_listening_does_not_answer() -> None:
    n = _silent_number()
    for display in (f":{n}", f"unix:{n}.0", f"127.0.0.1:{n}", f"no-such-host.invalid:{n}"):
        assert not _x_server_answers(display), display


def test_a_server_that_never_accepts_is_given_up_on_within_seconds() -> None:
    """A TCP port whose backlog is full: the connection neither succeeds nor fails; the check must not hang."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        waiting = []
        try:
            for _ in range(16):  # fill the backlog: a connection that times out was not taken
                client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                waiting.append(client)
                client.settimeout(0.3)
                try:
                    client.connect(("127.0.0.1", port))
                except TimeoutError:
                    break
            else:
                pytest.skip("the backlog never filled")
            started = time.monotonic()
            assert not _x_server_answers(f"127.0.0.1:{port - 6000}")
            assert time.monotonic() - started < 10.0  # 2 s in the code; Linux retries a SYN for 2 minutes
        finally:
            for client in waiting:
                client.close()


def test_a_local_server_that_never_accepts_does_not_hang_the_check() -> None:
    """An abstract socket's backlog full: a blocking connect would wait forever; with a timeout it fails at once."""
    number = _silent_number()
    address = f"\0/tmp/.X11-unix/X{number}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(address)
        server.listen(0)
        waiting = []
        try:
            for _ in range(16):
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                waiting.append(client)
                client.settimeout(0.3)
                try:
                    client.connect(address)
                except OSError:  # EAGAIN (or a timeout): the backlog is full
                    break
            else:
                pytest.skip("the backlog never filled")
            started = time.monotonic()
            assert not _x_server_answers(f":{number}")
            assert time.monotonic() - started < 10.0
        finally:
            for client in waiting:
                client.close()


def test_display_forms_the_check_does_not_know_are_left_to_opencv() -> None:
    for display in ("weird", "[::1]:0", "host::0", ":x", ""):
        assert _x_server_answers(display), display


# ---------------------------------------------------------------- Qt's Wayland plugin
def test_highgui_without_qt_is_taken_to_speak_wayland(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _qt_platforms(monkeypatch, tmp_path, None)
    assert _highgui_speaks_wayland()


@pytest.mark.parametrize(("plugins", "speaks"), [
    ([], False),
    (["libqxcb.so", "libqoffscreen.so"], False),
    (["libqxcb.so", "libqwayland-egl.so"], True),
    (["libqwayland-generic.so"], True),
])
def test_qt_speaks_wayland_when_a_platform_plugin_is_named_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                              plugins: list[str], speaks: bool) -> None:
    _qt_platforms(monkeypatch, tmp_path, plugins)
    assert _highgui_speaks_wayland() is speaks


# ---------------------------------------------------------------- require_display
def test_no_display_at_all_is_refused(linux: pytest.MonkeyPatch) -> None:
    _refusal(HINT)
    linux.setenv("DISPLAY", "")
    _refusal(HINT)


def test_other_systems_are_not_checked(linux: pytest.MonkeyPatch) -> None:
    for platform in ("darwin", "win32"):
        linux.setattr(sys, "platform", platform)
        assert require_display() is None


def test_an_x_display_that_answers_is_accepted_and_one_that_does_not_is_named(linux: pytest.MonkeyPatch,
                                                                              abstract_display: int) -> None:
    linux.setenv("DISPLAY", f":{abstract_display}")
    assert require_display() is None
    silent = _silent_number()
    linux.setenv("DISPLAY", f":{silent}.0")
    _refusal(f"{HINT}; cannot connect to DISPLAY=:{silent}.0")
    linux.setenv("DISPLAY", "weird")
    assert require_display() is None


def test_wayland_alone_needs_qts_wayland_plugin(linux: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    linux.setenv("WAYLAND_DISPLAY", "wayland-0")
    _qt_platforms(linux, tmp_path / "without", ["libqxcb.so"])
    _refusal(HINT)
    _qt_platforms(linux, tmp_path / "with", ["libqxcb.so", "libqwayland-egl.so"])
    assert require_display() is None
    linux.delenv("WAYLAND_DISPLAY")
    _refusal(HINT)  # a Qt that speaks Wayland, but no WAYLAND_DISPLAY
