"""The last checks before an LLM intent may act (after :func:`hub.llm.parse.check_output`).

1. **Mentioned**: each entity or area it targets is mentioned in the transcript — at least
   one distinctive word of the name (``"kitchen"`` for ``Kitchen Light``; generic words like
   "light" or "door" do not count). A paraphrase can imply an entity ("it's too dark in the
   kitchen") but never reach one nobody named. A device intent with no target at all is not
   acted on either (a bare "off" gets a question back, never "all lights").
2. **Not excluded**: a transcript with an exclusion or negation ("except", "but", "other
   than", "don't", "not") is never acted on from the LLM path (case BC-22): the hub asks.
   Nor one with a sign, a condition, or a time its intent takes no slot for ("minus",
   "if", "tomorrow": :mod:`hub.intents.meaning`): "Sorry, I'm not sure what you meant."
   Words inside a text slot the LLM filled (a name, an item) are carried, not excluded.
3. **Values in range**: every slot is one the handlers know and its value is in range
   (brightness and position 0–100, a known color, a timer of at most 24 hours, a short item)
   before any side effect (case BC-15).
4. **Right domain**: an entity its ``name`` slot names is of a domain the intent applies to
   (:func:`hub.intents.catalog.domains_of`): "print the state of the front door" read as
   ``HassListAddItem`` on the Front Door (a lock) is refused before any question back.
5. **On topic**: a fact intent (time, date, weather, temperature) is taken only when the
   transcript is about that fact (:func:`hub.facts.topics.topic`, or one of the topic's own
   words): "what is the capital of france" is never answered with today's date (it goes on
   as a question for the answer path).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass

from hub.facts.topics import topic
from hub.intents import catalog
from hub.intents.delay import delayed_match, is_delayed
from hub.intents.match import IntentMatch, with_asked_attribute
from hub.intents.meaning import unread_meaning

log = logging.getLogger("hub.llm")

GENERIC_WORDS = frozenset(
    {
        "the",
        "a",
        "an",
        "light",
        "lights",
        "lamp",
        "door",
        "doors",
        "of",
        "in",
        "on",
        "my",
        "switch",
        "sensor",
        "list",
    }
)
EXCLUDING = ("negation", "exception")
"""Word classes (:data:`hub.intents.meaning.WORD_CLASSES`) refused as an exclusion."""
UNSAID = ("sign", "condition", "time", "contradiction")
"""Word classes refused as a meaning the LLM's intent does not carry (a contradiction: both
"on" and "off" said, one intent chosen)."""
DEVICE_INTENTS = catalog.device_intents()
COLORS = frozenset(
    {
        "white",
        "black",
        "red",
        "orange",
        "yellow",
        "green",
        "blue",
        "purple",
        "brown",
        "pink",
        "turquoise",
    }
)
_TEXT_SLOTS = frozenset(
    {"name", "area", "domain", "floor", "state", "device_class", "item", "timer_name", "name_list"}
)
_FACT_TOPICS = {
    "HassGetCurrentTime": ({"time"}, {"time", "clock", "hour", "hours", "late", "o'clock"}),
    "HassGetCurrentDate": (
        {"date", "weekday", "month", "year"},
        {"date", "day", "today", "today's", "weekday", "month", "year"},
    ),
    "HassGetWeather": (
        {"weather", "forecast", "outdoor_temperature"},
        {
            "weather",
            "rain",
            "raining",
            "rainy",
            "snow",
            "snowing",
            "sunny",
            "sun",
            "cloudy",
            "windy",
            "wind",
            "storm",
            "foggy",
            "umbrella",
            "forecast",
            "outside",
            "temperature",
            "degrees",
            "hot",
            "cold",
            "warm",
            "chilly",
            "freezing",
        },
    ),
    "HassClimateGetTemperature": (
        {"indoor_temperature", "outdoor_temperature"},
        {
            "temperature",
            "degrees",
            "hot",
            "cold",
            "warm",
            "chilly",
            "freezing",
            "thermostat",
            "heating",
            "celsius",
            "fahrenheit",
        },
    ),
}
"""Fact intent -> (the :func:`hub.facts.topics.topic` topics it answers, words of its topic)."""
UNSURE = "Sorry, I'm not sure what you meant."
"""Said when an LLM intent does not fit what was said (wrong domain, another topic)."""
_RANGES = {
    "brightness": (0, 100),
    "position": (0, 100),
    "volume_level": (0, 100),
    "hours": (0, 24),
    "minutes": (0, 1440),
    "seconds": (0, 86400),
    "duration_s": (1, 86400),
}


@dataclass(frozen=True)
class Refusal:
    """Why an LLM intent is not acted on; ``message`` is what the hub says instead (empty:
    the turn goes on as if the LLM had proposed no intent, so a question is answered)."""

    reason: str
    message: str


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def mentioned(name: str, transcript: str) -> bool:
    """True when a distinctive word of ``name`` occurs in ``transcript`` (case-insensitive)."""
    said = _words(transcript)
    distinctive = _words(name) - GENERIC_WORDS
    return bool(distinctive & said) if distinctive else bool(_words(name) & said)


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def check_slot(key: str, value) -> str | None:
    """None when ``key=value`` is a slot the handlers accept, else a short reason."""
    if key in _RANGES:
        number = _number(value)
        low, high = _RANGES[key]
        if number is None or not low <= number <= high:
            return f"{key} {value!r} is outside {low}-{high}"
        return None
    if key == "conversation_command":  # a delayed command: checked as a command later
        ok = isinstance(value, str) and 0 < len(value.strip()) <= 120
        return None if ok else f"{key} {value!r} is not a short command"
    if key == "color":
        return None if str(value).strip().lower() in COLORS else f"unknown color {value!r}"
    if key in _TEXT_SLOTS:
        ok = isinstance(value, str) and 0 < len(value.strip()) <= 80
        return None if ok else f"{key} {value!r} is not a short name"
    return f"unknown slot {key!r}"


def refuse(result, transcript: str) -> Refusal | None:
    """The reason the LLM ``result`` must not act for ``transcript``, or None when it may."""
    slots = dict(result.slots)
    if unread_meaning(transcript, result.intent, slots, EXCLUDING):
        return Refusal(
            "exclusion", "Sorry, I can't leave things out yet. Please name the devices you mean."
        )
    if unread_meaning(transcript, result.intent, slots, UNSAID):
        return Refusal("meaning_lost", UNSURE)
    for key, value in slots.items():
        problem = check_slot(key, value)
        if problem:
            return Refusal("bad_value", "")
    targets = [slots[k] for k in ("name", "area") if isinstance(slots.get(k), str)]
    if result.intent in DEVICE_INTENTS and not targets:
        return Refusal("no_target", "Which device do you mean?")
    for target in targets:
        if not mentioned(target, transcript):
            return Refusal("not_mentioned", "Sorry, I'm not sure which device you mean.")
    return None


def on_topic(intent: str, transcript: str) -> bool:
    """False when ``intent`` is a fact intent (time, date, weather, temperature) and
    ``transcript`` is not about its fact: neither :func:`hub.facts.topics.topic` finds that
    topic nor does a word of it occur ("what is the capital of france" is not a date
    question). Any other intent: True."""
    if intent not in _FACT_TOPICS:
        return True
    topics, words = _FACT_TOPICS[intent]
    said = set(re.findall(r"[a-z0-9']+", transcript.lower()))
    return topic(transcript) in topics or bool(said & words)


def wrong_domain(intent: str, name, home) -> str | None:
    """The domain of the home entity ``name`` when ``intent`` does not apply to it, else
    None (an intent without domains may read any entity; an unknown name is not judged
    here).

    Args:
        intent: a catalog intent name.
        name: the ``name`` slot (a canonical entity name), or None.
        home: the :class:`hub.home.Home`.
    """
    domains = catalog.domains_of(intent)
    if not domains or not isinstance(name, str):
        return None
    for entity in home.entities:
        if entity.name == name and entity.domain not in domains:
            return entity.domain
    return None


def _fit(result, transcript: str, home) -> Refusal | None:
    """A Refusal when ``result`` does not fit ``transcript`` or its target, else None."""
    domain = wrong_domain(result.intent, result.slots.get("name"), home)
    if domain is not None:
        return Refusal("wrong_domain", UNSURE)
    if not on_topic(result.intent, transcript):
        return Refusal("off_topic", "")
    return None


def delayed(match, transcript: str, rules, area: str | None):
    """``match`` unchanged unless it is a delayed command; then the checked delayed command
    (:func:`hub.intents.delay.delayed_match`, its command read by the rules) or a Refusal when
    the rules do not understand its command or it targets something nobody named.

    Args:
        match: what :func:`to_match` gave (an IntentMatch or a Refusal).
        transcript: what the person said.
        rules: the home's :class:`hub.intents.rules.Rules`.
        area: the conversation's area (the command runs there unless one was said).
    """
    if isinstance(match, Refusal) or not is_delayed(match):
        return match
    checked = delayed_match(rules, match, area, loose=True)
    if checked is None:
        return Refusal("bad_command", "Sorry, I don't know what to do then.")
    inner = checked.command or checked  # the LLM wrote its text: what it names must be said
    for key in ("name", "area", "floor"):
        value = inner.slots.get(key)
        if (
            isinstance(value, str)
            and key not in inner.context_slots
            and not mentioned(value, transcript)
        ):
            return Refusal("not_mentioned", "Sorry, I'm not sure which device you mean.")
    return checked


def to_match(result, transcript: str, home):
    """An :class:`hub.intents.match.IntentMatch` for the LLM ``result``, or a :class:`Refusal`.

    Args:
        result: a :class:`hub.llm.parse.LlmIntent` (slots ``name``/``area`` canonical).
        transcript: what the person said.
        home: the :class:`hub.home.Home`.
    """
    refusal = refuse(result, transcript) or _fit(result, transcript, home)
    if refusal is not None:
        log.info(
            "llm intent %s %s not acted on (%s): %r",
            result.intent,
            result.slots,
            refusal.reason,
            transcript,
        )
        return refusal
    slots = dict(result.slots)
    name = slots.get("name")
    entities = (name,) if isinstance(name, str) else ()
    match = IntentMatch(
        intent=result.intent, slots=slots, text=transcript, source="llm", entities=entities
    )
    return with_asked_attribute(match, transcript)  # "how bright is ...": not its state
