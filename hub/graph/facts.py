"""The rules node's fact step: time, date, weather and device-state questions answered from
their source (the clock, the weather entity, ``[home]``), never by the LLM."""

from __future__ import annotations

import logging
from datetime import datetime
from types import SimpleNamespace
from typing import TYPE_CHECKING

from hub.facts.answers import NO_FORECAST, route
from hub.facts.changing import OUT_OF_DATE, asks_changing
from hub.facts.topics import foreign_words, topic
from hub.facts.topics import words as _words
from hub.intents.delay import DELAY_WORDS
from hub.intents.match import IntentMatch
from hub.llm.guard import mentioned

if TYPE_CHECKING:
    from hub.home import Home

log = logging.getLogger("hub.graph")


def fact_update(home: Home, text: str, now: datetime) -> dict | None:
    """The update answering a fact question from its source (:mod:`hub.facts`), or None.

    ``now``: the local time (the turn's wall clock), for time and date questions.
    """
    fact = route(text, home, now)
    if fact is None:
        return None
    update: dict[str, object]
    if fact.response or fact.intent is None:  # a sentence to say (a fact has one or the other)
        update = {
            "matches": [],
            "response": fact.response,
            "intent": fact.intent,
            "slots": dict(fact.slots),
            "source": "rules",
            "transcript": text,
        }
    else:
        name = fact.slots.get("name")
        update = {
            "matches": [
                IntentMatch(
                    fact.intent,
                    dict(fact.slots),
                    text,
                    source="rules",
                    entities=(name,) if name else (),
                )
            ],
            "transcript": text,
            "source": "rules",
        }
    if (
        fact.topic != "state"
        and foreign_words(text, home)
        and beyond_source(home, text, fact_matches(update), check_names=False) is None
    ):
        log.info("not a question about a current fact: %r", text)  # "what year did ... sink"
        return None
    log.info("fact question (%s) answered from its source: %r", fact.topic, text)
    return update


FACT_INTENTS = frozenset(
    {
        "HassGetCurrentTime",
        "HassGetCurrentDate",
        "HassGetWeather",
        "HassClimateGetTemperature",
        "HassGetState",
    }
)
"""Read-only intents that state a fact: the answer is the home's, here and now."""
CLOCK_INTENTS = frozenset({"HassGetCurrentTime", "HassGetCurrentDate", "HassGetWeather"})
"""Fact intents that a question about something else may be misread as by the fuzzy matcher."""

SHIFT_WORDS = frozenset(
    {
        "tomorrow",
        "tonight",
        "yesterday",
        "later",
        "will",
        "gonna",
        "weekend",
        "next",
        "last",
        "ago",
        "until",
        "till",
        "since",
        "before",
        "after",
        "was",
        "were",
        "forecast",
        "christmas",
        "birthday",
        "sunset",
        "sunrise",
        "close",
        "closes",
        "closing",
        "opens",
        "opening",
        "hours",
        "days",
        "weeks",
        "years",
        "soon",
        "expected",
        "predict",
        "set",
        "sets",
        "rise",
        "rises",
    }
)
"""Words that move a question to another time (or to a schedule the hub does not have)."""

NOT_HERE_AND_NOW = "Sorry, I only know how things are here and now, not that."
NO_SUCH_DEVICE = "Sorry, I don't know a device by that name."


def beyond_source(home: Home, text: str, matches: list, *, check_names: bool = True) -> str | None:
    """The honest answer when a fact intent matched a question its source cannot answer,
    else None.

    A fact intent (:data:`FACT_INTENTS`) answers about now, here and the devices in
    ``[home]``; a question about another time ("how warm was it yesterday", "what time will
    it be in two hours"), another place ("what time is it in Tokyo", "the temperature in the
    garage" with no such area) or a device whose name was not said ("is the back door locked"
    matched to the Front Door by the fuzzy matcher) gets an honest line instead of a fact; so
    does a question about something else that changes over time read as the time, date or
    weather ("what is the latest version of python": :data:`~hub.facts.changing.OUT_OF_DATE`).
    """
    if (
        len(matches) != 1 or matches[0].intent not in FACT_INTENTS or "later_s" in matches[0].slots
    ):  # about later: answered by hub.act.queries.later
        return None

    match, words = matches[0], _words(text)
    if match.intent in CLOCK_INTENTS and topic(text) is None and asks_changing(text):
        return OUT_OF_DATE  # "what is the latest version of python" read as the date
    if DELAY_WORDS.search(text):  # "the weather in an hour"
        return NO_FORECAST if match.intent == "HassGetWeather" else NOT_HERE_AND_NOW
    if set(words) & SHIFT_WORDS:
        return NOT_HERE_AND_NOW
    known = {
        w
        for name in (*home.areas, *home.floors, *(e.name for e in home.entities))
        for w in _words(name)
    }
    if _elsewhere(home, words):
        return NOT_HERE_AND_NOW
    if not check_names:  # the fact route chose its source on purpose (a humidity sensor)
        return None
    named = [n for n in match.entities if match.slots.get("name")]
    if named and not any(mentioned(n, text) for n in named):
        return NO_SUCH_DEVICE
    for i, word in enumerate(words[1:], 1):  # "the back door": a kind of device named ...
        before = words[i - 1]
        if word in DEVICE_WORDS and before not in _DETERMINERS and before not in known:
            return NO_SUCH_DEVICE  # ... by a word no entity or area of the home has
    return None


def _elsewhere(home: Home, words: list[str]) -> bool:
    """True when ``words`` name a place ("in Tokyo", "at the office") that is none of the
    home's areas, floors or weather entities."""
    where = {
        w
        for name in (
            *home.areas,
            *home.floors,
            *(e.name for e in home.entities if e.domain == "weather"),
        )
        for w in _words(name)
    }
    places = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("in", "at")]
    here = ("the", "my", "here", "home", "this", "our", "house", "apartment", "flat")
    places = [
        p
        for p in places
        + [
            words[i + 2]
            for i, w in enumerate(words[:-2])
            if w in ("in", "at") and words[i + 1] in ("the", "my", "our")
        ]
        if p not in here
    ]
    return any(p not in where for p in places)


DEVICE_WORDS = frozenset(
    {
        "door",
        "doors",
        "light",
        "lights",
        "lamp",
        "lamps",
        "lock",
        "locks",
        "window",
        "windows",
        "blinds",
        "curtains",
        "fan",
        "tv",
        "switch",
        "thermostat",
        "sensor",
        "garage",
        "heater",
    }
)
_DETERMINERS = frozenset(
    {
        "the",
        "a",
        "an",
        "my",
        "all",
        "any",
        "every",
        "your",
        "our",
        "of",
        "is",
        "are",
        "in",
        "on",
        "off",
        "which",
        "what",
        "whats",
        "how",
        "many",
        "some",
        "both",
        "these",
        "those",
        "other",
        "no",
    }
)


def fact_matches(update: dict) -> list:
    """The matches of a :func:`fact_update` (one stand-in for an answer from the clock)."""
    if update.get("matches"):
        return list(update["matches"])
    return [SimpleNamespace(intent=update.get("intent"), entities=(), slots={})]
