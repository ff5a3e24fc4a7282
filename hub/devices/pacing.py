"""State queries sent one at a time, a fixed gap apart, on their own thread.

Zigbee2MQTT answers ``<base>/<friendly_name>/get`` by reading the device over the Zigbee
network; a burst of reads for every device at once floods a busy mesh (its docs: "the get
is sent to the device", one round trip each), so the hub asks its Zigbee2MQTT devices once
at start, :data:`QUERY_INTERVAL_S` apart, instead of all in one go or on every reconnect.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

QUERY_INTERVAL_S = 0.2
"""Seconds between two state queries (at most 5 devices read per second)."""


class Pacer:
    """Publish messages ``interval_s`` apart on a daemon thread, once.

    Args:
        publish: ``(message) -> None``, called for each message in order (from the thread).
        interval_s: the gap between two messages, seconds.
        wait: ``(seconds) -> bool`` that waits and says True when the pacer was closed
            meanwhile; default: the pacer's own stop event (tests pass a fake that only
            records the gaps).
    """

    def __init__(
        self,
        publish: Callable[[object], None],
        interval_s: float = QUERY_INTERVAL_S,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        self._publish, self.interval_s = publish, interval_s
        self._stop = threading.Event()
        self._wait = wait or self._stop.wait
        self.thread: threading.Thread | None = None

    def start(self, messages: Sequence) -> None:
        """Send ``messages`` in the background (a second call while one runs is ignored)."""
        if self.thread is not None or not messages:
            return
        self.thread = threading.Thread(
            target=self._run, args=(list(messages),), name="hub-mqtt-queries", daemon=True
        )
        self.thread.start()

    def _run(self, messages: list) -> None:
        for i, message in enumerate(messages):
            if (i and self._wait(self.interval_s)) or self._stop.is_set():
                return
            self._publish(message)

    def close(self) -> None:
        """Stop before the next message."""
        self._stop.set()
