"""``transcript`` -> ``handled``/``not-handled`` through the whole turn graph; ``recognize``
-> ``intent``/``not-recognized`` with the rules alone (nothing is done).

The conversation (pending confirmation of a sensitive action, area) is the one of the
client's ``context`` (``conversation_id``, else ``satellite_id``/``device_id``), else the
connection's own (a new id per connection, dropped when it closes), so a "yes" confirms only a
question asked in the same conversation.

Text is guarded like ``hub ask``'s (:func:`hub.intents.utterance.text_problem`: at most
:data:`~hub.intents.utterance.MAX_TEXT_CHARS` characters, no control characters): a text that
is no utterance raises :class:`~hub.errors.BadInputError`, which the connection answers with
an ``error`` event (code ``BadInputError``) and stays open; an empty one is ``not-handled``.
"""

from __future__ import annotations

from wyoming.handle import Handled, NotHandled
from wyoming.intent import Entity, Intent, NotRecognized

from hub.errors import BadInputError
from hub.graph.answers import ACT_FAILED, NOT_UNDERSTOOD, PLACEHOLDER_TEXT
from hub.intents.utterance import text_problem

NOT_HANDLED_TEXTS = frozenset({NOT_UNDERSTOOD, PLACEHOLDER_TEXT, ACT_FAILED})
"""Answers that mean the request was not carried out."""


def conversation_id(context: dict | None) -> str | None:
    """The conversation a client's ``context`` names, or None."""
    if not isinstance(context, dict):
        return None
    for key in ("conversation_id", "satellite_id", "device_id"):
        value = context.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def answer_event(trace: dict, cid: str):
    """``handled`` with the spoken text, or ``not-handled`` (with it too) for a trace."""
    text = (trace.get("response_full") or trace.get("response") or "").strip()  # HA caps its own
    context = {"conversation_id": cid}
    if not text or text in NOT_HANDLED_TEXTS or trace.get("status") in ("no_speech", "bad_input"):
        return NotHandled(text=text or NOT_UNDERSTOOD, context=context).event()
    return Handled(text=text, context=context).event()


def checked(kind: str, text) -> str:
    """``text`` stripped, when it is an utterance (see the module doc; "" stays "").

    Raises:
        BadInputError: not a string, too long, or with control characters; the message says
            which (``"transcript is too long (2400 characters; at most 1000)"``).
    """
    if not isinstance(text, str):
        raise BadInputError(f"{kind} has no text", node="wyoming")
    problem = text_problem(text.strip())
    if problem:
        raise BadInputError(f"{kind} is {problem}", node="wyoming")
    return text.strip()


def handle_text(hub, text: str, context: dict | None, default_id: str):
    """Run ``text`` as one turn (blocking; call on a worker thread); the answer event.

    Raises:
        BadInputError: ``text`` is no utterance (:func:`checked`).
    """
    cid = conversation_id(context) or default_id
    text = checked("transcript", text)
    if not text:
        return NotHandled(text=NOT_UNDERSTOOD, context={"conversation_id": cid}).event()
    result = hub.answer_text(text, conversation=hub.conversation(cid))
    return answer_event(result.trace, cid)


def recognize_text(hub, text: str, area: str | None = None):
    """The rules' intent for ``text`` as an ``intent`` event, else ``not-recognized``.

    Raises:
        BadInputError: ``text`` is no utterance (:func:`checked`).
    """
    text = checked("recognize", text)
    match = hub.engines.rules().recognize(text, area) if text else None
    if match is None:
        return NotRecognized(text=NOT_UNDERSTOOD).event()
    entities = [Entity(name=k, value=v) for k, v in match.slots.items()]
    return Intent(name=match.intent, entities=entities).event()
