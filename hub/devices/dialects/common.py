"""What every MQTT payload dialect shares: messages, state updates, unit conversions.

A dialect turns one hub action (Home Assistant service data: ``brightness_pct`` 0-100,
``color_name``, ``rgb_color``, ``color_temp_kelvin`` / ``kelvin``) into exactly one MQTT message
for one device, and a device's messages back into state updates. All functions here are pure.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field

log = logging.getLogger("hub.devices.dialects")

COLORS = {
    "red": (255, 0, 0),
    "green": (0, 128, 0),
    "blue": (0, 0, 255),
    "yellow": (255, 255, 0),
    "orange": (255, 165, 0),
    "purple": (128, 0, 128),
    "pink": (255, 192, 203),
    "white": (255, 255, 255),
    "cyan": (0, 255, 255),
    "magenta": (255, 0, 255),
    "violet": (238, 130, 238),
    "brown": (165, 42, 42),
    "lime": (0, 255, 0),
    "teal": (0, 128, 128),
    "indigo": (75, 0, 130),
    "gold": (255, 215, 0),
    "turquoise": (64, 224, 208),
}
"""Color names -> RGB, the CSS3 values Home Assistant's ``color_name`` uses (webcolors)."""
WHITE_KELVIN = {
    "warm white": 2700,
    "soft white": 3000,
    "neutral white": 4000,
    "cool white": 5000,
    "daylight": 6500,
}
"""White shades spoken as a color name -> Kelvin (a color temperature, not an RGB color)."""


class DialectError(ValueError):
    """An action this device (dialect) cannot carry out; the message says why."""


@dataclass(frozen=True)
class Message:
    """One MQTT message to publish: ``topic`` and ``payload`` (UTF-8 bytes), never retained.

    ``note``: what the hub should add to its answer (a clamped value), or "".
    """

    topic: str
    payload: bytes
    note: str = ""


@dataclass
class Update:
    """What one device message says: ``state`` (HA word: on/off/...) or None when it says
    nothing about it, ``attributes`` to merge, ``available`` True/False/None (not said).
    ``problem``: why the message cannot be used (a wrong shape), or "": the hub then ignores it
    with one WARNING (:mod:`hub.devices.guard`)."""

    state: str | None = None
    attributes: dict = field(default_factory=dict)
    available: bool | None = None
    problem: str = ""


def pct_to_scale(pct: float, top: int, lowest: int = 1) -> int:
    """``pct`` (0-100) on a ``0..top`` scale, rounded: ``pct * top / 100`` (Home Assistant's
    ``percentage_to_ranged_value``); with ``lowest`` > 1, 1-100 % map linearly onto
    ``lowest..top`` so 1 % is the lowest level that stays on (Zigbee bulbs switch off at
    level 1, Koenkk/zigbee2mqtt #4035; ioBroker.zigbee PR #602).

    Raises:
        DialectError: ``pct`` outside 0-100.
    """
    if not 0 <= pct <= 100:
        raise DialectError(f"brightness {pct}% is outside 0-100")
    if pct == 0:
        return 0
    if lowest > 1:
        return round(lowest + (max(1.0, pct) - 1) * (top - lowest) / 99)
    return max(1, min(top, round(pct * top / 100)))


def is_number(value) -> bool:
    """True for a finite int or float (not a bool): a value a scale conversion can take."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def scale_to_pct(value: float, top: int) -> int:
    """A ``0..top`` level back to a percent (``127`` of 254 -> 50)."""
    return max(0, min(100, round(float(value) * 100 / top)))


def kelvin_to_mireds(kelvin: float, low: int, high: int) -> tuple[int, bool]:
    """``(mireds, clamped)``: ``round(1e6 / K)`` kept within the device's ``low..high``."""
    if kelvin <= 0:
        raise DialectError(f"color temperature {kelvin} K is not positive")
    mireds = round(1_000_000 / kelvin)
    kept = max(low, min(high, mireds))
    return kept, kept != mireds


def rgb_of(data: dict) -> tuple[int, int, int] | None:
    """The RGB color an action asks for (``rgb_color`` or a known ``color_name``), or None.

    Raises:
        DialectError: an unknown color name.
    """
    if data.get("rgb_color"):
        r, g, b = (int(v) for v in data["rgb_color"])
        return r, g, b
    name = data.get("color_name")
    if not name:
        return None
    key = str(name).strip().lower()
    if key in WHITE_KELVIN:
        return None
    if key not in COLORS:
        raise DialectError(f"unknown color {name!r}")
    return COLORS[key]


def kelvin_of(data: dict) -> float | None:
    """The color temperature an action asks for, in Kelvin, or None."""
    for key in ("color_temp_kelvin", "kelvin"):
        if data.get(key):
            return float(data[key])
    name = str(data.get("color_name") or "").strip().lower()
    return float(WHITE_KELVIN[name]) if name in WHITE_KELVIN else None


def hex_of(rgb: tuple[int, int, int]) -> str:
    """``#RRGGBB`` (upper case, with the ``#`` Zigbee2MQTT requires, BC-43)."""
    return "#" + "".join(f"{max(0, min(255, v)):02X}" for v in rgb)


def on_off(word) -> str | None:
    """``ON``/``OFF``/``true``/``1`` in any case -> ``on``/``off``; None for anything else."""
    text = str(word).strip().lower()
    if text in ("on", "true", "1"):
        return "on"
    if text in ("off", "false", "0"):
        return "off"
    return None


def availability(payload: bytes) -> bool | None:
    """An availability payload in either form: JSON ``{"state": "online"}`` (Zigbee2MQTT 2.x,
    ``bridge/state`` since 1.x late) or a plain ``online``/``Online``/``offline`` (1.x, Tasmota
    LWT). None when it is neither."""
    text = payload.decode("utf-8", "replace").strip()
    if text.startswith("{"):
        try:
            text = str(json.loads(text).get("state", ""))
        except (ValueError, AttributeError):
            return None
    word = text.strip().lower()
    return True if word == "online" else False if word == "offline" else None


def json_object(payload: bytes) -> dict | None:
    """The payload as a JSON object, or None (logged at DEBUG) when it is not one."""
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        log.debug("MQTT payload is not JSON: %r", payload[:80])
        return None
    return data if isinstance(data, dict) else None


def dumps(body: dict) -> bytes:
    """Compact UTF-8 JSON."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def service_of(action: dict) -> tuple[str, dict]:
    """``(service, data)`` with ``turn_on`` at 0 % turned into ``turn_off`` (a dim level of 0 is
    not a level, ioBroker.zigbee #600)."""
    service, data = action["service"], dict(action.get("data") or {})
    if service == "turn_on" and data.get("brightness_pct") == 0:
        return "turn_off", {}
    return service, data
