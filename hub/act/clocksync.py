"""Is the system clock synchronized? A Pi without a real-time clock and without network time
boots with a wrong date: clock-time alarms wait until this says yes (issue 22).

:func:`adjtimex_synced` asks the kernel (``adjtimex(2)`` with ``modes = 0``, through ctypes):
synchronized when the clock state is not ``TIME_ERROR`` (5) and ``STA_UNSYNC`` (0x0040) is
clear in ``status`` (what ``timedatectl``'s ``NTPSynchronized`` reports, without D-Bus).
:func:`timedatectl_synced` runs ``timedatectl show -p NTPSynchronized --value``.
:func:`sync_reader` picks one by ``[alarms] clock_check``; tests inject a fake reader.
"""

from __future__ import annotations

import ctypes
import logging
import struct
import subprocess
from collections.abc import Callable

log = logging.getLogger(__name__)

TIME_ERROR = 5
"""adjtimex's return value when the clock is not synchronized."""
STA_UNSYNC = 0x0040
"""The ``status`` bit of an unsynchronized clock."""
_STATUS_OFFSET = 40
"""Offset of ``int status`` in 64-bit Linux ``struct timex`` (after modes, offset, freq,
maxerror, esterror)."""


def adjtimex_synced() -> bool:
    """True when the kernel says the clock is synchronized; False when not or unknown."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(512)  # struct timex is 208 bytes; modes = 0: read
        state = libc.adjtimex(buf)
    except (OSError, AttributeError) as exc:
        log.info("clock sync unknown (adjtimex: %s)", exc)
        return False
    if state < 0:
        return False
    status = struct.unpack_from("i", buf.raw, _STATUS_OFFSET)[0]
    return state != TIME_ERROR and not status & STA_UNSYNC


def timedatectl_synced() -> bool:
    """True when ``timedatectl`` reports ``NTPSynchronized=yes``; False when not or it fails."""
    try:
        out = subprocess.run(
            ["timedatectl", "show", "-p", "NTPSynchronized", "--value"],
            capture_output=True,
            text=True,
            timeout=3,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("clock sync unknown (timedatectl: %s)", exc)
        return False
    return out.returncode == 0 and out.stdout.strip() == "yes"


def sync_reader(check: str) -> Callable[[], bool]:
    """The reader for ``[alarms] clock_check``: ``adjtimex``, ``timedatectl`` or ``off``."""
    return {"adjtimex": adjtimex_synced, "timedatectl": timedatectl_synced, "off": lambda: True}[
        check
    ]
