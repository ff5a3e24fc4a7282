"""A clock time that no day has ("25:00", "7:75", "13 pm"), found in a sentence nothing
understood, gets a short true answer ("25:00 is not a time of day.") instead of a guess
about an area or a device (the alarm grammar only knows hours 0-23 and minutes 0-59, so
such a sentence matches none of the hub's intents).

Only clock-shaped words after a time word (``at``, ``for``, ``until``, ``by``) or in a
sentence about an alarm, a reminder or waking are taken, so a ratio ("mix it 30:70") is not.
"""

from __future__ import annotations

import re

_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b(?:\s*([ap])\.?\s?m\b\.?)?", re.IGNORECASE)
_PERIOD = re.compile(r"(?<![:\d])\b(\d{1,2})\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)
_TIME_WORD = re.compile(r"\b(at|for|until|by)\s*$", re.IGNORECASE)
_ABOUT_TIME = re.compile(r"\b(alarm|alarms|wake|remind|reminder)\b", re.IGNORECASE)


def impossible_time(text: str) -> str | None:
    """``"25:00 is not a time of day."`` for the first impossible clock time in ``text``
    (hour over 23, minute over 59, or an hour over 12 or 0 with AM/PM), else None.

    Args:
        text: the transcript or typed sentence.
    """
    about = bool(_ABOUT_TIME.search(text))
    for found in (*_CLOCK.finditer(text), *_PERIOD.finditer(text)):
        if not (about or _TIME_WORD.search(text[: found.start()])):
            continue
        hour = int(found.group(1))
        minute = int(found.group(2)) if found.re is _CLOCK else 0
        period = found.group(3) if found.re is _CLOCK else found.group(2)
        if hour > 23 or minute > 59 or (period and not 1 <= hour <= 12):
            said = found.group(0).strip().rstrip(".")
            return f"{said} is not a time of day."
    return None
