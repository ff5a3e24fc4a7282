"""Response text from Home Assistant's English response templates (home-assistant-intents).

Templates without Jinja statements (``Added {{ slots.item }}``, ``Turned on the lights``, the
error templates) are filled by :func:`fill`, a small safe substitution: ``{{ a.b }}`` with the
filters ``capitalize``, ``lower``, ``trim`` and ``.replace('_', ' ')``; nothing is evaluated.
Templates with ``{% ... %}`` logic (time, date, weather, timers, state questions, the
``Turned on the light`` default) are ported to the Python functions below, one per template,
producing the same words (whitespace normalized as Home Assistant does). Texts Home Assistant
has no template for (clarifications) are in :data:`OWN_TEXTS`.
"""

from __future__ import annotations

import functools
import re
from datetime import date, time as dtime

from hub.act.timers import TimerInfo

OWN_TEXTS = {
    "need_area": "Which area do you mean?",
    "no_target": "Which device do you mean?",
    "not_handled": "Sorry, I can't do that yet",
    "invalid_duration": "For how long should I set the timer?",
    "nothing_to_do": "Sorry, there is nothing to do",
}
"""Our own texts where Home Assistant has no template (keyed like its error keys)."""

# The "translations" table of HassTurnOn/HassTurnOff's default template.
_DOMAIN_TEXT = {
    "button": "the button", "camera": "the camera", "input_button": "the button",
    "alarm_control_panel": "the alarm", "automation": "the automation", "fan": "the fan",
    "climate": "the thermostat", "humidifier": "the humidifier", "input_boolean": "the switch",
    "siren": "the siren", "water_heater": "the water heater", "light": "the light",
    "switch": "the switch", "remote": "the remote", "vacuum": "the vacuum cleaner",
    "media_player": "the media player", "lawn_mower": "the lawn mower",
}
_WEATHER = {
    "clear": "and clear", "clear-night": "and clear", "cloudy": "and cloudy",
    "exceptional": "and exceptional", "fog": "with fog", "hail": "with hail",
    "lightning": "with lightning", "lightning-rainy": "with lightning and rain",
    "partlycloudy": "and partly cloudy", "pouring": "and pouring rain", "rainy": "and raining",
    "snowy": "and snowing", "snowy-rainy": "with snow and rain", "sunny": "and sunny",
    "windy": "and windy", "windy-variant": "with wind and clouds",
}
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_FIELD = re.compile(r"\{\{\s*([\w.]+)\s*(?:\|\s*(\w+)\s*)?\}\}")
_FILTERS = {"capitalize": lambda s: s[:1].upper() + s[1:].lower(), "lower": str.lower,
            "trim": str.strip, "spaced": lambda s: s.replace("_", " "), None: lambda s: s}


@functools.lru_cache(maxsize=1)
def _responses() -> dict:
    """``{"intents": {intent: {key: template}}, "errors": {key: template}}`` (English)."""
    from home_assistant_intents import get_intents

    return get_intents("en")["responses"]


def template(intent: str, key: str) -> str | None:
    """Home Assistant's template for ``intent`` and response ``key`` (None when none)."""
    return _responses()["intents"].get(intent, {}).get(key)


def normalize(text: str) -> str:
    """Collapse whitespace like Home Assistant does after rendering."""
    return " ".join(str(text).split())


def fill(text: str, context: dict) -> str:
    """Substitute ``{{ dotted.path | filter }}`` fields from ``context`` (no evaluation).

    A missing value renders as "" (Jinja's undefined). Raises nothing.
    """
    text = text.replace(".replace('_', ' ')", " | spaced")

    def value(match: re.Match) -> str:
        found = context
        for part in match.group(1).split("."):
            found = found.get(part) if isinstance(found, dict) else None
        return _FILTERS.get(match.group(2), _FILTERS[None])("" if found is None else str(found))

    return normalize(_FIELD.sub(value, text))


def error_text(key: str, **args) -> str:
    """The Home Assistant error response for ``key`` (or our own text), filled with ``args``."""
    found = _responses()["errors"].get(key) or OWN_TEXTS.get(key) or OWN_TEXTS["not_handled"]
    return fill(found, {k: v for k, v in args.items() if v is not None})


def simple(intent: str, key: str, slots: dict) -> str:
    """A template without logic, filled with ``slots`` ("" when the intent has none)."""
    found = template(intent, key) or template(intent, "default") or ""
    return fill(found, {"slots": slots})


def state_with_unit(state: str, attributes: dict) -> str:
    """Home Assistant's ``state_with_unit``: ``"64 %"``, ``"on"``."""
    unit = attributes.get("unit_of_measurement")
    return f"{state} {unit}" if unit else str(state)


def turned(on: bool, domain: str) -> str:
    """HassTurnOn/HassTurnOff ``default``: ``Turned on the light``."""
    return normalize(f"Turned {'on' if on else 'off'} {_DOMAIN_TEXT.get(domain, 'None')}")


def get_state(key: str, slots: dict, matched: list[tuple[str, str]],
              unmatched: list[tuple[str, str]]) -> str:
    """HassGetState's templates. ``matched``/``unmatched``: (name, state_with_unit) pairs.

    ``one``: "Outdoor humidity is 64 %"; ``one_yesno``: "Yes" / "No, unlocked"; ``any``,
    ``all``, ``which``, ``how_many`` as in Home Assistant.
    """
    first = (matched or unmatched or [("", "")])[0][1]
    if key == "one":
        return normalize(f"{_FILTERS['capitalize'](str(slots.get('name', '')))} is {first}")
    if key == "one_yesno":
        return "Yes" if matched else f"No, {first}"
    if key == "how_many":
        return str(len(matched))
    names = sorted(n for n, _ in (unmatched if key == "all" else matched))
    if key == "all":
        if not names:
            return "Yes"
        verb = "are" if len(names) > 1 else "is"
        return normalize(f"No, {_names(names, ' more')} {verb} not {slots.get('state', '')}")
    if key == "which":
        return _names(names, " more") if names else "Not any"
    return f"Yes, {_names(names, ' more')}" if names else "No"  # "any"


def _names(names: list[str], more: str) -> str:
    """"A, B and C" or "A, B, C and 2 more" (the loop in HassGetState's templates)."""
    if len(names) > 4:
        return f"{', '.join(names[:3])} and {len(names) - 3}{more}"
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"


def climate_temperature(state: str, attributes: dict) -> str:
    """HassClimateGetTemperature: ``current_temperature`` else the state, ``21.5 degrees``."""
    temperature = attributes.get("current_temperature")
    temperature = state if temperature is None else temperature
    unit = "degree" if temperature == 1 else "degrees"
    return f"{_number(temperature)} {unit}"


def weather(state: str, attributes: dict) -> str:
    """HassGetWeather: ``18 °C and sunny``.

    Deviation: Home Assistant prints ``None None and sunny`` when the weather entity has no
    ``temperature`` attribute; we then say the condition alone (``Sunny``).
    """
    condition = _WEATHER.get(str(state).lower(), "")
    temperature = attributes.get("temperature")
    if temperature is None:
        word = condition.split(" ", 1)[-1] if condition else str(state)
        return word[:1].upper() + word[1:]
    unit = attributes.get("temperature_unit", "")
    return normalize(f"{_number(temperature)} {unit} {condition}")


def current_time(now: dtime) -> str:
    """HassGetCurrentTime: ``3:05 PM``, ``12:00 AM``."""
    minute = f"{now.minute:02d}"
    hour = now.hour % 12 or 12
    return f"{hour}:{minute} {'AM' if now.hour < 12 else 'PM'}"


def current_date(today: date) -> str:
    """HassGetCurrentDate: ``January 1st, 2025``."""
    return f"{_MONTHS[today.month - 1]} {_ordinal(today.day)}, {today.year}"


def _ordinal(day: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, 22nd, 23rd, 31st."""
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _number(value) -> str:
    """A number as spoken: 21.5, 5 (not 5.0)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def duration_words(hours, minutes, seconds) -> str:
    """The timer templates' ``text``: ``1 hour and 30 minutes``, ``5 minutes``."""
    parts = []
    for value, unit in ((hours, "hour"), (minutes, "minute"), (seconds, "second")):
        if value not in (None, "", 0):
            parts.append(f"{_number(value)} {unit}{'' if value == 1 else 's'}")
    if len(parts) > 2:
        return f"{', '.join(parts[:-1])} and {parts[-1]}"
    return " and ".join(parts)


def timer_changed(intent: str, slots: dict) -> str:
    """HassStartTimer / HassIncreaseTimer / HassDecreaseTimer ``default`` templates."""
    text = duration_words(slots.get("hours"), slots.get("minutes"), slots.get("seconds"))
    name = f" named {str(slots['name']).strip()}" if slots.get("name") else ""
    if intent == "HassStartTimer":
        return normalize(f"Timer set for {text}{name}")
    verb = "added to" if intent == "HassIncreaseTimer" else "removed from"
    return normalize(f"{text} {verb} timer{name}")


def cancel_all(canceled: int, area: str = "") -> str:
    """HassCancelAllTimers ``default`` / ``area``."""
    where = f" in {area}" if area else ""
    if canceled < 1:
        return f"No timers were canceled{where}."
    return f"Canceled {canceled} timer{'' if canceled == 1 else 's'}{where}."


def timer_status(timers: list[TimerInfo]) -> str:
    """HassTimerStatus ``default``: ``5 minutes left.``, ``2 running timers. ...``."""
    active = sorted((t for t in timers if t.is_active), key=lambda t: t.total_seconds_left)
    paused = [t for t in timers if not t.is_active]
    if not timers:
        return "No timers."
    words, next_timer = [], None
    if not active:
        next_timer = paused[0] if len(paused) == 1 else None
        words.append("Timer is paused." if next_timer else f"{len(paused)} paused timers.")
    else:
        next_timer = active[0]
        if len(active) > 1:
            words.append(f"{len(active)} running timers.")
        if paused:
            words.append("1 paused timer." if len(paused) == 1 else f"{len(paused)} paused timers.")
    if next_timer is not None:
        words.append(_left(next_timer))
        words.append(_which(next_timer) if len(timers) > 1 else "left.")
    return normalize(" ".join(words))


def _left(timer: TimerInfo) -> str:
    """The time-left part of the status template (its if/elif chain)."""
    hours, minutes, seconds = timer.rounded_left
    if hours:
        return f"{duration_words(hours, 0, 0)}" + (f" and {minutes} minutes" if minutes else "")
    if minutes:
        return f"{duration_words(0, minutes, 0)}" + (f" and {seconds} seconds" if seconds else "")
    return duration_words(0, 0, seconds) if seconds else ""


def _which(timer: TimerInfo) -> str:
    """``left on 5 minute Kitchen timer.`` (singular units, as in the template)."""
    h, m, s = timer.start_hours, timer.start_minutes, timer.start_seconds
    if h and m:
        start = f"{h} hour and {m} minute"
    elif h:
        start = f"{h} hour"
    elif m and s:
        start = f"{m} minute and {s} second"
    else:
        start = f"{m} minute" if m else f"{s} second" if s else ""
    label = timer.name or timer.area
    return normalize(f"left on {start} {label} timer.")
