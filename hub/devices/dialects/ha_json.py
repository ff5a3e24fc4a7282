"""Home Assistant's MQTT JSON light schema (``schema: json``), and HA's own service call.

Command topic payload ``{"state": "ON", "brightness": 0..brightness_scale, "color":
{"r", "g", "b"}, "color_temp": mireds}``; the state topic carries the same shape.
``brightness_scale`` is 255 unless the device says otherwise.
Source: https://www.home-assistant.io/integrations/light.mqtt/#json-schema
"""

from __future__ import annotations

from hub.devices.dialects.common import (
    DialectError,
    Message,
    Update,
    availability,
    dumps,
    is_number,
    json_object,
    kelvin_of,
    kelvin_to_mireds,
    on_off,
    pct_to_scale,
    rgb_of,
    scale_to_pct,
    service_of,
)

STATES = {"turn_on": "ON", "turn_off": "OFF"}


class HaJsonDevice:
    """One light (or switch) speaking HA's MQTT JSON schema.

    Args:
        name: the entity name in ``[home]``.
        command_topic / state_topic: the device's topics; ``availability_topic``: "" for none.
        brightness_scale: the top of its brightness scale (255).
    """

    dialect = "ha_json"

    def __init__(
        self,
        name: str,
        command_topic: str,
        state_topic: str,
        *,
        availability_topic: str = "",
        brightness_scale: int = 255,
        mireds: tuple[int, int] = (153, 500),
    ) -> None:
        self.name, self.command_topic, self.state_topic = name, command_topic, state_topic
        self.availability_topic, self.scale = availability_topic, brightness_scale
        self.mireds = tuple(mireds)

    def command(self, action: dict) -> Message:
        """The JSON command for one action.

        Raises:
            DialectError: a service other than turn_on / turn_off.
        """
        service, data = service_of(action)
        if service not in STATES:
            raise DialectError(f"{service} has no MQTT JSON schema payload")
        body: dict = {"state": STATES[service]}
        if service == "turn_on":
            if "brightness_pct" in data:
                body["brightness"] = pct_to_scale(float(data["brightness_pct"]), self.scale)
            rgb, kelvin = rgb_of(data), kelvin_of(data)
            if rgb is not None:
                body["color"] = {"r": rgb[0], "g": rgb[1], "b": rgb[2]}
            elif kelvin is not None:
                body["color_temp"], _ = kelvin_to_mireds(kelvin, *self.mireds)
        return Message(self.command_topic, dumps(body))

    def subscriptions(self) -> list[str]:
        """The state topic (and the availability topic when set)."""
        return [t for t in (self.state_topic, self.availability_topic) if t]

    def queries(self) -> list[Message]:
        """Nothing to ask."""
        return []

    def decode(self, topic: str, payload: bytes) -> Update | None:
        """The state JSON or an availability message; None otherwise."""
        if self.availability_topic and topic == self.availability_topic:
            return Update(available=availability(payload))
        if topic != self.state_topic:
            return None
        data = json_object(payload)
        if data is None:
            return Update(problem="not a JSON object")
        attrs = {}
        if "brightness" in data:
            value = data["brightness"]
            attrs["brightness_pct"] = scale_to_pct(value, self.scale) if is_number(value) else value
        if isinstance(data.get("color"), dict):
            attrs["color"] = data["color"]
        state = data.get("state")
        word = on_off(state) if isinstance(state, str) else None
        if "state" in data and word is None:
            return Update(problem=f"state {state!r} is not ON or OFF")
        return Update(state=word, attributes=attrs)


def ha_service_call(action: dict, entity_id: str) -> dict:
    """The ``call_service`` message body for Home Assistant's WebSocket API (without ``id``):
    ``{"type": "call_service", "domain", "service", "service_data", "target"}``; brightness
    stays ``brightness_pct`` (HA converts it). Source:
    https://developers.home-assistant.io/docs/api/websocket#calling-a-service-action
    """
    service, data = service_of(action)
    return {
        "type": "call_service",
        "domain": action["domain"],
        "service": service,
        "service_data": data,
        "target": {"entity_id": entity_id},
    }
