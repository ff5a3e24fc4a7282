"""English number words, from CLDR's rule-based number format (``unicode-rbnf``).

CLDR writes "twenty-one"; these helpers write "twenty one" (the hyphen is not spoken and
would look like a range to the sentence splitter). Decimals are read digit by digit after
"point" ("twenty one point zero five"), the way people read measurements.
"""

from __future__ import annotations

import functools

from unicode_rbnf import FormatPurpose, RbnfEngine

_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_LONGEST = 10**15
"""Integers from here on are read digit by digit (serial numbers, not amounts)."""
_FRACTIONS = {2: ("half", "halves"), 4: ("quarter", "quarters")}


@functools.cache
def _engine():
    """The English ``RbnfEngine`` (imported on first use)."""
    return RbnfEngine.for_language("en")


def _spell(n: int, purpose_name: str | None = None) -> str:
    """CLDR words for integer ``n`` with the hyphens turned into spaces."""
    purpose = FormatPurpose[purpose_name] if purpose_name else None
    return _engine().format_number(n, purpose).text.replace("-", " ")


def digits(text: str) -> str:
    """``"014"`` -> ``"zero one four"``: each digit of ``text`` as a word."""
    return " ".join(_DIGITS[int(d)] for d in text if d.isdigit())


def cardinal(n: int) -> str:
    """``21`` -> ``"twenty one"``; negative numbers start with "minus"."""
    if abs(n) >= _LONGEST:
        return ("minus " if n < 0 else "") + digits(str(abs(n)))
    return _spell(n)


def ordinal(n: int) -> str:
    """``21`` -> ``"twenty first"``."""
    return _spell(n, "ORDINAL")


def year(n: int) -> str:
    """``1905`` -> ``"nineteen oh five"``, ``2024`` -> ``"twenty twenty four"``."""
    return _spell(n, "YEAR")


def plural(words: str) -> str:
    """``"nineteen ninety"`` -> ``"nineteen nineties"`` (decades)."""
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


def number(text: str) -> str:
    """A written number (``"1,234.50"``, ``"007"``, ``"21.5"``) as words.

    Integers with a leading zero are read digit by digit; decimals as "point" and digits.
    """
    whole, _, frac = text.replace(",", "").partition(".")
    if len(whole) > 1 and whole.startswith("0"):
        words = digits(whole)
    else:
        words = cardinal(int(whole or "0"))
    return f"{words} point {digits(frac)}" if frac else words


def fraction(num: int, den: int) -> str:
    """``3/4`` -> ``"three quarters"``, ``1/2`` -> ``"one half"``, ``5/8`` -> ``"five eighths"``."""
    if den in (0, 1) or num > 99 * den:
        return f"{cardinal(num)} over {cardinal(den)}"
    one, many = _FRACTIONS.get(den) or (ordinal(den), plural_ordinal(ordinal(den)))
    return f"{cardinal(num)} {one if num == 1 else many}"


def plural_ordinal(words: str) -> str:
    """``"fifth"`` -> ``"fifths"``, ``"third"`` -> ``"thirds"``."""
    return words + "s"


def clock(hour: int, minute: int, has_ampm: bool) -> str:
    """Words for a clock time: ``9:05`` "nine oh five", ``9:00`` "nine o'clock",
    ``21:00`` "twenty one hundred", ``0:00`` "midnight", ``0:30`` "twelve thirty AM"."""
    if hour in (0, 24) and minute == 0 and not has_ampm:
        return "midnight"
    if hour == 0 and not has_ampm:
        return f"twelve {_minutes(minute)} AM"
    h = cardinal(hour)
    if minute == 0:
        if has_ampm or hour == 0:
            return h
        return f"{h} o'clock" if hour <= 12 else f"{h} hundred"
    return f"{h} {_minutes(minute)}"


def _minutes(minute: int) -> str:
    """``5`` -> ``"oh five"``, ``45`` -> ``"forty five"``."""
    return f"oh {cardinal(minute)}" if minute < 10 else cardinal(minute)
