"""What the home says of a command until its device confirms it (issue 20).

The actor sets the state it expects before the command is sent. That state is not a fact
until the device confirms it, so the MQTT backend marks the entity unconfirmed in the home
(:meth:`hub.home.Home.mark_unconfirmed`) from the outbox write until:

- the broker's PUBACK, for a device that does not echo its state (the ``hub`` dialect);
- the device's state message after the PUBACK, for one that echoes (Zigbee2MQTT, Tasmota,
  :mod:`hub.devices.echo`); a state message before the PUBACK may predate the command and
  settles nothing;
- the command's drop ("I couldn't reach ...") or a missing echo ("didn't confirm"): the state
  the device last reported is put back in the same step.

A command past its TTL that may still reach its device ("The Living Room Lamp didn't confirm;
it may still turn on.") keeps its mark: the old state is put back, but the device's next
state message is what settles it. A state question about a marked entity says the command
is not confirmed (:func:`hub.act.queries.get_state`).
"""

from __future__ import annotations

import logging

from hub.devices.queued import does, unconfirmed_text

log = logging.getLogger("hub.devices.mqtt")

LIVE = ("pending", "failed")
"""Outbox statuses of a command the broker has not acknowledged (``failed``: older rows)."""


class Settle:
    """The unconfirmed marks and the put-back states of one backend's entities.

    Args:
        home: the :class:`hub.home.Home`, or None (nothing to mark).
        reported: entity name -> ``{"state", "attributes"}`` its device last reported
            (:attr:`hub.devices.routes.Routes.reported`, kept up to date by the routes).
    """

    def __init__(self, home, reported: dict) -> None:
        self.home, self.reported = home, reported

    def _known(self, name: str) -> bool:
        return self.home is not None and self.home.entity(name) is not None

    def mark(self, action: dict) -> None:
        """``action`` (with its idempotency key) is written to the outbox: not confirmed."""
        name = action.get("entity", "")
        if self._known(name):
            self.home.mark_unconfirmed(name, action["idempotency_key"], does(action))

    def restore(self, name: str, key: str | None = None) -> None:
        """Put back the state the device last reported (the actor set it optimistically);
        with ``key``, that command's mark goes in the same step."""
        if not self._known(name):
            return
        reported = self.reported.get(name)
        if key is not None:
            if reported is None:
                self.home.settle(name, key)
            else:
                self.home.settle(name, key, reported["state"], reported["attributes"])
        elif reported is not None:
            self.home.set_state(name, reported["state"], **reported["attributes"])

    def confirmed(self, name: str, key: str) -> None:
        """``key``'s command to ``name`` is confirmed: its state is the one expected."""
        if self._known(name):
            self.home.settle(name, key)

    def reported_by(self, name: str, status) -> None:
        """``name``'s device reported its state (already applied to the home): a mark whose
        command is no longer live (``status(key)`` not in :data:`LIVE`) is settled."""
        mark = self.home.unconfirmed(name) if self._known(name) else None
        if mark is not None and status(mark["key"]) not in LIVE:
            self.home.settle(name, mark["key"])

    def expired(self, key: str, action: dict, maybe: bool, ttl_s: float) -> dict:
        """The event that tells the user once about ``key``'s command past its TTL, its state
        put back: ``action_unconfirmed`` when it ``maybe`` still reaches the device (the mark
        stays), else ``action_dropped`` (the mark goes)."""
        name = action.get("entity", "")
        if maybe:
            self.restore(name)
            text, event = unconfirmed_text(action), "action_unconfirmed"
        else:
            self.restore(name, key)
            text, event = f"I couldn't reach the {name}.", "action_dropped"
        log.warning(
            "MQTT: %s (command %s %s not acknowledged within %g s)",
            text,
            action.get("service"),
            key,
            ttl_s,
        )
        return {
            "event": event,
            "entity": name,
            "service": action.get("service"),
            "idempotency_key": key,
            "response": text,
        }
