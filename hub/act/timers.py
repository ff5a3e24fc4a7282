"""Voice timers kept in process, with an injectable clock (tests never sleep).

Behaviour follows Home Assistant's timer manager (homeassistant/components/intent/timers.py):
timers have an optional name and area and remember their start duration; a command targets
timers by name, area or start duration; a command that matches several timers fails with
``multiple_timers_matched`` and one that matches none with ``timer_not_found`` (Home
Assistant's error keys). Finished timers are collected by :meth:`Timers.finished` (the daemon
polls it and announces them); nothing runs in the background.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

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
    command: dict | None = None
    """A command to run when it finishes (a delayed command), instead of ringing."""

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


@dataclass
class _Timer:
    """Mutable record of one timer (``end_at`` while active, ``left`` while paused)."""

    info: TimerInfo
    end_at: float
    left: float


class Timers:
    """The hub's timers (thread-safe).

    Args:
        clock: seconds, monotonic; injected so tests move time by hand.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._timers: dict[str, _Timer] = {}
        self._ids = itertools.count(1)

    def start(self, seconds: int, name: str = "", area: str = "",
              start: tuple[int, int, int] | None = None, command: dict | None = None
              ) -> TimerInfo:
        """Start a timer of ``seconds``; ``start`` is the (h, m, s) as spoken; ``command``
        (JSON-able) makes it a delayed command: it is handed over when the time is up.

        Raises:
            TimerError: ``invalid_duration`` when ``seconds`` is not positive.
        """
        if seconds <= 0:
            raise TimerError("invalid_duration")
        hours, minutes, secs = start or split_duration(seconds)
        info = TimerInfo(f"timer-{next(self._ids)}", name or "", area or "", hours, minutes,
                         secs, True, int(seconds), command=command)
        with self._lock:
            self._timers[info.id] = _Timer(info, self._clock() + seconds, float(seconds))
        return info

    def status(self, name: str = "", area: str = "", start_s: int | None = None
               ) -> list[TimerInfo]:
        """Timers (active and paused) matching the filters, soonest first."""
        with self._lock:
            infos = [self._info(t) for t in self._timers.values()]
        found = [i for i in infos if _fits(i, name, area, start_s)]
        return sorted(found, key=lambda i: (not i.is_active, i.total_seconds_left))

    def find_one(self, name: str = "", area: str = "", start_s: int | None = None,
                 active: bool | None = None) -> TimerInfo:
        """The one timer matching the filters (``active``: only running / only paused).

        Raises:
            TimerError: ``timer_not_found`` or ``multiple_timers_matched``.
        """
        found = [i for i in self.status(name, area, start_s)
                 if active is None or i.is_active == active]
        if not found:
            raise TimerError("timer_not_found")
        if len(found) > 1:
            raise TimerError("multiple_timers_matched")
        return found[0]

    def cancel(self, timer_id: str) -> TimerInfo:
        """Remove a timer; returns its last state. Raises TimerError(timer_not_found)."""
        with self._lock:
            timer = self._pop(timer_id)
            return self._info(timer)

    def cancel_all(self, area: str = "") -> int:
        """Remove every timer (of ``area`` when given); returns how many."""
        with self._lock:
            ids = [k for k, t in self._timers.items() if not area or t.info.area == area]
            for key in ids:
                del self._timers[key]
            return len(ids)

    def pause(self, timer_id: str) -> TimerInfo:
        """Pause a running timer (a paused one stays paused)."""
        with self._lock:
            timer = self._get(timer_id)
            if timer.info.is_active:
                timer.left = max(0.0, timer.end_at - self._clock())
                timer.info = replace(timer.info, is_active=False)
            return self._info(timer)

    def resume(self, timer_id: str) -> TimerInfo:
        """Resume a paused timer (a running one keeps running)."""
        with self._lock:
            timer = self._get(timer_id)
            if not timer.info.is_active:
                timer.end_at = self._clock() + timer.left
                timer.info = replace(timer.info, is_active=True)
            return self._info(timer)

    def add(self, timer_id: str, seconds: int) -> TimerInfo:
        """Add ``seconds`` (negative: remove, not below zero) to a timer's time left."""
        with self._lock:
            timer = self._get(timer_id)
            now = self._clock()
            left = (timer.end_at - now if timer.info.is_active else timer.left) + seconds
            timer.left = max(0.0, left)
            timer.end_at = now + timer.left
            return self._info(timer)

    def finished(self) -> list[TimerInfo]:
        """Remove and return the running timers whose time is up (oldest first)."""
        with self._lock:
            now = self._clock()
            done = [k for k, t in self._timers.items() if t.info.is_active and t.end_at <= now]
            return [self._info(self._timers.pop(k)) for k in done]

    def _get(self, timer_id: str) -> _Timer:
        """The record of ``timer_id``; raises TimerError(timer_not_found). Lock held."""
        timer = self._timers.get(timer_id)
        if timer is None:
            raise TimerError("timer_not_found")
        return timer

    def _pop(self, timer_id: str) -> _Timer:
        """Remove and return the record of ``timer_id``. Lock held."""
        timer = self._get(timer_id)
        del self._timers[timer_id]
        return timer

    def _info(self, timer: _Timer) -> TimerInfo:
        """The timer's info with its time left now."""
        left = timer.end_at - self._clock() if timer.info.is_active else timer.left
        return replace(timer.info, total_seconds_left=max(0, int(round(left))))


def _fits(info: TimerInfo, name: str, area: str, start_s: int | None) -> bool:
    """True when the timer matches the given name, area and start duration."""
    if name and info.name.casefold() != name.strip().casefold():
        return False
    if area and info.area != area:
        return False
    started = info.start_hours * 3600 + info.start_minutes * 60 + info.start_seconds
    return start_s is None or started == start_s
