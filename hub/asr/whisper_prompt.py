"""The second pass's bias: an initial prompt made of the home's names, areas and intent words.

Whisper conditions its first window on the "previous text" (``initial_prompt``); a prompt
that reads like earlier commands of this home makes it spell the home's names as the home
does ("Standing Light", "EcoBee"; measured on shared/audio/real: 14 of 16 in-home clips
right with the names, "wood lighting" / "chocolate list" without them, design.md
"Measured"). Whisper keeps at most 223 prompt tokens (half its 448-token context, less
one), so the prompt is capped at :data:`MAX_WORDS` words: names first (areas, then entities
in the home's order, then their aliases), then a few command and question phrasings.
"""

from __future__ import annotations

INTENT_WORDS = (
    "Turn on the lights. Turn off the lights in the kitchen. Set a timer for 5 minutes. "
    "Pause timer. Resume timer. Cancel timer. Next. Skip. What time is it? What's the date? "
    "What's the weather? What's the temperature? Is the door locked? Open the garage door. "
    "Add milk to my shopping list."
)
"""Phrasings of the home's intents (timers, media, facts, lists), always in the prompt."""

MAX_WORDS = 120
"""Most words in the prompt (about 170 tokens: inside Whisper's 223-token prompt limit)."""


def initial_prompt(home, max_words: int = MAX_WORDS) -> str:
    """The initial prompt for ``home`` (:class:`hub.settings.HomeSettings`).

    Returns:
        ``"Kitchen, Office. Bed Light, Standing Light, ... Turn on the lights. ..."``, at
        most ``max_words`` words; names are cut first when the home is large (the intent
        words are kept whole).
    """
    budget = max(0, max_words - len(INTENT_WORDS.split()))
    names: list[str] = []
    used = 0
    for name in _names(home):
        words = len(name.split())
        if name in names or used + words > budget:
            continue
        names.append(name)
        used += words
    return (", ".join(names) + ". " if names else "") + INTENT_WORDS


def names_in_prompt(home, max_words: int = MAX_WORDS) -> int:
    """How many of ``home``'s names :func:`initial_prompt` holds (logged at start, BC-50)."""
    text = initial_prompt(home, max_words)
    return sum(1 for n in set(_names(home)) if n in text)


def _names(home) -> list[str]:
    """Areas, then entity names, then area and entity aliases (BC-50), in the home's order."""
    entities = [e["name"] for e in home.entities]
    aliases = [a for e in [*home.areas, *home.entities] for a in e.get("aliases", ())]
    return [a["name"] for a in home.areas] + entities + aliases
