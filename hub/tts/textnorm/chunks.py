"""Cut text into sentences Piper can say one at a time, and cap how much is said.

Sentence-by-sentence synthesis is the fix for BC-09 (a "?" mid-utterance silenced the rest,
OpenVoiceOS/ovos-tts-plugin-piper PR #7) and bounded chunks the fix for BC-10 (long answers
timed out on slow CPUs, home-assistant/addons #3360). Text is never cut inside a word.
"""

from __future__ import annotations

import re

CUT_NOTICE = "That is all I can say for now."
"""Spoken after an answer that :func:`cap_text` cut short."""

_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n+")
"""The end of a sentence: terminal punctuation before a space or the end, or a line break."""
_CLAUSE_END = re.compile(r"[,;:]+(?=\s)")
_TRIM = " \t\n,;:-"


def _sentences(text: str) -> list[str]:
    """Sentences of ``text``, each keeping its closing punctuation, stripped; no empty ones."""
    pieces, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        pieces.append(text[start : m.end()])
        start = m.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def _pieces_at(pattern: re.Pattern, text: str) -> list[str]:
    """``text`` split after each match of ``pattern`` (the match stays on the left piece)."""
    pieces, start = [], 0
    for m in pattern.finditer(text):
        pieces.append(text[start : m.end()].strip())
        start = m.end()
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


def _pack(pieces: list[str], max_chars: int) -> list[str]:
    """Join neighbouring pieces with spaces while the result fits in ``max_chars``."""
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) + 1 + len(piece) <= max_chars:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _bounded(sentence: str, max_chars: int) -> list[str]:
    """One sentence as pieces of at most ``max_chars``: at , ; : first, then between words.

    A single word longer than ``max_chars`` stays whole (it is never cut).
    """
    if len(sentence) <= max_chars:
        return [sentence]
    out: list[str] = []
    for clause in _pack(_pieces_at(_CLAUSE_END, sentence), max_chars):
        if len(clause) <= max_chars:
            out.append(clause)
        else:
            out.extend(_pack(clause.split(), max_chars))
    return out


def split_sentences(text: str, max_chars: int) -> list[str]:
    """Split ``text`` into sentences of at most ``max_chars`` characters.

    Splits at sentence punctuation (. ! ? and line breaks); a longer sentence is split at
    , ; : and then between words, never inside a word (a single word longer than
    ``max_chars`` is kept whole). Pieces without a letter or digit are dropped. Sentences are
    not merged with each other: one piece is one Piper call.

    Raises:
        ValueError: ``max_chars`` < 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    out: list[str] = []
    for sentence in _sentences(text):
        out.extend(_bounded(sentence, max_chars))
    return [p for p in out if any(ch.isalnum() for ch in p)]


def cap_text(text: str, max_chars: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_chars`` characters at a sentence or word boundary.

    Returns ``(text, False)`` when it fits. Otherwise the text ends at the last sentence end
    within the limit when that keeps at least half of it, else at the last space; it ends
    with a full stop, and the flag is True: the caller says :data:`CUT_NOTICE` after it
    (BC-10: announced, never cut mid-word). A first word longer than the limit gives "".

    Raises:
        ValueError: ``max_chars`` < 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    text = text.strip()
    if len(text) <= max_chars:
        return text, False
    window = text[: max_chars + 1]  # one more: a boundary right at the limit counts
    ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() <= max_chars]
    if ends and ends[-1] >= max_chars // 2:
        cut = text[: ends[-1]]
    else:
        space = max(window.rfind(" "), window.rfind("\n"))
        cut = text[:space] if space > 0 else ""
    cut = cut.strip().rstrip(_TRIM)
    if cut and cut[-1] not in ".!?":
        cut += "."
    return cut, True
