"""The one check every reported state passes before it reaches the home (BC-28, BC-43).

Whatever the dialect (the hub's JSON, Zigbee2MQTT, Tasmota, HA's MQTT JSON, templates), a
state message is applied only when its state is one of the entity's domain states
(``hub/data/domains.toml``; ``"*"``: any) and each attribute that holds a number
(:data:`NUMBERS`) is a finite number. Otherwise the whole message
is ignored, the stored state stays as it was, and one WARNING names the entity, the topic and
the reason; further bad messages of the same entity within :data:`WARN_EVERY_S` are logged at
DEBUG (a device that repeats a bad message every second does not flood the log).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from hub.config.home import NUMERIC_ATTRIBUTES, domains

log = logging.getLogger("hub.devices.mqtt")

NUMBERS = (*NUMERIC_ATTRIBUTES, "color_temp")
"""Attributes that must hold a finite number (``color_temp``: Zigbee2MQTT's mireds)."""
WARN_EVERY_S = 60.0
"""At most one WARNING per entity in this many seconds (monotonic)."""


def state_problem(domain: str, state, attributes: dict) -> str | None:
    """Why ``(state, attributes)`` cannot be an entity of ``domain``'s report, or None.

    Args:
        domain: Home Assistant domain (``light``); one not in ``domains.toml`` takes any state.
        state: the reported state (a str is expected; None: the message gave none).
        attributes: attributes to merge.
    """
    if state is not None:
        if not isinstance(state, str):
            return f"state {state!r} is not a string"
        allowed = (domains().get(domain) or {}).get("states") or ["*"]
        if "*" not in allowed and state not in allowed:
            return f"state {state!r} is not a {domain} state ({', '.join(allowed)})"
    for key in NUMBERS:
        if key not in attributes:
            continue
        value = attributes[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"attribute {key} = {value!r} is not a number"
        if not math.isfinite(value):
            return f"attribute {key} = {value!r} is not a finite number"
    return None


class StateGuard:
    """:func:`state_problem` with the rate-limited WARNING.

    Args:
        clock: monotonic seconds (injected; :func:`time.monotonic` by default).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._warned: dict[str, float] = {}  # entity name -> when its last WARNING was

    def refuse(self, name: str, topic: str, reason: str) -> None:
        """Log that a message of ``name`` on ``topic`` was ignored (WARNING, rate-limited)."""
        now, last = self.clock(), self._warned.get(name)
        level = logging.DEBUG
        if last is None or now - last >= WARN_EVERY_S:
            self._warned[name] = now
            level = logging.WARNING
        log.log(level, "MQTT state of %s on %s ignored: %s", name, topic, reason)

    def accepts(self, name: str, domain: str, topic: str, state, attributes: dict) -> bool:
        """True when the report may be applied; otherwise :meth:`refuse` and False."""
        reason = state_problem(domain, state, attributes)
        if reason is None:
            return True
        self.refuse(name, topic, reason)
        return False
