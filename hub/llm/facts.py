"""Facts only from their source: the clock, the weather entity and ``[home]``.

Time, date, weekday, month, year, weather, forecasts, temperatures, humidity and device states
are never spoken from a language model's own words. Two checks in code, not only in a prompt:

1. :func:`route` reads a question the rules did not match and, when it asks for one of those
   facts, answers it from the source: an intent for the handlers (``HassGetCurrentTime``,
   ``HassGetCurrentDate``, ``HassGetWeather``, ``HassClimateGetTemperature``,
   ``HassGetState``), a sentence rendered from the clock ("It's 2026."), or an honest answer
   when the hub cannot know ("I don't have a forecast.", "I don't have a humidity sensor.").
2. :func:`made_up` checks LLM answer text before it is spoken: a number with a unit, a year,
   a weekday or month name, a clock time, a weather word, or a device of the home with a state
   word makes the sentence a claimed fact, and it is replaced by :func:`honest_answer`.

Topics are found from words (an English keyword grammar, no model), so the same question
always gets the same routing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from hub.act.responses import render

UNKNOWN = "Sorry, I don't know that."
"""Said when an LLM answer claimed a fact and the question has no source to answer from."""
NO_FORECAST = "I don't have a forecast."
NO_WEATHER = "I don't have a weather source."
NO_HUMIDITY = "I don't have a humidity sensor."
NO_OUTDOOR_TEMPERATURE = "I don't have an outdoor temperature."
NO_INDOOR_TEMPERATURE = "I don't have a thermostat or temperature sensor."

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
WEATHER_WORDS = frozenset({
    "weather", "rain", "raining", "rainy", "rains", "snow", "snowing", "snowy", "sunny", "sun",
    "cloudy", "clouds", "overcast", "storm", "stormy", "thunder", "thunderstorm", "windy",
    "wind", "fog", "foggy", "drizzle", "hail", "umbrella", "forecast", "sleet", "frost",
    "showers", "clear", "humid", "humidity", "precipitation",
})
FUTURE_WORDS = frozenset({"tomorrow", "tonight", "later", "will", "gonna", "weekend", "next",
                          "forecast", "forecasts", "upcoming", "week", "afternoon", "evening",
                          "morning", "soon", "expected", "expect", "predict", "prediction"})
TEMPERATURE_WORDS = frozenset({"temperature", "degrees", "hot", "cold", "warm", "chilly",
                               "freezing", "celsius", "fahrenheit", "heat", "cool"})
OUTSIDE_WORDS = frozenset({"outside", "outdoor", "outdoors", "out"})
STATE_WORDS = frozenset({"on", "off", "open", "opened", "closed", "shut", "locked", "unlocked",
                         "playing", "paused", "running", "state", "status", "idle", "heating",
                         "lit", "left"})
_GENERIC = frozenset({"the", "a", "an", "light", "lights", "lamp", "door", "doors", "of",
                      "in", "on", "my", "switch", "sensor", "list", "time"})

_UNIT = (r"(?:°|degrees?|percent|%|am|pm|a\.m\.|p\.m\.|mph|km/?h|kph|celsius|fahrenheit|"
         r"hours?|minutes?|seconds?|days?|weeks?|months?|years?|inches|mm|cm)")
_CLAIMS = [
    re.compile(r"\d+(?:[.,]\d+)?\s*" + _UNIT + r"(?![a-z])", re.I),   # 21 degrees, 5 pm
    re.compile(r"\b(?:1\d|2[01])\d\d\b"),                              # a year
    re.compile(r"\b\d{1,2}[:.]\d{2}\b"),                             # a clock time
    re.compile(r"\b(?:o'clock|noon|midnight)\b", re.I),
    re.compile(r"\b(?:" + "|".join(WEEKDAYS + MONTHS) + r")s?\b", re.I),
    re.compile(r"\b(?:" + "|".join(sorted(WEATHER_WORDS - {"clear", "sun"})) + r")\b", re.I),
    re.compile(r"\b(?:temperature|degrees|celsius|fahrenheit|hot outside|cold outside)\b", re.I),
    # a time said in words: "half past twelve", "quarter to five", "ten in the morning"
    re.compile(r"\b(?:half past|quarter (?:past|to)|(?:\w+) (?:past|to) (?:one|two|three|four|"
               r"five|six|seven|eight|nine|ten|eleven|twelve)|in the (?:morning|afternoon|"
               r"evening))\b", re.I),
    # how it feels outside: "it is freezing", "it's hot right now"
    re.compile(r"\b(?:it is|it's|it will be|it was|feels)\s+(?:\w+\s+)?(?:freezing|hot|cold|"
               r"warm|chilly|mild|boiling|scorching|cool)\b", re.I),
    # a device's state without its name: "the door is unlocked", "the lights are now on"
    re.compile(r"\b(?:the|your|all)\s+(?:\w+\s+)?(?:lights?|lamps?|doors?|locks?|garage|"
               r"windows?|blinds|curtains|tv|heating|thermostat|fans?|switch(?:es)?)\s+"
               r"(?:is|are|was|were|has been|have been)\s+(?:now\s+|still\s+)?(?:on|off|open|"
               r"opened|closed|shut|locked|unlocked|running|playing)\b", re.I),
    # an action it claims to have done: only the rules act, and they say so themselves
    re.compile(r"\b(?:done|i've|i have|i just)\b.{0,40}\b(?:on|off|open|opened|closed|"
               r"locked|unlocked|set|started|turned|switched)\b|\bnow (?:on|off|open|closed|"
               r"locked|unlocked)\b|\bi (?:turned|switched|locked|unlocked|opened|closed|set)\b",
               re.I),
]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower().replace("what's", "what is"))


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


def topic(text: str) -> str | None:
    """What fact ``text`` asks for (see :class:`Fact` ``topic``), or None for none of them."""
    words = _words(text)
    said, joined = set(words), " ".join(words)
    if "timer" in said or "timers" in said:
        return None
    if said & {"humid", "humidity"}:
        return "humidity"
    weather = bool(said & (WEATHER_WORDS - {"humid", "humidity"}))
    future = bool(said & FUTURE_WORDS) or "going to" in joined
    if weather and future:
        return "forecast"
    if said & TEMPERATURE_WORDS and not weather:
        return "outdoor_temperature" if said & OUTSIDE_WORDS else "indoor_temperature"
    if weather:
        return "weather"
    return _clock_topic(said, joined)


def _clock_topic(said: set[str], joined: str) -> str | None:
    """``time``/``date``/``weekday``/``month``/``year`` questions, or None."""
    if "year" in said:
        return "year"
    if "month" in said:
        return "month"
    if "weekday" in said or "day of the week" in joined or re.search(
            r"\b(what|which) day\b(?! (is|was|does|did|will) (the|my|it) \w+ (on|at))",
            joined) and "date" not in said:
        return "weekday"
    if "date" in said or "today's" in said or re.search(r"\bwhat is today\b", joined):
        return "date"
    if re.search(r"\b(what|the) time\b|\bhow late\b|\bwhat hour\b|\bo'clock\b|\bcurrent time\b|"
                 r"\btime is it\b|\btime now\b", joined):
        return "time"
    return None


TYPE_WORDS = {
    "light": {"light", "lights", "lamp", "lamps"}, "lock": {"lock", "door", "locked"},
    "cover": {"door", "window", "windows", "blind", "blinds", "garage", "gate", "shade",
              "shades", "curtain", "curtains", "shutter", "shutters"},
    "media_player": {"tv", "television", "speaker", "player", "music"},
    "climate": {"thermostat", "heater", "heating", "ac"}, "sensor": {"sensor"},
    "switch": {"switch", "plug", "outlet"}, "fan": {"fan"}, "valve": {"valve"},
}
"""Words that name a kind of device, by the domain they fit."""
_ALL_TYPES = frozenset().union(*TYPE_WORDS.values())


def _named_entity(home, text: str):
    """The home entity ``text`` names, or None.

    Every distinctive word of its name is said, and every kind-of-device word said
    ("window", "lamp") fits it (its name or its domain): "is the kitchen window open" does
    not name the Kitchen Light.
    """
    said = set(_words(text))
    kinds = said & _ALL_TYPES
    best, best_hits = None, 0
    for entity in home.entities:
        name = set(_words(entity.name))
        distinctive = name - _GENERIC
        hits = len(distinctive & said)
        fits = kinds <= name | TYPE_WORDS.get(entity.domain, set())
        if distinctive and hits == len(distinctive) and fits and hits > best_hits:
            best, best_hits = entity, hits
    return best


def _first(home, domain: str):
    return next((e for e in home.entities if e.domain == domain), None)


def _humidity_sensor(home, text: str):
    """The humidity sensor the question means (outdoor ones for "outside"), or None."""
    found = [e for e in home.entities if e.domain == "sensor" and (
        "humidity" in e.name.lower() or e.attributes.get("device_class") == "humidity")]
    outside = bool(set(_words(text)) & OUTSIDE_WORDS)
    preferred = [e for e in found if ("outdoor" in e.name.lower() or "outside" in
                                      e.name.lower()) == outside]
    return (preferred or ([] if outside else found) or [None])[0]


def _clock_answer(kind: str, now: datetime) -> str:
    """"It's 3:05 PM." / "Today is Tuesday, December 1st, 2026." / "It's 2026." ..."""
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
        return Fact(kind, response=f"{NO_FORECAST} Right now it's "
                                   f"{_condition(home.state(station.name))}.")
    if station is None:
        return Fact(kind, response=NO_WEATHER if kind == "weather" else NO_OUTDOOR_TEMPERATURE)
    if kind == "outdoor_temperature" and home.attributes(station.name).get("temperature") is None:
        return Fact(kind, response=f"{NO_OUTDOOR_TEMPERATURE} Right now it's "
                                   f"{_condition(home.state(station.name))}.")
    return Fact(kind, intent="HassGetWeather", slots={"name": station.name})


def _condition(state: str | None) -> str:
    """A weather entity's state as words: ``partlycloudy`` -> ``partly cloudy``."""
    text = str(state or "unknown").replace("partlycloudy", "partly cloudy")
    return text.replace("-", " ").replace("_", " ")


FACT_WORDS = frozenset({
    # asking and politeness
    "what", "what's", "whats", "which", "how", "is", "are", "it", "it's", "its", "the", "a", "an",
    "of", "in", "at", "on", "for", "to", "be", "like", "me", "us", "you", "your", "i", "we", "do",
    "does", "can", "could", "would", "please", "tell", "say", "give", "know", "check", "find",
    "out", "let", "need", "want", "wondering", "wonder", "any", "some", "again", "exact",
    "exactly", "hey", "hi", "ok", "okay", "so", "um", "uh", "now", "right", "current",
    "currently", "present", "presently", "today", "today's", "todays", "this", "there", "here",
    "inside", "indoors", "indoor", "going", "there's", "by", "much", "many", "level", "reading",
    "real", "quick", "quickly", "just", "still", "yet", "get", "feel", "feels", "look", "looks",
    "and", "or", "if", "whether", "thanks", "thank", "got", "have", "has",
    # the clock
    "time", "hour", "hours", "minute", "minutes", "o'clock", "late", "early", "clock", "date",
    "day", "weekday", "week", "month", "year", "calendar", "number", "am", "pm", "half",
    "quarter", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "fifteen", "twenty", "thirty", "forty", "fifty", "sixty",
    # weather, temperature and humidity
    "sensor", "percent", "percentage", "air", "house", "home", "room", "thermostat", "set",
    "weather", "umbrella", "coat", "jacket",
})
"""Words a question about the current time, date, weather or temperature is made of (with the
topic words: :data:`WEATHER_WORDS`, :data:`TEMPERATURE_WORDS`, :data:`FUTURE_WORDS`, ...)."""
_KNOWN = (FACT_WORDS | WEATHER_WORDS | TEMPERATURE_WORDS | FUTURE_WORDS | OUTSIDE_WORDS
          | STATE_WORDS | {"humid", "humidity", "weekend"} | set(WEEKDAYS) | set(MONTHS)) - {"sun"}
"""("sun" is a weather word, but "the temperature of the sun" is not about the weather.)"""


def foreign_words(text: str, home) -> set[str]:
    """Words of ``text`` that a question about a current fact is not made of.

    Neither fact words (:data:`FACT_WORDS` and the topic words) nor words of the home's entity,
    area and floor names. A question with such words asks about something else: "what year did
    the titanic sink", "what date is easter", "how hot is the coffee", "the weather on mars".
    Numbers count as known ("in 5 minutes" is judged by the time-shift check).
    """
    places = (*home.areas, *getattr(home, "floors", ()))
    names = {w for e in home.entities for w in _words(e.name)} | {w for p in places
                                                                  for w in _words(p)}
    return {w for w in _words(text) if w not in _KNOWN and w not in names and not w.isdigit()}


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
        entity = _named_entity(home, text)
        if entity is not None and _asks_state(text):
            return Fact("state", intent="HassGetState", slots={"name": entity.name})
        return None
    if kind in ("time", "date", "weekday", "month", "year"):
        return Fact(kind, intent="HassGetCurrentTime" if kind == "time" else
                    "HassGetCurrentDate", response=_clock_answer(kind, now))
    if kind in ("weather", "forecast", "outdoor_temperature"):
        return _weather_fact(home, kind)
    named = _named_entity(home, text)
    if kind in ("humidity", "indoor_temperature") and named is not None and set(
            _words(named.name)) <= set(_words(text)) and not _measures(named, kind):
        # "the temperature of the garage door" (its whole name): not the thermostat's
        return Fact(kind, response=f"I don't have a {kind.replace('indoor_', '')} reading "
                                   f"for the {named.name}.")
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
        return entity.domain == "sensor" and ("humidity" in entity.name.lower() or
                                              entity.attributes.get("device_class") == "humidity")
    return entity.domain == "climate" or (entity.domain == "sensor" and (
        entity.attributes.get("device_class") == "temperature"
        or "temperature" in entity.name.lower()))


_QUESTION_START = frozenset({"is", "are", "was", "were", "did", "does", "has", "have", "what",
                             "whats", "which", "how", "status", "state"})
"""First words of a question about a state ("could you open ..." is a request, not one)."""


def _asks_state(text: str) -> bool:
    """True when ``text`` asks about a state ("is the X on", "did I leave X open",
    "tell me if X is closed"), not for a change ("could you open X")."""
    words = _words(text)
    if not words:
        return False
    asking = words[0] in _QUESTION_START or bool(
        re.search(r"\b(tell me|check|know|see) (if|whether)\b", " ".join(words)))
    return asking and bool(set(words) & STATE_WORDS)


def made_up(answer: str, home=None) -> bool:
    """True when ``answer`` states a time, date, year, weather, measurement or device state.

    Args:
        answer: text a language model wrote.
        home: when given, naming one of its devices together with a state word counts too.
    """
    if any(p.search(answer) for p in _CLAIMS):
        return True
    if home is not None:
        said = set(_words(answer))
        return _named_entity(home, answer) is not None and bool(said & STATE_WORDS)
    return False


def honest_answer(question: str, home, now: datetime) -> str:
    """What to say instead of an LLM answer that claimed a fact: the source's, or "I don't know".

    A question whose fact has a source gets the sentence from the clock or the honest line
    (:func:`route`); an intent answer (weather, device state) is left to the rules, so this
    says :data:`UNKNOWN` for those.
    """
    fact = route(question, home, now)
    if fact is not None and fact.response and not foreign_words(question, home):
        return fact.response
    return UNKNOWN
