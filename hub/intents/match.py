"""What a match is and what it acts on: :class:`IntentMatch`, the target resolution
(:func:`resolve_targets`), durations, and the fuzzy matcher's readings as matches.

The lowest module of :mod:`hub.intents`: the rules (:mod:`hub.intents.rules`), delayed commands
(:mod:`hub.intents.delay`) and several commands in one sentence (:mod:`hub.intents.multi`) all
build on it; it imports none of them.

Area rules (BC-22; Home Assistant's semantics, reduced):
- The area a command applies to is the spoken area, else the conversation's area (the
  satellite's room; ``HomeSettings.satellite_area`` by default), passed to hassil as intent
  context like Home Assistant's default agent does: sentences that take the area from the
  context (``requires_context: area: slot: true``) get it as their ``area`` slot, as in Home
  Assistant ("pause" in the living room has ``area = "Living Room"``).
  :attr:`IntentMatch.context_slots` names the slots filled that way, so handlers can tell a
  spoken area from the room's.
- "turn off the lights" (no area spoken) means the conversation's area. With no area known
  the match keeps no ``area`` slot and the actor asks which area (:func:`resolve_targets`
  returns ``need_area``); nothing is switched.
- "turn off all the lights" / "... everywhere" (response ``light_all``) means every area.
- Media, climate and weather intents treat the room's area as a preference, not a filter
  (Home Assistant's ``preferred_area_id``): "next" in the living room skips on the living
  room's media players when it has any, else on the others. A spoken area is a filter.
- A name wins over the room's area: "pause the TV" in the kitchen pauses the TV wherever it
  is. Among entities sharing the name ("Ceiling Light" in the Kitchen and in the Office) the
  spoken area, else the room's, picks one; otherwise the actor asks "Which area do you mean?"
  (``need_area``), as Home Assistant does (BC-50).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from hub.home import Home, TargetMatch
from hub.intents import catalog

# Domains an intent may act on, for intents with an entity target; empty: any domain.
INTENT_DOMAINS = {
    s.name: s.domains for s in catalog.intents() if s.domains or ("name" in s.slots and not s.timer)
}
# Intents where the satellite's area is only a preference (Home Assistant's media handlers).
PREFERENCE_INTENTS = catalog.preference_intents()
TIMER_INTENTS = catalog.timer_intents()
_ALL_RESPONSES = frozenset({"light_all", "fan_all"})


@dataclass(frozen=True)
class IntentMatch:
    """One recognized intent.

    ``slots`` is JSON-able with Home Assistant slot names; ``entities`` are the resolved target
    entity names (canonical); ``response`` is Home Assistant's response key the sentence chose
    (``lights_area``, ``light_all``, ``one_yesno``, ...; "" when unknown, e.g. from the LLM).
    ``context_slots`` names the slots whose value came from the conversation, not from the
    words (``("area",)`` for "pause" said in a room); () when everything was said.
    ``command`` is a delayed command's own match ("turn off the lights" of "turn off the
    lights in 1 hour"), None otherwise.
    """

    intent: str
    slots: dict
    text: str
    source: str = "rules"
    entities: tuple[str, ...] = ()
    response: str = ""
    context_slots: tuple[str, ...] = ()
    command: IntentMatch | None = None


ASKED_ATTRIBUTES = {
    "bright": "brightness",
    "brightness": "brightness",
    "color": "color",
    "colour": "color",
    "volume": "volume",
    "loud": "volume",
    "loudness": "volume",
    "battery": "battery_level",
}
"""Words that ask about an attribute, not the state -> the attribute (HassGetState's
``attribute`` slot): "how bright is the front door" is not "how is the front door"."""


def with_asked_attribute(match: IntentMatch, said: str) -> IntentMatch:
    """``match`` with the ``attribute`` slot ``said`` asks about (:data:`ASKED_ATTRIBUTES`)
    when it is a HassGetState reading without one, as loose readings (fuzzy, relaxed, LLM)
    give it; else ``match`` itself. Its handler then answers that attribute, or that the
    device has none, never the state in its place."""
    if match.intent != "HassGetState" or match.slots.get("attribute"):
        return match
    asked = [
        ASKED_ATTRIBUTES[w] for w in re.findall(r"[a-z]+", said.lower()) if w in ASKED_ATTRIBUTES
    ]
    return replace(match, slots={**match.slots, "attribute": asked[0]}) if asked else match


def resolve_targets(
    home: Home, intent: str, slots: dict, response: str = "", context_slots: Collection[str] = ()
) -> TargetMatch:
    """The entities an intent with these slots acts on (see the module's area rules).

    ``context_slots``: the slots that came from the conversation, not from the words
    (:attr:`IntentMatch.context_slots`); an ``area`` among them is the room's area: a
    preference for :data:`PREFERENCE_INTENTS`, ignored next to a name, else a filter.
    A group command (a domain or device class, no name) without an area acts on the whole home
    only with response ``light_all``/``fan_all`` (the sentence said "all"/"everywhere");
    otherwise on the satellite's area, and with no satellite area it fails with ``need_area``
    (the actor asks "Which area do you mean?"). Nothing named at all: ``no_target``.
    """
    if intent not in INTENT_DOMAINS:
        return TargetMatch()
    domains = (slots["domain"],) if slots.get("domain") else INTENT_DOMAINS[intent]
    if intent == "HassGetState" and not slots.get("name") and not slots.get("domain"):
        return TargetMatch(error="no_target")
    name, area, floor = slots.get("name"), slots.get("area"), slots.get("floor")
    device_class = slots.get("device_class")
    room = area if "area" in context_slots else None  # the conversation's area, not said
    if room:
        area = None if name or intent in PREFERENCE_INTENTS else room
    if intent in PREFERENCE_INTENTS and not (name or area or floor):
        return _preferred(home, domains, room or home.satellite_area)
    if intent == "HassGetState" or name or area or floor or response in _ALL_RESPONSES:
        prefer = (room or home.satellite_area) if name else None  # same-named: the room's one
        return home.match_targets(name, area, floor, domains, device_class, prefer)
    if not (slots.get("domain") or device_class):
        return TargetMatch(error="no_target")
    if home.satellite_area:  # "the lights" from a match that lacks the context area (LLM)
        return home.match_targets(None, home.satellite_area, None, domains, device_class)
    return TargetMatch(error="need_area", error_args={"domain": domains[0]})


def _preferred(home: Home, domains, area: str | None) -> TargetMatch:
    """All entities of ``domains``, narrowed to ``area`` (the room's) when it has some."""
    every = home.match_targets(domains=domains)
    if area and every.ok:
        here = home.match_targets(area=area, domains=domains)
        if here.ok:
            return here
    return every


def duration_s(slots: dict, prefix: str = "") -> int:
    """Seconds in ``hours``/``minutes``/``seconds`` slots (or ``start_hours``... with prefix)."""
    total = 0.0
    for key, scale in (("hours", 3600), ("minutes", 60), ("seconds", 1)):
        value = slots.get(prefix + key)
        if value not in (None, ""):
            total += float(value) * scale
    return int(round(total))


def with_duration(intent: str, slots: dict) -> dict:
    """``slots`` with ``duration_s`` added for a timer intent that has ``hours``/``minutes``/
    ``seconds`` (a new dict then; else ``slots`` itself)."""
    if intent in TIMER_INTENTS and any(k in slots for k in ("hours", "minutes", "seconds")):
        return {**slots, "duration_s": duration_s(slots)}
    return slots


def fuzzy_readings(fuzzy, home: Home, text: str, area: str | None) -> list[IntentMatch]:
    """The fuzzy matcher's commands for ``text`` as IntentMatches (``source="fuzzy"``), in
    order; [] when it reads none, and [] when any targeted command resolves to no entity of the
    home (a loose reading that reaches nothing is not trusted). Delayed commands come back as
    read: :func:`hub.intents.multi.fuzzy_matches` checks them.

    Args:
        fuzzy: a :class:`hub.intents.fuzzy.Fuzzy` (``frames(text, area)`` -> ``[(intent,
            slots, response key)]`` or None).
        home: the home the targets are resolved in.
        area: the conversation's area.
    """
    matches = []
    for intent, slots, key in fuzzy.frames(text, area) or []:
        slots = with_duration(intent, slots)
        targets = resolve_targets(home, intent, slots, key)
        if intent in INTENT_DOMAINS and not targets.ok:
            return []
        match = IntentMatch(
            intent=intent,
            slots=slots,
            text=text,
            source="fuzzy",
            entities=targets.entities,
            response=key,
        )
        matches.append(with_asked_attribute(match, text))
    return matches
