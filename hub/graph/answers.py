"""The hub's fixed answers (their one home: the nodes, the Hub and the Wyoming handler read
them here) and their audio rendered ahead of time.

:class:`CannedAnswers` keeps the audio of :data:`CANNED` in the store, rendered with the
configured voice at start-up (:meth:`CannedAnswers.prerender`), so the placeholder (L4),
"Done." and "Sorry, I can't speak right now." play even when the TTS is down. Two of them also
ship as WAV files (en_US-joe-medium), for when none was rendered: the placeholder and
:data:`CANT_SPEAK`, so an answer that cannot be synthesized is always replaced by a sentence
that is true for it (:func:`hub.graph.synthesis.placeholder`).
"""

from __future__ import annotations

import hashlib
import logging
import wave
from collections.abc import Callable
from typing import Any

from hub.audio.pcm import AudioChunk
from hub.errors import HubError
from hub.intents.faq import PLACEHOLDER_TEXT
from hub.paths import DATA_DIR

log = logging.getLogger("hub.graph")

NOT_UNDERSTOOD = "Sorry, I couldn't understand that."
"""Home Assistant's answer when no intent matched."""

NOT_CAUGHT = "Sorry, I didn't catch that."
"""The answer to speech the recognizer rejected as outside the grammar (not silence)."""

DONE = "Done."
"""Said (pre-rendered) when every command of the turn was carried out but its answer cannot be
synthesized; never for a question, a refusal or a command only queued."""

CANT_SPEAK = "Sorry, I can't speak right now."
"""Said (pre-rendered) when the answer cannot be synthesized and no pre-rendered sentence says
what it says (a question asked back, a device's state, a partial success...)."""

ACT_FAILED = "Sorry, I couldn't do that right now."
"""The answer when a device action failed after its retry."""

NOTHING_TO_CONFIRM = "There's nothing to confirm."
"""The answer to a "yes" when no question is waiting (or it was asked too long ago)."""

NOT_SAVED = "I couldn't save that yet, so it may be lost when I stop."
"""Said after a change (a list item, a timer, an alarm) the store could not take in the turn
(locked by another process, read-only, damaged): it is held and written when the store can
(:mod:`hub.store.held`), but never claimed as kept."""

CANCELLED = "Okay, I won't."
"""The answer to a "no" after "Do you want me to ...?"."""

CANNED = (PLACEHOLDER_TEXT, ACT_FAILED, NOT_UNDERSTOOD, DONE, CANT_SPEAK)
"""The fixed answers rendered ahead of time (placeholder, failed action, not understood, done,
can't speak)."""

PLACEHOLDER_WAV = DATA_DIR / "placeholder.wav"
"""The placeholder as shipped (en_US-joe-medium), for when none was rendered."""

SHIPPED = {PLACEHOLDER_TEXT: PLACEHOLDER_WAV, CANT_SPEAK: DATA_DIR / "cant_speak.wav"}
"""Canned answers that also ship as WAV files (en_US-joe-medium, int16 mono)."""

__all__ = [
    "ACT_FAILED",
    "CANCELLED",
    "CANNED",
    "CANT_SPEAK",
    "DONE",
    "NOTHING_TO_CONFIRM",
    "NOT_CAUGHT",
    "NOT_UNDERSTOOD",
    "PLACEHOLDER_TEXT",
    "CannedAnswers",
    "response_key",
]


def response_key(text: str, voice: str | None = None) -> str:
    """The response-audio cache key of a text (normalized whitespace and case) and voice."""
    said = " ".join(text.lower().split()) + ("" if voice is None else "\x00" + voice)
    return hashlib.sha256(said.encode()).hexdigest()[:32]


class CannedAnswers:
    """The stored audio of the fixed answers.

    Args:
        store: a :class:`hub.store.db.Store`, or None (then only the shipped placeholder).
    """

    def __init__(self, store) -> None:
        self.store = store

    def audio(self, text: str) -> AudioChunk | None:
        """The stored audio of the canned answer ``text``, or None (not canned, not stored)."""
        if self.store is None or text not in CANNED:
            return None
        found = self.store.get_response_audio("canned:" + response_key(text))
        return AudioChunk(pcm=found[0], rate=found[1], text=text) if found else None

    def clip(self, text: str) -> AudioChunk | None:
        """The audio of canned answer ``text``: the copy rendered at start-up with the
        configured voice when there is one, else the one that ships (:data:`SHIPPED`), else
        None."""
        chunk = self.audio(text)
        if chunk is not None or text not in SHIPPED:
            return chunk
        with wave.open(str(SHIPPED[text]), "rb") as w:
            return AudioChunk(pcm=w.readframes(w.getnframes()), rate=w.getframerate(), text=text)

    def placeholder(self) -> tuple[bytes, int]:
        """The placeholder speech rendered ahead of time: ``(pcm int16 mono, rate)``.

        The copy rendered at start-up with the configured voice when there is one, else the
        one that ships (``hub/data/placeholder.wav``).
        """
        chunk = self.clip(PLACEHOLDER_TEXT)
        assert chunk is not None  # it ships
        return chunk.pcm, chunk.rate

    def prerender(self, tts: Callable[[], Any]) -> None:
        """Render the canned answers with ``tts()`` (the TTS engine) and store them.

        Skips what is stored already; a TTS that cannot load (HubError) leaves the shipped
        placeholder, logged.
        """
        if self.store is None:
            return
        for text in CANNED:
            if self.audio(text) is not None:
                continue
            try:
                engine = tts()
                chunks = list(engine.synthesize(text))
            except HubError as exc:
                log.warning("canned answers not rendered: %s", exc.message)
                return
            pcm = b"".join(c.pcm for c in chunks)
            self.store.put_response_audio(
                "canned:" + response_key(text), pcm, chunks[0].rate if chunks else engine.rate
            )
