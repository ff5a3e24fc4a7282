"""systemd's watchdog, fed from a thread of its own while the daemon's loops are alive.

The interval comes from ``$WATCHDOG_USEC`` (sd_watchdog_enabled(3)); ``WATCHDOG=1`` is sent
every quarter interval, so that no two pings are more than half the interval apart
(sd_notify(3) asks for at least one per half interval), but only while every heartbeat given
is younger than three quarters of the interval (:data:`STALE_SHARE`). A capture that hangs in
a read, or a listener that stops, stops the pings, and systemd restarts the service at most
1.75 intervals after the hang; waiting for a device does not, because the waiting loop beats
too. The allowance above half the interval is for a loop that is alive but briefly held up
(a device reopened by PortAudio, a starved thread on a loaded 2-core board): judging it stale
at half the interval skipped a ping, and one skipped ping is already a half-interval gap.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from hub.service.notify import notify, watchdog_interval_s

log = logging.getLogger("hub.service.watchdog")

STALE_SHARE = 0.75
"""A heartbeat older than this share of the watchdog interval means its loop is stuck."""


class Watchdog:
    """Pings systemd every ``interval_s / 4`` while all ``beats()`` are fresh (younger than
    ``STALE_SHARE * interval_s``).

    Args:
        beats: returns the monotonic times of the last heartbeat of each loop watched.
        interval_s: the watchdog interval; default ``$WATCHDOG_USEC`` (None: no watchdog).
        clock: monotonic seconds.
        send: the notify function (tests record).
    """

    def __init__(
        self,
        beats: Callable[[], list[float]],
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        send: Callable = notify,
    ):
        self.interval_s = interval_s if interval_s is not None else watchdog_interval_s()
        self._beats, self._clock, self._send = beats, clock, send
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sent = 0
        """Pings sent so far."""

    def healthy(self) -> bool:
        """True when every loop beat within the last :data:`STALE_SHARE` of the interval."""
        now, limit = self._clock(), (self.interval_s or 0) * STALE_SHARE
        return all(now - beat < limit for beat in self._beats())

    def tick(self) -> bool:
        """Send one ping if healthy; True when sent."""
        if not self.healthy():
            return False
        self._send("WATCHDOG=1")
        self.sent += 1
        return True

    def start(self) -> None:
        """Start pinging (nothing happens without a watchdog interval)."""
        if not self.interval_s:
            return
        log.info("systemd watchdog: %g s, pinging every %g s", self.interval_s, self.interval_s / 4)
        self._thread = threading.Thread(target=self._run, name="hub-watchdog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self.interval_s  # started only with a watchdog interval
        warned = False
        while not self._stop.wait(self.interval_s / 4):
            if not self.tick() and not warned:
                log.error("a loop stopped beating: no watchdog ping (systemd will restart)")
            warned = not self.healthy()

    def stop(self) -> None:
        """Stop pinging and join the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
