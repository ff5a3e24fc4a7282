"""A minimal sd_notify(3): tell systemd we are ready and alive (``Type=notify``, watchdog).

Protocol: one datagram with ``KEY=VALUE`` lines to the AF_UNIX socket named by
``$NOTIFY_SOCKET`` (a leading ``@`` means the abstract namespace). Source: sd_notify(3).
"""

from __future__ import annotations

import logging
import os
import socket

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
