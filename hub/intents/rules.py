"""Rules: hassil templates from home-assistant-intents (English), matched against the home.

Intent and slot names are Home Assistant's (``HassTurnOn``; ``name``, ``area``, ``domain``,
``brightness``, ``color``, ``hours``/``minutes``/``seconds``, ``item``, ...). Entity and area
values are canonical names as configured in ``[home]``; numbers are ints where integral;
timer intents also carry ``duration_s`` (seconds, ``5 and a half minutes`` -> 330).

The sentences (Home Assistant's, ours, the user's) are loaded once by :class:`Rules`
(:mod:`hub.intents.sentences`).

The area rules are :mod:`hub.intents.match`'s (:func:`resolve_targets`). Two more:
- An exclusion ("all the lights except the kitchen", "every light but ...") is not parsed by
  the rules: such a sentence yields no match (None), never the plain all-lights rule.
- A bare "off" matches nothing (None): no action.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence

from hassil import Intents
from hassil.expression import TextChunk
from hassil.intents import TextSlotList, TextSlotValue
from hassil.recognize import recognize_ranked

from hub.errors import ConfigError
from hub.home import Home
from hub.intents import catalog
from hub.intents.artefacts import cached, key_of
from hub.intents.courtesy import without_courtesy
from hub.intents.delay import DELAY_WORDS, delayed_match, is_delayed
from hub.intents.fuzzy import Fuzzy
from hub.intents.match import IntentMatch, resolve_targets, with_asked_attribute, with_duration
from hub.intents.meaning import (
    EXCEPTION,
    MeaningLost,
    ignored_meaning,
    phrases_pattern,
    tolerated,
)
from hub.intents.multi import Missing, more_matches, read_parts, split_reading, swallowed
from hub.intents.sentences import CUSTOM, load_sentences
from hub.settings import IntentSettings

log = logging.getLogger("hub.intents")

SUPPORTED_INTENTS = catalog.names()
"""Intents the actor handles (the catalog's; the others in home-assistant-intents are not
loaded)."""

_EXCLUSION = phrases_pattern(EXCEPTION)
MEMO = 256
"""How many ``(text, area)`` answers :meth:`Rules.recognize` keeps (least recently used go)."""
# Attributes never asked about by name (HassGetState's ``attribute`` slot list skips them).
_HIDDEN_ATTRIBUTES = frozenset({"unit_of_measurement", "device_class", "friendly_name"})


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
        own copy. A text no sentence matches is tried once more without the courtesy words
        at its start and end ("hey ... please", :mod:`hub.intents.courtesy`).
        """
        area = self.home.satellite_area if area is None else area
        with self._memo_lock:
            known = self._memo.get((text, area), self._memo)
            if known is not self._memo:
                self._memo.move_to_end((text, area))
        if known is self._memo:
            known = self._recognize(text, area)
            if known is None and (core := without_courtesy(text)) is not None:
                known = self._recognize(core, area)  # "hey ... please": the command itself
            with self._memo_lock:
                self._memo[(text, area)] = known
                while len(self._memo) > MEMO:
                    self._memo.popitem(last=False)
        return (
            None if known is None else dataclasses.replace(known, slots=copy.deepcopy(known.slots))
        )

    def _recognize(self, text: str, area: str, loose: bool = False) -> IntentMatch | None:
        context = {"area": {"value": area or "", "text": ""}}
        results = recognize_ranked(
            text,
            self._intents,
            slot_lists=self._lists,
            intent_context=context,
            best_metadata_key=CUSTOM,
            best_slot_name="name",
        )
        for result in results:
            if not _is_custom(result) and _has_exclusion(text, result):
                continue
            match = self._to_match(text, result, area)
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
        if not self.fuzzy_enabled or not DELAY_WORDS.search(text):
            return None
        return self._recognize(text, self.home.satellite_area if area is None else area, True)

    @property
    def fuzzy_enabled(self) -> bool:
        """``[intents] fuzzy``: the fuzzy matcher runs after strict matching."""
        return bool(self._settings.fuzzy)

    def rank(
        self, alternatives: Sequence[str], area: str | None = None
    ) -> tuple[str, IntentMatch | None]:
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
        click heard as "pause", far more often than they drop one). None when nothing does,
        or when the word left out changes the meaning (:meth:`relaxed_reading`).
        """
        found = self.relaxed_reading(text, area)
        return found if isinstance(found, IntentMatch) else None

    def relaxed_reading(
        self, text: str, area: str | None = None
    ) -> IntentMatch | MeaningLost | None:
        """What :meth:`recognize_fuzzy` reads: the first match of ``text`` with one word left
        out where that word is a filler; else a :class:`hub.intents.meaning.MeaningLost` when
        the only matches leave out a word that changes the meaning ("don't", "tomorrow",
        "minus", "if": :data:`hub.intents.meaning.WORD_CLASSES`; "on" with "off" said too, a
        contradiction, for a command; nothing is done then), or
        when none matches and the fuzzy matcher's reading was refused for such a word; else
        None (no match). A HassGetState reading that left out the attribute asked about keeps
        it ("how bright is the front door": :func:`hub.intents.match.with_asked_attribute`).
        """
        words, lost = text.split(), None
        if len(words) < 3:
            return None
        for i in range(len(words)):
            match = self.recognize(" ".join(words[:i] + words[i + 1 :]), area)
            if match is None:
                continue
            loss = ignored_meaning(words, [i], tolerated([match.intent]))
            if loss is None:
                return with_asked_attribute(match, words[i])  # "how bright is the front door"
            if lost is None:  # a reading that leaves out only a filler word may still come
                log.info("relaxed %s of %r leaves out %r", match.intent, text, loss.words)
                lost = dataclasses.replace(loss, intent=match.intent)
        return lost or self.meaning_lost(text, area)  # what the fuzzy matcher refused, and why

    def meaning_lost(self, text: str, area: str | None = None) -> MeaningLost | None:
        """Why the fuzzy matcher's reading of ``text`` was not taken, when that is a word it
        left out that changes the meaning (:meth:`hub.intents.fuzzy.Fuzzy.reading`); None
        otherwise, and when ``[intents] fuzzy`` is off. About 10 ms."""
        if not self.fuzzy_enabled:
            return None
        found = self.fuzzy.reading(text, area)
        return found if isinstance(found, MeaningLost) else None

    @property
    def fuzzy(self):
        """The fuzzy matcher (:class:`hub.intents.fuzzy.Fuzzy`) of this home, made on first use."""
        if self._fuzzy is None:
            self._fuzzy = Fuzzy(self.home)
        return self._fuzzy

    def recognize_more(self, text: str, area: str | None = None) -> list[IntentMatch]:
        """When :meth:`recognize` found nothing: several commands in ``text`` (each a strict
        match), else the fuzzy matcher's reading (when ``[intents] fuzzy``); [] when neither
        (see :mod:`hub.intents.multi`).
        """
        return more_matches(self, text, area, fuzzy=self._settings.fuzzy)

    def several_swallowed(
        self, match: IntentMatch, text: str, area: str | None = None
    ) -> list[IntentMatch] | None:
        """The several commands of ``text`` when ``match``, its whole reading, swallowed them
        into a wildcard slot (:func:`hub.intents.multi.swallowed`); else None."""
        return swallowed(match, text, lambda part: self.recognize(part, area))

    def several_in_doubt(self, text: str, area: str | None = None) -> bool:
        """True when ``text`` is several commands but a part without its own verb has two
        different readings with the previous part's carried over (:func:`hub.intents.multi.
        split_reading`): the sentence is not understood, not guessed."""
        return split_reading(text, lambda part: self.recognize(part, area))[1]

    def recognize_parts(
        self, text: str, area: str | None, miss: Callable[[str], str | None]
    ) -> list[IntentMatch | Missing] | None:
        """``text`` read part by part, a part about what the home lacks as a
        :class:`hub.intents.multi.Missing` (``miss``: its error, or None); None when ``text``
        is not several commands (see :func:`hub.intents.multi.read_parts`)."""
        return read_parts(self, text, area, miss)

    def intent_names(self) -> tuple[str, ...]:
        """The handled intents this home can use (sorted), e.g. for the LLM whitelist."""
        return tuple(sorted(n for n in self._intents.intents if n in SUPPORTED_INTENTS))

    def _to_match(self, text: str, result, area: str = "") -> IntentMatch:
        """Turn a hassil result into an :class:`IntentMatch` with resolved entities.

        ``area``: the conversation's; a name several areas have ("the ceiling light") gets it
        as a context ``area`` slot, which picks the one in the room (BC-50)."""
        name = result.intent.name
        slots, context = _slots(result.entities_list, name)
        response = result.response or ""
        targets = resolve_targets(self.home, name, slots, response, context)
        if targets.error == "need_area" and slots.get("name") and area and "area" not in slots:
            slots, context = {**slots, "area": area}, (*context, "area")
            targets = resolve_targets(self.home, name, slots, response, context)
        return IntentMatch(
            intent=name,
            slots=slots,
            text=text,
            entities=targets.entities,
            response=response,
            context_slots=context,
        )


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
    return with_duration(intent, slots), tuple(context)


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


def name_values(home: Home) -> list[TextSlotValue]:
    """The ``name`` list's values (BC-50): each said name once (``out`` the name itself, so
    same-named entities in two areas stay one value that the area tells apart), and each alias
    with ``out`` its entity's key ("big light" -> "Kitchen Light", as Home Assistant's alias
    values map to the entity's name); an alias that entities of two areas share (one's name,
    another's alias) is one value too, ``out`` the alias itself (:meth:`Home.called` gives
    them all; the area tells them apart)."""
    values, seen = [], set()
    for entity in home.entities:
        for i, said in enumerate(entity.spoken):
            if said.casefold() in seen:
                continue
            seen.add(said.casefold())
            out = (entity.said or entity.name) if i == 0 else entity.name
            if home.shared(said):
                out = said
            values.append(TextSlotValue(TextChunk(said), out, _name_context(entity)))
    return values


def _slot_lists(home: Home) -> dict:
    """hassil slot lists ``name`` (with domain and device class context), ``attribute`` (the
    home's attribute names, spoken with spaces), ``area`` and ``floor``."""
    names = TextSlotList(name="name", values=name_values(home))
    attributes = sorted({k for e in home.entities for k in e.attributes} - _HIDDEN_ATTRIBUTES)
    return {
        "name": names,
        "attribute": TextSlotList(
            name="attribute",
            values=[TextSlotValue(TextChunk(k.replace("_", " ")), k) for k in attributes],
        ),
        "area": TextSlotList(
            name="area",
            values=[
                TextSlotValue(TextChunk(said), area)
                for area in home.areas
                for said in (area, *home.area_aliases.get(area, ()))
            ],
        ),
        "floor": TextSlotList.from_strings(home.floors, allow_template=False, name="floor"),
    }


def _parsed(data: dict):
    """hassil ``Intents`` of ``data`` with every template parsed (now, not per turn), from
    the artefact cache when the same data was parsed before (:mod:`hub.intents.artefacts`).

    Raises:
        ConfigError: a template does not parse.
    """

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
