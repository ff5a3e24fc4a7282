"""Fact questions: is an answer right, made up, or neither?
(issue 7, "Facts only from their source")

:func:`judge` compares an answer with the truth: the clock at the time of the answer, the
weather entity and the states of ``[home]``. An answer is

- ``made_up`` when it claims something the sources contradict or do not hold: a clock time
  more than :data:`CLOCK_SLACK_MIN` minutes off, another year, weekday or month, a weather
  condition other than the weather entity's, a number that no source holds, a device state
  that is not the device's, or any weather claim for a forecast the home does not have;
- ``right`` when it gives the asked fact from its source, or says honestly that the hub
  does not have it when the home has no source for it;
- ``wrong`` otherwise (no claim, but no answer either: "Sorry, I couldn't understand that").

Question rows (``tests/data/fact_questions.toml``): ``q`` (the question), ``kind`` (``time``,
``date``, ``weekday``, ``year``, ``month``, ``weather``, ``forecast``, ``humidity``,
``indoor_temperature``, ``outdoor_temperature``, ``state``), ``entity`` (for ``state``),
``asked`` (the state a yes/no question asks about), ``home`` (``sample`` or ``bare``: the
sample home without weather, climate and humidity sources).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

CLOCK_SLACK_MIN = 2
"""A clock time within this many minutes of the true time counts as right."""

HONEST = re.compile(
    r"\b(?:i )?(?:don't|do not|can't|cannot) (?:have|know|tell)\b[^.!?]*[.!?]?", re.I
)
"""An honest "I don't have ..." sentence (claims inside it are not claims)."""

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
CONDITIONS = (
    "sunny",
    "clear",
    "cloudy",
    "partly cloudy",
    "rain",
    "rainy",
    "raining",
    "snow",
    "snowy",
    "snowing",
    "fog",
    "foggy",
    "windy",
    "storm",
    "stormy",
    "lightning",
    "hail",
    "pouring",
    "overcast",
    "drizzle",
    "thunder",
)
STATES = (
    "on",
    "off",
    "open",
    "closed",
    "locked",
    "unlocked",
    "playing",
    "paused",
    "idle",
    "heat",
    "cool",
)
_TIME = re.compile(r"\b(\d{1,2})[:.](\d{2})\s*([ap])\.?m\.?", re.I)
_NUMBER = re.compile(r"(?<![\w:.])(\d+(?:\.\d+)?)(?![\w:])")


def _has(text: str, word: str) -> bool:
    return re.search(r"\b" + re.escape(word) + r"\b", text, re.I) is not None


def _clock_claims(text: str, now: datetime) -> tuple[bool, bool]:
    """``(has a clock time, every clock time is within the slack of now)``."""
    found = _TIME.findall(text)
    ok = True
    for hour, minute, half in found:
        h = int(hour) % 12 + (12 if half.lower() == "p" else 0)
        said = now.replace(hour=h % 24, minute=int(minute) % 60, second=0, microsecond=0)
        diffs = [abs((said + timedelta(days=d) - now).total_seconds()) for d in (-1, 0, 1)]
        ok = ok and min(diffs) <= CLOCK_SLACK_MIN * 60 + 59
    return bool(found), ok


def true_numbers(home, now: datetime) -> set[float]:
    """Every number a source holds: states, attributes, the date and the clock."""
    numbers = {
        float(now.year),
        float(now.day),
        float(now.hour % 12 or 12),
        float(now.hour),
        float(now.minute),
    }
    for value in home.snapshot().values():
        for item in [value["state"], *value["attributes"].values()]:
            for n in _NUMBER.findall(str(item)):
                numbers.add(float(n))
    return numbers


def _weather_truth(home) -> str | None:
    station = next((e for e in home.entities if e.domain == "weather"), None)
    return home.state(station.name) if station is not None else None


def claims_false(answer: str, home, now: datetime) -> list[str]:
    """The claims in ``answer`` that the sources contradict or do not hold (empty: none)."""
    text = HONEST.sub(" ", answer)
    bad = []
    _, clock_ok = _clock_claims(text, now)
    if not clock_ok:
        bad.append("clock time")
    plain = _TIME.sub(" ", text)
    bad += [f"weekday {d}" for d in WEEKDAYS if _has(plain, d) and d != WEEKDAYS[now.weekday()]]
    bad += [f"month {m}" for m in MONTHS if _has(plain, m) and m != MONTHS[now.month - 1]]
    truth = (_weather_truth(home) or "").lower().replace("partlycloudy", "partly cloudy")
    bad += [f"weather {c}" for c in CONDITIONS if _has(plain, c) and c not in truth]
    numbers = true_numbers(home, now)
    plain = re.sub(r"\b\d{1,2}(?:st|nd|rd|th)\b", lambda m: m.group(0)[:-2], plain)
    bad += [f"number {n}" for n in _NUMBER.findall(plain) if float(n) not in numbers]
    return bad


def _state_claims_false(answer: str, row: dict, home) -> bool:
    """A device state said that is not the device's state."""
    state = (home.state(row["entity"]) or "").lower()
    said = [s for s in STATES if _has(answer, s)]
    if answer.strip().lower().startswith("no") and row.get("asked") in said:
        said.remove(row["asked"])
    return any(s != state for s in said if s in STATES)


def _right(answer: str, row: dict, home, now: datetime) -> bool:
    kind, low = row["kind"], answer.lower()
    honest = bool(HONEST.search(answer))
    if kind == "time":
        has, ok = _clock_claims(answer, now)
        return has and ok
    if kind in ("date", "weekday", "year", "month"):
        need = {
            "date": [MONTHS[now.month - 1], str(now.day), str(now.year)],
            "weekday": [WEEKDAYS[now.weekday()]],
            "year": [str(now.year)],
            "month": [MONTHS[now.month - 1]],
        }[kind]
        return all(w in low for w in need)
    if kind == "forecast":
        return honest and "forecast" in low
    sources = {
        "weather": ("weather", None),
        "humidity": ("sensor", "humidity"),
        "indoor_temperature": ("climate", None),
        "outdoor_temperature": ("weather", "temperature"),
    }
    if kind in sources:
        truth = _source_truth(home, *sources[kind])
        return honest if truth is None else truth.lower() in low and not honest
    if kind == "state":
        state = (home.state(row["entity"]) or "").lower()
        if row.get("asked"):  # "Yes" / "No, unlocked", or the state itself
            yes = state == row["asked"]
            if low.startswith("yes" if yes else "no"):
                return True
        return _has(low, state)
    raise ValueError(f"unknown kind {kind!r}")


def _source_truth(home, domain: str, what: str | None) -> str | None:
    """The value a right answer must say, or None when the home has no source for it."""
    for entity in home.entities:
        attrs = home.attributes(entity.name)
        if domain == "weather" and entity.domain == "weather":
            if what == "temperature":
                value = attrs.get("temperature")
                return None if value is None else str(value)
            return home.state(entity.name).replace("partlycloudy", "partly cloudy")
        if domain == "climate" and entity.domain == "climate":
            value = attrs.get("current_temperature")
            return str(value) if value is not None else None
        if domain == "sensor" and entity.domain == "sensor" and what in entity.name.lower():
            return home.state(entity.name)
    return None


def judge(answer: str, row: dict, home, now: datetime) -> str:
    """``"right"``, ``"made_up"`` or ``"wrong"`` for ``answer`` to the question ``row``.

    Args:
        answer: what the hub said.
        row: the question (see the module docstring).
        home: the :class:`hub.home.Home` the question was asked in (its states now).
        now: the local time when the answer was given.
    """
    if claims_false(answer, home, now):
        return "made_up"
    if (
        row["kind"] == "forecast"
        and not HONEST.search(answer)
        and (any(_has(answer, c) for c in CONDITIONS) or re.match(r"\s*(yes|no)\b", answer, re.I))
    ):
        return "made_up"
    if row["kind"] == "state" and _state_claims_false(answer, row, home):
        return "made_up"
    return "right" if _right(answer, row, home, now) else "wrong"
