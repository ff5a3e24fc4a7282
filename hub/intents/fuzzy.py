"""Fuzzy matching after strict matching: Home Assistant's ``gazetteer-matcher``.

Runs when strict hassil matching found nothing and before the LLM. The matcher reads the
sentence as actions and home names (entities, areas, floors) with typo-tolerant lookup, and
rejects what it cannot read with confidence: an ambiguous reading, unexplained content words,
or no action. We reject more on top, never guessing:

- any frame whose intent is not in the intent catalog or that this home cannot use;
- a sentence with an exclusion ("all the lights except the kitchen", case BC-22), which the
  matcher may read as a plain command;
- a frame naming an entity, area or floor the home does not have;
- a frame whose first word is unexplained (an action verb the matcher does not know);
- a new timer with any word left unexplained: "in ten seconds make the house cosy" is a
  delayed command the matcher cannot read (:mod:`hub.intents.delay`), not a plain timer;
- a reading of several commands where a later one takes an earlier one's target while
  leaving a word of its own unexplained ("turn on the office light and turn off the attic
  light" read as the office light twice: :func:`borrowed`);
- a reading that leaves unexplained (or outside every command) a word that changes the
  meaning: a negation, an exception, a sign, a time or a condition ("turn on the kitchen light
  tomorrow" is not "turn on the kitchen light"; :mod:`hub.intents.meaning`), or that reads a
  negative number a slot cannot take.

Several commands in one sentence ("turn on the kitchen light and turn off the bed light")
come back as several frames, in the order said. Slot values become the home's canonical
names (the matcher works on ids: ``<domain>.<n>`` for entities, the index for areas/floors).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from importlib import resources

import yaml

from hub.home import Home
from hub.intents import catalog
from hub.intents.artefacts import cached, key_of
from hub.intents.meaning import (
    EXCEPTION,
    MeaningLost,
    ignored_meaning,
    negative_value,
    phrases_pattern,
    tolerated,
)

log = logging.getLogger("hub.intents")

EXCLUSION = phrases_pattern((*EXCEPTION, "not"))
"""Words that make a sentence an exclusion or a negation: never matched fuzzily, even where
the matcher would use the word ("is anyone not home")."""

TARGET_SLOTS = ("name", "area", "floor")
"""The slots that say what a command acts on."""

PRONOUNS = frozenset({"it", "its", "them", "their", "they", "this", "that", "these", "those"})
"""Words a later command may leave unexplained while it takes an earlier target ("turn on the
bed light and set it to 50 percent")."""

MAX_NUMBER = 1000
"""Largest number the matcher reads as words (its default, 10000, spells every number at
load: about 4 s here; 1000 takes about 0.7 s). Digits are read at any size."""


def gazetteer_home(home: Home) -> tuple[dict, dict]:
    """The matcher's home dict and the id -> canonical name map.

    Returns ``({"areas", "floors", "entities"}, {id: name})`` in ``gazetteer_matcher.Home``'s
    shape (ids are ours; names and aliases are what people say).
    """
    names: dict[str, str] = {}
    floors = {}
    for i, floor in enumerate(home.floors):
        names[f"floor_{i}"] = floor
        floors[f"floor_{i}"] = {"name": floor}
    floor_ids = {v: k for k, v in names.items()}
    areas = {}
    for i, area in enumerate(home.areas):
        names[f"area_{i}"] = area
        areas[f"area_{i}"] = {"name": area, "floor": floor_ids.get(home.area_floors.get(area))}
        if home.area_aliases.get(area):
            areas[f"area_{i}"]["aliases"] = list(home.area_aliases[area])
    area_ids = {areas[k]["name"]: k for k in areas}
    entities = {}
    for i, entity in enumerate(home.entities):
        key = f"{entity.domain}.e{i}"
        names[key] = entity.name
        spec = {
            "name": entity.spoken[0],
            "domain": entity.domain,
            "area": area_ids.get(entity.area),
        }
        if entity.aliases:
            spec["aliases"] = list(entity.aliases)
        if entity.device_class:
            spec["device_class"] = entity.device_class
        entities[key] = spec
    return {"areas": areas, "floors": floors, "entities": entities}, names


def _vocabulary() -> dict:
    """The matcher's packaged English vocabulary with numbers up to :data:`MAX_NUMBER` (the
    parsed YAML from the artefact cache when the file is unchanged)."""

    def read() -> dict:
        vocabulary = yaml.safe_load(text)
        vocabulary.setdefault("numbers", {})["max_cardinal"] = MAX_NUMBER
        return vocabulary

    text = (
        resources.files("gazetteer_matcher")
        .joinpath("data/vocabulary.yaml")
        .read_text(encoding="utf-8")
    )
    return cached("gazetteer-vocabulary", key_of("vocabulary", [text, MAX_NUMBER]), read)


def _unknown_verb(frame) -> bool:
    """True when the first word of the frame's segment is unexplained: the action word is
    one the matcher does not know ("subtract 5 minutes ..." read as a new timer)."""
    start = frame.segment[0]
    unexplained = {*frame.unexplained_important_tokens, *frame.unexplained_unimportant_tokens}
    return start in unexplained


def ignored_tokens(result) -> list[int]:
    """Indexes of the tokens of a matcher ``Interpretation`` that no frame used: unexplained
    in a frame's segment, or in no frame's segment at all."""
    used: set[int] = set()
    for frame in result.frames:
        used.update(range(*frame.segment))
        used.difference_update(frame.unexplained_tokens)
    return [i for i in range(len(result.tokens)) if i not in used]


def lost_meaning(result) -> MeaningLost | None:
    """What a matcher ``Interpretation`` leaves out that changes the meaning
    (:func:`hub.intents.meaning.ignored_meaning` over its own tokens), or a negative number
    one of its frames reads where none can be; None when it keeps the meaning."""
    tokens = [token.text for token in result.tokens]
    lost = ignored_meaning(
        tokens, ignored_tokens(result), tolerated(f.intent for f in result.frames)
    )
    for frame in result.frames:
        lost = lost or negative_value(frame.slots)
    return lost


def borrowed(result) -> bool:
    """True when a command of a matcher ``Interpretation`` takes its target (entity, area or
    floor) from an earlier command while leaving unexplained a word of its own that is not a
    pronoun: "turn on the office light and turn off the attic light" read as the office light
    twice ("attic" unexplained), "... and the attic fan" as the kitchen's fans. "... and set it
    to 50 percent" and "the kitchen and office lights" keep theirs."""
    for frame in result.frames:
        options = getattr(frame, "slot_options", {}) or {}
        inherited = any(o.inherited for k, o in options.items() if k in TARGET_SLOTS)
        words = {result.tokens[i].text.lower() for i in frame.unexplained_tokens}
        if inherited and words - PRONOUNS:
            return True
    return False


class Fuzzy:
    """gazetteer-matcher over the home (loading takes about 0.5 s on a 2-core machine, 0.15 s
    for a second home in the same process); the first :meth:`frames` call waits for the load.

    Args:
        home: the home whose names the matcher resolves.
        background: start loading in a thread now (False: on :meth:`load` or first use).
    """

    def __init__(self, home: Home, background: bool = True) -> None:
        self.home = home
        self._lock = threading.Lock()
        self._matcher = None
        self._names: dict[str, str] = {}
        self._usable = frozenset(catalog.usable_in(home.domains))
        if background:
            threading.Thread(target=self.load, name="fuzzy-load", daemon=True).start()

    def load(self):
        """The matcher (built once, thread-safe); call at start to keep it out of turns."""
        with self._lock:
            if self._matcher is None:
                # lazy: the fuzzy matcher's native library (about 0.4 s) loads only when used
                from gazetteer_matcher import GazetteerMatcher

                data, self._names = gazetteer_home(self.home)
                matcher = GazetteerMatcher(vocabulary=_vocabulary(), home=data)
                self._matcher = matcher
            return self._matcher

    def frames(self, text: str, area: str | None = None) -> list[tuple[str, dict, str]] | None:
        """``[(intent, slots, response key), ...]`` in the order said, or None (rejected).

        Slots use Home Assistant's names with the home's canonical values.
        """
        found = self.reading(text, area)
        return found if isinstance(found, list) else None

    def reading(
        self, text: str, area: str | None = None
    ) -> list[tuple[str, dict, str]] | MeaningLost | None:
        """What :meth:`frames` reads, telling a rejection for lost meaning apart: a
        :class:`hub.intents.meaning.MeaningLost` when the sentence has an exclusion
        (:data:`EXCLUSION`) or the matcher's reading leaves out a word that changes the
        meaning; None for any other rejection."""
        excluded = EXCLUSION.search(text)
        if excluded:
            word = excluded.group(0)
            return MeaningLost("negation" if word.lower() == "not" else "exception", (word,))
        if not text.strip():
            return None
        matcher = self.load()
        context = self._id_of(area) if area else None
        try:
            result = matcher.interpret(text, context_area=context)
        except ValueError as exc:  # an unknown context area
            log.warning("fuzzy matcher refused %r: %s", text, exc)
            return None
        if not result.accepted or result.ambiguous or not result.frames:
            return None
        lost = lost_meaning(result)
        if lost is not None:
            log.info("fuzzy reading of %r not taken: it leaves out %r", text, lost.words)
            return dataclasses.replace(lost, intent=result.frames[0].intent)
        frames = []
        for frame in result.frames:
            slots = self._canonical(frame.slots)
            if (
                frame.intent not in self._usable
                or slots is None
                or _unknown_verb(frame)
                or (frame.intent == "HassStartTimer" and frame.unexplained_tokens)
            ):
                return None
            frames.append((frame.intent, slots, frame.response_key or ""))
        if borrowed(result):
            log.info("fuzzy reading of %r not taken: a later command reuses a target", text)
            return None
        return frames

    def _id_of(self, name: str) -> str | None:
        """The matcher id of an area name, or None."""
        return next(
            (k for k, v in self._names.items() if v == name and k.startswith("area_")), None
        )

    def _canonical(self, slots: dict) -> dict | None:
        """Slots with ids turned into the home's names; None when an id is unknown."""
        out = {}
        for key, value in slots.items():
            if key in ("name", "area", "floor") and isinstance(value, str):
                if value not in self._names:
                    return None
                value = self._names[value]
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            out[key] = value
        return out
