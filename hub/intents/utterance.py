"""The one guard on text given as an utterance: ``hub ask`` (argument or stdin line) and a
Wyoming ``transcript`` / ``recognize`` event go through :func:`text_problem` before any turn.
"""

from __future__ import annotations

MAX_TEXT_CHARS = 1000
"""Longest utterance taken (characters, after stripping): a spoken command is under 200
characters, and a longer text (a pasted file) would only spend the turn's deadline in the
rules and the LLM."""


def text_problem(text: str) -> str | None:
    """Why ``text`` is no utterance, or None when it is one.

    Args:
        text: the utterance (str; the caller strips it). Undecodable bytes are expected as
            U+FFFD (``errors="replace"``).
    Returns:
        None for text of at most :data:`MAX_TEXT_CHARS` characters made of printable
        characters and white space, in any language; else one lower-case phrase for the
        user: ``"too long (N characters; at most M)"`` or ``"not text (N control characters
        or undecodable bytes)"`` (binary input). An empty text is not refused here.
    """
    if len(text) > MAX_TEXT_CHARS:
        return f"too long ({len(text)} characters; at most {MAX_TEXT_CHARS})"
    return not_text(text)


def not_text(text: str) -> str | None:
    """``"not text (N control characters or undecodable bytes)"`` when ``text`` holds control
    characters, lone surrogates (undecodable bytes of a command line) or U+FFFD; else None.
    Any length (``hub say`` reads long texts too)."""
    odd = sum(1 for c in text if (not c.isprintable() and not c.isspace()) or c == "\ufffd")
    if odd:
        return f"not text ({odd} control characters or undecodable bytes)"
    return None
