"""Which topics and payloads each entity uses, whatever its dialect, and what comes back.

Entities in the ``hub`` dialect use :mod:`hub.devices.topics` (``<prefix>/<domain>/<object>``,
the hub's JSON); the others a device object of :mod:`hub.devices.dialects` (Zigbee2MQTT,
Tasmota, HA's MQTT JSON schema, templates). One device message may concern several entities
(a Tasmota board's ``stat/…/RESULT`` carries every relay), so topics map to lists.
"""

from __future__ import annotations

import logging
import threading

from hub.devices.dialects import DialectError, Message, build_devices
from hub.devices.guard import StateGuard
from hub.devices.topics import StateError, command_payload, entity_topics, parse_state, slug

log = logging.getLogger("hub.devices.mqtt")

EXPIRING = frozenset({"hub"})
"""Dialects whose command payload carries ``expires_at``, which their devices must honour (a
command that arrives late is dropped by the device). The others' payloads carry no expiry,
and MQTT v5's message expiry counts from when the broker reads the message: a command
written to a broker that stalled arrives whenever the broker gets to it."""


class Routes:
    """Topics of the home's entities and their translation to and from the wire.

    Args:
        settings: :class:`hub.settings.MqttSettings`.
        home: the :class:`hub.home.Home` (None: no entities). An entity on a device dialect
            (not ``hub``) starts ``unknown``, whatever its configured ``state``, until its
            device reports (BC-43): a question about it is then "I can't check ...".
    Raises:
        ConfigError: bad topics or device tables (:func:`~hub.devices.topics.entity_topics`,
            :func:`~hub.devices.dialects.build_devices`).
    """

    def __init__(self, settings, home=None) -> None:
        self.settings, self.home = settings, home
        pairs = [(e.name, e.domain) for e in home.entities] if home is not None else []
        self.devices = build_devices(settings, [n for n, _ in pairs])
        self.topics = entity_topics(settings, pairs)
        self.by_state = {
            t.state: t.name for t in self.topics.values() if t.name not in self.devices
        }
        self.by_topic: dict[str, list] = {}
        for dev in self.devices.values():
            for topic in dev.subscriptions():
                self.by_topic.setdefault(topic, []).append(dev)
        self._lock = threading.Lock()
        self.guard = StateGuard()
        self.available: dict[str, bool] = {}  # entity name -> last availability said
        for name in self.devices if home is not None else ():
            home.set_state(name, "unknown")  # the device is the only source: until it reports
        self.reported = home.snapshot() if home is not None else {}
        """Entity name -> ``{"state", "attributes"}`` the device last reported."""
        self.on_update = lambda name: None
        """Called with the entity name after each state message of a dialect device."""

    def dialect(self, name: str) -> str:
        """The entity's dialect name (``hub`` for the hub's own JSON)."""
        dev = self.devices.get(name)
        return dev.dialect if dev is not None else "hub"

    def expires_in_payload(self, name: str) -> bool:
        """True when the entity's device drops a command past its ``expires_at``
        (:data:`EXPIRING`)."""
        return self.dialect(name) in EXPIRING

    def reachable(self, name: str) -> bool:
        """False once the device (or its bridge) said it is offline, until it is online."""
        with self._lock:
            return self.available.get(name, True)

    def encode(self, action: dict, expires_at: float) -> Message:
        """The one message of ``action``.

        Raises:
            DialectError: the entity's dialect has no payload for this service or value.
        """
        name = action.get("entity")
        dev = self.devices.get(name)
        if dev is not None:
            return dev.command(action)
        ent = self.topics.get(name)
        topic = (
            ent.command
            if ent is not None
            else f"{self.settings.topic_prefix}/{action['domain']}/{slug(name)}/set"
        )
        return Message(topic, command_payload(action, expires_at))

    def subscriptions(self) -> list[str]:
        """Every state and availability topic of the home's entities."""
        return list(self.by_state) + list(self.by_topic)

    def queries(self, once: bool = False) -> list[Message]:
        """Messages that ask devices for their state: sent after each CONNACK (Tasmota), or
        with ``once`` those sent only at start, paced (Zigbee2MQTT's ``/get``)."""
        return [
            q
            for dev in self.devices.values()
            if bool(getattr(dev, "query_once", False)) == once
            for q in dev.queries()
        ]

    def on_message(self, topic: str, payload: bytes) -> bool:
        """Apply a state or availability message to the home; False: not an entity topic."""
        name = self.by_state.get(topic)
        if name is not None:
            try:
                state, attributes = parse_state(payload)
            except StateError as exc:
                log.warning("MQTT state on %s dropped: %s", topic, exc)
                return True
            if self._accepts(name, topic, state, attributes):
                self._apply(name, state, attributes)
            return True
        devices = self.by_topic.get(topic)
        if not devices:
            return False
        for dev in devices:
            update = dev.decode(topic, payload)
            if update is None:
                continue
            if update.problem:
                self.guard.refuse(dev.name, topic, update.problem)
                continue
            if update.available is not None:
                with self._lock:
                    self.available[dev.name] = update.available
            if (update.state is not None or update.attributes) and self._accepts(
                dev.name, topic, update.state, update.attributes
            ):
                state = update.state or (self.home.state(dev.name) if self.home else None)
                self._apply(dev.name, state or "unknown", update.attributes)
                self.on_update(dev.name)
        return True

    def _accepts(self, name: str, topic: str, state, attributes: dict) -> bool:
        entity = self.home.entity(name) if self.home is not None else None
        domain = entity.domain if entity is not None else ""
        return self.guard.accepts(name, domain, topic, state, attributes)

    def _apply(self, name: str, state: str, attributes: dict) -> None:
        self.reported[name] = {"state": state, "attributes": dict(attributes)}
        if self.home is not None:
            self.home.set_state(name, state, **attributes)
        log.debug("MQTT: %s is %s %s", name, state, attributes or "")


__all__ = ["Routes", "DialectError", "EXPIRING"]
