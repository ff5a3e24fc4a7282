"""The one check of a delayed command ("in 10 minutes turn off the kitchen light"), on every path.

A delayed command is ``HassStartTimer`` with the slot ``conversation_command`` (Home Assistant's).
Whoever read it (strict hassil rules, the fuzzy matcher, the LLM classifier), it is acted on
only as :func:`delayed_match` makes it: the command itself must be understood by the rules
(strict, else, on the loose paths, one fuzzy reading); the delayed match then carries that
command's own match (``command``) and targets (``entities``). So the graph asks back a
sensitive target before the timer starts (:func:`hub.graph.confirmation.sensitive_targets`),
and the timer handler refuses or asks back a command that could not run, such as "turn off
the lights" with no area (:func:`hub.act.timing.start`), the same way for every path.

Only commands with side effects (the catalog's ``side_effects``) are delayed. "What time is it
in 5 minutes" is a question about later: :func:`delayed_match` gives the question's own match
with ``later_s`` (the delay in seconds), which :func:`hub.act.queries.later` answers from
the clock ("In 5 minutes it will be 3:47 PM.") or honestly ("I don't have a forecast.").
"""

from __future__ import annotations

import re
from dataclasses import replace

from hub.intents import catalog
from hub.intents.match import IntentMatch, duration_s, fuzzy_readings

COMMAND_SLOT = "conversation_command"
"""Home Assistant's slot for the command of a delayed command."""
LATER_SLOT = "later_s"
"""Slot of a question about later ("what time is it in 5 minutes"): the delay in seconds."""

DELAY_WORDS = re.compile(
    r"\b(in|after)\s+\S+(\s+and\s+a\s+half)?\s+(second|minute|hour)s?\b", re.IGNORECASE
)
"""A delay in a sentence ("in 10 minutes", "after an hour"): only such a sentence is tried as
a delayed command on the loose path (:meth:`hub.intents.rules.Rules.recognize_delayed`)."""


def is_delayed(match: IntentMatch) -> bool:
    """True when ``match`` (an :class:`IntentMatch`) is a delayed command."""
    return match.intent == "HassStartTimer" and bool(
        str(match.slots.get(COMMAND_SLOT) or "").strip()
    )


def inner_match(rules, text: str, area: str | None, loose: bool):
    """The rules' match of a delayed command's own ``text`` ("turn off the kitchen light").

    Strict hassil first; with ``loose`` (the fuzzy and LLM paths) else the fuzzy matcher's
    reading when it is exactly one command (:func:`hub.intents.match.fuzzy_readings`). A
    delayed command inside a delayed command is not taken. None when nothing reads it.
    """
    match = rules.recognize(text, area)
    if match is None and loose and rules.fuzzy_enabled:
        found = fuzzy_readings(rules.fuzzy, rules.home, text, area)
        match = found[0] if len(found) == 1 else None
    return None if match is None or is_delayed(match) else match


def delayed_match(rules, match, area: str | None, loose: bool = False):
    """``match`` made a delayed command that can be checked, or None when its command is not
    understood (then nothing is done later either).

    Args:
        rules: the :class:`hub.intents.rules.Rules` of the home.
        match: a ``HassStartTimer`` match with ``conversation_command`` (:func:`is_delayed`).
        area: the conversation's area; the command runs there unless one was spoken.
        loose: the match came from the fuzzy matcher or the LLM (see :func:`inner_match`).
    Returns:
        The match with ``command`` = the command's own match, ``entities`` = its targets and
        ``slots["area"]`` = ``area`` when none was said (listed in ``context_slots``). A
        command without side effects (a question) gives the question's match with
        :data:`LATER_SLOT` instead: nothing is delayed.
    """
    inner = inner_match(rules, str(match.slots[COMMAND_SLOT]).strip(), area, loose)
    if inner is None:
        return None
    if not catalog.has_side_effects(inner.intent):
        seconds = match.slots.get("duration_s")
        seconds = int(seconds) if seconds is not None else duration_s(match.slots)
        return replace(
            inner, slots={**inner.slots, LATER_SLOT: seconds}, text=match.text, source=match.source
        )
    slots, context = match.slots, match.context_slots
    if area and not slots.get("area"):
        slots, context = {**slots, "area": area}, (*context, "area")
    return replace(
        match, slots=slots, context_slots=context, entities=inner.entities, command=inner
    )


def in_words(slots: dict) -> str:
    """``"1 hour and 10 seconds"`` for a timer's ``hours``/``minutes``/``seconds`` slots (or
    ``duration_s``)."""
    if any(slots.get(k) for k in ("hours", "minutes", "seconds")):
        parts = [(float(slots.get(k) or 0), k[:-1]) for k in ("hours", "minutes", "seconds")]
    else:
        minutes, seconds = divmod(int(slots.get("duration_s") or 0), 60)
        parts = [(minutes // 60, "hour"), (minutes % 60, "minute"), (seconds, "second")]
    words = [f"{n:g} {unit}" + ("" if n == 1 else "s") for n, unit in parts if n]
    return " and ".join(words) or "a moment"
