"""MQTT payload dialects: how one entity's commands and states look on the wire.

``hub`` (the hub's own JSON, :mod:`hub.devices.topics`), ``zigbee2mqtt``
(:mod:`~hub.devices.dialects.z2m`), ``tasmota`` (:mod:`~hub.devices.dialects.tasmota`),
``ha_json`` (Home Assistant's MQTT JSON schema, :mod:`~hub.devices.dialects.ha_json`) and
``template`` (:mod:`~hub.devices.dialects.template`). A dialect is chosen per entity in
``[mqtt.devices.<entity name>]`` (``dialect = …``, or ``bridge = …`` naming a
``[mqtt.bridges.<name>]`` table that holds the dialect and its shared settings), else
``[mqtt] dialect``. Each device object has ``command(action) -> Message``,
``subscriptions()``, ``queries()`` and ``decode(topic, payload) -> Update | None``.
"""

from __future__ import annotations

from hub.devices.dialects.common import DialectError, Message, Update
from hub.devices.dialects.ha_json import HaJsonDevice
from hub.devices.dialects.tasmota import DEFAULT_FULL_TOPIC, TasmotaDevice
from hub.devices.dialects.template import TemplateDevice
from hub.devices.dialects.z2m import Z2mDevice
from hub.devices.topics import slug
from hub.errors import ConfigError

__all__ = ["DIALECTS", "DialectError", "Message", "Update", "build_devices"]

DIALECTS = ("hub", "zigbee2mqtt", "tasmota", "ha_json", "template")
"""The payload dialects, by their config name."""
_KEYS = {
    "hub": set(),
    "zigbee2mqtt": {"device", "base_topic", "min_level", "mireds"},
    "tasmota": {"device", "relay", "full_topic", "prefixes", "mireds"},
    "ha_json": {"command_topic", "state_topic", "availability_topic", "brightness_scale", "mireds"},
    "template": {
        "device",
        "command_topic",
        "state_topic",
        "payload_on",
        "payload_off",
        "payload_brightness",
        "state_on",
        "state_off",
        "state_key",
    },
}
"""Keys each dialect reads from its device (and bridge) table, besides dialect and bridge."""


def _merged(settings, name: str) -> tuple[str, dict, str]:
    """``(dialect, bridge settings + device settings, config path)`` of one entity."""
    spec = settings.devices.get(name, {})
    path = f"mqtt.devices.{name}"
    if not isinstance(spec, dict):
        raise ConfigError(f"{path}: expected a table, got {spec!r}")
    bridge_name = spec.get("bridge")
    bridge: dict = {}
    if bridge_name is not None:
        bridge = settings.bridges.get(bridge_name)
        if not isinstance(bridge, dict):
            raise ConfigError(f"{path}.bridge: no [mqtt.bridges.{bridge_name}] table")
    dialect = spec.get("dialect") or bridge.get("dialect") or settings.dialect
    if dialect not in DIALECTS:
        raise ConfigError(f"{path}.dialect: {dialect!r} is not one of {', '.join(DIALECTS)}")
    merged = {
        **{k: v for k, v in bridge.items() if k != "dialect"},
        **{k: v for k, v in spec.items() if k not in ("dialect", "bridge")},
    }
    unknown = sorted(set(merged) - _KEYS[dialect])
    if unknown:
        raise ConfigError(
            f"{path}.{unknown[0]}: unknown key for the {dialect} dialect; keys "
            f"are {', '.join(sorted(_KEYS[dialect])) or 'none'}"
        )
    return dialect, merged, path


def _range(spec: dict, path: str, default: tuple[int, int]) -> tuple[int, int]:
    value = spec.get("mireds", default)
    if not (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, int) and v > 0 for v in value)
        and value[0] <= value[1]
    ):
        raise ConfigError(f"{path}.mireds: expected [low, high] positive integers, got {value!r}")
    return int(value[0]), int(value[1])


def _device(dialect: str, name: str, spec: dict, path: str):
    """One device object from its merged table."""
    if dialect == "zigbee2mqtt":
        return Z2mDevice(
            name,
            str(spec.get("device", name)),
            str(spec.get("base_topic", "zigbee2mqtt")),
            min_level=int(spec.get("min_level", 2)),
            mireds=_range(spec, path, (153, 454)),
        )
    if dialect == "tasmota":
        prefixes = tuple(spec.get("prefixes", ("cmnd", "stat", "tele")))
        if len(prefixes) != 3:
            raise ConfigError(f"{path}.prefixes: expected [cmnd, stat, tele], got {prefixes!r}")
        try:
            return TasmotaDevice(
                name,
                str(spec.get("device") or slug(name)),
                relay=int(spec.get("relay", 0)),
                full_topic=str(spec.get("full_topic", DEFAULT_FULL_TOPIC)),
                prefixes=prefixes,
                mireds=_range(spec, path, (153, 500)),
            )
        except DialectError as exc:
            raise ConfigError(f"{path}.full_topic: {exc}") from None
    if dialect == "ha_json":
        for key in ("command_topic", "state_topic"):
            if not spec.get(key):
                raise ConfigError(f"{path}.{key}: the ha_json dialect needs it")
        return HaJsonDevice(
            name,
            spec["command_topic"],
            spec["state_topic"],
            availability_topic=spec.get("availability_topic", ""),
            brightness_scale=int(spec.get("brightness_scale", 255)),
            mireds=_range(spec, path, (153, 500)),
        )
    if not spec.get("command_topic"):
        raise ConfigError(f"{path}.command_topic: the template dialect needs it")
    return TemplateDevice(name, spec)


def build_devices(settings, names) -> dict:
    """``{entity name: device object}`` for every entity whose dialect is not ``hub``.

    Args:
        settings: :class:`hub.settings.MqttSettings` (``dialect``, ``devices``, ``bridges``).
        names: the ``[home]`` entity names.
    Raises:
        ConfigError: a device table for an unknown entity, an unknown dialect, bridge or key,
            or a value of the wrong shape; the message starts with the key's path.
    """
    names = list(names)
    for name in settings.devices:
        if name not in names:
            raise ConfigError(f"mqtt.devices.{name}: no entity named {name!r} in [home]")
    for bname, bridge in settings.bridges.items():
        if not isinstance(bridge, dict) or bridge.get("dialect") not in DIALECTS[1:]:
            raise ConfigError(f"mqtt.bridges.{bname}.dialect: one of {', '.join(DIALECTS[1:])}")
    out = {}
    for name in names:
        dialect, spec, path = _merged(settings, name)
        if dialect == "hub":
            continue
        try:
            out[name] = _device(dialect, name, spec, path)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return out
