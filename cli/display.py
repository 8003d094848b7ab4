"""Whether a window can open here: ``DISPLAY``/Wayland and an X server that answers (for ``preview``)."""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path

DISPLAY_HINT = "preview needs a display (set DISPLAY or run under Xvfb)"
_X_DISPLAY = re.compile(r"^(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?$")


def require_display() -> None:
    """Raise :class:`cvfilters.UsageError` (exit 2) when no window can be opened.

    On Linux that is: no ``DISPLAY`` (or only ``WAYLAND_DISPLAY`` where OpenCV's Qt has no
    Wayland plugin), or an X server that does not answer. Qt aborts the process when it
    cannot connect, so this is checked before OpenCV opens a window.
    """
    from cvfilters.core.errors import UsageError

    if not sys.platform.startswith("linux"):
        return
    display = os.environ.get("DISPLAY")
    if display:
        if not _x_server_answers(display):
            raise UsageError(f"{DISPLAY_HINT}; cannot connect to DISPLAY={display}")
    elif not (os.environ.get("WAYLAND_DISPLAY") and _highgui_speaks_wayland()):
        raise UsageError(DISPLAY_HINT)


def _x_server_answers(display: str) -> bool:
    """Whether the X server of ``display`` accepts a connection where libxcb (Qt's X client) looks.

    For an empty host or ``unix``: the abstract unix socket, then the path one; for an empty
    host whose sockets do not answer, and for any other host, TCP port 6000 + n of the host
    (``localhost`` for an empty one) at each of its addresses, IPv6 too.
    """
    match = _X_DISPLAY.match(display)
    if match is None:
        return True  # a form this check does not know; let OpenCV try
    number, host = int(match["number"]), match["host"]
    if host in ("", "unix"):
        for path in (f"\0/tmp/.X11-unix/X{number}", f"/tmp/.X11-unix/X{number}"):
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                    connection.settimeout(2.0)
                    connection.connect(path)
                    return True
            except OSError:
                continue
        if host == "unix":
            return False
    try:
        with socket.create_connection((host or "localhost", 6000 + number), timeout=2.0):
            return True
    except (OSError, OverflowError, UnicodeError):  # no answer; a port past 65535; a host name IDNA refuses
        return False


def _highgui_speaks_wayland() -> bool:
    import cv2

    platforms = Path(cv2.__file__).parent / "qt" / "plugins" / "platforms"
    return not platforms.is_dir() or any("wayland" in plugin.name for plugin in platforms.iterdir())
