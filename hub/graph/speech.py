"""Text that is about to be spoken: no JSON, code fences, markup or emoji (case BC-13); joined
responses; what the trace says was spoken when the TTS cut an answer."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*|```")
_TAG = re.compile(r"</?[a-zA-Z][^<>]{0,200}>")
_MARKS = re.compile(r"[{}\[\]`*_#|<>~^\\]")


def clean_answer(text: str) -> str:
    """``text`` fit for TTS: code fences, HTML tags, JSON braces and markdown marks removed.

    A JSON object is dropped, except the value of an ``answer``/``text``/``response`` key
    (``{"answer": "blue"}`` -> ``blue``); an intent object says nothing. Returns "" when nothing speakable remains.
    """
    text = _FENCE.sub(" ", text)
    text = _TAG.sub(" ", text)
    if "{" in text and ":" in text:
        values = re.findall(r'"(?:answer|text|response|reply|message)"\s*:\s*"([^"]*)"', text)
        text = re.sub(r"\{.*\}", " ", text, flags=re.S) + " " + " ".join(values)
    if "{" in text or "}" in text or "`" in text or re.search(r'"[^"]{1,40}"\s*:', text) \
            or re.match(r"\s*json\b", text, re.I):
        return ""  # a piece of JSON or code (cut by the sentence splitter): never read aloud
    text = _MARKS.sub(" ", text)
    text = " ".join(text.split())
    return text if any(ch.isalnum() for ch in text) else ""


def spoken_update(pieces: list[str]) -> dict:
    """``{"spoken": text}`` when the TTS cut the answer (its last piece is the cut notice,
    :func:`hub.tts.textnorm.cap_text`): the trace then shows what was said; else {}.

    ``pieces``: the text of each audio chunk played, in order (:class:`hub.audio.pcm.AudioChunk`).
    """
    from hub.tts.textnorm import CUT_NOTICE

    return {"spoken": " ".join(pieces)} if CUT_NOTICE in pieces else {}


def join_sentences(texts) -> str:
    """Join responses into one text, each ending as a sentence ("Done. Timer set.")."""
    out = []
    for text in texts:
        text = (text or "").strip()
        if text:
            out.append(text if text[-1] in ".!?" else text + ".")
    return " ".join(out)
