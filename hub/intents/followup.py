"""Answers to the hub's own one-slot questions: "Which area do you mean?" -> "kitchen".

Home Assistant's default agent asks nothing back: a sentence matches whole or fails (its
maintainers: "the default agent also has no mechanism to respond to yes/no questions",
home-assistant/core#180864). The hub asks for the one slot it lacks and takes the answer in
the very next turn of the same conversation, within the conversation's question window
(:class:`hub.core.conversation.Conversation`), like a confirmation:

- ``need_area`` ("turn on the lights", no area known) -> "Which area do you mean?"; the answer
  is an area of the home: "kitchen", "in the kitchen", "the living room please";
- ``no_target`` ("Which device do you mean?") and "Which one?" (an "it" that may mean several
  entities, :mod:`hub.intents.reference`) -> the answer is an entity name: "the bed light",
  or a part of one among the choices ("the kitchen one");
- "no" / "never mind" / "cancel" cancels the question ("Okay.");
- anything else is a new request (the question is forgotten).

The answer completes the waiting intent (the slot filled, its targets resolved again), which
then goes the usual way: a sensitive target is still asked back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from hub.intents.rules import IntentMatch, resolve_targets
from hub.intents.sentences import NAMED_ACTIONS

AREA, NAME = "area", "name"
"""The slots a question may ask for (Home Assistant's slot names)."""

ASKS = {"need_area": AREA, "no_target": NAME}
"""Error key of a failed target match -> the slot its answer fills."""

WHICH_ONE = "Which one?"
"""The question when "it" may mean several entities."""

CANCELLED = "Okay."
"""The answer to a "no" / "never mind" said to a slot question: nothing is done."""

FILLER = frozenset(
    {
        "in",
        "the",
        "at",
        "on",
        "please",
        "my",
        "area",
        "room",
        "one",
        "of",
        "i",
        "mean",
        "it's",
        "its",
        "it",
        "is",
        "that",
        "just",
        "only",
        "a",
        "for",
        "to",
        "uh",
        "um",
        "oh",
        "well",
    }
)
"""Words around a slot answer that are not part of it ("in the kitchen please")."""


@dataclass(frozen=True)
class SlotQuestion:
    """An intent waiting for one slot, kept by the conversation until the next turn.

    ``match``: the intent as understood so far; ``slot``: :data:`AREA` or :data:`NAME`;
    ``choices``: the names the answer must be one of (empty: any of the home's).
    """

    match: IntentMatch
    slot: str
    choices: tuple[str, ...] = ()


def _words(text: str) -> list[str]:
    """Lower-case words of ``text`` without punctuation."""
    return re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()


BARE_FILLER = frozenset({"in", "the", "a", "please", "my", "uh", "um", "oh", "well", "just"})
"""Words that do not make a bare name a request ("the kitchen light please"); unlike
:data:`FILLER`, "is", "on", "it", "to"… stay: "is the kitchen light on" is a question."""


def _core(words, filler: frozenset[str] = FILLER) -> frozenset[str]:
    """The words that carry the value (``filler`` dropped)."""
    return frozenset(w for w in words if w not in filler)


def slot_value(home, question: SlotQuestion, text: str) -> str | None:
    """The canonical area or entity name ``text`` answers ``question`` with, or None.

    The said words (fillers dropped) must equal a candidate's, or, among ``choices``, be part
    of exactly one candidate's ("the kitchen one" when the choices are the Kitchen Light and
    the Bed Light). Case and "the"/"in"/"please" do not matter.
    """
    said = _core(_words(text))
    if not said:
        return None
    if question.slot == AREA:
        candidates = list(question.choices or home.areas)
    else:
        candidates = list(question.choices or (e.name for e in home.entities))
    cores = {name: _core(_words(name)) for name in candidates}
    exact = [name for name, core in cores.items() if core == said]
    if len(exact) == 1:
        return exact[0]
    if question.choices:
        partial = [name for name, core in cores.items() if said < core]
        if len(partial) == 1:
            return partial[0]
    return None


def bare_slot(home, text: str) -> str | None:
    """The area or entity name ``text`` is on its own ("kitchen light", "the kitchen",
    "in the office please"), or None.

    Case BC-22's kind: a bare name is no command (no action word was said). Outside a
    question it must not act (Home Assistant's ``[<the>] {name}`` HassTurnOn sentence, a
    fuzzy or LLM reading); inside one it is the slot's answer (:func:`slot_answer`, asked
    first). Entities of :data:`NAMED_ACTIONS` are not bare slots.
    """
    said = _core(_words(text), BARE_FILLER)
    if not said:
        return None
    names = [e.name for e in home.entities if e.domain not in NAMED_ACTIONS]
    for name in [*home.areas, *names]:
        if _core(_words(name), BARE_FILLER) == said:
            return name
    return None


def fill(home, match: IntentMatch, slot: str, value: str) -> IntentMatch:
    """``match`` with ``slot`` set to ``value`` (as if said) and its targets resolved again;
    a delayed command's own command gets it too (:mod:`hub.intents.delay`)."""
    slots = {**match.slots, slot: value}
    context = tuple(c for c in match.context_slots if c != slot)
    if match.command is not None:
        inner = fill(home, match.command, slot, value)
        return replace(
            match, slots=slots, context_slots=context, command=inner, entities=inner.entities
        )
    targets = resolve_targets(home, match.intent, slots, match.response, context)
    return replace(match, slots=slots, context_slots=context, entities=targets.entities)


def slot_answer(
    home, question: SlotQuestion | None, text: str, said_no: bool = False
) -> dict | None:
    """The turn's state update when ``text`` answers ``question``, else None (a new request).

    ``said_no``: ``text`` is a no (:func:`hub.graph.confirmation.confirmation_answer`).
    Returns ``{"matches": [completed match], "source", "transcript"}`` for an answer,
    ``{"matches": [], "response": CANCELLED, ...}`` for a no, None otherwise (also when no
    question waits).
    """
    if question is None:
        return None
    if said_no:
        return {"matches": [], "response": CANCELLED, "source": "rules"}
    value = slot_value(home, question, text)
    if value is None:
        return None
    done = fill(home, question.match, question.slot, value)
    return {"matches": [done], "source": question.match.source or "rules", "transcript": text}


def question_of(match: IntentMatch, outcome) -> SlotQuestion | None:
    """The slot question an outcome asked (its ``asks``), with the match it completes."""
    slot = getattr(outcome, "asks", "")
    return SlotQuestion(match, slot) if slot else None


def record_turn(conversation, home, matches, outcomes) -> None:
    """After the act node: keep the question an outcome asked, or what was acted on.

    Args:
        conversation: the turn's :class:`hub.core.conversation.Conversation`.
        home: the :class:`hub.home.Home` (only its entities count as "it"; lists and timers
            do not).
        matches: the turn's matches; outcomes: their :class:`hub.act.common.Outcome`, in order.
    """
    acted: list[str] = []
    for match, outcome in zip(matches, outcomes, strict=False):
        asked = question_of(match, outcome)
        if asked is not None:
            conversation.ask_slot(asked)
            return
        if not outcome.ok:
            continue
        names = [a.get("entity") for a in outcome.actions] or (
            list(match.entities) if match.slots.get(NAME) else []
        )
        for name in names:
            entity = home.entity(name) if isinstance(name, str) else None
            if entity is not None and entity.domain != "todo" and entity.name not in acted:
                acted.append(entity.name)
    conversation.acted_on(acted)
