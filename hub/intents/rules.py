"""Rules: hassil templates from home-assistant-intents (English), matched against the home.

Intent and slot names are Home Assistant's (``HassTurnOn``; ``name``, ``area``, ``domain``,
``brightness``, ``color``, ``hours``/``minutes``/``seconds``, ``item``, ...). Entity and area
values are canonical names as configured in ``[home]``; numbers are ints where integral;
timer intents also carry ``duration_s`` (seconds, ``5 and a half minutes`` -> 330).

The sentences (Home Assistant's, ours, the user's) are loaded once by :class:`Rules`
(:mod:`hub.intents.sentences`).

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
- An exclusion ("all the lights except the kitchen", "every light but ...") is not parsed by
  the rules: such a sentence yields no match (None), never the plain all-lights rule.
- A bare "off" matches nothing (None): no action.
- Media, climate and weather intents treat the room's area as a preference, not a filter
  (Home Assistant's ``preferred_area_id``): "next" in the living room skips on the living
  room's media players when it has any, else on the others. A spoken area is a filter.
- A name wins over the room's area: "pause the TV" in the kitchen pauses the TV wherever it
  is.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import re
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from hub.errors import ConfigError
from hub.intents import catalog
from hub.intents.sentences import CUSTOM, load_sentences
from hub.home import Home, TargetMatch
from hub.settings import IntentSettings

SUPPORTED_INTENTS = catalog.names()
"""Intents the actor handles (the catalog's; the others in home-assistant-intents are not loaded)."""

# Domains an intent may act on, for intents with an entity target; empty: any domain.
INTENT_DOMAINS = {s.name: s.domains for s in catalog.intents()
                  if s.domains or ("name" in s.slots and not s.timer)}
# Intents where the satellite's area is only a preference (Home Assistant's media handlers).
PREFERENCE_INTENTS = catalog.preference_intents()
TIMER_INTENTS = catalog.timer_intents()
_ALL_RESPONSES = frozenset({"light_all", "fan_all"})
_EXCLUSION = re.compile(r"\b(except|but|excluding|apart from|other than|besides|save for)\b",
                        re.IGNORECASE)
MEMO = 256
"""How many ``(text, area)`` answers :meth:`Rules.recognize` keeps (least recently used go)."""
# Attributes never asked about by name (HassGetState's ``attribute`` slot list skips them).
_HIDDEN_ATTRIBUTES = frozenset({"unit_of_measurement", "device_class", "friendly_name"})


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


class Rules:
    """hassil recognizer over the home's names; loads every sentence source once.

    Args:
        home: the home (names, areas, floors, satellite area).
        settings: ``[intents]`` settings (``custom_sentences``).

    Raises:
        ConfigError: a custom sentence file is missing or not valid hassil YAML.
    """

    def __init__(self, home: Home, settings: IntentSettings) -> None:
        start = time.perf_counter()
        self.home = home
        self._settings = settings
        data = load_sentences(home, settings.custom_sentences)
        self._intents = _parsed(data)
        self._lists = _slot_lists(home)
        self._memo: collections.OrderedDict = collections.OrderedDict()
        self._memo_lock = threading.Lock()
        self._fuzzy = None
        if settings.fuzzy:  # loaded now, at start, so no turn waits for it (about 0.5 s)
            from hub.intents.fuzzy import Fuzzy

            self._fuzzy = Fuzzy(home, background=False)
            self._fuzzy.load()
        self.load_s = time.perf_counter() - start
        """Seconds spent loading and parsing the sentences."""

    def recognize(self, text: str, area: str | None = None) -> IntentMatch | None:
        """The best match for ``text`` (a transcript), or None when no sentence matches.

        ``area``: the area of the satellite that heard it (the conversation's), which
        sentences without an area ("turn on the lights", "pause") refer to; None: the home's
        ``satellite_area``; "": no area known. The last :data:`MEMO` answers are kept (a
        command said again is not matched again: hassil takes tens of ms); each call gets its
        own copy.
        """
        area = self.home.satellite_area if area is None else area
        with self._memo_lock:
            known = self._memo.get((text, area), self._memo)
            if known is not self._memo:
                self._memo.move_to_end((text, area))
        if known is self._memo:
            known = self._recognize(text, area)
            with self._memo_lock:
                self._memo[(text, area)] = known
                while len(self._memo) > MEMO:
                    self._memo.popitem(last=False)
        return None if known is None else dataclasses.replace(known, slots=copy.deepcopy(
            known.slots))

    def _recognize(self, text: str, area: str, loose: bool = False) -> IntentMatch | None:
        from hassil.recognize import recognize_ranked

        from hub.intents.delay import delayed_match, is_delayed

        context = {"area": {"value": area or "", "text": ""}}
        results = recognize_ranked(text, self._intents, slot_lists=self._lists,
                                   intent_context=context,
                                   best_metadata_key=CUSTOM, best_slot_name="name")
        for result in results:
            if not _is_custom(result) and _has_exclusion(text, result):
                continue
            match = self._to_match(text, result)
            if is_delayed(match):  # its command must itself be one the rules know
                match = delayed_match(self, match, area, loose)
            elif loose:
                continue  # the loose pass looks for delayed commands only
            if match is not None:
                return match
        return None

    def recognize_delayed(self, text: str, area: str | None = None) -> IntentMatch | None:
        """A delayed command whose own command only the fuzzy matcher reads ("in 10 minutes
        turn of the kitchen lite"); None otherwise (see :mod:`hub.intents.delay`)."""
        from hub.intents.delay import DELAY_WORDS

        if not self.fuzzy_enabled or not DELAY_WORDS.search(text):
            return None
        return self._recognize(text, self.home.satellite_area if area is None else area, True)

    @property
    def fuzzy_enabled(self) -> bool:
        """``[intents] fuzzy``: the fuzzy matcher runs after strict matching."""
        return bool(self._settings.fuzzy)

    def rank(self, alternatives: Sequence[str],
             area: str | None = None) -> tuple[str, IntentMatch | None]:
        """The first alternative (n-best transcript) that matches, with its match.

        Returns ``(alternatives[0] or "", None)`` when none matches.
        """
        for text in alternatives:
            match = self.recognize(text, area) if text and text.strip() else None
            if match is not None:
                return text, match
        return (alternatives[0] if alternatives else "") or "", None

    def recognize_fuzzy(self, text: str, area: str | None = None) -> IntentMatch | None:
        """A relaxed match (fallback level 2): ``text`` with one word left out, the first of
        those that matches, trying from the start (recognizers add a stray word, such as a
        click heard as "pause", far more often than they drop one). None when nothing does.
        """
        words = text.split()
        if len(words) < 3:
            return None
        for i in range(len(words)):
            match = self.recognize(" ".join(words[:i] + words[i + 1:]), area)
            if match is not None:
                return match
        return None

    @property
    def fuzzy(self):
        """The fuzzy matcher (:class:`hub.intents.fuzzy.Fuzzy`) of this home, made on first use."""
        if self._fuzzy is None:
            from hub.intents.fuzzy import Fuzzy

            self._fuzzy = Fuzzy(self.home)
        return self._fuzzy

    def recognize_more(self, text: str, area: str | None = None) -> list[IntentMatch]:
        """When :meth:`recognize` found nothing: several commands in ``text`` (each a strict
        match), else the fuzzy matcher's reading (when ``[intents] fuzzy``); [] when neither
        (see :mod:`hub.intents.multi`).
        """
        from hub.intents.multi import more_matches

        return more_matches(self, text, area, fuzzy=self._settings.fuzzy)

    def intent_names(self) -> tuple[str, ...]:
        """The handled intents this home can use (sorted), e.g. for the LLM whitelist."""
        return tuple(sorted(n for n in self._intents.intents if n in SUPPORTED_INTENTS))

    def _to_match(self, text: str, result) -> IntentMatch:
        """Turn a hassil result into an :class:`IntentMatch` with resolved entities."""
        name = result.intent.name
        slots, context = _slots(result.entities_list, name)
        response = result.response or ""
        targets = resolve_targets(self.home, name, slots, response, context)
        return IntentMatch(intent=name, slots=slots, text=text, entities=targets.entities,
                           response=response, context_slots=context)


def resolve_targets(home: Home, intent: str, slots: dict, response: str = "",
                    context_slots: Collection[str] = ()) -> TargetMatch:
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
        return home.match_targets(name, area, floor, domains, device_class)
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


def _plain(value):
    """A JSON-able slot value: integral floats become ints, text is stripped."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return value.strip()
    return value


def _slots(entities, intent: str) -> tuple[dict, tuple[str, ...]]:
    """Slots from hassil entities (``duration_s`` added) and the names of those that came from
    the conversation's context (an ``area`` with no spoken text; an empty one is left out)."""
    slots: dict = {}
    context: list[str] = []
    for entity in entities:
        if entity.name == "area" and not entity.text.strip():  # from the conversation's area
            if not entity.value:
                continue
            context.append("area")
        slots[entity.name] = _plain(entity.value)
    if slots.get("media_class") and isinstance(slots.get("search_query"), str):
        # "play the Queen album": "the" belongs to the media class, not to the title
        slots["search_query"] = re.sub(r"^the\s+", "", slots["search_query"], flags=re.I)
    if intent in TIMER_INTENTS and any(k in slots for k in ("hours", "minutes", "seconds")):
        slots["duration_s"] = duration_s(slots)
    return slots, tuple(context)


def duration_s(slots: dict, prefix: str = "") -> int:
    """Seconds in ``hours``/``minutes``/``seconds`` slots (or ``start_hours``... with prefix)."""
    total = 0.0
    for key, scale in (("hours", 3600), ("minutes", 60), ("seconds", 1)):
        value = slots.get(prefix + key)
        if value not in (None, ""):
            total += float(value) * scale
    return int(round(total))


def _is_custom(result) -> bool:
    """True when the match came from the user's own sentences."""
    return bool(result.intent_metadata and result.intent_metadata.get(CUSTOM))


def _has_exclusion(text: str, result) -> bool:
    """True when ``text`` has an exclusion word outside wildcard slots (list items)."""
    rest = text
    for entity in result.entities_list:
        if entity.is_wildcard and entity.text:
            rest = rest.replace(entity.text.strip(), " ")
    return bool(_EXCLUSION.search(rest))


def _name_context(entity) -> dict:
    """The context a name carries into the match: its ``domain`` and, when it has one, its
    ``device_class`` (as Home Assistant's default agent gives, so "is the phone battery low"
    reaches the binary sensor's battery sentences)."""
    context = {"domain": entity.domain}
    if entity.device_class:
        context["device_class"] = entity.device_class
    return context


def _slot_lists(home: Home) -> dict:
    """hassil slot lists ``name`` (with domain and device class context), ``attribute`` (the home's attribute
    names, spoken with spaces), ``area`` and ``floor``."""
    from hassil.expression import TextChunk
    from hassil.intents import TextSlotList, TextSlotValue

    names = TextSlotList(name="name", values=[
        TextSlotValue(TextChunk(e.name), e.name, _name_context(e)) for e in home.entities])
    attributes = sorted({k for e in home.entities for k in e.attributes} - _HIDDEN_ATTRIBUTES)
    return {
        "name": names,
        "attribute": TextSlotList(name="attribute", values=[
            TextSlotValue(TextChunk(k.replace("_", " ")), k) for k in attributes]),
        "area": TextSlotList.from_strings(home.areas, allow_template=False, name="area"),
        "floor": TextSlotList.from_strings(home.floors, allow_template=False, name="floor"),
    }


def _parsed(data: dict):
    """hassil ``Intents`` of ``data`` with every template parsed (now, not per turn), from
    the artefact cache when the same data was parsed before (:mod:`hub.intents.artefacts`).

    Raises:
        ConfigError: a template does not parse.
    """
    from hassil import Intents

    from hub.intents.artefacts import cached, key_of

    def parse():
        try:
            intents = Intents.from_dict(data)
            for intent in intents.intents.values():
                for block in intent.data:
                    _ = block.sentences
        except Exception as exc:  # hassil raises plain exceptions on template syntax
            raise ConfigError(f"intents.custom_sentences: {exc}", node="rules") from None
        return intents

    return cached("hassil", key_of("hassil", data, ("hassil",)), parse)
