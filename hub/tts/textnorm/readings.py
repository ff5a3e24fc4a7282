"""Readings people use that a number pattern alone cannot tell (issue 23): durations against
clock times, years, digit strings, and text in a script the voice cannot say.

- ``1:30 left``, ``Timer: 0:45``, ``for 1:05:00`` are durations ("one minute thirty seconds"),
  told from clock times (``at 07:45`` "seven forty five") by the words around them; an hour of
  a lone ``0`` (``0:45``) is always a duration.
- A four-digit number from 1100 to 2099 is a year ("nineteen ninety nine") after a word that
  introduces one or when nothing but punctuation follows it (``It was 1999.``).
- Zip and postal codes, room, flight, extension and PIN numbers, and phone numbers are read
  digit by digit (``room 1204`` "room one two zero four").
- Letters of a script the English voice has no phonemes for (Cyrillic, Chinese, Arabic, ...)
  become one short phrase ("something in Cyrillic"): espeak-ng would spell them letter by
  letter or emit phonemes the voice lacks (Piper's "Missing phoneme" warning). A lone Greek
  letter is said by its name ("pi").
"""

from __future__ import annotations

import re
import unicodedata

from hub.tts.textnorm import words as nw

DURATION_AFTER = re.compile(r"\s*(?:left|remaining|to go|elapsed|long|later|more)\b", re.I)
"""Words after ``m:ss`` that make it a duration."""
DURATION_BEFORE = re.compile(
    r"(?:timer|remaining|left|elapsed|duration|countdown|for|took|lasts?|lasted|another|"
    r"in)\s*:?\s*$",
    re.I,
)
"""Words before ``m:ss`` that make it a duration (``in 1:30`` is "in a minute and a half")."""
CLOCK_BEFORE = re.compile(r"(?:at|by|until|till|from|since|before|around|after)\s+$", re.I)
"""Words before ``h:mm`` that make it a clock time whatever follows."""
CLOCK_AFTER = re.compile(
    r"\s*(?:in the (?:morning|afternoon|evening)|at night|tonight|tomorrow|today|o'clock)\b", re.I
)
"""Words after ``h:mm`` that make it a clock time whatever precedes it (``an alarm for 6:45 in
the morning``, ``for 7:30 tomorrow``)."""
_HMS = re.compile(r"(?<![\d:.])(\d{1,2}):([0-5]\d)(?::([0-5]\d))?(?![\d:]|\s?[ap]\.?m\b)", re.I)

YEAR_CUES = (
    r"in|since|by|from|until|till|year|around|before|after|born|built|circa|during|"
    r"early|late|mid|summer|winter|spring|autumn|fall"
)
"""Words after which a four-digit number is a year wherever the clause goes on ("was", "of"
count only when the number ends the clause: :data:`_YEAR_ALONE`)."""
_YEAR_CUED = re.compile(rf"\b((?:{YEAR_CUES})\s+)(1[1-9]\d\d|20\d\d)\b(?![.,]\d)", re.I)
_YEAR_ALONE = re.compile(r"(?<![\d,.$€£#-])\b(1[1-9]\d\d|20\d\d)\b(?=\s*(?:[.!?;)]|$))")

DIGIT_CUES = (
    r"zip(?: code)?|postal code|post ?code|room|rooms|apartment|apt\.?|suite|"
    r"extension|ext\.?|pin|flight|gate|platform|code|phone|tel\.?|telephone|call|"
    r"dial|fax|account|order|ticket|badge|locker|seat"
)
_DIGIT_CUED = re.compile(
    rf"\b((?:{DIGIT_CUES})(?:\s+(?:number|no\.?|#))?:?\s*#?\s*)"
    r"(\+?\d[\d -]*\d)(?![\d.,]*\d)",
    re.I,
)
_STATE_ZIP = re.compile(r"\b([A-Z]{2}\s+)(\d{5}(?:-\d{4})?)\b")
_INTERNATIONAL = re.compile(r"(?<![\w+])\+(\d{1,3})((?:[ -]\d{1,4}){2,5})\b")

SCRIPT_NAMES = {
    "CJK": "Chinese",
    "HIRAGANA": "Japanese",
    "KATAKANA": "Japanese",
    "HANGUL": "Korean",
    "DEVANAGARI": "Hindi",
}
"""Unicode name prefix -> the word the fallback phrase uses (else the script's own name)."""
FALLBACK = "something in {}"
"""The phrase said instead of a run of letters the voice cannot say."""


def duration(h: int | None, m: int, s: int) -> str:
    """``(None, 1, 30)`` -> "one minute thirty seconds"; ``(None, 0, 45)`` -> "forty five
    seconds"; ``(1, 5, 0)`` -> "one hour five minutes"."""
    parts = []
    for n, unit in ((h or 0, "hour"), (m, "minute"), (s, "second")):
        if n:
            parts.append(f"{nw.cardinal(n)} {unit}{'' if n == 1 else 's'}")
    return " ".join(parts) or "zero seconds"


def durations(text: str) -> str:
    """Rewrite the ``m:ss`` / ``h:mm:ss`` that are durations (module doc); clock times stay
    for the time pass."""

    def read(m: re.Match) -> str:
        before, after = m.string[: m.start()], m.string[m.end() :]
        first, second, third = int(m.group(1)), int(m.group(2)), m.group(3)
        if CLOCK_BEFORE.search(before) or CLOCK_AFTER.match(after):
            return m.group(0)
        lone_zero = m.group(1) == "0"
        if not (lone_zero or DURATION_BEFORE.search(before) or DURATION_AFTER.match(after)):
            return m.group(0)
        if third is not None:
            return duration(first, second, int(third))
        return duration(None, first, second)

    return _HMS.sub(read, text)


def years(text: str) -> str:
    """Four-digit years after a cue word, or ending a clause, read as years."""
    text = _YEAR_CUED.sub(lambda m: m.group(1) + nw.year(int(m.group(2))), text)
    return _YEAR_ALONE.sub(lambda m: nw.year(int(m.group(1))), text)


def _digit_groups(number: str) -> str:
    groups = re.findall(r"\d+", number)
    return ", ".join(nw.digits(g) for g in groups)


def digit_strings(text: str) -> str:
    """Zip codes, room/flight/PIN numbers and phone numbers read digit by digit."""
    text = _INTERNATIONAL.sub(lambda m: "plus " + _digit_groups(m.group(1) + m.group(2)), text)
    text = _STATE_ZIP.sub(lambda m: m.group(1) + _digit_groups(m.group(2)), text)

    def cued(m: re.Match) -> str:
        number = m.group(2)
        if len(re.sub(r"\D", "", number)) < 2:
            return m.group(0)  # "room 5": one digit reads the same either way
        plus = "plus " if number.startswith("+") else ""
        return m.group(1) + plus + _digit_groups(number)

    return _DIGIT_CUED.sub(cued, text)


def _script(ch: str) -> str | None:
    """The script of letter ``ch`` when the voice cannot say it, else None (Latin)."""
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    head = name.split(" ", 1)[0]
    if head in ("LATIN", "MICRO", "ORDINAL", "FEMININE", "MASCULINE") or not head:
        return None
    return SCRIPT_NAMES.get(head, head.title())


def _foreign_runs(text: str):
    """``(start, end, script)`` of each run of letters the voice cannot say; runs of one
    script separated only by spaces, marks or hyphens are one run."""
    i, n = 0, len(text)
    while i < n:
        script = _script(text[i])
        if script is None:
            i += 1
            continue
        j = i + 1
        while j < n:
            if _script(text[j]) == script or unicodedata.category(text[j])[0] == "M":
                j += 1
                continue
            k = j
            while k < n and text[k] in " -'\u00b7":
                k += 1
            if k > j and k < n and _script(text[k]) == script:
                j = k
                continue
            break
        yield i, j, script
        i = j


def scripts(text: str) -> str:
    """Replace letters the voice cannot say by :data:`FALLBACK`; a lone Greek letter (``π``,
    ``Ω``) by its name."""
    out, last = [], 0
    for start, end, script in _foreign_runs(text):
        out.append(text[last:start])
        run = text[start:end]
        if script == "Greek" and len(run) == 1:
            out.append(unicodedata.name(run).rsplit(" ", 1)[-1].lower())
        else:
            out.append(FALLBACK.format(script))
        last = end
    out.append(text[last:])
    return "".join(out)
