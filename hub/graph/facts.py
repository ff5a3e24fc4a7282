"""The rules node's fact step: time, date, weather and device-state questions answered from
their source (the clock, the weather entity, ``[home]``), never by the LLM."""

from __future__ import annotations

import logging

log = logging.getLogger("hub.graph")


def fact_update(hub, text: str) -> dict | None:
    """The update answering a fact question from its source (:mod:`hub.llm.facts`), or None."""
    from datetime import datetime

    from hub.intents.rules import IntentMatch
    from hub.llm.facts import route

    fact = route(text, hub.home, datetime.now())
    if fact is None:
        return None
    log.info("fact question (%s) answered from its source: %r", fact.topic, text)
    if fact.response:
        return {"matches": [], "response": fact.response, "intent": fact.intent,
                "slots": dict(fact.slots), "source": "rules", "transcript": text}
    name = fact.slots.get("name")
    match = IntentMatch(fact.intent, dict(fact.slots), text, source="rules",
                        entities=(name,) if name else ())
    return {"matches": [match], "transcript": text, "source": "rules"}
