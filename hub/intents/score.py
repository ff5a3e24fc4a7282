"""Scoring turns against what was said: the expected intent of a sentence, and a comparison.

Shared by ``hub replay --score/--expect`` and ``hub bench``. What a sentence should give is
what the rules give for its text (so a file named after its sentence scores itself); a name
starting with ``oov_``, or an empty sentence, expects no intent.
"""

from __future__ import annotations

from pathlib import Path


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
    """True when the trace's intent and slots are ``want`` (no intent when ``want`` has none)."""
    if want[0] is None:
        return trace["intent"] is None
    return trace["intent"] == want[0] and slots_equal(trace["slots"], want[1])


def read_expect(path: Path) -> dict[str, str]:
    """An ``--expect`` file: ``{file name or stem: sentence}``.

    One line per file, ``NAME<TAB>SENTENCE`` (or ``NAME | SENTENCE``); ``#`` starts a
    comment; an empty sentence or ``-`` means the file should give no intent.

    Raises:
        ValueError: a line has no separator (the message names the line number).
    """
    table = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        sep = "\t" if "\t" in line else " | " if " | " in line else None
        if sep is None:
            raise ValueError(f"line {n}: expected NAME<TAB>SENTENCE or NAME | SENTENCE")
        name, sentence = (part.strip() for part in line.split(sep, 1))
        table[name] = "" if sentence == "-" else sentence
    return table
