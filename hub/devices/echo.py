"""Confirmation by the device's own state echo (Zigbee2MQTT, Tasmota; case BC-43).

The broker's PUBACK says the command reached the broker, not the device. Devices in these
dialects publish their state after every command; one that publishes nothing within
:data:`ECHO_S` after the PUBACK is reported once: one WARNING and an ``action_unconfirmed``
event ("The Kitchen Light didn't confirm."), like ``action_dropped``. Nothing is re-sent.
Until the echo (or that event) the entity is marked unconfirmed in the home
(:meth:`hub.home.Home.mark_unconfirmed`): a state question does not answer the assumed state.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger("hub.devices.mqtt")

ECHO_S = 2.0
"""Longest wait for a device's state message after the broker acknowledged its command."""
ECHOING = frozenset({"zigbee2mqtt", "tasmota"})
"""Dialects whose devices publish their state after every command."""


class EchoWatch:
    """Timers for commands waiting for their device's echo.

    Args:
        notify: ``(event dict) -> None``.
        wait_s: how long a device may take to answer.
    """

    def __init__(self, notify, wait_s: float = ECHO_S) -> None:
        self.notify, self.wait_s = notify, wait_s
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[str, dict, threading.Timer]] = {}

    def sent(self, key: str, action: dict) -> None:
        """``action`` (key ``key``) was acknowledged by the broker: wait for its echo."""
        name = action.get("entity", "")
        timer = threading.Timer(self.wait_s, self._late, (name, key))
        timer.daemon = True
        with self._lock:
            old = self._waiting.pop(name, None)
            self._waiting[name] = (key, action, timer)
        if old is not None:
            old[2].cancel()  # a newer command to the same device: its echo counts
        timer.start()

    def echoed(self, name: str) -> None:
        """A state message of ``name`` arrived."""
        with self._lock:
            item = self._waiting.pop(name, None)
        if item is not None:
            item[2].cancel()

    def _late(self, name: str, key: str) -> None:
        with self._lock:
            item = self._waiting.get(name)
            if item is None or item[0] != key:
                return
            del self._waiting[name]
        text = f"The {name} didn't confirm."
        log.warning("MQTT: %s (no state within %g s after command %s)", text, self.wait_s, key)
        self.notify(
            {
                "event": "action_unconfirmed",
                "entity": name,
                "service": item[1].get("service"),
                "idempotency_key": key,
                "response": text,
            }
        )

    def close(self) -> None:
        """Cancel every timer."""
        with self._lock:
            items, self._waiting = list(self._waiting.values()), {}
        for _key, _action, timer in items:
            timer.cancel()
