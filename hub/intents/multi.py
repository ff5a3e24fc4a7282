"""Beyond one strict match: several commands in one sentence, then the fuzzy matcher.

:func:`split_commands` cuts a sentence at conjunctions ("and", "then", "and then", ",") into
parts that each match the strict rules on their own ("turn on the kitchen light and turn off
the bed light" -> HassTurnOn, HassTurnOff, in that order). A cut is only taken when every part
matches; a sentence that matches as a whole is never cut (so "add milk and eggs to the list"
stays one item). :func:`more_matches` tries that, then :class:`hub.intents.fuzzy.Fuzzy`.

A part that is no command by itself is read with the previous part's verb frame carried over
(:func:`carried`): its leading action words, all or some of them, and the words after its
target ("turn the tv on and the lights off" -> "turn the lights off"; "turn on the kitchen
light and off the tv" -> "turn off the tv"; "turn the tv on and the lights" -> "turn the lights
on"). It is taken only when exactly one reading comes of it; two different readings are a
doubt, and the sentence is then not understood (no fuzzy reading either): a request is never
done in part or guessed.

:func:`read_parts` reads such a sentence part by part when a part asks for something the home
lacks ("turn on the office light and turn off the attic light"): each part is a strict match,
the fuzzy matcher's one command for that part alone, or a :class:`Missing` (Home Assistant's
error for it, from a ``miss`` reader the caller gives); a part without its own action word
takes the one of the part before ("turn on the kitchen light and the attic fan"). The whole
sentence is then never read fuzzily: that reading may put a part the home lacks on another
device (the office light switched on, then off).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

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

DETERMINERS = frozenset({"the", "my", "our", "a", "an", "all", "every", "both"})
"""Words that end a part's action words ("turn on | the kitchen light")."""

MAX_LEAD_WORDS = 3
"""Most action words a part without its own takes from the part before ("please turn on")."""

MAX_TAIL_WORDS = 3
"""Most words after its target a part without its own verb takes from the part before
("to 50 percent" of "set the kitchen light to 50 percent and the bed light")."""


@dataclass(frozen=True)
class Missing:
    """A part of a several-command sentence that asks for something the home lacks.

    ``text``: the part as read (with the action words it took from the part before);
    ``response``: what is said about it (Home Assistant's error, "Sorry, I am not aware of any
    device called attic light").
    """

    text: str
    response: str


def split_commands(
    text: str, recognize: Callable[[str], IntentMatch | None]
) -> list[IntentMatch] | None:
    """Two or more strict matches for the parts of ``text``, in order; None otherwise.

    ``recognize`` is the strict matcher of one part (None: no match). Cuts are tried from the
    left; the first cut whose every part matches wins (parts of a part are cut again). A part
    that is no command by itself takes the previous part's verb frame (:func:`carried`).
    """
    return split_reading(text, recognize)[0]


def split_reading(
    text: str, recognize: Callable[[str], IntentMatch | None]
) -> tuple[list[IntentMatch] | None, bool]:
    """:func:`split_commands` and whether a part was in doubt: with the verb carried over it
    had two different readings (then no cut is taken through it)."""
    cuts = [(m.start(), m.end()) for m in CONJUNCTION.finditer(text)]
    if not cuts:
        return None, False
    doubts: list[str] = []

    def read(part: str, before: str):
        found = recognize(part)
        if found is not None and before and bare_after(part, found, recognize(before)):
            doubts.append(part)
            return None, part
        if found is not None or not before:
            return found, part
        readings = carried(part, before, recognize)
        if len(readings) == 1:
            return readings[0], readings[0].text
        if readings:
            doubts.append(part)
        return None, part

    found = _split(text, cuts, read, MAX_COMMANDS)
    return found, found is None and bool(doubts)


def bare_after(part: str, found: IntentMatch, prior: IntentMatch | None) -> bool:
    """Whether ``part``, read ``found`` by itself though it has no action words (a bare script
    or scene name: "party time" runs it), follows a part read ``prior`` of another intent:
    "turn off the tv and party time" started the script; such a sentence is not understood,
    not guessed."""
    return not lead(part) and prior is not None and prior.intent != found.intent


def swallowed(
    match: IntentMatch, text: str, recognize: Callable[[str], IntentMatch | None]
) -> list[IntentMatch] | None:
    """The commands a wildcard slot of ``match`` (the whole sentence's reading) swallowed: a
    slot value holds a conjunction ("milk to my shopping list and add bread") and ``text`` cut
    there reads as two or more commands that each match on their own, the verb said again
    ("add milk to my shopping list and add bread to my shopping list": two items, not one).
    None otherwise: "add milk and eggs to the list" stays one item ("eggs to the list" is no
    command by itself), as Home Assistant reads it."""
    if not any(isinstance(v, str) and CONJUNCTION.search(v) for v in match.slots.values()):
        return None
    cuts = [(m.start(), m.end()) for m in CONJUNCTION.finditer(text)]
    return _split(text, cuts, lambda part, before: (recognize(part), part), MAX_COMMANDS)


TARGET_SLOTS = ("name", "area", "floor")
"""The slots that name a command's target: their words are never part of its verb frame."""


def frames(before: str, target: str = "") -> list[tuple[str, str]]:
    """The verb frames ``(lead, tail)`` of the part ``before`` a part without its own verb
    may take: ``lead`` its first one to :data:`MAX_LEAD_WORDS` words up to its first
    determiner or word of ``target`` ("turn", "turn on" of "turn on the kitchen light"),
    ``tail`` "" or its last one to :data:`MAX_TAIL_WORDS` words after the lead, none of
    ``target`` ("on" of "turn the tv on"). ``target``: the words naming what ``before`` acts
    on ("Kitchen Light"). No lead with a number in it; [] when ``before`` has fewer than two
    words."""
    words, named = before.split(), {w.lower() for w in target.split()}
    out = []
    for i in range(1, min(MAX_LEAD_WORDS, len(words) - 1) + 1):
        taken = words[:i]
        last = taken[-1].lower()
        if last in DETERMINERS or last in named or any(c.isdigit() for w in taken for c in w):
            break
        tails = [""]
        for k in range(1, min(MAX_TAIL_WORDS, len(words) - i - 1) + 1):
            if words[-k].lower() in named:
                break
            tails.append(" ".join(words[-k:]))
        out += [(" ".join(taken), tail) for tail in tails]
    return out


def carried(
    part: str, before: str, recognize: Callable[[str], IntentMatch | None]
) -> list[IntentMatch]:
    """The different strict readings of ``part`` with a verb frame of ``before`` carried over
    (:func:`frames`: "turn" + "the lights off"; "turn" + "the lights" + "on"), in the order
    found; each match's ``text`` is the sentence it was read as. Readings that do the same
    (intent, slots, targets) count once. [] when ``before`` is no command, or ``part`` starts
    with its first word (it has its own verb) or no frame reads."""
    said, first = before.split(), recognize(before)
    if first is None or part.split()[:1] == said[:1]:
        return []
    target = " ".join(str(first.slots[k]) for k in TARGET_SLOTS if k in first.slots)
    readings: dict[tuple, IntentMatch] = {}
    for head, tail in frames(before, target):
        match = recognize(" ".join(w for w in (head, part, tail) if w))
        if match is not None:
            key = (match.intent, repr(sorted(match.slots.items())), match.entities)
            readings.setdefault(key, match)
    return list(readings.values())


def _split(text, cuts, read, budget, before: str = "") -> list | None:
    """The readings of ``text`` cut at some of ``cuts`` (at most ``budget`` parts).

    ``read(part, before)`` is ``(reading or None, the part's text as read)``; ``before`` is
    the previous part as read ("" for the first)."""
    for start, end in cuts:
        head, tail = text[:start].strip(), text[end:].strip()
        if not head or not tail:
            continue
        first, head_read = read(head, before)
        if first is None:
            continue
        rest_cuts = [(s - end, e - end) for s, e in cuts if s >= end]
        last, _ = read(tail, head_read)
        if last is not None:
            return [first, last]
        if budget > 2 and rest_cuts:
            more = _split(text[end:], rest_cuts, read, budget - 1, head_read)
            if more:
                return [first, *more]
    return None


def lead(part: str) -> str:
    """The action words of ``part``: its words before the first determiner ("turn on" of "turn
    on the kitchen light"); "" when there are none, more than :data:`MAX_LEAD_WORDS`, or a
    number among them."""
    words = part.split()
    for i, word in enumerate(words):
        if word.lower() in DETERMINERS:
            taken = words[:i]
            ok = 0 < i <= MAX_LEAD_WORDS and not any(c.isdigit() for w in taken for c in w)
            return " ".join(taken) if ok else ""
    return ""


def read_parts(
    rules, text: str, area: str | None, miss: Callable[[str], str | None]
) -> list[IntentMatch | Missing] | None:
    """``text`` read part by part (see the module): each part's match or :class:`Missing`, in
    order; None when ``text`` has no conjunction or some cut leaves a part that is neither.

    Args:
        rules: the :class:`hub.intents.rules.Rules` (strict matches, the fuzzy matcher).
        area: the conversation's area.
        miss: Home Assistant's error for a part about something the home lacks, or None
            (:meth:`hub.act.honest.Misses.answer`).
    """
    cuts = [(m.start(), m.end()) for m in CONJUNCTION.finditer(text)]
    if not cuts:
        return None

    def one(part: str) -> IntentMatch | Missing | None:
        match = rules.recognize(part, area)
        if match is None and rules.fuzzy_enabled:
            found = fuzzy_matches(rules.fuzzy, rules.home, part, area, rules)
            match = found[0] if len(found) == 1 else None
        if match is not None:
            return match
        said = miss(part)
        return Missing(part, said) if said else None

    def read(part: str, before: str):
        action = "" if lead(part) else lead(before)  # a part with no action word of its own
        if action:
            found = one(f"{action} {part}")
            if found is not None:
                return found, f"{action} {part}"
        return one(part), part

    return _split(text, cuts, read, MAX_COMMANDS)


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
    matcher's reading; [] when neither, and when a part without its own verb had two readings
    (:func:`split_reading`: not guessed, not read fuzzily)."""
    split, doubt = split_reading(text, lambda part: rules.recognize(part, area))
    if split:
        return split
    if doubt or not fuzzy:
        return []
    delayed = rules.recognize_delayed(text, area)  # "in 10 minutes <a fuzzy command>"
    if delayed is not None:
        return [delayed]
    return fuzzy_matches(rules.fuzzy, rules.home, text, area, rules)
