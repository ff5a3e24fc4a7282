"""When an alarm or reminder fires: wall times in an IANA zone turned into exact UTC instants.

Pure functions, no clock of their own (the caller passes "now" as an aware UTC datetime).
The rules (case BC-47), following python-dateutil's maintainer (dateutil/dateutil #1401): the
recurrence is run by ``dateutil.rrule`` on *naive wall times*, and the zone is attached to
each candidate afterwards; nothing adds ``timedelta(days=1)`` to a UTC instant and nothing
subtracts two aware datetimes that share a zone (Python ignores the offset change then).

- A wall time that does not exist (the spring gap) fires at the first valid minute after the
  gap: 02:30 on 2026-03-08 in New York is 03:00 EDT (not 03:30, which is what ``zoneinfo``
  resolves it to), 01:30 on 2026-03-29 in London is 02:00 BST.
- A wall time that happens twice (the autumn repeat) fires once, at its first occurrence
  (``fold=0``): 01:30 on 2026-10-25 in London is 00:30Z.
- Relative requests ("in 8 hours") are epoch arithmetic on real seconds, not wall times.
"""

from __future__ import annotations

import os
import time as _time
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import rrule

UTC = UTC

RECURRENCES = {"": None, "daily": None, "weekdays": (0, 1, 2, 3, 4), "weekends": (5, 6)}
"""Recurrence names -> the weekdays they fire on (Monday 0); "" fires once, "daily" every day."""

_GAP_LIMIT_MIN = 24 * 60
"""Longest gap looked through, in minutes (real gaps are 30 min to 2 h; a day is a bug)."""


class ScheduleError(ValueError):
    """A zone that does not exist, a naive datetime, or an unknown recurrence."""


def zone(name: str = "") -> ZoneInfo:
    """The IANA zone ``name``; "" is the system's zone (``/etc/localtime``'s key, else UTC).

    Raises:
        ScheduleError: no such zone.
    """
    name = name or system_zone_name()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            f"unknown time zone {name!r} (an IANA name like Europe/London)"
        ) from None


def system_zone_name() -> str:
    """The system's IANA zone name (``TZ``, else ``/etc/localtime``'s link), else "UTC"."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz:
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return "UTC"
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "UTC"


def require_aware(value: datetime, what: str = "datetime") -> datetime:
    """``value`` in UTC; raises ScheduleError for a naive datetime (no offset known)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ScheduleError(f"{what} {value.isoformat()} is naive: give it a time zone")
    return value.astimezone(UTC)


def exists(wall: datetime, tz: ZoneInfo) -> bool:
    """True when the naive ``wall`` time happens in ``tz`` (it is not in a spring gap)."""
    there = wall.replace(tzinfo=tz)
    return there.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == wall


def to_utc(wall: datetime, tz: ZoneInfo) -> datetime:
    """The UTC instant of the naive ``wall`` time in ``tz`` by the rules above (gap: the first
    valid minute after it; repeat: the first occurrence)."""
    probe = wall
    for _ in range(_GAP_LIMIT_MIN):
        if exists(probe, tz):
            return probe.replace(tzinfo=tz, fold=0).astimezone(UTC)
        probe = (probe + timedelta(minutes=1)).replace(second=0, microsecond=0)
    raise ScheduleError(f"{wall} never happens in {tz.key}")


@dataclass(frozen=True)
class Rule:
    """What repeats: a wall time of day, on which days, in which zone.

    ``at`` is the wall time ("07:00"); ``recurrence`` a key of :data:`RECURRENCES`; ``first``
    the first local date it may fire on (the day asked for: "tomorrow").
    """

    at: time
    recurrence: str = ""
    zone: str = "UTC"
    first: date | None = None


def next_fire(rule: Rule, after: datetime) -> datetime | None:
    """The first fire of ``rule`` strictly after the aware instant ``after``, in UTC; None
    for a one-off rule whose day has passed.

    Candidates are naive wall datetimes from ``dateutil.rrule`` (DAILY, ``byweekday``),
    starting the local day before ``after``; each is put in UTC by :func:`to_utc`.
    Raises:
        ScheduleError: unknown zone or recurrence, or a naive ``after``.
    """
    if rule.recurrence not in RECURRENCES:
        raise ScheduleError(f"unknown recurrence {rule.recurrence!r}")
    tz, after = zone(rule.zone), require_aware(after, "after")
    local_day = after.astimezone(tz).date() - timedelta(days=1)
    start_day = max(local_day, rule.first) if rule.first else local_day
    start = datetime.combine(start_day, rule.at.replace(second=0, microsecond=0))
    days = RECURRENCES[rule.recurrence]
    count = None if rule.recurrence else (1 if rule.first else 3)
    rec = rrule.rrule(rrule.DAILY, dtstart=start, byweekday=days, count=count)
    for n, wall in enumerate(rec):
        fire = to_utc(wall, tz)
        if fire > after:
            return fire
        if n > 400:
            break
    return None


def after_seconds(now: datetime, seconds: float) -> datetime:
    """The instant ``seconds`` real seconds after the aware ``now`` (epoch arithmetic)."""
    return datetime.fromtimestamp(require_aware(now).timestamp() + seconds, UTC)


def utc_now(wall: float | None = None) -> datetime:
    """The aware UTC datetime of epoch seconds ``wall`` (default: now)."""
    return datetime.fromtimestamp(_time.time() if wall is None else wall, UTC)


def spoken(when: datetime, tz: ZoneInfo) -> str:
    """``"7 AM on Sunday"``, ``"6:30 PM on Monday"`` (local time and weekday) of an instant."""
    local = require_aware(when).astimezone(tz)
    hour = local.hour % 12 or 12
    clock = f"{hour}" if local.minute == 0 else f"{hour}:{local.minute:02d}"
    return f"{clock} {'AM' if local.hour < 12 else 'PM'} on {local.strftime('%A')}"


def rezoned_fire(rule: Rule, old_fire: datetime, old_zone: str, now: datetime) -> datetime | None:
    """The next fire of ``rule`` (whose zone is the new one) for an alert that was due at
    ``old_fire`` under ``old_zone``: the wall time of ``rule`` on the same local day (the
    first day of its recurrence from that day on), in the new zone (BC-47: an alarm "at 7 am"
    is 7 am wall time in the home's zone). When that instant has passed but ``old_fire`` had
    not (nothing was missed), the next one after ``now``. None when there is none.

    Raises:
        ScheduleError: unknown zone or recurrence, or a naive instant.
    """
    day = require_aware(old_fire, "old_fire").astimezone(zone(old_zone)).date()
    since = after_seconds(to_utc(datetime.combine(day, time(0, 0)), zone(rule.zone)), -1)
    fire = next_fire(rule, since)
    if fire is not None and fire <= now < old_fire:
        return next_fire(Rule(rule.at, rule.recurrence, rule.zone, None), now) or fire
    return fire
