"""Sentence streaming: turn a stream of generated text pieces into speakable sentences.

A sentence ends at ``.``, ``!`` or ``?`` (one or more, then optional closing quotes or
brackets) followed by whitespace; the remainder is flushed when the stream ends. Each
sentence is yielded as soon as its end is seen, so TTS can start on the first one while the
model writes the second (hassil-style generator core, thin wrappers on top).

Sentences are cleaned for speech (:func:`hub.llm.markup.clean_sentence`): markup characters
(backticks, braces, ``*``, ``#``) are removed, so raw JSON or code never reaches TTS (BC-13),
and a sentence with no letter or digit is dropped (BC-08: nothing to say).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator

from hub.llm.markup import clean_sentence

_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)")
_ABBREVIATIONS = ("mr.", "mrs.", "ms.", "dr.", "st.", "e.g.", "i.e.", "vs.", "approx.")


def _split_point(buffer: str, start: int = 0) -> int | None:
    """Index just after the first sentence end in ``buffer`` at or after ``start``, or None."""
    for match in _END.finditer(buffer, start):
        head = buffer[: match.end()].rsplit(None, 1)[-1].lower()
        if head in _ABBREVIATIONS:
            continue
        return match.end()
    return None


def stream_sentences(
    pieces: Iterable[str],
    max_sentences: int | None = None,
    cancel: threading.Event | None = None,
    keep_tail: Callable[[], bool] | None = None,
) -> Iterator[str]:
    """Yield each complete, cleaned sentence of the text in ``pieces`` as soon as it ends.

    Args:
        pieces: text fragments in order (tokens, SSE deltas); closed when this generator stops.
        max_sentences: stop after this many sentences (the source is closed, which stops
            generation); None: no limit.
        cancel: when set, stop before reading the next piece.
        keep_tail: asked once the pieces end; False drops the unfinished last sentence
            (a generation cut by its token limit); None keeps it.

    Yields:
        Sentences with their end punctuation, stripped of markup; empty ones are skipped.
    """
    buffer, count = "", 0
    source = iter(pieces)
    try:
        for piece in source:
            if cancel is not None and cancel.is_set():
                return
            buffer += piece
            while (cut := _split_point(buffer)) is not None:
                sentence, buffer = clean_sentence(buffer[:cut]), buffer[cut:]
                if sentence:
                    yield sentence
                    count += 1
                    if max_sentences is not None and count >= max_sentences:
                        return
        tail = clean_sentence(buffer)
        if (
            tail
            and not (cancel is not None and cancel.is_set())
            and (keep_tail is None or keep_tail())
        ):
            yield tail
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


UNSURE = "I'm not sure about that."
"""Said instead of an answer the model was not sure of (:func:`withhold_unsure`)."""


def withhold_unsure(
    sentences: Iterable[str], sureness: Callable[[], float], minimum: float
) -> Iterator[str]:
    """Each sentence of ``sentences`` while ``sureness()`` is at least ``minimum``.

    ``sureness()`` is read as each sentence arrives (for a local model, the mean log-probability
    of its most likely token over what it generated so far). The first sentence below
    ``minimum`` is replaced by :data:`UNSURE`; a later one ends the answer (what was said
    stays, nothing unsure is added). A small model that is unsure of its words is usually
    wrong (measured in BENCHMARKS.md, "LLM answers"), and a wrong fact is worse than none.
    """
    source = iter(sentences)
    try:
        for index, sentence in enumerate(source):
            if sureness() < minimum:
                if index == 0:
                    yield UNSURE
                return
            yield sentence
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


def split_sentences(text: str, max_sentences: int | None = None) -> list[str]:
    """All cleaned sentences of ``text`` (a thin wrapper over :func:`stream_sentences`)."""
    return list(stream_sentences([text], max_sentences))
