"""Delayed commands in the grammar: "turn off the lights in 1 hour", "in 10 minutes turn on
the kitchen light" (issue 7 items 2 and 8).

The rules read them with home-assistant-intents' ``HassStartTimer`` sentences
``{conversation_command} (in|after) {N} hour[s]`` (and minutes, seconds, before or after the
command), then match the command itself (:meth:`hub.intents.rules.Rules.recognize`). The
grammar gets them without multiplying its size: each command of :data:`DELAYABLE` may end
in an arc to one shared delay tail ("in"/"after", a number, a unit), and one shared delay
head leads into a copy of those commands (:func:`hub.asr.vocab._fsg_text`). Which commands
get a delay is checked through the rules like every other sentence
(:func:`hub.asr.coverage.understood`): each command pattern is probed with one of the delay
phrasings (:func:`probes`, taken in turn), and keeps the delay only when the rules read it
as a delayed command whose command is the pattern's intent.
"""

from __future__ import annotations

from hub.asr.templates import Pattern

DELAYABLE = frozenset({"HassTurnOn", "HassTurnOff"})
"""Commands the grammar lets a delay go with (the others: a timer inside a timer, a volume
step... are not what people delay, and each delayable pattern costs one more rules check)."""

CONNECTORS = ("in", "after")
"""Words before the delay's number (home-assistant-intents' ``(in|after)``)."""

UNITS = ("second", "seconds", "minute", "minutes", "hour", "hours")
"""Delay units (its ``second[s]``, ``minute[s]``, ``hour[s]``)."""

NUMBER = "range:1:100:1"
"""Placeholder spec of the delay's number (the timers' 1-100)."""

PREFIX = "_delayed:"
"""Intent prefix of a delay probe: ``_delayed:<intent of the command>``."""


def probes(patterns: list[Pattern]) -> dict[Pattern, Pattern]:
    """A delayed form of each :data:`DELAYABLE` pattern (probe -> command pattern), the
    phrasings taken in turn: suffix and prefix, each connector and unit."""
    forms = [
        (prefix, word, unit) for unit in UNITS for word in CONNECTORS for prefix in (False, True)
    ]
    out = {}
    for i, pattern in enumerate(p for p in patterns if p.intent in DELAYABLE):
        prefix, word, unit = forms[i % len(forms)]
        delay = (word, "{" + NUMBER + "}", unit)
        tokens = delay + pattern.tokens if prefix else pattern.tokens + delay
        out[Pattern(PREFIX + pattern.intent, tokens)] = pattern
    return out


def takes(rules, intent: str, text: str) -> bool:
    """True when the rules read ``text`` as a delayed command (``HassStartTimer`` with a
    ``conversation_command``) whose command is ``intent`` (``_delayed:<intent>``)."""
    match = rules.recognize(text)
    if match is None or match.intent != "HassStartTimer":
        return False
    command = match.slots.get("conversation_command")
    inner = rules.recognize(str(command)) if command else None
    return inner is not None and inner.intent == intent.removeprefix(PREFIX)
