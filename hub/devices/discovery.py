"""Home Assistant MQTT discovery for the hub's own entities (case BC-31).

Each entity has one retained config at
``<discovery_prefix>/<component>/<node_id>/<object_id>/config`` with a stable ``unique_id``
(``<node_id>_<object_id>``; ``node_id`` from the client id, so the
same across restarts) and one ``device`` block, so announcing again never makes doubles.
Configs go out at every CONNACK and again after Home Assistant's birth message
(``homeassistant/status`` = ``online``), once per burst: :data:`BIRTH_QUIET_S` after the last
birth plus a random 0–``birth_delay_max_s``, then the configs and the current states. An entity that
is no longer announced (``[mqtt] discovery``) has its config cleared with an empty retained
message. Format: https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time

from hub import __version__
from hub.devices.client import safe
from hub.devices.topics import slug

log = logging.getLogger("hub.devices.discovery")

ENTITIES = {
    "status": ("sensor", "Status", {}),
    "last_transcript": ("sensor", "Last transcript", {}),
    "last_intent": ("sensor", "Last intent", {}),
    "fallback_level": ("sensor", "Fallback level", {"entity_category": "diagnostic"}),
    "mute": ("switch", "Mute", {"payload_on": "ON", "payload_off": "OFF"}),
    "wake_word": ("binary_sensor", "Wake word", {"payload_on": "ON", "payload_off": "OFF"}),
}
"""object_id -> (HA component, name, extra config keys) of the hub's own entities."""
KV_KEY = "mqtt_discovery_topics"
BIRTH_QUIET_S = 2.0
"""Births closer together than this are one burst: one batch of configs after the last."""
MAX_STATE_CHARS = 255  # Home Assistant's longest state


class Discovery:
    """Discovery configs and states of the hub's entities for one backend.

    Args:
        backend: the :class:`~hub.devices.mqtt.MqttBackend` (its ``settings``, ``link`` and
            ``client_id``).
        store: where the announced config topics are remembered (to clear removed ones).
        enabled: False for a one-off command: it announces, clears and publishes nothing
            (the running service owns the hub's device in Home Assistant).
    """

    def __init__(self, backend, store=None, rng=None, *, enabled: bool = True) -> None:
        s = backend.settings
        self.backend, self.settings, self.store = backend, s, store
        self.node_id = slug(backend.client_id)
        self.base = f"{s.topic_prefix}/hub"
        self.birth_topic = f"{s.discovery_prefix}/status"
        self.enabled = enabled
        self.names = [n for n in s.discovery if n in ENTITIES] if enabled else []
        self.states = {
            "status": "ok",
            "last_transcript": "",
            "last_intent": "none",
            "fallback_level": "0",
            "mute": "OFF",
            "wake_word": "OFF",
        }
        self.muted = False
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._timer: threading.Thread | None = None
        self._due = 0.0
        self._cleared = False
        self.batches = 0  # how many times the configs went out (tests, doctor)

    def config_topic(self, object_id: str) -> str:
        """``<discovery_prefix>/<component>/<node_id>/<object_id>/config``."""
        return (
            f"{self.settings.discovery_prefix}/{ENTITIES[object_id][0]}/{self.node_id}/"
            f"{object_id}/config"
        )

    def config(self, object_id: str) -> dict:
        """The discovery payload of one hub entity."""
        component, name, extra = ENTITIES[object_id]
        body = {
            "name": name,
            "unique_id": f"{self.node_id}_{object_id}",
            "state_topic": f"{self.base}/{object_id}/state",
            "availability_topic": f"{self.settings.topic_prefix}/status",
            "device": {
                "identifiers": [self.node_id],
                "name": f"Voice hub {self.node_id}",
                "manufacturer": "hub",
                "model": "hub",
                "sw_version": __version__,
            },
            **extra,
        }
        if component == "switch":
            body["command_topic"] = f"{self.base}/{object_id}/set"
        return body

    def subscriptions(self) -> list[str]:
        """HA's birth topic and the mute switch's command topic."""
        return [self.birth_topic, f"{self.base}/mute/set"] if self.names else []

    # -- events -------------------------------------------------------------------------------
    def on_connected(self) -> None:
        """After CONNACK: clear removed configs (once), announce, publish states."""
        if not self._cleared and self.enabled:
            self._cleared = True
            self._clear_removed()
        if self.names:
            self.announce()

    def on_message(self, topic: str, payload: bytes) -> bool:
        """True when the message was for discovery (HA's birth, the mute switch)."""
        if topic == self.birth_topic:
            if payload.strip().lower() == b"online":
                self._schedule()
            return True
        if topic == f"{self.base}/mute/set":
            value = payload.strip().upper()
            if value in (b"ON", b"OFF"):
                self.muted = value == b"ON"
                self.set_state("mute", value.decode())
            else:
                log.warning("MQTT message on %s dropped: expected ON or OFF", topic)
            return True
        return False

    def on_turn(self, trace: dict) -> None:
        """The hub's states after a turn."""
        self.set_state("status", trace.get("status") or "ok")
        self.set_state("last_transcript", trace.get("transcript") or "")
        self.set_state("last_intent", trace.get("intent") or "none")
        self.set_state("fallback_level", str(trace.get("fallback_level", 0)))

    def set_state(self, object_id: str, value: str) -> None:
        """Remember and publish (retained) one hub entity's state."""
        value = str(value)[:MAX_STATE_CHARS]
        self.states[object_id] = value
        if object_id in self.names:
            self.backend.link.publish(
                f"{self.base}/{object_id}/state", value.encode(), qos=1, retain=True
            )

    # -- steps --------------------------------------------------------------------------------
    def announce(self) -> None:
        """Publish every config (retained), then every state."""
        publish = self.backend.link.publish
        for object_id in self.names:
            publish(
                self.config_topic(object_id),
                json.dumps(self.config(object_id)).encode(),
                qos=1,
                retain=True,
            )
        for object_id in self.names:
            publish(
                f"{self.base}/{object_id}/state",
                self.states[object_id].encode(),
                qos=1,
                retain=True,
            )
        self.batches += 1

    def _schedule(self) -> None:
        """One batch per burst of births: each birth moves the batch to :data:`BIRTH_QUIET_S`
        after it plus a random 0–``birth_delay_max_s``; one timer thread waits for it."""
        with self._lock:
            self._due = (
                time.monotonic()
                + BIRTH_QUIET_S
                + self._rng.uniform(0, self.settings.birth_delay_max_s)
            )
            if self._timer is not None:
                return
            self._timer = threading.Thread(
                target=safe(self._fire, "discovery"), name="hub-mqtt-birth", daemon=True
            )
            self._timer.start()

    def _fire(self) -> None:
        while True:
            with self._lock:
                left = self._due - time.monotonic()
                if left <= 0:
                    self._timer = None
                    break
            time.sleep(min(left, 0.5))
        self.announce()

    def _clear_removed(self) -> None:
        """Empty retained configs for entities announced before but not now."""
        now = [self.config_topic(n) for n in self.names]
        before = self._remembered()
        for topic in before:
            if topic not in now:
                log.info("MQTT discovery: clearing removed entity %s", topic)
                self.backend.link.publish(topic, b"", qos=1, retain=True)
        self._remember(now)

    def _remembered(self) -> list[str]:
        if self.store is None:
            return []
        topics = self.store.kv_get(KV_KEY)  # None: none yet, or a broken store
        return [t for t in topics if isinstance(t, str)] if isinstance(topics, list) else []

    def _remember(self, topics: list[str]) -> None:
        if self.store is None:
            return
        if not self.store.kv_set(KV_KEY, topics):
            log.warning("discovery topics not stored (the store is unavailable)")
