"""The answers the rules path can give in this home, to be synthesized ahead of time.

:func:`likely_answers` lists, for each entity of the home, the answer its own handler gives
once a turn on / turn off (and, for a light that has the feature, a brightness or color set)
is done, the area-wide light answers, the confirmation question of each sensitive entity, and
the fixed answers of a dialog ("Okay, I won't.", ...). Each text is made by the act handlers
(:data:`hub.act.HANDLERS`) on a scratch copy of the home: the real home is untouched and no
action is sent (an :class:`~hub.act.common.Outcome` only *describes* its actions; the act node
sends them). So the text is exactly what the ``tts`` node is given after such a turn, and its
audio is only ever played after that turn produced it: rendering ahead says nothing early.
"""

from __future__ import annotations

import logging
import time

from hub.act import HANDLERS
from hub.act.common import Context
from hub.act.timers import Timers
from hub.graph.answers import CANCELLED, NOT_CAUGHT, NOTHING_TO_CONFIRM
from hub.graph.confirmation import question, sensitive_targets
from hub.graph.speech import join_sentences
from hub.home import Home
from hub.intents.match import IntentMatch

log = logging.getLogger("hub.graph")

FIXED = (CANCELLED, NOTHING_TO_CONFIRM, NOT_CAUGHT, "Okay.")
"""Fixed answers of a dialog (a no, a stray yes, a miss, never mind); the canned ones
(:data:`hub.graph.answers.CANNED`) are rendered at start-up already."""
CLOCK_INTENTS = ("HassGetCurrentTime", "HassGetCurrentDate")
"""The questions whose answer changes with the clock, so it cannot be rendered once at start:
:func:`clock_answers` gives it for a given minute."""


def _scratch(home: Home) -> Home:
    """A copy of ``home`` (same entities and areas, its current states) to run handlers on."""
    states = {name: row["state"] for name, row in home.snapshot().items()}
    return Home(
        home.entities, home.areas, home.floors, home.area_floors, home.satellite_area, states
    )


def _probes(home: Home) -> list[IntentMatch]:
    """The matches whose done answers are listed: per entity, then per area."""
    out = []
    for entity in home.entities:
        for intent in ("HassTurnOn", "HassTurnOff"):
            out.append(IntentMatch(intent, {"name": entity.name}, "", entities=(entity.name,)))
        if "brightness" in entity.features:
            slots = {"name": entity.name, "brightness": 50}
            out.append(IntentMatch("HassLightSet", slots, "", entities=(entity.name,)))
    for area in home.areas:
        for intent in ("HassTurnOn", "HassTurnOff"):
            slots = {"area": area, "domain": "light"}
            out.append(IntentMatch(intent, slots, "", response="lights_area"))
    return out


def _answer(ctx: Context, match: IntentMatch) -> str:
    """The answer of a done ``match`` ("" when its handler refuses or fails)."""
    handler = HANDLERS.get(match.intent)
    if handler is None:
        return ""
    try:
        outcome = handler(ctx, match)
    except Exception as exc:  # a probe the home cannot take (no such feature, ...)
        log.debug("ahead: %s %s: %s", match.intent, match.slots, exc)
        return ""
    return join_sentences([outcome.response]) if outcome.ok and outcome.actions else ""


def clock_answers(home: Home, at: float, tz=None) -> list[str]:
    """What the rules path answers to :data:`CLOCK_INTENTS` at wall time ``at`` (seconds since
    the epoch) in zone ``tz`` (None: the system's): ``["10:58 PM.", "December 5th, 2026."]``,
    the texts the ``tts`` node is given after such a turn. Never raises (an answer that
    cannot be made is left out)."""
    ctx = Context(home=_scratch(home), timers=Timers(), clock=lambda: at, tz=tz)
    texts = []
    for intent in CLOCK_INTENTS:
        handler = HANDLERS.get(intent)
        try:
            outcome = handler(ctx, IntentMatch(intent, {}, "")) if handler else None
        except Exception as exc:  # a template the home's language lacks, ...
            log.debug("ahead: %s: %s", intent, exc)
            continue
        if outcome is not None and outcome.ok and outcome.response:
            texts.append(join_sentences([outcome.response]))
    return texts


def likely_answers(home: Home) -> list[str]:
    """The texts the rules path says in ``home`` after a done device command, the sensitive
    entities' questions and :data:`FIXED`; each once, the most common first (shapes: a list
    of non-empty str). Never raises for a probe: one that fails is left out."""
    scratch = _scratch(home)
    ctx = Context(home=scratch, timers=Timers(), clock=time.time)
    texts: list[str] = []
    for match in _probes(home):
        if sensitive_targets(scratch, match):
            texts.append(question(scratch, [match]))
        else:
            texts.append(_answer(ctx, match))
    texts += FIXED
    return list(dict.fromkeys(t for t in texts if t))
