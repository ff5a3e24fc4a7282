"""Numbers that sound alike: the competing readings of a number said in a command.

A number is heard in the grammar as a digit token ("50", pronounced "fifty"). The en-us
acoustic model, and Whisper too, confuse numbers whose spoken forms differ by one short
stretch: the -teen/-ty pairs ("fifteen" / "fifty": one /n/ and the stress) above all, a
number and its -ty ("six" / "sixty"), and numbers one phone apart ("eight" / "eighty").
Each is a different duration, percentage, temperature or time, so a reading with a number
is checked against these rivals like "on" against "off" (:mod:`hub.asr.confusion`).
"""

from __future__ import annotations

NUMBER_WORDS = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
    ]
)
"""Number words (a number the grammar or Whisper wrote out)."""

TEEN_TY = {13 + i: 30 + 10 * i for i in range(7)} | {30 + 10 * i: 13 + i for i in range(7)}
"""13 <-> 30, 14 <-> 40, ... 19 <-> 90."""

ALIKE = {n: (10 * n,) for n in range(3, 10)} | {10 * n: (n,) for n in range(3, 10)}
ALIKE |= {8: (80, 18), 18: (8, 80), 80: (8, 18), 5: (50, 9), 9: (90, 5)}
"""Other close numbers: a digit and its -ty ("six" / "sixty", two phones apart in CMUdict;
"eight" / "eighty" one), "eighteen" with both, and "five" / "nine" (two phones, one vowel
shared); chosen by the phone edit distance of the spelled forms (BENCHMARKS.md, "Numbers
said in commands")."""

MAX_RIVALS = 3
"""Rivals per number at most (each is one more forced alignment)."""


def rivals(token: str) -> list[str]:
    """The numbers ``token`` (a digit string) may have been misheard for, closest first:
    its -teen/-ty partner, then :data:`ALIKE`; at most :data:`MAX_RIVALS`. Empty for a
    token that is not a whole number."""
    if not token.isdigit():
        return []
    value = int(token)
    found = ([TEEN_TY[value]] if value in TEEN_TY else []) + list(ALIKE.get(value, ()))
    return [str(n) for n in dict.fromkeys(found) if n != value][:MAX_RIVALS]


def is_teen_ty(a: str, b: str) -> bool:
    """True when the digit strings ``a`` and ``b`` are a -teen/-ty pair ("15", "50")."""
    return a.isdigit() and b.isdigit() and TEEN_TY.get(int(a)) == int(b)


def teen_ty_swap(text: str, rival: str) -> bool:
    """True when ``rival`` is ``text`` with one number swapped for its -teen/-ty partner
    ("set a timer for 15 minutes" / "... 50 minutes")."""
    words, other = text.split(), rival.split()
    if len(words) != len(other):
        return False
    changed = [(a, b) for a, b in zip(words, other, strict=True) if a != b]
    return len(changed) == 1 and is_teen_ty(*changed[0])


def teen_ty_rivals(text: str) -> list[str]:
    """``text`` with each of its -teen/-ty numbers swapped for its partner (none without)."""
    return [r for r in number_rivals(text) if teen_ty_swap(text, r)]


def number_rivals(text: str) -> list[str]:
    """``text`` with one of its numbers replaced by each of its :func:`rivals`, in order."""
    words = text.split()
    return [
        " ".join([*words[:i], other, *words[i + 1 :]])
        for i, word in enumerate(words)
        for other in rivals(word)
    ]


def has_number(text: str) -> bool:
    """True when ``text`` holds a number, as digits or words ("set a timer for 15 minutes",
    "in thirteen minutes")."""
    return any(any(c.isdigit() for c in w) or w in NUMBER_WORDS for w in text.lower().split())
