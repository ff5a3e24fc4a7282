"""The one markup cleaner: what a language model wrote, made fit to be spoken (case BC-13).

Models write markdown, code fences, HTML tags and JSON; none of it may reach the TTS.
:func:`clean_sentence` drops markup characters (one set, :data:`MARKS`) and spaces one
sentence; :func:`clean_answer` also removes code fences and tags and refuses what is JSON or
code, then cleans the rest the same way. Both return ``""`` when no word is left (BC-08:
nothing to say).
"""

from __future__ import annotations

import re

MARKS = re.compile(r"[{}\[\]`*_#|<>~^\\]+")
"""Markup characters never spoken: braces, brackets, backticks, markdown marks, tag brackets."""
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*|```")
_TAG = re.compile(r"</?[a-zA-Z][^<>]{0,200}>")
_ANSWER_VALUE = re.compile(r'"(?:answer|text|response|reply|message)"\s*:\s*"([^"]*)"')


def clean_sentence(text: str) -> str:
    """``text`` without markup characters and with single spaces; ``""`` if it has no word."""
    text = " ".join(MARKS.sub(" ", text).split())
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    return text if any(ch.isalnum() for ch in text) else ""


def clean_answer(text: str) -> str:
    """``text`` fit for TTS: code fences, HTML tags, JSON braces and markdown marks removed.

    A JSON object is dropped, except the value of an ``answer``/``text``/``response`` key
    (``{"answer": "blue"}`` -> ``blue``); an intent object says nothing. Returns "" when
    nothing speakable remains.
    """
    text = _FENCE.sub(" ", text)
    text = _TAG.sub(" ", text)
    if "{" in text and ":" in text:
        values = _ANSWER_VALUE.findall(text)
        text = re.sub(r"\{.*\}", " ", text, flags=re.S) + " " + " ".join(values)
    if (
        "{" in text
        or "}" in text
        or "`" in text
        or re.search(r'"[^"]{1,40}"\s*:', text)
        or re.match(r"\s*json\b", text, re.I)
    ):
        return ""  # a piece of JSON or code (cut by the sentence splitter): never read aloud
    return clean_sentence(text)
