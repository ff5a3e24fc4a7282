"""A template dialect for any other device: topics and payloads written in the config.

``command_topic`` and ``payload_on`` / ``payload_off`` / ``payload_brightness`` are Python
``str.format`` templates with the fields ``device``, ``service``, ``brightness_pct``,
``brightness_255``, ``brightness_254``, ``color_hex`` (``RRGGBB``), ``kelvin`` and ``mireds``;
``state_topic`` payloads are read as ``state_on`` / ``state_off`` (plain), or as JSON when
``state_key`` names the key that holds them.
"""

from __future__ import annotations

from hub.devices.dialects.common import (
    DialectError,
    Message,
    Update,
    hex_of,
    json_object,
    kelvin_of,
    pct_to_scale,
    rgb_of,
    service_of,
)


class TemplateDevice:
    """One entity whose messages come from templates (see the module doc).

    Args:
        name: the entity name. spec: the ``[mqtt.devices.<name>]`` table (checked).
    """

    dialect = "template"

    def __init__(self, name: str, spec: dict) -> None:
        self.name, self.spec = name, dict(spec)
        self.state_topic = self.spec.get("state_topic", "")

    def _fields(self, service: str, data: dict) -> dict:
        pct = float(data.get("brightness_pct", 100))
        rgb = rgb_of(data)
        kelvin = kelvin_of(data)
        return {
            "device": self.spec.get("device", self.name),
            "service": service,
            "brightness_pct": round(pct),
            "brightness_255": pct_to_scale(pct, 255),
            "brightness_254": pct_to_scale(pct, 254),
            "color_hex": hex_of(rgb)[1:] if rgb else "",
            "kelvin": round(kelvin) if kelvin else "",
            "mireds": round(1e6 / kelvin) if kelvin else "",
        }

    def command(self, action: dict) -> Message:
        """The message built from the templates.

        Raises:
            DialectError: no template for this service, or a template with an unknown field.
        """
        service, data = service_of(action)
        key = {"turn_on": "payload_on", "turn_off": "payload_off"}.get(service)
        if service == "turn_on" and "brightness_pct" in data and "payload_brightness" in self.spec:
            key = "payload_brightness"
        if key is None or key not in self.spec:
            raise DialectError(f"{service} has no template for the {self.name}")
        fields = self._fields(service, data)
        try:
            topic = self.spec["command_topic"].format(**fields)
            payload = self.spec[key].format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise DialectError(f"template for the {self.name} is bad: {exc}") from None
        return Message(topic, payload.encode("utf-8"))

    def subscriptions(self) -> list[str]:
        """The state topic, when set."""
        return [self.state_topic] if self.state_topic else []

    def queries(self) -> list[Message]:
        """Nothing to ask."""
        return []

    def decode(self, topic: str, payload: bytes) -> Update | None:
        """``state_on`` / ``state_off`` (plain, or under ``state_key`` in JSON) -> on/off."""
        if topic != self.state_topic:
            return None
        value = payload.decode("utf-8", "replace").strip()
        if self.spec.get("state_key"):
            data = json_object(payload) or {}
            value = str(data.get(self.spec["state_key"], ""))
        if value == self.spec.get("state_on", "ON"):
            return Update(state="on")
        if value == self.spec.get("state_off", "OFF"):
            return Update(state="off")
        return Update(problem=f"{value[:40]!r} is neither state_on nor state_off")
