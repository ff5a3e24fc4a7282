"""What :meth:`hub.devices.mqtt.MqttBackend.publish` waits for: the broker's PUBACK of a
command, as one event per idempotency key (set by the connection's thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Acks:
    """The PUBACKs being waited for, by idempotency key; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = {}

    def expect(self, key: str) -> threading.Event:
        """A new event for ``key``'s PUBACK (before its row is written: no PUBACK is missed)."""
        event = threading.Event()
        with self._lock:
            self._events[key] = event
        return event

    def take(self, key: str) -> threading.Event | None:
        """Stop waiting for ``key``: its event (None when nobody waited); set it to wake the
        waiting :meth:`wait`, or leave it (a dropped row: the wait runs out)."""
        with self._lock:
            return self._events.pop(key, None)

    @staticmethod
    def wait(
        acked: threading.Event,
        limit_s: float,
        *,
        down: Callable[[], bool],
        cancel: threading.Event | None = None,
        breaker=None,
    ) -> bool:
        """Wait up to ``limit_s`` seconds for ``acked``; True when it came.

        Never waits while ``down()`` (the broker is known to be unreachable) or ``breaker``
        (a :class:`hub.resilience.breaker.CircuitBreaker`, or None) is open; stops early when
        ``cancel`` is set or the broker goes down. The breaker records the outcome.
        """
        if (breaker is not None and not breaker.allow()) or down():
            return False
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if acked.wait(0.02):
                if breaker is not None:
                    breaker.record_success()
                return True
            if (cancel is not None and cancel.is_set()) or down():
                break
        if breaker is not None:
            breaker.record_failure("timeout")
        return False
