"""Scoring turns against what was said: the expected intent of a sentence, and a comparison.

Shared by ``hub replay --score/--expect`` and ``hub bench``. What a sentence should give is
what the rules give for its text (so a file named after its sentence scores itself). A name
starting with ``oov_`` (out-of-home speech), an empty sentence, or one the rules do not
understand expects a rejection: it is right when nothing was done (no intent, or an intent that
was not carried out: asked back, refused, answered; the trace's ``acted``), and wrong when a
command was carried out.
"""

from __future__ import annotations

from pathlib import Path

from hub.paths import read_user_text


def slots_equal(got: dict, want: dict) -> bool:
    """Case-insensitive slot comparison; numbers compare as numbers."""

    def norm(v):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, str):
            try:
                return float(v)
            except ValueError:
                return v.strip().lower()
        return v

    return {k: norm(v) for k, v in got.items()} == {k: norm(v) for k, v in want.items()}


def expected_for(rules, sentence: str) -> tuple[str | None, dict]:
    """(intent, slots) the rules give for ``sentence``; (None, {}) for none or ``oov_...``."""
    if not sentence.strip() or sentence.startswith("oov_"):
        return None, {}
    match = rules.recognize(sentence)
    return (match.intent, dict(match.slots)) if match else (None, {})


def expected(rules, path: Path) -> tuple[str | None, dict]:
    """The intent and slots the rules give for the file's name (``oov_*``: none)."""
    return expected_for(rules, path.stem)


def correct(trace: dict, want: tuple[str | None, dict]) -> bool:
    """True when the trace's intent and slots are ``want``; when ``want`` has no intent (a
    rejection is right), when nothing was carried out: no intent, or ``acted`` false (a
    question asked back, a refusal). A trace without ``acted`` (a bare reading of the rules)
    counts its intent as acted on."""
    if want[0] is None:
        return trace["intent"] is None or trace.get("acted", True) is False
    return trace["intent"] == want[0] and slots_equal(trace["slots"], want[1])


OOV_RULE = (
    "a file named oov_* is speech that is no command for this home: right when nothing is "
    "done (rejected, not understood, answered, or asked back without acting), wrong when a "
    "command is carried out"
)
"""How ``oov_*`` files are scored, as ``hub replay --help`` and ``hub bench --help`` say it."""


def read_expect(path: Path) -> dict[str, str]:
    """An ``--expect`` file: ``{file name or stem: sentence}``.

    One line per file, ``NAME<TAB>SENTENCE`` (or ``NAME | SENTENCE``); ``#`` starts a
    comment; an empty sentence or ``-`` means the file should give no intent.

    Raises:
        ValueError: a line has no separator (the message names the line number).
        OSError: unreadable, not a regular file, or too large (:func:`hub.paths.read_user_text`).
        UnicodeDecodeError: not UTF-8.
    """
    table = {}
    for n, line in enumerate(read_user_text(path).splitlines(), 1):
        line = line.split("#", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        sep = "\t" if "\t" in line else " | " if " | " in line else None
        if sep is None:
            raise ValueError(f"line {n}: expected NAME<TAB>SENTENCE or NAME | SENTENCE")
        name, sentence = (part.strip() for part in line.split(sep, 1))
        table[name] = "" if sentence == "-" else sentence
    return table
