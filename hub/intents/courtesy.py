"""Courtesy words around a command: "hey could you please turn on the kitchen light now
thanks" is "turn on the kitchen light".

Home Assistant's sentences take some of them ("please" in places), not all: a command the
rules miss is tried again once, with these words taken off its start and end only, never
from the middle (where "please don't" or "now and then" could change what is asked). None of
them is a word of :mod:`hub.intents.meaning`'s classes (no negation, time or condition), so a
command read without them asks for the same thing.
"""

from __future__ import annotations

import re

# Words, not phrases made of them: "could you please" is "could you" then "please".
_LEADING = (
    "hey",
    "hi",
    "hello",
    "ok",
    "okay",
    "so",
    "um",
    "uh",
    "well",
    "please",
    "kindly",
    "just",
    "could you",
    "can you",
    "would you",
    "will you",
    "i'd like you to",
    "i want you to",
)
_TRAILING = ("please", "thanks", "thank you", "now", "right now", "for me", "ok", "okay")


def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_HEAD = re.compile(rf"^(?:(?:{_alternation(_LEADING)})\b[\s,.!]*)+", re.IGNORECASE)
_TAIL = re.compile(rf"(?:[\s,.!]+(?:{_alternation(_TRAILING)}))+[\s,.!?]*$", re.IGNORECASE)


def without_courtesy(text: str) -> str | None:
    """``text`` with courtesy words taken off its start and end, or None when there are none
    (or nothing would be left).

    Args:
        text: a transcript or typed command (str).
    Returns:
        The shorter text, stripped ("hey, turn on the light, please!" -> "turn on the
        light"), or None.
    """
    core = _TAIL.sub("", _HEAD.sub("", text.strip())).strip(" ,.!")
    if not core or core == text.strip() or core.lower().endswith(" from"):
        return None  # "from now" is a time, not a courtesy
    return core
