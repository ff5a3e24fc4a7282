"""One answer and one trace entry per command for a sentence of several commands.

"turn on the kitchen light and the bed light" is two commands; each handler answers in Home
Assistant's words ("Turned on the light"), which said twice tells nothing. :func:`answer`
makes the turn's one answer: a switched device named by its name, commands with the same
verb said together ("Turned on the Kitchen Light and the Bed Light."), any other answer as
its handler gave it, in order. A command whose every action was only queued or not sent is
left out here: what is said about it comes from :func:`hub.devices.queued.queued_update`
("I'll turn off the TV when it's reachable."), never that it was done. One command keeps its
handler's answer unchanged.

:func:`entries` is what the trace lists for each command (``commands``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hub.act.common import Outcome
from hub.act.responses import sentence, template
from hub.intents.catalog import has_side_effects
from hub.intents.match import IntentMatch

NAMED_INTENTS = ("HassTurnOn", "HassTurnOff")
"""Intents whose answer names its device when several commands are answered together."""

QUEUED = ("queued", "ha_queued")
"""Backend results of an action that may still happen (sent when the device is reachable)."""

NOT_SENT = ("unreachable", "unsupported", "ha_starting", "cancelled")
"""Backend results of an action that was not sent."""


def _verb(match: IntentMatch, outcome: Outcome) -> str | None:
    """What was done to a named device, as said before its name ("Turned on", "Opening":
    Home Assistant's word for its domain when it has one, else ``several`` of
    ``responses.toml``); None when the answer is not said with names."""
    slots = match.slots
    if match.intent not in NAMED_INTENTS or not slots.get("name") or slots.get("device_class"):
        return None
    if not outcome.ok or not outcome.actions:
        return None
    domain = outcome.actions[0].get("domain", "")
    said = template(match.intent, "button" if domain == "input_button" else domain)
    if said and "{" not in said:
        return said
    return template(match.intent, "several")


def _names(names: list[str]) -> str:
    items = [f"the {n}" for n in dict.fromkeys(names)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _said(verb: str, names: list[str]) -> str:
    """``verb`` and the devices' names: "Turned on the Kitchen Light and the Bed Light";
    another answer said for several devices with them, "Brightness set: the Bed Light and the
    Kitchen Light"; said for one device, as its handler said it ("Brightness set")."""
    if not verb.endswith(":"):
        return f"{verb} {_names(names)}"
    return f"{verb} {_names(names)}" if len(dict.fromkeys(names)) > 1 else verb[:-1]


def answer(
    matches: Sequence[IntentMatch], outcomes: Sequence[Outcome], results: Sequence[Sequence[str]]
) -> str:
    """The turn's answer for ``outcomes`` (one per match, in order; see the module).

    Args:
        matches: the commands. outcomes: what each did.
        results: the backend's result of each outcome's actions, in order ("done",
            "queued", ...; :meth:`hub.devices.backends.Devices.publish`).
    Returns:
        The sentences, each with its full stop; "" when nothing is to be said here.
    """
    if len(outcomes) == 1:
        return sentence(outcomes[0].response or "")
    pieces: list[str | tuple[str, list[str]]] = []
    named: dict[str, list[str]] = {}
    for match, outcome, said in zip(matches, outcomes, results, strict=True):
        if outcome.actions and said and all(r in QUEUED or r in NOT_SENT for r in said):
            continue  # said by queued_update, never as done
        verb = _verb(match, outcome)
        if verb is None and outcome.ok and outcome.actions:
            # the same answer of device commands said once, with the devices ("Brightness
            # set. Brightness set." said nothing of which)
            verb = f"{(outcome.response or '').strip().rstrip('.')}:"
        if verb is None:
            pieces.append(outcome.response)
        elif verb in named:
            named[verb] += [a["entity"] for a in outcome.actions]
        else:
            named[verb] = [a["entity"] for a in outcome.actions]
            pieces.append((verb, named[verb]))
    texts = (p if isinstance(p, str) else _said(*p) for p in pieces)
    return " ".join(s for s in (sentence(t or "") for t in texts) if s)


def result_of(outcome: Outcome, said: Sequence[str], intent: str) -> str:
    """One command's result: ``not_done`` (its handler refused or asked which device),
    ``not_sent`` (a device command the backend did not send), ``queued`` (sent when its
    device is reachable: may still happen), ``done``, or ``answered`` (a question, nothing
    to change)."""
    if not outcome.ok:
        return "not_done"
    if any(r in NOT_SENT for r in said):
        return "not_sent"
    if any(r in QUEUED for r in said):
        return "queued"
    return "done" if outcome.actions or has_side_effects(intent) else "answered"


def entry(match: IntentMatch, result: str, response: str = "") -> dict:
    """The trace's entry for one command: ``{intent, slots, entities, result, response}``."""
    return {
        "intent": match.intent,
        "slots": dict(match.slots),
        "entities": list(match.entities),
        "result": result,
        "response": sentence(response or ""),
    }


def entries(
    matches: Sequence[IntentMatch], outcomes: Sequence[Outcome], results: Sequence[Sequence[str]]
) -> list[dict]:
    """The trace's ``commands`` after acting: one :func:`entry` per match, in order."""
    return [
        entry(m, result_of(o, said, m.intent), o.response)
        for m, o, said in zip(matches, outcomes, results, strict=True)
    ]


def asked_entries(matches: Sequence[IntentMatch]) -> list[dict]:
    """The trace's ``commands`` of a turn that asked a yes/no first: each ``asked_back``."""
    return [entry(m, "asked_back") for m in matches]
