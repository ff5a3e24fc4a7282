"""What the grammar may hear, checked against what the rules understand (issue 7 item 8).

:func:`understood` keeps only the sentence patterns the rules act on as the pattern's own
intent, so the recognizer never hears a sentence that the rules would ignore or take as a
different command; :func:`fsg_accepts` tells whether a word sequence is in a generated Sphinx
FSG (tests walk the grammar with it).
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from hub.asr.delays import takes
from hub.asr.templates import Pattern
from hub.facts.answers import route
from hub.home import Home
from hub.intents import catalog
from hub.intents.followup import AREA, NAME, SlotQuestion, slot_value
from hub.intents.reference import probe_command
from hub.intents.rules import Rules
from hub.settings import IntentSettings

PROBE_VALUES = 5
"""Values of a pattern's first slot tried when checking it against the rules."""


def understood(patterns: list[Pattern], home, slots) -> list[Pattern]:
    """The patterns the rules understand as the pattern's intent (issue 7 item 8: the
    recognizer must not hear a sentence that the rules would not act on, or would act on as
    another command). Each slot is filled with a value of this home (the first slot with up
    to :data:`PROBE_VALUES` values until one is understood). Patterns of ``_reply`` (yes/no
    words, read by the turn logic) are kept; ``_exclusion`` ones only when the rules refuse
    them (an exclusion heard as said must never become a command, BC-22); ``_fact`` ones
    when the rules or the fact step answer them from a source; slot answers and references
    when the conversation logic can read them (see :func:`_takes`).

    The check costs one hassil match per pattern (about 10-30 ms each, ~4000 patterns); a
    text met twice is matched once (:class:`_Checker`). Forked workers were measured and
    gained nothing on 2 cores (45.0 s against 43.6 s), so the check runs in this process.
    """
    checker = _Checker(home, slots)
    flags = checker.flags(patterns)
    return [p for p, keep in zip(patterns, flags, strict=True) if keep]


class _Checker:
    """The home's rules with a memo of their answers (a delayed command's inner command, a
    probe text shared by two patterns, are matched once)."""

    def __init__(self, home, slots):
        self.slots = slots
        # no fuzzy matcher: the grammar keeps only what strict matching understands
        self.rules = Rules(Home.from_settings(home), IntentSettings(fuzzy=False))
        memo: dict = {}
        recognize = self.rules.recognize

        def remembered(text, area=None):
            key = (text, area)
            if key not in memo:
                memo[key] = recognize(text, area)
            return memo[key]

        self.rules.recognize = remembered  # the rules' own recursion goes through it too

    def flags(self, patterns: list[Pattern]) -> list[bool]:
        """For each pattern: is it kept (see :func:`understood`)."""
        return [
            pattern.intent == "_reply"
            or any(
                _takes(self.rules, pattern.intent, text) for text in _probes(pattern, self.slots)
            )
            for pattern in patterns
        ]


def read_only(intent: str) -> bool:
    """True for a grammar intent without side effects: a fact question (``_fact``) or a
    catalog intent with ``side_effects = false``. Replies ("yes" confirms an action) and
    exclusions are not."""
    if intent.startswith("_"):
        return intent == "_fact"

    return not catalog.has_side_effects(intent)


def fact_intents() -> frozenset[str]:
    """The catalog's read-only intents that state a fact (handlers in ``hub.act.queries``)."""
    return frozenset(s.name for s in catalog.intents() if s.handler.startswith("queries:"))


def _takes(rules, intent: str, text: str) -> bool:
    """True when the turn logic understands ``text`` as the pattern's ``intent``: the rules
    match it as that intent; ``_exclusion``: the rules refuse it; ``_fact``: the rules give a
    fact intent, or none and the fact step (:func:`hub.facts.answers.route`) answers it;
    ``_delayed:<intent>``: a delayed command of that intent (:func:`hub.asr.delays.takes`);
    ``_slot_answer`` and ``_reference``: see :data:`FOLLOW_UPS`."""
    if intent in FOLLOW_UPS:
        return FOLLOW_UPS[intent](rules, text)
    if intent.startswith("_delayed:"):
        return takes(rules, intent, text)
    match = rules.recognize(text)
    if intent == "_fact":
        if match is not None:
            return match.intent in fact_intents()

        return route(text, rules.home, datetime.now()) is not None
    return (match.intent if match else None) == (None if intent == "_exclusion" else intent)


def _slot_answer(rules, text: str) -> bool:
    """True when ``text`` names one area or one entity of the home as a slot answer would
    (:func:`hub.intents.followup.slot_value`)."""
    return any(
        slot_value(rules.home, SlotQuestion(None, slot), text) is not None for slot in (AREA, NAME)
    )


def _reference(rules, text: str) -> bool:
    """True when the rules take ``text`` with an entity's name in place of "it"/"them"
    (:func:`hub.intents.reference.probe_command`)."""
    return probe_command(rules, rules.home, text) is not None


FOLLOW_UPS = {"_slot_answer": _slot_answer, "_reference": _reference}
"""Grammar intents that only a conversation gives a meaning to (an answer to the hub's
question, a pronoun for what it last acted on) -> the check that keeps a pattern: the turn
logic can read it (issue 18 item 3)."""


def _probes(pattern: Pattern, slots) -> list[str]:
    """Texts of ``pattern`` with its slots filled (several values for the first slot)."""
    first, texts = True, [[]]
    for token in pattern.tokens:
        if not token.startswith("{"):
            texts = [t + [token] for t in texts]
            continue
        values = _values(token[1:-1], slots)[: PROBE_VALUES if first else 1]
        if not values:
            return []
        texts = [t + [v] for t in texts for v in values]
        first = False
    return [" ".join(t) for t in texts]


def _values(spec: str, slots) -> list[str]:
    kind, _, arg = spec.partition(":")
    if kind == "range":
        start, stop, step = (int(x) for x in arg.split(":"))
        return [str(n) for n in range(start, stop + 1, step)][1:2] or [str(start)]
    wanted = set(arg.split("+")) if arg else None
    return [text for text, domain in slots.get(kind, []) if wanted is None or domain in wanted]


def fsg_accepts(fsg_text: str, words: list[str]) -> bool:
    """True when the Sphinx FSG document ``fsg_text`` accepts the word sequence ``words``
    (an NFA walk over its transitions; null transitions are followed too)."""
    start, final, arcs = _parse(fsg_text)
    states = _closure({start}, arcs)
    for word in words:
        states = _closure({to for s in states for w, to in arcs.get(s, ()) if w == word}, arcs)
        if not states:
            return False
    return final in states


@lru_cache(maxsize=4)
def _parse(fsg_text: str) -> tuple[str, str, dict]:
    """Start state, final state and arcs (state -> [(word, next state)]) of an FSG."""
    arcs: dict[str, list[tuple[str, str]]] = {}
    start = final = ""
    for line in fsg_text.splitlines():
        parts = line.split()
        if parts[:1] == ["START_STATE"]:
            start = parts[1]
        elif parts[:1] == ["FINAL_STATE"]:
            final = parts[1]
        elif parts[:1] == ["TRANSITION"]:
            arcs.setdefault(parts[1], []).append((parts[4] if len(parts) > 4 else "", parts[2]))
    return start, final, arcs


def _closure(states: set[str], arcs: dict) -> set[str]:
    """``states`` plus every state reachable from them by null transitions."""
    todo, seen = list(states), set(states)
    while todo:
        for word, to in arcs.get(todo.pop(), ()):
            if not word and to not in seen:
                seen.add(to)
                todo.append(to)
    return seen
