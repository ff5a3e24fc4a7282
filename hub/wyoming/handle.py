"""``transcript`` -> ``handled``/``not-handled`` through the whole turn graph; ``recognize``
-> ``intent``/``not-recognized`` with the rules alone (nothing is done).

The conversation (pending confirmation of a sensitive action, area) is the one of the
client's ``context`` (``conversation_id``, else ``satellite_id``/``device_id``), so a "yes"
confirms only a question asked in the same conversation.
"""

from __future__ import annotations

from wyoming.handle import Handled, NotHandled
from wyoming.intent import Entity, Intent, NotRecognized

from hub.graph.nodes import ACT_FAILED, NOT_UNDERSTOOD
from hub.intents.faq import PLACEHOLDER_TEXT

MAX_TEXT_CHARS = 2000
"""Longer transcripts are not run (``not-handled``)."""

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


def handle_text(hub, text: str, context: dict | None, default_id: str):
    """Run ``text`` as one turn (blocking; call on a worker thread); the answer event."""
    cid = conversation_id(context) or default_id
    if not text.strip() or len(text) > MAX_TEXT_CHARS:
        return NotHandled(text=NOT_UNDERSTOOD, context={"conversation_id": cid}).event()
    result = hub.answer_text(text, conversation=hub.conversation(cid))
    return answer_event(result.trace, cid)


def recognize_text(hub, text: str, area: str | None = None):
    """The rules' intent for ``text`` as an ``intent`` event, else ``not-recognized``."""
    match = hub.engines.rules().recognize(text, area) if text.strip() else None
    if match is None:
        return NotRecognized(text=NOT_UNDERSTOOD).event()
    entities = [Entity(name=k, value=v) for k, v in match.slots.items()]
    return Intent(name=match.intent, entities=entities).event()
