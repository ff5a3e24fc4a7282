"""Text that is about to be spoken: joined responses; what the trace says was spoken when the
TTS cut an answer. (Markup is removed by :mod:`hub.llm.markup`.)"""

from __future__ import annotations

from hub.act.responses import sentence
from hub.tts.textnorm import CUT_NOTICE


def spoken_update(pieces: list[str]) -> dict:
    """``{"spoken": text}`` when the TTS cut the answer (its last piece is the cut notice,
    :func:`hub.tts.textnorm.cap_text`): the trace then shows what was said; else {}.

    ``pieces``: the text of each audio chunk played, in order (:class:`hub.audio.pcm.AudioChunk`).
    """
    return {"spoken": " ".join(pieces)} if CUT_NOTICE in pieces else {}


def join_sentences(texts) -> str:
    """Join responses into one text, each ending as a sentence ("Done. Timer set.")."""
    return " ".join(said for said in (sentence(text or "") for text in texts) if said)
