"""Short true sentences for what is not there (issue 22 item 5), in Home Assistant's words.

When the rules understood nothing, a sentence may still be a request Home Assistant's own
sentences know, about something this home lacks. Then the hub says so with Home Assistant's
error responses (home-assistant-intents' ``responses.errors``) instead of "Sorry, I couldn't
understand that.":

- "stop" with no timer ringing or running and nothing playing: ``timer_not_found`` ("Sorry,
  I couldn't find that timer"), never "Timer cancelled";
- a request for a domain the home has none of ("turn up the volume" without a media player):
  ``no_domain`` ("Sorry, I am not aware of any media player");
- a device command naming an area or a device the home lacks ("turn on the lights in the
  garden", "unlock the back door"): ``no_area`` / ``no_entity`` ("Sorry, I am not aware of
  any device called back door").

:class:`Misses` matches Home Assistant's English sentences of the catalog's intents with
hassil: those of absent domains with the home's names, the device commands with a wildcard in
place of the area, then of the name. It is parsed on first use (and cached on disk), and
asked only when nothing else understood the sentence (rules, fuzzy matcher, facts, LLM,
FAQ): it replaces "Sorry, I couldn't understand that." and nothing else.
"""

from __future__ import annotations

import contextlib
import functools
import threading

from hassil import Intents
from hassil.intents import TextSlotList, WildcardSlotList
from hassil.recognize import recognize

from hub.act.responses import english_intents, error_text, sentence
from hub.act.said_time import impossible_time
from hub.intents import catalog
from hub.intents.artefacts import cached, key_of
from hub.intents.meaning import MeaningLost, ignored_meaning, normalized
from hub.intents.multi import Missing

STOP_ALONE = frozenset(
    {"stop", "stop it", "stop ringing", "stop the alarm", "stop the alert", "okay stop", "ok stop"}
)
"""Stop words that can only mean a ringing timer (or playing media)."""

NOT_A_NAME = frozenset(
    {
        "turn",
        "set",
        "switch",
        "open",
        "close",
        "lock",
        "unlock",
        "start",
        "stop",
        "make",
        "put",
        "don't",
        "dont",
        "do",
        "not",
        "no",
        "please",
        "and",
        "then",
        "all",
        "every",
        "everything",
        "except",
        "but",
        "what",
        "is",
        "are",
        "it",
        "its",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "you",
        "i",
        "me",
    }
)
"""Words that show a wildcard took a piece of a sentence, not a name ("set the")."""

MAX_WILDCARD_WORDS = 4
"""A wildcard name or area longer than this is not taken as one (it is another sentence)."""


def nothing_to_stop(text: str, timers, home) -> dict | None:
    """The turn's state update for "stop" when nothing rings, runs or plays, else None.

    Args:
        text: the transcript. timers: the hub's :class:`hub.act.timers.Timers` (None: none).
        home: the :class:`hub.home.Home` (a playing media player is paused by the rules).
    """
    said = " ".join(text.lower().replace(",", " ").replace(".", " ").replace("!", " ").split())
    if said not in STOP_ALONE or (timers is not None and timers.status(ringing=True)):
        return None
    if any(e.domain == "media_player" and home.state(e.name) == "playing" for e in home.entities):
        return None
    return {
        "matches": [],
        "response": sentence(error_text("timer_not_found")),
        "source": "rules",
        "intent": "HassCancelTimer",
    }


def _block_domains(block: dict) -> set[str]:
    """The domains a sentence block names (``slots.domain`` / ``requires_context.domain``)."""
    wanted: set = set()
    for source in (block.get("slots") or {}, block.get("requires_context") or {}):
        value = source.get("domain")
        wanted.update([value] if isinstance(value, str) else value or ())
    return wanted


@functools.lru_cache(maxsize=16)
def _absent_intents(domains: frozenset):
    """The parsed :func:`_absent_data` of a home with these domains (shared by hubs; kept
    on disk by :mod:`hub.intents.artefacts`, so a start after the first takes milliseconds)."""
    data = _absent_data(domains)
    return cached(
        "hassil-absent", key_of("hassil-absent", data, ("hassil",)), lambda: _parsed(data)
    )


@functools.lru_cache(maxsize=1)
def _device_intents():
    """The parsed :func:`_device_data` (the same for every home; kept on disk too)."""
    data = _device_data()
    return cached(
        "hassil-devices", key_of("hassil-devices", data, ("hassil",)), lambda: _parsed(data)
    )


def _absent_data(domains: frozenset) -> dict:
    """HA's sentence blocks about domains a home with ``domains`` has none of, each marked
    with the domain."""
    data, have = english_intents(), set(domains)
    intents = {}
    for name, intent in data["intents"].items():
        if name not in catalog.names():
            continue
        blocks = []
        for block in intent["data"]:
            wanted = _block_domains(block) or set(catalog.domains_of(name))
            if wanted and not wanted & have:
                domain = sorted(wanted)[0]
                blocks.append(
                    {
                        **block,
                        "metadata": {**(block.get("metadata") or {}), "absent_domain": domain},
                    }
                )
        if blocks:
            intents[name] = {**intent, "data": blocks}
    return {**data, "intents": intents}


def _device_data() -> dict:
    """HA's sentence blocks of the device commands, without their domain requirement (a
    wildcard name has no domain to check)."""
    data = english_intents()
    wanted = catalog.device_intents()
    intents = {}
    for name, intent in data["intents"].items():
        if name in wanted:
            blocks = [
                {
                    **b,
                    "requires_context": {
                        k: v for k, v in (b.get("requires_context") or {}).items() if k != "domain"
                    },
                }
                for b in intent["data"]
            ]
            intents[name] = {**intent, "data": blocks}
    return {**data, "intents": intents}


def _parsed(data: dict):
    """hassil ``Intents`` of ``data`` with every template parsed now."""
    intents = Intents.from_dict(data)
    for intent in intents.intents.values():
        for block in intent.data:
            _ = block.sentences
    return intents


class Misses:
    """Home Assistant sentences about what ``home`` lacks (see the module); thread-safe.

    Args:
        home: the :class:`hub.home.Home`.
    """

    def __init__(self, home) -> None:
        self.home = home
        self._lock = threading.Lock()
        self._absent: Intents | None = None
        self._devices: Intents | None = None

    def load(self) -> tuple[Intents, Intents]:
        """Parse the sentences (about 0.5 s the first time, 0.2 s from the disk cache; once
        per process and kind of home), at the first sentence nothing understood. Returns the
        sentences about absent domains and the device commands."""
        with self._lock:
            if self._absent is None or self._devices is None:
                self._absent = _absent_intents(frozenset(self.home.domains))
                self._devices = _device_intents()
            return self._absent, self._devices

    def answer(self, text: str) -> str | None:
        """Home Assistant's error text for ``text`` when it asks for something absent, else
        None. Never raises (a sentence hassil cannot take is no answer)."""
        absent, devices = self.load()
        try:
            return self._absent_answer(text, absent) or self._unknown_answer(text, devices)
        except Exception:
            return None

    def _lists(self, name_wild: bool = False, area_wild: bool = False) -> dict:
        home = self.home
        names = list(dict.fromkeys(n for e in home.entities for n in (e.name, *e.spoken)))
        return {
            "name": WildcardSlotList(name="name")
            if name_wild
            else TextSlotList.from_strings(names or ["\x00"], allow_template=False, name="name"),
            "area": WildcardSlotList(name="area")
            if area_wild
            else TextSlotList.from_strings(
                [n for a in home.areas for n in (a, *home.area_aliases.get(a, ()))] or ["\x00"],
                allow_template=False,
                name="area",
            ),
            "floor": TextSlotList.from_strings(
                list(home.floors) or ["\x00"], allow_template=False, name="floor"
            ),
        }

    def _absent_answer(self, text: str, absent: Intents) -> str | None:
        context = {"area": {"value": self.home.satellite_area or "", "text": ""}}
        result = recognize(text, absent, slot_lists=self._lists(), intent_context=context)
        if result is None:
            return None
        domain = (result.intent_metadata or {}).get("absent_domain") or "device"
        return error_text("no_domain", domain=domain)

    def lost(self, text: str) -> MeaningLost | None:
        """What changes the meaning in ``text`` when it is a device command whose name or area,
        read as a wildcard, holds such a word ("turn on the light unless it's dark": a loose
        reading, neither acted on nor answered as a name the home lacks); else None. Never
        raises."""
        _, devices = self.load()
        try:
            found = (_meaning_in(value, text) for _, value in self._wildcards(text, devices))
            return next((lost for lost in found if lost is not None), None)
        except Exception:
            return None

    def _wildcards(self, text: str, devices: Intents):
        """``(slot, value)`` for each device command reading of ``text`` with a wildcard area,
        then name (its text without a leading article)."""
        for slot in ("area", "name"):
            lists = self._lists(name_wild=slot == "name", area_wild=slot == "area")
            result = recognize(
                text, devices, slot_lists=lists, intent_context={"area": {"value": "", "text": ""}}
            )
            if result is not None and slot in result.entities:
                yield slot, _bare(str(result.entities[slot].text or result.entities[slot].value))

    def _unknown_answer(self, text: str, devices: Intents) -> str | None:
        for slot, value in self._wildcards(text, devices):
            if self._unknown(slot, value, text):
                key, arg = ("no_area", "area") if slot == "area" else ("no_entity", "entity")
                return error_text(key, **{arg: value})
        return None

    def _unknown(self, slot: str, value: str, text: str) -> bool:
        """True when a wildcard ``value`` is a short name the home lacks, and not all of
        ``text`` (a bare name would be any sentence at all)."""
        words = value.split()
        if (
            not words
            or len(words) > MAX_WILDCARD_WORDS
            or len(words) >= len(_bare(text).split())
            or NOT_A_NAME & {w.lower() for w in words}
            or _meaning_in(value, text) is not None
        ):
            return False
        known = self.home.canonical_area(value) if slot == "area" else self.home.entity(value)
        return known is None


def _meaning_in(value: str, text: str) -> MeaningLost | None:
    """The word of the wildcard ``value`` of ``text`` that changes what ``text`` means
    (:mod:`hub.intents.meaning`: "light unless it's dark", "on the kitchen light" of "turn on
    the kitchen light off"; such a value is a loose reading, never a name the home lacks), or
    None. A place ("upstairs light") can be a name."""
    tokens = text.split()
    words, said = [normalized(t) for t in tokens], [normalized(w) for w in value.split()]
    starts = [i for i in range(len(words)) if words[i : i + len(said)] == said]
    span = range(starts[-1], starts[-1] + len(said)) if starts else range(0)
    return ignored_meaning(tokens, span, allowed=("place",))


def _bare(text: str) -> str:
    """``text`` without punctuation and a leading article ("the garden" -> "garden")."""
    words = text.replace(",", " ").replace(".", " ").replace("?", " ").split()
    while words and words[0].lower() in ("the", "my", "a", "an", "our"):
        words = words[1:]
    return " ".join(words)


def misses_of(home) -> Misses:
    """The :class:`Misses` of ``home`` (kept on it; made on first use)."""
    found = getattr(home, "_hub_misses", None)
    if found is None:
        found = Misses(home)
        with contextlib.suppress(AttributeError):  # a frozen or slotted home: made again (cheap)
            home._hub_misses = found
    return found


def miss_update(home, text: str) -> dict | None:
    """The turn's state update with Home Assistant's error text when ``text`` asks for
    something ``home`` lacks (:meth:`Misses.answer`), or the answer to an impossible clock
    time (:func:`hub.act.said_time.impossible_time`), else None."""
    answer = impossible_time(text) or misses_of(home).answer(text)
    if not answer:
        return None
    return {"matches": [], "response": sentence(answer), "source": "rules", "transcript": text}


NOTHING_DONE = "Nothing was done."
"""Said after the errors of a several-command sentence that asked for something the home
lacks: none of its commands was carried out (as Home Assistant does: :func:`parts_update`)."""


def several_update(rules, home, text: str, area: str | None, segments=()) -> dict | None:
    """:func:`parts_update` for ``text`` read part by part by ``rules`` (its
    ``recognize_parts``; a rules engine without it reads nothing), with this home's errors;
    ``segments``: the parts as the recognizer heard them, when it heard several."""
    read = getattr(rules, "recognize_parts", None)
    said = " and ".join(segments) if len(segments) > 1 else text
    return parts_update(read(said, area, misses_of(home).answer) if read else None, text)


def parts_update(parts, text: str) -> dict | None:
    """The turn's state update for a several-command sentence read part by part
    (:meth:`hub.intents.rules.Rules.recognize_parts`) when a part asks for something the home
    lacks: each such part's error, in order, then :data:`NOTHING_DONE`; nothing is carried
    out. None when ``parts`` is None or every part was understood. ``text``: the sentence.

    Home Assistant does the same: hassil reads no several commands, and its fuzzy matcher
    (gazetteer-matcher) refuses a compound request rather than act on only some of it.
    """
    missing = [p for p in parts or () if isinstance(p, Missing)]
    if not missing:
        return None
    said = [sentence(p.response) for p in missing]
    return {
        "matches": [],
        "response": " ".join([*dict.fromkeys(said), NOTHING_DONE]),
        "source": "rules",
        "transcript": text,
    }
