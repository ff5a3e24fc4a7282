"""What a question asks for, from its words: an English keyword grammar (no model).

Part of :mod:`hub.facts` (facts only from their source: the clock, the weather entity and
``[home]``). :func:`topic` names the fact a question asks for (``time``, ``date``, ``weekday``,
``month``, ``year``, ``weather``, ``forecast``, ``outdoor_temperature``,
``indoor_temperature``, ``humidity``), :func:`named_entity` the device it names and
:func:`foreign_words` the words no question about a current fact is made of. Topics are found
from words, so the same question always gets the same routing.
"""

from __future__ import annotations

import re

# Word tables stay as written (filled lines, not one word a line).
# fmt: off
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
# fmt: on


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` ("what's" read as "what is")."""
    return re.findall(r"[a-z0-9']+", text.lower().replace("what's", "what is"))


def topic(text: str) -> str | None:
    """What fact ``text`` asks for (see :class:`hub.facts.answers.Fact` ``topic``), or None for
    none of them."""
    said_words = words(text)
    said, joined = set(said_words), " ".join(said_words)
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
    if (
        "weekday" in said
        or "day of the week" in joined
        or re.search(
            r"\b(what|which) day\b(?! (is|was|does|did|will) (the|my|it) \w+ (on|at))", joined
        )
        and "date" not in said
    ):
        return "weekday"
    if "date" in said or "today's" in said or re.search(r"\bwhat is today\b", joined):
        return "date"
    if re.search(
        r"\b(what|the) time\b|\bhow late\b|\bwhat hour\b|\bo'clock\b|\bcurrent time\b|"
        r"\btime is it\b|\btime now\b",
        joined,
    ):
        return "time"
    return None


# fmt: off
TYPE_WORDS = {
    "light": {"light", "lights", "lamp", "lamps"}, "lock": {"lock", "door", "locked"},
    "cover": {"door", "window", "windows", "blind", "blinds", "garage", "gate", "shade",
              "shades", "curtain", "curtains", "shutter", "shutters"},
    "media_player": {"tv", "television", "speaker", "player", "music"},
    "climate": {"thermostat", "heater", "heating", "ac"}, "sensor": {"sensor"},
    "switch": {"switch", "plug", "outlet"}, "fan": {"fan"}, "valve": {"valve"},
}
# fmt: on
"""Words that name a kind of device, by the domain they fit."""
_ALL_TYPES = frozenset().union(*TYPE_WORDS.values())


def named_entity(home, text: str):
    """The home entity ``text`` names, or None.

    Every distinctive word of its name is said, and every kind-of-device word said
    ("window", "lamp") fits it (its name or its domain): "is the kitchen window open" does
    not name the Kitchen Light.
    """
    said = set(words(text))
    kinds = said & _ALL_TYPES
    best, best_hits = None, 0
    for entity in home.entities:
        name = set(words(entity.name))
        distinctive = name - _GENERIC
        hits = len(distinctive & said)
        fits = kinds <= name | TYPE_WORDS.get(entity.domain, set())
        if distinctive and hits == len(distinctive) and fits and hits > best_hits:
            best, best_hits = entity, hits
    return best


# fmt: off
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
# fmt: on
"""Words a question about the current time, date, weather or temperature is made of (with the
topic words: :data:`WEATHER_WORDS`, :data:`TEMPERATURE_WORDS`, :data:`FUTURE_WORDS`, ...)."""
_KNOWN = (
    FACT_WORDS
    | WEATHER_WORDS
    | TEMPERATURE_WORDS
    | FUTURE_WORDS
    | OUTSIDE_WORDS
    | STATE_WORDS
    | {"humid", "humidity", "weekend"}
    | set(WEEKDAYS)
    | set(MONTHS)
) - {"sun"}
"""("sun" is a weather word, but "the temperature of the sun" is not about the weather.)"""


def foreign_words(text: str, home) -> set[str]:
    """Words of ``text`` that a question about a current fact is not made of.

    Neither fact words (:data:`FACT_WORDS` and the topic words) nor words of the home's entity,
    area and floor names. A question with such words asks about something else: "what year did
    the titanic sink", "what date is easter", "how hot is the coffee", "the weather on mars".
    Numbers count as known ("in 5 minutes" is judged by the time-shift check).
    """
    places = (*home.areas, *getattr(home, "floors", ()))
    names = {w for e in home.entities for w in words(e.name)} | {
        w for p in places for w in words(p)
    }
    return {w for w in words(text) if w not in _KNOWN and w not in names and not w.isdigit()}
