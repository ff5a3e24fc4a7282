"""What a timer is, as the answers see it: :class:`TimerInfo` (Home Assistant's status
fields), :class:`TimerError` (Home Assistant's error keys) and the duration arithmetic of
speech (:func:`round_time`, :func:`split_duration`). :mod:`hub.act.timers` keeps the timers.
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.errors import HubError


class TimerError(HubError):
    """A timer command could not be applied; ``key`` is Home Assistant's error key."""

    kind = "bad_input"

    def __init__(self, key: str) -> None:
        super().__init__(key, node="act")
        self.key = key


@dataclass(frozen=True)
class TimerInfo:
    """A timer as the status template sees it (Home Assistant's status fields).

    Times are seconds; ``start_*`` is the duration as it was asked for.
    """

    id: str
    name: str
    area: str
    start_hours: int
    start_minutes: int
    start_seconds: int
    is_active: bool
    total_seconds_left: int
    is_ringing: bool = False
    """True once its time is up, until it is stopped or cancelled."""
    command: dict | None = None
    """A command to run when it finishes (a delayed command), instead of ringing."""

    @property
    def duration_s(self) -> int:
        """The duration it was started with, in seconds."""
        return self.start_hours * 3600 + self.start_minutes * 60 + self.start_seconds

    @property
    def rounded_left(self) -> tuple[int, int, int]:
        """Hours, minutes, seconds left at speaking precision (:func:`round_time`)."""
        return round_time(self.total_seconds_left)


def round_time(total_s: int) -> tuple[int, int, int]:
    """Split seconds into (hours, minutes, seconds) at a lower precision for speech.

    Home Assistant's ``_round_time``: with hours left, seconds are dropped; with minutes left,
    seconds go down to a multiple of 10; under a minute they are exact.
    """
    minutes, seconds = divmod(max(0, int(total_s)), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        seconds = 0
    elif minutes:
        seconds -= seconds % 10
    return hours, minutes, seconds


def split_duration(total_s: int) -> tuple[int, int, int]:
    """Exact (hours, minutes, seconds) of ``total_s`` seconds."""
    minutes, seconds = divmod(max(0, int(total_s)), 60)
    hours, minutes = divmod(minutes, 60)
    return hours, minutes, seconds
