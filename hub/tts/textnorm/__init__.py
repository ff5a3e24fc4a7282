"""Text normalization for speech: what Piper should say, cut into sentences it can say.

Piper reads text through espeak-ng, which reads "21.5°C" as "twenty one dot five degrees C",
"$3.50" as "dollar three dot fifty" and an emoji by its Unicode name. :func:`normalize` turns
numbers, percentages, times, dates, units and currency into words first (number words from
CLDR's rule-based number format through ``unicode-rbnf``, the library hassil uses), and drops
emoji and markup. :func:`split_sentences` and :func:`cap_text` bound what one Piper call and one
answer may hold (BC-09, BC-10). Readings follow US English (month/day/year dates).
"""

from __future__ import annotations

import re
import unicodedata

from hub.tts.textnorm import readings as rd
from hub.tts.textnorm import words as nw
from hub.tts.textnorm.chunks import CUT_NOTICE, cap_text, split_sentences

# Reading tables stay as written (filled lines, not one entry a line).
# fmt: off
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_MONTH_RE = (r"(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
             r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_NUM = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
"""A number as written: ``1,234.5``, ``21.5``, ``7`` (group 1)."""
_SIGNED = r"((?<![\w.])-)?" + _NUM
"""A number with an optional minus sign that is not a hyphen (groups 1, 2)."""
_PHONE = r"(?<![\d-])(?:\+\d{1,3}[ -])?(?:\(\d{3}\) ?|\d{3}-)?\d{3}-\d{4}\b"
"""A phone number (``555-1234``, ``(555) 123-4567``), read digit group by digit group."""
# unit -> (singular, plural); matched only right after a number, longest first.
_UNITS = {
    "°C": ("degree Celsius", "degrees Celsius"), "℃": ("degree Celsius", "degrees Celsius"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
    "℉": ("degree Fahrenheit", "degrees Fahrenheit"), "°": ("degree", "degrees"),
    "%": ("percent", "percent"), "km/h": ("kilometer per hour", "kilometers per hour"),
    "mph": ("mile per hour", "miles per hour"), "m/s": ("meter per second", "meters per second"),
    "km": ("kilometer", "kilometers"), "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"), "m²": ("square meter", "square meters"),
    "m³": ("cubic meter", "cubic meters"), "m": ("meter", "meters"), "ft": ("foot", "feet"),
    "kg": ("kilogram", "kilograms"), "mg": ("milligram", "milligrams"), "g": ("gram", "grams"),
    "lbs": ("pound", "pounds"), "lb": ("pound", "pounds"), "oz": ("ounce", "ounces"),
    "ml": ("milliliter", "milliliters"), "mL": ("milliliter", "milliliters"),
    "l": ("liter", "liters"), "L": ("liter", "liters"), "kWh": ("kilowatt hour", "kilowatt hours"),
    "Wh": ("watt hour", "watt hours"), "MW": ("megawatt", "megawatts"),
    "kW": ("kilowatt", "kilowatts"), "W": ("watt", "watts"), "V": ("volt", "volts"),
    "mA": ("milliamp", "milliamps"), "GHz": ("gigahertz", "gigahertz"),
    "MHz": ("megahertz", "megahertz"), "kHz": ("kilohertz", "kilohertz"), "Hz": ("hertz", "hertz"),
    "dB": ("decibel", "decibels"), "hPa": ("hectopascal", "hectopascals"),
    "mbar": ("millibar", "millibars"), "lx": ("lux", "lux"),
    "ppm": ("part per million", "parts per million"), "ms": ("millisecond", "milliseconds"),
    "sec": ("second", "seconds"), "min": ("minute", "minutes"), "hrs": ("hour", "hours"),
    "hr": ("hour", "hours"), "h": ("hour", "hours"), "TB": ("terabyte", "terabytes"),
    "GB": ("gigabyte", "gigabytes"), "MB": ("megabyte", "megabytes"),
    "kB": ("kilobyte", "kilobytes"), "KB": ("kilobyte", "kilobytes"),
}
_UNIT_RE = re.compile(
    _SIGNED + r"\s?(" + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
    + r")(?![A-Za-z0-9²³])"
)
_CURRENCY = {"$": ("dollar", "dollars", "cent", "cents"), "€": ("euro", "euros", "cent", "cents"),
             "£": ("pound", "pounds", "penny", "pence"), "¥": ("yen", "yen", "sen", "sen")}
_SCALES = {"k": "thousand", "K": "thousand", "thousand": "thousand", "m": "million",
           "M": "million", "million": "million", "bn": "billion", "billion": "billion",
           "trillion": "trillion"}
_ABBREVIATIONS = [
    (r"\be\.g\.", "for example"), (r"\bi\.e\.", "that is"), (r"\betc\.", "et cetera"),
    (r"\bvs\.", "versus"), (r"\bMr\.", "Mister"), (r"\bMrs\.", "Missus"), (r"\bMs\.", "Miz"),
    (r"\bDr\.", "Doctor"), (r"\bapprox\.", "approximately"), (r"\b[Nn]o\.(?=\s?\d)", "number"),
    (r"#(?=\d)", "number "),
]
_SYMBOLS = {"&": " and ", "+": " plus ", "=": " equals ", "@": " at ", "×": " times ",
            "±": " plus or minus ", "≈": " about ", "~": " about ", "<": " less than ",
            ">": " greater than ", "/": " ", "\\": " ", "*": " ", "_": " ", "#": " ",
            "`": " ", "{": " ", "}": " ", "[": " ", "]": " ", "|": " ", "^": " "}
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "‚": "'",
                         "…": "...", "\u00a0": " ", "\u2009": " ", "\u202f": " ", "º": "°"})
# fmt: on


# --- small readers -------------------------------------------------------------------------


def _plural(n_text: str, forms: tuple[str, str]) -> str:
    """``forms[0]`` when the written number is exactly one, else ``forms[1]``."""
    return forms[0] if n_text.lstrip("-") in ("1", "1.0") else forms[1]


def _signed(sign: str | None, num: str) -> str:
    """Words for a written number with an optional minus sign."""
    return ("minus " if sign else "") + nw.number(num)


def _year_or_number(text: str) -> str:
    """A four-digit year read as a year ("nineteen oh five"), else as a number."""
    return nw.year(int(text)) if len(text) == 4 else nw.number(text)


def _month(token: str) -> str:
    """Full month name for a written month name or abbreviation."""
    return next(m for m in _MONTHS if m.lower().startswith(token.rstrip(".").lower()[:3]))


def _date_words(month: int, day: int, year: str | None) -> str | None:
    """``March fifth, twenty twenty four``; None when month or day is out of range."""
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    words = f"{_MONTHS[month - 1]} {nw.ordinal(day)}"
    if year:
        full = int(year) + (2000 if len(year) == 2 else 0)
        words += f", {nw.year(full)}"
    return words


# --- rewriting passes, applied in order by normalize() ---------------------------------------


def _clean(text: str) -> str:
    """Unify quotes and spaces; drop emoji, control and format characters; a line is a sentence."""
    text = text.translate(_QUOTES)
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch == "°" or ch in "²³" or cat[0] in "LNPZ" or ch in _SYMBOLS or cat in ("Sc", "Sm"):
            kept.append(ch)
        elif ch in "\n\r\t":
            kept.append("\n")
        elif cat == "So" and ch in "℃℉":
            kept.append(ch)
        else:
            kept.append(" ")  # emoji, variation selectors, joiners, control characters
    text = "".join(kept)
    text = re.sub(r"([^\s.!?:;,])[ \t]*\n\s*(?=\S)", r"\1.\n", text)  # a line is a sentence
    text = re.sub(r"^\s*[-*•]\s+", "", text, flags=re.M)  # list bullets
    return text


def _abbreviations(text: str) -> str:
    """Expand abbreviations whose dot would otherwise end a sentence (``e.g.``, ``Dr.``)."""
    for pattern, words in _ABBREVIATIONS:
        text = re.sub(pattern, words, text)
    return text


def _initialisms(text: str) -> str:
    """``U.S.A.`` -> "U S A" (letters espeak spells); the dot stays only at the very end."""

    def spell(m: re.Match) -> str:
        return " ".join(m.group(0).replace(".", "")) + ("." if m.group(1) is not None else "")

    return re.sub(r"\b(?:[A-Za-z]\.){2,}(\s*$)?", spell, text)


def _money(sym: str, sign: str | None, num: str, scale: str | None) -> str:
    """Words for an amount: "three dollars fifty", "ninety nine cents", "two million euros"."""
    one, many, cent, cents = _CURRENCY[sym]
    minus = "minus " if sign else ""
    if scale:
        return f"{minus}{nw.number(num)} {_SCALES[scale]} {many}"
    whole, _, frac = num.replace(",", "").partition(".")
    unit = one if whole == "1" else many
    if len(frac) != 2:  # "$3", "$3.5": read the number as written
        return f"{minus}{nw.number(num)} {one if num == '1' else many}"
    c = int(frac)
    cent_words = f"{nw.cardinal(c)} {cent if c == 1 else cents}"
    if c == 0:
        return f"{minus}{nw.number(whole)} {unit}"
    if whole == "0":
        return minus + cent_words
    if c < 10:
        return f"{minus}{nw.number(whole)} {unit} and {cent_words}"
    return f"{minus}{nw.number(whole)} {unit} {nw.cardinal(c)}"


def _currency(text: str) -> str:
    """``$3.50`` -> "three dollars fifty", ``$0.99`` -> "ninety nine cents", ``5€`` -> euros."""
    symbols = "[" + "".join(re.escape(s) for s in _CURRENCY) + "]"
    scale = r"(?:\s?(thousand|million|billion|trillion|bn|[kKmM])\b)?"
    text = re.sub(
        rf"({symbols})\s?(-)?{_NUM}{scale}",
        lambda m: _money(m.group(1), m.group(2), m.group(3), m.group(4)),
        text,
    )
    return re.sub(
        rf"(?<![\w.])(-)?{_NUM}{scale}\s?([€£])",
        lambda m: _money(m.group(4), m.group(1), m.group(2), m.group(3)),
        text,
    )


def _dates(text: str) -> str:
    """ISO ``2024-03-05``, US ``3/5/2024``, ``March 5th, 2024``, ``5 March``, ``the 1990s``."""

    def iso(m):
        return _date_words(int(m.group(2)), int(m.group(3)), m.group(1)) or m.group(0)

    def us(m):
        return _date_words(int(m.group(1)), int(m.group(2)), m.group(3)) or m.group(0)

    def named(m):
        year = f", {_year_or_number(m.group(3))}" if m.group(3) else ""
        return f"{_month(m.group(1))} {nw.ordinal(int(m.group(2)))}{year}"

    def day_first(m):  # "The 2nd of May": the text's own article, never "the the"
        year = f", {_year_or_number(m.group(4))}" if m.group(4) else ""
        return f"{m.group(1) or 'the'} {nw.ordinal(int(m.group(2)))} of {_month(m.group(3))}{year}"

    text = re.sub(r"\b(\d{4})-(\d{2})-(\d{2})\b", iso, text)
    text = re.sub(r"\b(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b", us, text)
    text = re.sub(_MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?", named, text)
    text = re.sub(
        r"\b(?:(the|The|THE)\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"
        + _MONTH_RE
        + r"(?:,?\s+(\d{4})\b)?",
        day_first,
        text,
    )
    text = re.sub(r"\b(1[1-9]\d0|20\d0)'?s\b", lambda m: nw.plural(nw.year(int(m.group(1)))), text)
    return re.sub(r"'([2-9]0)s\b", lambda m: nw.plural(nw.cardinal(int(m.group(1)))), text)


def _times(text: str) -> str:
    """``9:05`` -> "nine oh five", ``9:00 am`` -> "nine AM", ``21:45`` "twenty one forty five"."""

    def clock(m: re.Match) -> str:
        h, mnt, sec, ampm = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        if h > 24 or mnt > 59:
            return m.group(0)
        suffix = _ampm(m, ampm)
        words = nw.clock(h, mnt, bool(ampm))
        if sec and int(sec):
            words += f" and {nw.cardinal(int(sec))} seconds"
        return words + suffix

    def hour_only(m: re.Match) -> str:
        return nw.cardinal(int(m.group(1))) + _ampm(m, m.group(2))

    ampm = r"(?:\s?([ap])\.?m\b\.?)"
    text = re.sub(r"\b(\d{1,2}):(\d{2})(?::(\d{2}))?\b" + ampm + "?", clock, text, flags=re.I)
    return re.sub(r"\b(1[0-2]|0?[1-9])" + ampm, hour_only, text, flags=re.I)


def _ampm(m: re.Match, letter: str | None) -> str:
    """`` AM``/`` PM`` for a matched a.m./pm, keeping a dot that also ended the sentence."""
    if not letter:
        return ""
    rest = m.string[m.end() :]
    keep_dot = m.group(0).endswith(".") and (not rest.strip() or re.match(r"\s+[A-Z]", rest))
    return f" {letter.upper()}M" + ("." if keep_dot else "")


def _numbers(text: str) -> str:
    """Phone numbers, ranges, units, percentages, years, fractions, ordinals, then the rest."""
    text = re.sub(_PHONE, lambda m: ", ".join(nw.digits(g) for g in re.findall(r"\d+", m[0])), text)
    text = re.sub(
        r"\b\d+(?:\.\d+){2,}\b",  # versions, addresses: "one point two point three"
        lambda m: " point ".join(nw.number(p) for p in m[0].split(".")),
        text,
    )
    text = re.sub(
        _NUM + r"\s?[-–]\s?" + _NUM + r"(?=\s?[^\s\d.,]|\b)",
        lambda m: f"{m.group(1)} to {m.group(2)}",
        text,
    )
    text = _UNIT_RE.sub(
        lambda m: f"{_signed(m.group(1), m.group(2))} {_plural(m.group(2), _UNITS[m.group(3)])}",
        text,
    )
    text = rd.years(text)
    text = re.sub(r"\b24/7\b", "twenty four seven", text)
    text = re.sub(r"\b(\d{1,3})/(\d{1,3})\b", lambda m: nw.fraction(int(m[1]), int(m[2])), text)
    text = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", lambda m: nw.ordinal(int(m.group(1))), text)
    text = re.sub(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", " ", text)  # "mp3", "3D"
    text = re.sub(_SIGNED, lambda m: _signed(m.group(1), m.group(2)), text)
    return re.sub(r"(?<![\w])\.(\d+)", lambda m: "point " + nw.digits(m.group(1)), text)


def _symbols(text: str) -> str:
    """Say or drop the symbols left over; tidy spaces around punctuation."""
    text = re.sub(r"\s[-–—]+\s|--+|—|–", ", ", text)
    text = "".join(_SYMBOLS.get(ch, ch) for ch in text)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" ?\n ?", "\n", text)
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    return re.sub(r"^[\s,;:]+", "", text).strip()


def normalize(text: str) -> str:
    """Rewrite ``text`` the way it should be spoken.

    Examples: ``"21.5°C"`` -> ``"twenty one point five degrees Celsius"``, ``"75%"`` ->
    ``"seventy five percent"``, ``"9:05"`` -> ``"nine oh five"``, ``"$3.50"`` -> ``"three
    dollars fifty"``, ``"2024-03-05"`` -> ``"March fifth, twenty twenty four"``. Emoji and
    markup characters are dropped; a line break ends a sentence. Never raises.
    """
    steps = (
        _clean,
        rd.scripts,
        _abbreviations,
        _currency,
        _dates,
        rd.durations,
        _times,
        _initialisms,
        rd.digit_strings,
        _numbers,
        _symbols,
    )
    for step in steps:
        text = step(text)
    return text


def speakable(text: str) -> bool:
    """True when ``text`` has a letter or digit (BC-08: "", "...", "—", "🙂👍" have none)."""
    return any(ch.isalnum() for ch in text)


__all__ = ["CUT_NOTICE", "cap_text", "normalize", "speakable", "split_sentences"]
