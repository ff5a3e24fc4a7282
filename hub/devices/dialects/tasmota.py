"""Tasmota: ``cmnd/<topic>/POWER[n]`` ``ON``/``OFF``, ``cmnd/<topic>/Dimmer`` 0-100,
``cmnd/<topic>/Color`` ``RRGGBB``, ``cmnd/<topic>/CT`` mireds; state from
``stat/<topic>/RESULT`` (JSON ``{"POWER1": "ON"}``), ``stat/<topic>/POWER[n]`` (plain) and the
periodic ``tele/<topic>/STATE``; ``tele/<topic>/LWT`` ``Online``/``Offline`` (retained). At start
the hub sends an empty ``POWER[n]`` (a query), so the state is known without waiting for a
telemetry period.

Topics follow the device's FullTopic (``%prefix%/%topic%/`` by default, or
``%topic%/%prefix%/``). A single relay is commanded as ``POWER`` and read as ``POWER`` or
``POWER1`` (SetOption26); relay ``n`` of a multi-relay board is ``POWERn``.
Source: https://tasmota.github.io/docs/MQTT/ and /docs/Commands/. Case BC-44.
"""

from __future__ import annotations

from hub.devices.dialects.common import (
    DialectError,
    Message,
    Update,
    availability,
    hex_of,
    is_number,
    json_object,
    kelvin_of,
    kelvin_to_mireds,
    log,
    on_off,
    rgb_of,
    service_of,
)

POWER = {"turn_on": "ON", "turn_off": "OFF", "toggle": "TOGGLE"}
"""Home Assistant service -> Tasmota POWER payload."""
DEFAULT_FULL_TOPIC = "%prefix%/%topic%/"


def full_topic(pattern: str, prefix: str, topic: str, command: str) -> str:
    """``pattern`` (a Tasmota FullTopic) with ``%prefix%`` and ``%topic%`` filled, plus the
    command: ``full_topic("%topic%/%prefix%/", "cmnd", "plug", "POWER")`` -> ``plug/cmnd/POWER``.

    Raises:
        DialectError: the pattern lacks ``%prefix%`` or ``%topic%``.
    """
    if "%prefix%" not in pattern or "%topic%" not in pattern:
        raise DialectError(f"FullTopic {pattern!r} needs both %prefix% and %topic%")
    base = pattern.replace("%prefix%", prefix).replace("%topic%", topic)
    return base.rstrip("/") + "/" + command


class TasmotaDevice:
    """One relay (or light) of a Tasmota device as one entity.

    Args:
        name: the entity name in ``[home]``.
        topic: the device's Topic (``tasmota_A1B2C3``).
        relay: 0 for a single relay (``POWER``), else the relay number (``POWER2``).
        full_topic: the device's FullTopic.
        prefixes: ``(cmnd, stat, tele)`` (Tasmota's Prefix1..3).
    """

    dialect = "tasmota"

    def __init__(
        self,
        name: str,
        topic: str,
        *,
        relay: int = 0,
        full_topic: str = DEFAULT_FULL_TOPIC,
        prefixes: tuple[str, str, str] = ("cmnd", "stat", "tele"),
        mireds: tuple[int, int] = (153, 500),
    ) -> None:
        self.name, self.topic, self.relay, self.mireds = name, topic, relay, tuple(mireds)
        self.pattern, (self.cmnd, self.stat, self.tele) = full_topic, prefixes
        self.power = f"POWER{relay}" if relay else "POWER"
        self.reads = {"POWER", "POWER1"} if relay in (0, 1) else {self.power}
        self.topics = {
            "result": self._t(self.stat, "RESULT"),
            "state": self._t(self.tele, "STATE"),
            "lwt": self._t(self.tele, "LWT"),
            **{f"stat:{p}": self._t(self.stat, p) for p in sorted(self.reads)},
        }

    def _t(self, prefix: str, command: str) -> str:
        return full_topic(self.pattern, prefix, self.topic, command)

    def command(self, action: dict) -> Message:
        """One ``cmnd`` message: ``POWER[n]``, ``Dimmer`` (0-100), ``Color`` or ``CT``.

        Raises:
            DialectError: a service Tasmota has no command for.
        """
        service, data = service_of(action)
        if service not in POWER:
            raise DialectError(f"{service} has no Tasmota command")
        if service == "turn_on":
            if "brightness_pct" in data:
                level = max(1, min(100, round(float(data["brightness_pct"]))))
                return Message(self._t(self.cmnd, "Dimmer"), str(level).encode())
            rgb, kelvin = rgb_of(data), kelvin_of(data)
            if rgb is not None:
                return Message(self._t(self.cmnd, "Color"), hex_of(rgb)[1:].encode())
            if kelvin is not None:
                ct, _ = kelvin_to_mireds(kelvin, *self.mireds)
                return Message(self._t(self.cmnd, "CT"), str(ct).encode())
        return Message(self._t(self.cmnd, self.power), POWER[service].encode())

    def subscriptions(self) -> list[str]:
        """``stat/…/RESULT``, ``stat/…/POWER[1]``, ``tele/…/STATE`` and ``tele/…/LWT``."""
        return list(self.topics.values())

    def queries(self) -> list[Message]:
        """An empty ``POWER[n]``: Tasmota answers with the relay's state on ``stat/``."""
        return [Message(self._t(self.cmnd, self.power), b"")]

    def decode(self, topic: str, payload: bytes) -> Update | None:
        """State or availability from one of :meth:`subscriptions`; None otherwise."""
        if topic == self.topics["lwt"]:
            return Update(available=availability(payload))
        if topic in (self.topics["result"], self.topics["state"]):
            data = json_object(payload)
            return Update(problem="not a JSON object") if data is None else self._from_json(data)
        for spelling in self.reads:
            if topic == self.topics[f"stat:{spelling}"]:
                text = payload.decode("utf-8", "replace").strip()
                word = on_off(text)
                if word is None:
                    return Update(problem=f"{text[:40]!r} is not ON or OFF")
                return Update(state=word, available=True)
        return None

    def _from_json(self, data: dict) -> Update | None:
        key = next((k for k in sorted(self.reads) if k in data), None)
        word = on_off(data[key]) if key is not None else None
        if key is not None and word is None:
            return Update(problem=f"{key} {data[key]!r} is not ON or OFF")
        attrs = {}
        if "Dimmer" in data:
            dimmer = data["Dimmer"]
            attrs["brightness_pct"] = int(dimmer) if is_number(dimmer) else dimmer
        if word is None and not attrs:
            log.debug("Tasmota %s: no %s in %s", self.topic, "/".join(self.reads), list(data))
            return None
        return Update(state=word, attributes=attrs, available=True)
