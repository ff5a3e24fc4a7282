"""Zigbee2MQTT: ``<base>/<friendly_name>/set`` with ``{"state": "ON", "brightness": 0-254,
"color_temp": mireds, "color": {"hex": "#RRGGBB"}}``; state on ``<base>/<friendly_name>``,
availability on ``<base>/<friendly_name>/availability`` and ``<base>/bridge/state`` (JSON
``{"state": "online"}`` since 2.x, plain ``online`` before: both are read).

Source: https://www.zigbee2mqtt.io/guide/usage/mqtt_topics_and_messages.html and the light
exposes (``brightness`` 0-254, ``color_temp`` in mireds, ``color`` as an object). Case BC-43.
"""

from __future__ import annotations

from hub.devices.dialects.common import (
    DialectError,
    Message,
    Update,
    availability,
    dumps,
    hex_of,
    is_number,
    json_object,
    kelvin_of,
    kelvin_to_mireds,
    log,
    on_off,
    pct_to_scale,
    rgb_of,
    scale_to_pct,
    service_of,
)

TOP = 254
"""Zigbee's highest level (255 is read back as 254, Koenkk/zigbee2mqtt #4035)."""
STATES = {
    "turn_on": "ON",
    "turn_off": "OFF",
    "toggle": "TOGGLE",
    "lock": "LOCK",
    "unlock": "UNLOCK",
    "open_cover": "OPEN",
    "close_cover": "CLOSE",
    "stop_cover": "STOP",
}
"""Home Assistant service -> Zigbee2MQTT ``state`` value."""
KNOWN = frozenset(
    {
        "state",
        "brightness",
        "color_temp",
        "color",
        "color_mode",
        "linkquality",
        "position",
        "update",
        "power_on_behavior",
        "last_seen",
    }
)


class Z2mDevice:
    """One Zigbee2MQTT device as one entity.

    Args:
        name: the entity name in ``[home]``.
        friendly_name: the device's name exactly as Zigbee2MQTT has it (spaces, ``/``, UTF-8).
        base: the bridge's base topic (``zigbee2mqtt``).
        min_level: lowest non-zero ``brightness`` sent (2: a level of 1 turns some bulbs off).
        mireds: ``(low, high)`` color temperature range of the device (153-454 by default).
    """

    dialect = "zigbee2mqtt"

    def __init__(
        self,
        name: str,
        friendly_name: str,
        base: str = "zigbee2mqtt",
        *,
        min_level: int = 2,
        mireds: tuple[int, int] = (153, 454),
    ) -> None:
        self.name, self.friendly_name, self.base = name, friendly_name, base
        self.min_level, self.mireds = min_level, tuple(mireds)
        self.state_topic = f"{base}/{friendly_name}"
        self.command_topic = f"{self.state_topic}/set"
        self.availability_topic = f"{self.state_topic}/availability"
        self.bridge_topic = f"{base}/bridge/state"
        self.device_up = self.bridge_up = True  # until a message says otherwise

    def command(self, action: dict) -> Message:
        """The ``/set`` message for one action (see the module doc).

        Raises:
            DialectError: a service or color Zigbee2MQTT has no payload for.
        """
        service, data = service_of(action)
        if service not in STATES and service != "set_cover_position":
            raise DialectError(f"{service} has no Zigbee2MQTT payload")
        body: dict = {} if service == "set_cover_position" else {"state": STATES[service]}
        note = ""
        if service == "set_cover_position":
            body["position"] = int(data.get("position", 0))
        if service == "turn_on":
            if "brightness_pct" in data:
                body["brightness"] = pct_to_scale(
                    float(data["brightness_pct"]), TOP, self.min_level
                )
            rgb, kelvin = rgb_of(data), kelvin_of(data)
            if rgb is not None:
                body["color"] = {"hex": hex_of(rgb)}
            elif kelvin is not None:
                body["color_temp"], clamped = kelvin_to_mireds(kelvin, *self.mireds)
                if clamped:
                    note = (
                        f"the {self.name} goes from {round(1e6 / self.mireds[1])} to "
                        f"{round(1e6 / self.mireds[0])} kelvin, so I set it to "
                        f"{round(1e6 / body['color_temp'])}"
                    )
        return Message(self.command_topic, dumps(body), note)

    def subscriptions(self) -> list[str]:
        """Its state, its availability and the bridge's state."""
        return [self.state_topic, self.availability_topic, self.bridge_topic]

    query_once = True
    """Its :meth:`queries` are sent once, at start, paced (:mod:`hub.devices.pacing`)."""

    def queries(self) -> list[Message]:
        """``<base>/<friendly_name>/get`` with ``{"state": ""}`` (Zigbee2MQTT's documented
        read): the bridge answers on the state topic, so the state is known before the device
        reports by itself (its state topic is not retained by default)."""
        return [Message(f"{self.state_topic}/get", dumps({"state": ""}))]

    def decode(self, topic: str, payload: bytes) -> Update | None:
        """The state JSON, either availability form, or the bridge's state; None otherwise."""
        if topic in (self.availability_topic, self.bridge_topic):
            up = availability(payload)
            if up is None:
                log.debug("Zigbee2MQTT %s: unknown availability %r", topic, payload[:40])
                return None
            if topic == self.availability_topic:
                self.device_up = up
            else:
                self.bridge_up = up
            return Update(available=self.device_up and self.bridge_up)
        if topic != self.state_topic:
            return None
        data = json_object(payload)
        if data is None:
            return Update(problem="not a JSON object")
        extra = set(data) - KNOWN
        if extra or "color_mode" in data:
            log.debug(
                "Zigbee2MQTT %s: extra keys %s, color_mode %s",
                topic,
                sorted(extra),
                data.get("color_mode"),
            )
        return Update(state=_state_word(data), attributes=_attributes(data))


def _state_word(data: dict):
    """``state`` as a Home Assistant word (``ON`` -> ``on``), None when absent; any other
    value as it came, for :mod:`hub.devices.guard` to refuse."""
    if "state" not in data:
        return None
    state = data["state"]
    word = on_off(state) if isinstance(state, (str, int)) else None
    if word is None and isinstance(state, str):
        word = state.strip().lower()
    return word if word is not None else state if state is not None else "null"


def _attributes(data: dict) -> dict:
    """Attributes of a state message; numbers converted, other values kept as they came."""
    attrs: dict = {}
    if "brightness" in data:
        attrs["brightness"] = data["brightness"]
        if is_number(data["brightness"]):
            attrs["brightness_pct"] = scale_to_pct(data["brightness"], TOP)
    if "color_temp" in data:
        attrs["color_temp"] = data["color_temp"]
        if is_number(data["color_temp"]) and data["color_temp"] > 0:
            attrs["color_temp_kelvin"] = round(1e6 / data["color_temp"])
    if isinstance(data.get("color"), dict):
        attrs["color"] = data["color"]
    return attrs


def devices_from_bridge(payload: bytes, base: str = "zigbee2mqtt") -> list[dict]:
    """Entities from Zigbee2MQTT's retained ``<base>/bridge/devices`` list (the coordinator
    skipped): ``[{"name", "domain", "friendly_name", "mireds"?}]``; a light when it exposes
    ``light``, a switch for ``switch``, a lock, a cover; anything else is left out."""
    data = json_object(b'{"d":' + payload + b"}") or {}
    out = []
    for dev in data.get("d") or []:
        if not isinstance(dev, dict) or dev.get("type") == "Coordinator":
            continue
        exposes = (dev.get("definition") or {}).get("exposes") or []
        kinds = {e.get("type") for e in exposes if isinstance(e, dict)}
        domain = next((k for k in ("light", "switch", "lock", "cover") if k in kinds), None)
        if domain is None or not dev.get("friendly_name"):
            continue
        item = {
            "name": dev["friendly_name"],
            "domain": domain,
            "friendly_name": dev["friendly_name"],
        }
        for feature in (f for e in exposes if isinstance(e, dict) for f in e.get("features") or []):
            if feature.get("name") == "color_temp" and "value_min" in feature:
                item["mireds"] = (int(feature["value_min"]), int(feature["value_max"]))
        out.append(item)
    return out
