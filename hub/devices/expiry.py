"""The MQTT outbox's expiry: a thread that drops every pending command past its ``expires_at``
(:mod:`hub.devices.mqtt` says why a command expires and what the user is told)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("hub.devices.mqtt")


class Expiry:
    """Scans the outbox's pending MQTT rows every ``ttl_s / 10`` (0.05 to 5 s) on a daemon
    thread ``hub-mqtt-expiry`` and hands each one past its ``expires_at`` to ``drop``.

    Args:
        outbox: the :class:`hub.devices.outbox.Outbox` (``pending() -> [(key, record)]``).
        drop: ``(key, record) -> None``: marks the row expired and tells the user.
        clock: wall-clock seconds (``expires_at`` is wall-clock).
        ttl_s: ``[mqtt] action_ttl_s``, seconds.
    """

    def __init__(
        self, outbox, drop: Callable[[str, dict], None], clock: Callable[[], float], ttl_s: float
    ) -> None:
        self.outbox, self.drop, self.clock = outbox, drop, clock
        self.period_s = max(0.05, min(5.0, ttl_s / 10))
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hub-mqtt-expiry", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def close(self) -> None:
        """End the thread (it is between two scans: it ends at once)."""
        self._closed.set()

    def _loop(self) -> None:
        while not self._closed.wait(self.period_s):
            try:
                self.expire()
            except Exception as exc:
                log.warning("MQTT outbox expiry failed: %s", exc)

    def expire(self) -> int:
        """Drop every pending MQTT row past its ``expires_at``; returns how many."""
        now, n = self.clock(), 0
        for key, record in self.outbox.pending():
            if record.get("expires_at", 0) <= now and record.get("backend", "mqtt") == "mqtt":
                self.drop(key, record)
                n += 1
        return n
