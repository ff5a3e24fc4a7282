"""References: "turn it off", "turn them off", "make it brighter", "set it to 50 percent".

"it" and "them" mean the entities the conversation last acted on
(:meth:`hub.core.conversation.Conversation.last_acted`, kept for a few minutes by the
conversation's clock; each room or client has its own). The pronoun is replaced by each of
those names in turn and the sentence is matched by the strict rules again ("turn Kitchen Light
off"), so every phrasing Home Assistant's sentences know works with "it", and the resulting
matches go the usual way (a sensitive target is still asked back: "unlock it" after "is the
front door locked" asks "Do you want me to unlock the Front Door?").

- "them" (or "it" meaning one entity): one match per entity;
- "it" when the last action reached several entities: "Which one?", answered by a name among
  them in the next turn (:mod:`hub.intents.followup`);
- nothing acted on yet (or too long ago), and the sentence would be a command with a name in
  place of "it": "Which device do you mean?", answered by a name.

Only tried when the sentence matched no rule as it was said (so "what time is it" is never
touched). The text, typed or heard (``hub ask``, ``hub run``, Wyoming), reaches this the same
way: through the rules node.
"""

from __future__ import annotations

import re

from hub.intents.followup import NAME, WHICH_ONE, SlotQuestion

PRONOUN = re.compile(r"\b(it|them)\b", re.IGNORECASE)
"""The words that refer to what was last acted on."""

WHICH_DEVICE = "Which device do you mean?"
"""The question when "it" refers to nothing yet (the act layer's ``no_target`` text)."""

PROBE_DOMAINS = ("light", "switch", "fan", "cover", "lock", "media_player", "climate", "valve")
"""Domains tried to tell whether an unresolvable "it" sentence is a device command."""


def _rewritten(rules, text: str, name: str, area: str | None):
    """The strict match of ``text`` with its pronoun replaced by ``name``, when that match
    targets ``name``; else None."""
    match = rules.recognize(PRONOUN.sub(name, text, count=1), area)
    return match if match is not None and name in match.entities else None


def probe_command(rules, home, text: str, area: str | None = None):
    """A match ``text`` would have with some entity in place of "it" (one per domain of
    :data:`PROBE_DOMAINS` tried), or None: the sentence is not a device command. Also used
    by the recognizer's grammar check (:mod:`hub.asr.coverage`)."""
    tried = set()
    for entity in home.entities:
        if entity.domain in PROBE_DOMAINS and entity.domain not in tried:
            tried.add(entity.domain)
            match = _rewritten(rules, text, entity.name, area)
            if match is not None:
                return match
    return None


def _question(conversation, match, choices, response: str, text: str) -> dict:
    """Ask for the name (kept in the conversation); the turn's state update."""
    conversation.ask_slot(SlotQuestion(match, NAME, tuple(choices)))
    return {
        "matches": [],
        "response": response,
        "source": "rules",
        "intent": match.intent,
        "transcript": text,
    }


def referred_matches(rules, conversation, text: str) -> list | None:
    """The matches ``text`` would act on through its "it" / "them", without asking anything
    or changing the conversation (what :func:`resolve_reference` would do, for comparing two
    readings of the same audio: :mod:`hub.asr.second_pass`).

    Returns:
        One strict match per entity "it"/"them" stands for (:meth:`Conversation.last_acted
        <hub.core.conversation.Conversation.last_acted>`); for a singular "it" that may mean
        several entities, the match with the first of them (the question asked would be the
        same for any reading); None when ``text`` has no pronoun, nothing was acted on yet,
        or no rewritten sentence matches.
    """
    last = conversation.last_acted() if PRONOUN.search(text) else ()
    if not last:
        return None
    area = conversation.area
    if len(last) > 1 and not re.search(r"\bthem\b", text, re.IGNORECASE):
        last = last[:1]
    matches = [m for m in (_rewritten(rules, text, name, area) for name in last) if m]
    return matches or None


def resolve_reference(rules, home, conversation, text: str) -> dict | None:
    """The turn's state update for a sentence that says "it" / "them", else None.

    Args:
        rules: the strict matcher (:class:`hub.intents.rules.Rules`: ``recognize``).
        home: the :class:`hub.home.Home`.
        conversation: the turn's conversation (its area, what it last acted on; a question is
            kept in it).
        text: the transcript, which matched no rule as said.
    Returns:
        ``{"matches": [...], "source": "rules", "transcript": text}`` when the reference
        resolves; a question's update ("Which one?", "Which device do you mean?"); None when
        ``text`` has no pronoun or is no command even with a name in its place.
    """
    if not PRONOUN.search(text):
        return None
    area, last = conversation.area, conversation.last_acted()
    if not last:
        probe = probe_command(rules, home, text, area)
        return None if probe is None else _question(conversation, probe, (), WHICH_DEVICE, text)
    plural = bool(re.search(r"\bthem\b", text, re.IGNORECASE))
    if len(last) > 1 and not plural:
        first = _rewritten(rules, text, last[0], area)
        return None if first is None else _question(conversation, first, last, WHICH_ONE, text)
    matches = [m for m in (_rewritten(rules, text, name, area) for name in last) if m]
    if not matches:  # "make them brighter" after a light and the TV: the light only
        return None
    return {"matches": matches, "source": "rules", "transcript": text}
