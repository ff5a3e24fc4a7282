"""The device backend the act node talks to: Home Assistant for the ``[homeassistant]
entities``, MQTT for the rest, the in-process home when neither is configured."""

from __future__ import annotations

import atexit
import logging

from hub.devices.ha.backend import HaBackend
from hub.devices.ha.client import read_token
from hub.devices.mqtt import make_backend

log = logging.getLogger("hub.devices")


class Devices:
    """Routes each action to the backend of its entity.

    Args:
        mqtt: the :class:`~hub.devices.mqtt.MqttBackend`, or None.
        ha: the :class:`~hub.devices.ha.backend.HaBackend`, or None.
    """

    def __init__(self, mqtt=None, ha=None) -> None:
        self.mqtt, self.ha = mqtt, ha

    def publish(self, action: dict, cancel=None, wait_s=None) -> str:
        """The backend's result for ``action`` (``"local"`` when no backend takes it)."""
        if (
            self.ha is not None
            and self.ha.handles(action.get("entity", ""))
            and action.get("domain") != "timer"
        ):
            return self.ha.publish(action, cancel, wait_s)
        if self.mqtt is not None:
            return self.mqtt.publish(action, cancel, wait_s)
        return "local"

    def on_turn(self, trace: dict) -> None:
        """The hub's own entities (MQTT discovery)."""
        if self.mqtt is not None:
            self.mqtt.on_turn(trace)

    def healthy(self) -> bool:
        """False once the MQTT network loop died for good."""
        return self.mqtt.healthy() if self.mqtt is not None else True

    def close(self, timeout_s: float = 1.0) -> None:
        """Close both backends."""
        for backend in (self.ha, self.mqtt):
            if backend is not None:
                backend.close(timeout_s)

    def __getattr__(self, name):  # the MQTT backend's own attributes (link, outbox, ...)
        if self.mqtt is None:
            raise AttributeError(name)
        return getattr(self.mqtt, name)


def make_devices(settings, store=None, *, home=None, breaker=None, service: bool = True):
    """The hub's device backend, or None when neither ``[mqtt] host`` nor ``[homeassistant]
    url`` is set.

    Raises:
        ConfigError: as the MQTT backend, or no Home Assistant token.
    """
    mqtt = make_backend(settings.mqtt, store, home=home, breaker=breaker, service=service)
    ha = None
    if settings.homeassistant.url and settings.homeassistant.entities:
        ha = HaBackend(
            settings.homeassistant, read_token(settings.homeassistant), home, store=store
        )
        atexit.register(ha.close)
    if ha is None:
        return mqtt
    return Devices(mqtt, ha)
