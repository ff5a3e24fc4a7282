"""Fact questions answered from their source, never by a language model.

:func:`route` reads a question the rules did not match and, when it asks for a fact
(:func:`hub.facts.topics.topic`), answers it from the source: an intent for the handlers
(``HassGetCurrentTime``, ``HassGetCurrentDate``, ``HassGetWeather``,
``HassClimateGetTemperature``, ``HassGetState``), a sentence rendered from the clock ("It's
2026."), or an honest answer when the hub cannot know ("I don't have a forecast.", "I don't
have a humidity sensor."). :func:`honest_answer` is what is said instead of an LLM answer that
claimed a fact (:func:`hub.facts.claims.made_up`); about a fact that changes over time
(:mod:`hub.facts.changing`) that is :data:`~hub.facts.changing.OUT_OF_DATE`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from hub.act.responses import render
from hub.facts.changing import OUT_OF_DATE, asks_changing, claims_changing
from hub.facts.topics import (
    MONTHS,
    OUTSIDE_WORDS,
    STATE_WORDS,
    WEEKDAYS,
    foreign_words,
    named_entity,
    topic,
    words,
)

UNKNOWN = "Sorry, I don't know that."
"""Said when an LLM answer claimed a fact and the question has no source to answer from."""
NO_FORECAST = "I don't have a forecast."
NO_WEATHER = "I don't have a weather source."
NO_HUMIDITY = "I don't have a humidity sensor."
NO_OUTDOOR_TEMPERATURE = "I don't have an outdoor temperature."
NO_INDOOR_TEMPERATURE = "I don't have a thermostat or temperature sensor."


@dataclass(frozen=True)
class Fact:
    """How a fact question is answered: an intent for the handlers, or a sentence to say.

    ``intent``/``slots``: a Home Assistant intent whose handler reads the source; or
    ``response``: the text to speak (from the clock, or an honest "I don't have ...").
    ``topic`` names what was asked (``time``, ``date``, ``weekday``, ``month``, ``year``,
    ``weather``, ``forecast``, ``outdoor_temperature``, ``indoor_temperature``,
    ``humidity``, ``state``).
    """

    topic: str
    intent: str | None = None
    slots: dict = field(default_factory=dict)
    response: str | None = None


def _first(home, domain: str):
    return next((e for e in home.entities if e.domain == domain), None)


def _humidity_sensor(home, text: str):
    """The humidity sensor the question means (outdoor ones for "outside"), or None."""
    found = [
        e
        for e in home.entities
        if e.domain == "sensor"
        and ("humidity" in e.name.lower() or e.attributes.get("device_class") == "humidity")
    ]
    outside = bool(set(words(text)) & OUTSIDE_WORDS)
    preferred = [
        e for e in found if ("outdoor" in e.name.lower() or "outside" in e.name.lower()) == outside
    ]
    return (preferred or ([] if outside else found) or [None])[0]


def _clock_answer(kind: str, now: datetime) -> str:
    """ "It's 3:05 PM." / "Today is Tuesday, December 1st, 2026." / "It's 2026." ..."""
    weekday = WEEKDAYS[now.weekday()].capitalize()
    if kind == "time":
        return f"It's {render('HassGetCurrentTime', 'default', {'time': now.time()})}."
    if kind == "year":
        return f"It's {now.year}."
    if kind == "month":
        return f"It's {MONTHS[now.month - 1].capitalize()}."
    today = render("HassGetCurrentDate", "default", {"date": now.date()})
    return f"Today is {weekday}, {today}."  # date, weekday: both said


def _weather_fact(home, kind: str) -> Fact:
    """Weather now (the weather entity), a forecast (honest), or the outdoor temperature."""
    station = _first(home, "weather")
    if kind == "forecast":
        if station is None:
            return Fact(kind, response=NO_FORECAST)
        return Fact(
            kind, response=f"{NO_FORECAST} Right now it's {_condition(home.state(station.name))}."
        )
    if station is None:
        return Fact(kind, response=NO_WEATHER if kind == "weather" else NO_OUTDOOR_TEMPERATURE)
    if kind == "outdoor_temperature" and home.attributes(station.name).get("temperature") is None:
        return Fact(
            kind,
            response=f"{NO_OUTDOOR_TEMPERATURE} Right now it's "
            f"{_condition(home.state(station.name))}.",
        )
    return Fact(kind, intent="HassGetWeather", slots={"name": station.name})


def _condition(state: str | None) -> str:
    """A weather entity's state as words: ``partlycloudy`` -> ``partly cloudy``."""
    text = str(state or "unknown").replace("partlycloudy", "partly cloudy")
    return text.replace("-", " ").replace("_", " ")


def route(text: str, home, now: datetime) -> Fact | None:
    """How to answer ``text`` from the facts' sources, or None when it asks for none of them.

    Callers also check :func:`foreign_words`: a source is never read out for a question it
    does not answer ("what year did the titanic sink").

    Args:
        text: the transcript (rules found no intent in it).
        home: the :class:`hub.home.Home` (weather entity, sensors, states).
        now: the local wall-clock time.
    """
    kind = topic(text)
    if kind is None:
        entity = named_entity(home, text)
        if entity is not None and _asks_state(text):
            return Fact("state", intent="HassGetState", slots={"name": entity.name})
        return None
    if kind in ("time", "date", "weekday", "month", "year"):
        return Fact(
            kind,
            intent="HassGetCurrentTime" if kind == "time" else "HassGetCurrentDate",
            response=_clock_answer(kind, now),
        )
    if kind in ("weather", "forecast", "outdoor_temperature"):
        return _weather_fact(home, kind)
    named = named_entity(home, text)
    if (
        kind in ("humidity", "indoor_temperature")
        and named is not None
        and set(words(named.name)) <= set(words(text))
        and not _measures(named, kind)
    ):
        # "the temperature of the garage door" (its whole name): not the thermostat's
        return Fact(
            kind,
            response=f"I don't have a {kind.replace('indoor_', '')} reading for the {named.name}.",
        )
    if kind == "humidity":
        sensor = _humidity_sensor(home, text)
        if sensor is None:
            return Fact(kind, response=NO_HUMIDITY)
        return Fact(kind, intent="HassGetState", slots={"name": sensor.name})
    climate = _first(home, "climate")
    if climate is None:
        return Fact(kind, response=NO_INDOOR_TEMPERATURE)
    return Fact(kind, intent="HassClimateGetTemperature", slots={"name": climate.name})


def _measures(entity, kind: str) -> bool:
    """True when ``entity`` is a source of ``kind`` (a thermostat or temperature sensor for
    ``indoor_temperature``, a humidity sensor for ``humidity``)."""
    if kind == "humidity":
        return entity.domain == "sensor" and (
            "humidity" in entity.name.lower() or entity.attributes.get("device_class") == "humidity"
        )
    return entity.domain == "climate" or (
        entity.domain == "sensor"
        and (
            entity.attributes.get("device_class") == "temperature"
            or "temperature" in entity.name.lower()
        )
    )


_QUESTION_START = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "did",
        "does",
        "has",
        "have",
        "what",
        "whats",
        "which",
        "how",
        "status",
        "state",
    }
)
"""First words of a question about a state ("could you open ..." is a request, not one)."""


def _asks_state(text: str) -> bool:
    """True when ``text`` asks about a state ("is the X on", "did I leave X open",
    "tell me if X is closed"), not for a change ("could you open X")."""
    said = words(text)
    if not said:
        return False
    asking = said[0] in _QUESTION_START or bool(
        re.search(r"\b(tell me|check|know|see) (if|whether)\b", " ".join(said))
    )
    return asking and bool(set(said) & STATE_WORDS)


def honest_answer(question: str, home, now: datetime, claimed: str = "") -> str:
    """What to say instead of an LLM answer that claimed a fact: the source's, "out of date",
    or "I don't know".

    A question whose fact has a source gets the sentence from the clock or the honest line
    (:func:`route`); a question about, or a ``claimed`` sentence stating, a fact that changes
    over time (:mod:`hub.facts.changing`) gets :data:`~hub.facts.changing.OUT_OF_DATE`; an
    intent answer (weather, device state) is left to the rules, so this says :data:`UNKNOWN`
    for those and for the rest.
    """
    fact = route(question, home, now)
    if fact is not None and fact.response and not foreign_words(question, home):
        return fact.response
    if asks_changing(question) or claims_changing(claimed):
        return OUT_OF_DATE
    return UNKNOWN
