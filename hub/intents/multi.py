"""Beyond one strict match: several commands in one sentence, then the fuzzy matcher.

:func:`split_commands` cuts a sentence at conjunctions ("and", "then", "and then", ",") into
parts that each match the strict rules on their own ("turn on the kitchen light and turn off
the bed light" -> HassTurnOn, HassTurnOff, in that order). A cut is only taken when every part
matches; a sentence that matches as a whole is never cut (so "add milk and eggs to the list"
stays one item). :func:`more_matches` tries that, then :class:`hub.intents.fuzzy.Fuzzy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hub.intents.delay import delayed_match, is_delayed
from hub.intents.match import IntentMatch, fuzzy_readings

CONJUNCTION = re.compile(
    r"\s*(?:,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+then\s+|\s+and\s+|"
    r"\s+then\s+|\s+after\s+that\s+)\s*",
    re.IGNORECASE,
)
"""Where a sentence may be cut into commands."""

MAX_COMMANDS = 4
"""Most commands taken from one sentence."""


def split_commands(
    text: str, recognize: Callable[[str], IntentMatch | None]
) -> list[IntentMatch] | None:
    """Two or more strict matches for the parts of ``text``, in order; None otherwise.

    ``recognize`` is the strict matcher of one part (None: no match). Cuts are tried from the
    left; the first cut whose every part matches wins (parts of a part are cut again).
    """
    cuts = [(m.start(), m.end()) for m in CONJUNCTION.finditer(text)]
    return _split(text, cuts, recognize, MAX_COMMANDS) if cuts else None


def _split(text, cuts, recognize, budget) -> list[IntentMatch] | None:
    """The matches of ``text`` cut at some of ``cuts`` (at most ``budget`` parts)."""
    for start, end in cuts:
        head, tail = text[:start].strip(), text[end:].strip()
        if not head or not tail:
            continue
        first = recognize(head)
        if first is None:
            continue
        rest_cuts = [(s - end, e - end) for s, e in cuts if s >= end]
        last = recognize(tail)
        if last is not None:
            return [first, last]
        if budget > 2 and rest_cuts:
            more = _split(text[end:], rest_cuts, recognize, budget - 1)
            if more:
                return [first, *more]
    return None


def fuzzy_matches(fuzzy, home, text: str, area: str | None, rules=None) -> list[IntentMatch]:
    """The fuzzy matcher's commands for ``text`` as IntentMatches (``source="fuzzy"``); [] none,
    and [] when any targeted command resolves to no entity of the home
    (:func:`hub.intents.match.fuzzy_readings`). A delayed command among them passes
    :func:`hub.intents.delay.delayed_match` (with ``rules``; without: [])."""
    matches = []
    for match in fuzzy_readings(fuzzy, home, text, area):
        if is_delayed(match):
            match = delayed_match(rules, match, area, loose=True) if rules else None
            if match is None:
                return []
        matches.append(match)
    return matches


def more_matches(
    rules, text: str, area: str | None = None, fuzzy: bool = True
) -> list[IntentMatch]:
    """After strict matching failed: several strict commands, else (``fuzzy``) the fuzzy
    matcher's reading; [] when neither."""
    split = split_commands(text, lambda part: rules.recognize(part, area))
    if split:
        return split
    if not fuzzy:
        return []
    delayed = rules.recognize_delayed(text, area)  # "in 10 minutes <a fuzzy command>"
    if delayed is not None:
        return [delayed]
    return fuzzy_matches(rules.fuzzy, rules.home, text, area, rules)
