"""The last check before an LLM intent may act: it must name what the person said.

The LLM's output has already passed :func:`hub.llm.parse.parse_intent` (known intent, known
names, confidence). This check adds that each entity or area it targets is *mentioned* in the
transcript: at least one distinctive word of the name appears (``"kitchen"`` for
``Kitchen Light``; generic words like "light" or "door" do not count). A paraphrase can imply
an entity ("it's too dark in the kitchen") but never reach one nobody named.
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger("hub.llm")

GENERIC_WORDS = frozenset({"the", "a", "an", "light", "lights", "lamp", "door", "doors", "of",
                           "in", "on", "my", "switch", "sensor", "list"})


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def mentioned(name: str, transcript: str) -> bool:
    """True when a distinctive word of ``name`` occurs in ``transcript`` (case-insensitive)."""
    said = _words(transcript)
    distinctive = _words(name) - GENERIC_WORDS
    return bool(distinctive & said) if distinctive else bool(_words(name) & said)


def to_match(result, transcript: str, home):
    """An :class:`hub.intents.IntentMatch` for the LLM ``result``, or None if it names what was not said.

    Args:
        result: a :class:`hub.llm.parse.LlmIntent` (slots ``name``/``area`` canonical).
        transcript: what the person said.
        home: the :class:`hub.home.Home` (to resolve an area to its entities).
    """
    from hub.intents import IntentMatch

    slots = dict(result.slots)
    targets = [v for k, v in slots.items() if k in ("name", "area") and isinstance(v, str)]
    for target in targets:
        if not mentioned(target, transcript):
            log.warning("llm named %r, which the transcript %r does not mention; not acting",
                        target, transcript)
            return None
    name = slots.get("name")
    entities = (name,) if isinstance(name, str) else ()
    return IntentMatch(intent=result.intent, slots=slots, text=transcript, source="llm",
                       entities=entities)
