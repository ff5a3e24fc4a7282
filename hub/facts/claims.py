"""Does a language model's answer claim a fact? Checked in code, not only in a prompt.

:func:`made_up` checks LLM answer text before it is spoken: a number with a unit, a year, a
weekday or month name, a clock time, a weather word, a device of the home with a state word,
or a fact that changes over time ("currently ...", an office held by a name, a price:
:func:`hub.facts.changing.claims_changing`) makes the sentence a claimed fact; the graph then
says :func:`hub.facts.answers.honest_answer` instead. Part of :mod:`hub.facts`.
"""

from __future__ import annotations

import re

from hub.facts.changing import claims_changing
from hub.facts.topics import MONTHS, STATE_WORDS, WEATHER_WORDS, WEEKDAYS, named_entity, words

_UNIT = (
    r"(?:°|degrees?|percent|%|am|pm|a\.m\.|p\.m\.|mph|km/?h|kph|celsius|fahrenheit|"
    r"hours?|minutes?|seconds?|days?|weeks?|months?|years?|inches|mm|cm)"
)
_CLAIMS = [
    re.compile(r"\d+(?:[.,]\d+)?\s*" + _UNIT + r"(?![a-z])", re.I),  # 21 degrees, 5 pm
    re.compile(r"\b(?:1\d|2[01])\d\d\b"),  # a year
    re.compile(r"\b\d{1,2}[:.]\d{2}\b"),  # a clock time
    re.compile(r"\b(?:o'clock|noon|midnight)\b", re.I),
    re.compile(r"\b(?:" + "|".join(WEEKDAYS + MONTHS) + r")s?\b", re.I),
    re.compile(r"\b(?:" + "|".join(sorted(WEATHER_WORDS - {"clear", "sun"})) + r")\b", re.I),
    re.compile(r"\b(?:temperature|degrees|celsius|fahrenheit|hot outside|cold outside)\b", re.I),
    # a time said in words: "half past twelve", "quarter to five", "ten in the morning"
    re.compile(
        r"\b(?:half past|quarter (?:past|to)|(?:\w+) (?:past|to) (?:one|two|three|four|"
        r"five|six|seven|eight|nine|ten|eleven|twelve)|in the (?:morning|afternoon|"
        r"evening))\b",
        re.I,
    ),
    # how it feels outside: "it is freezing", "it's hot right now"
    re.compile(
        r"\b(?:it is|it's|it will be|it was|feels)\s+(?:\w+\s+)?(?:freezing|hot|cold|"
        r"warm|chilly|mild|boiling|scorching|cool)\b",
        re.I,
    ),
    # a device's state without its name: "the door is unlocked", "the lights are now on"
    re.compile(
        r"\b(?:the|your|all)\s+(?:\w+\s+)?(?:lights?|lamps?|doors?|locks?|garage|"
        r"windows?|blinds|curtains|tv|heating|thermostat|fans?|switch(?:es)?)\s+"
        r"(?:is|are|was|were|has been|have been)\s+(?:now\s+|still\s+)?(?:on|off|open|"
        r"opened|closed|shut|locked|unlocked|running|playing)\b",
        re.I,
    ),
    # an action it claims to have done: only the rules act, and they say so themselves
    re.compile(
        r"\b(?:done|i've|i have|i just)\b.{0,40}\b(?:on|off|open|opened|closed|"
        r"locked|unlocked|set|started|turned|switched)\b|\bnow (?:on|off|open|closed|"
        r"locked|unlocked)\b|\bi (?:turned|switched|locked|unlocked|opened|closed|set)\b",
        re.I,
    ),
]


def made_up(answer: str, home=None) -> bool:
    """True when ``answer`` states a time, date, year, weather, measurement, device state or
    a fact that changes over time (:func:`hub.facts.changing.claims_changing`).

    Args:
        answer: text a language model wrote.
        home: when given, naming one of its devices together with a state word counts too.
    """
    if any(p.search(answer) for p in _CLAIMS) or claims_changing(answer):
        return True
    if home is not None:
        said = set(words(answer))
        return named_entity(home, answer) is not None and bool(said & STATE_WORDS)
    return False
