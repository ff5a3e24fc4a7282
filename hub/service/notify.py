"""A minimal sd_notify(3): tell systemd we are ready and alive (``Type=notify``, watchdog),
that a long load is still going (``EXTEND_TIMEOUT_USEC``), and what is degraded (``STATUS=``).

Protocol: one datagram with ``KEY=VALUE`` lines to the AF_UNIX socket named by
``$NOTIFY_SOCKET`` (a leading ``@`` means the abstract namespace). Source: sd_notify(3).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading

log = logging.getLogger(__name__)


def notify(state: str) -> bool:
    """Send ``state`` (e.g. ``"READY=1"``, ``"WATCHDOG=1"``, ``"STATUS=listening"``).

    Returns True when sent; False without ``$NOTIFY_SOCKET`` or when sending failed
    (never raises: a missing supervisor must not stop the hub).
    """
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(state.encode())
    except OSError as exc:
        log.debug("sd_notify %r failed: %s", state, exc)
        return False
    return True


def watchdog_interval_s() -> float | None:
    """systemd's watchdog interval (``$WATCHDOG_USEC``) in seconds, or None when off.

    Ping with ``notify("WATCHDOG=1")`` at least twice per interval.
    """
    usec = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or (pid and pid != str(os.getpid())):
        return None
    return int(usec) / 1e6


EXTEND_S = 90.0
"""Each ``EXTEND_TIMEOUT_USEC`` during a long load asks systemd for this much more time."""
EXTEND_EVERY_S = 30.0
"""...and is sent again this often, so a load that hangs is still stopped within
:data:`EXTEND_S` of its last sign of life (sd_notify(3): an extension must arrive before the
current timeout runs out)."""

_ready_sent = threading.Event()


@contextlib.contextmanager
def loading(
    what: str,
    every_s: float = EXTEND_EVERY_S,
    extend_s: float = EXTEND_S,
    stop: threading.Event | None = None,
    until_ready: bool = False,
):
    """While the block runs (models loading, a first grammar build), send
    ``EXTEND_TIMEOUT_USEC=<extend_s>`` with ``STATUS=loading <what>`` now, and the extension
    alone every ``every_s`` seconds from a daemon thread. With ``until_ready`` the extensions
    go on after the block until :func:`ready` (``hub run`` waiting for its microphone for
    ``[audio] device_wait_s``); else they end with it. ``stop`` replaces the thread's event
    (tests)."""
    done = stop or threading.Event()
    extend = f"EXTEND_TIMEOUT_USEC={int(extend_s * 1e6)}"

    def beat() -> None:
        notify(f"{extend}\nSTATUS=loading {what}")
        while not done.wait(every_s):
            if _ready_sent.is_set():
                return
            notify(extend)

    thread = threading.Thread(target=beat, name="hub-sd-extend", daemon=True)
    thread.start()
    try:
        yield
    finally:
        if not until_ready or _ready_sent.is_set():
            done.set()
            thread.join(1.0)


def ready(status: str) -> bool:
    """``READY=1`` with ``STATUS=<status>`` the first time in this process, only the status
    after that (systemd reads READY=1 once; a reload sends its own after ``RELOADING=1``).
    Returns True when READY=1 was sent now."""
    if _ready_sent.is_set():
        notify(f"STATUS={status}")
        return False
    _ready_sent.set()
    notify(f"READY=1\nSTATUS={status}")
    return True


ENGINE_WORDS = {
    "asr": "speech recognition",
    "tts": "speech output",
    "llm": "LLM",
    "rules": "intent rules",
    "devices": "devices",
    "wake": "wake word",
}
"""How ``STATUS=`` names an engine that is not available."""


def degraded_parts(loaded, names, devices=None) -> list[str]:
    """What is degraded, for ``STATUS=``: ``["MQTT unavailable", "LLM unavailable"]``.

    ``loaded(name)`` tells whether the engine ``name`` of ``names`` was built; ``devices``
    is the devices engine or None: its MQTT link not connected is "MQTT unavailable", and a
    ``degraded()`` method (Home Assistant, ...) adds its own words.
    """
    parts = [f"{ENGINE_WORDS.get(n, n)} unavailable" for n in names if not loaded(n)]
    link = getattr(devices, "link", None)
    connected = getattr(link, "connected", None)
    if connected is not None and not connected.is_set():
        parts.append("MQTT unavailable")
    more = getattr(devices, "degraded", None)
    if callable(more):
        parts.extend(more())
    return parts


class StatusLine:
    """``STATUS=<state>[; degraded: ...]``, sent only when it changes.

    Args:
        degraded: returns the degraded parts now (:func:`degraded_parts`).
    """

    def __init__(self, degraded):
        self._degraded = degraded
        self.state = "starting"
        self.sent: str | None = None

    def line(self) -> str:
        """The status text now."""
        parts = self._degraded()
        return self.state + (f"; degraded: {', '.join(parts)}" if parts else "")

    def update(self, state: str | None = None) -> bool:
        """Set the state (None: keep it) and send the line if it changed; True when sent."""
        if state is not None:
            self.state = state
        text = self.line()
        if text == self.sent:
            return False
        self.sent = text
        notify(f"STATUS={text}")
        return True
