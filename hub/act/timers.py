"""Voice timers kept in process, with an injectable clock (tests never sleep).

Behaviour follows Home Assistant's timer manager (homeassistant/components/intent/timers.py):
timers have an optional name and area and remember their start duration; a command targets
timers by name, area or start duration; a command that matches several timers fails with
``multiple_timers_matched`` and one that matches none with ``timer_not_found`` (Home
Assistant's error keys). A timer whose time is up *rings* (:meth:`Timers.finished` moves it to
ringing and returns it; :class:`hub.act.notifier.TimerEvents` polls it, plays the alert and
announces it) until it is stopped or cancelled: a ringing timer still counts as a timer to
cancel (BC-27 c). Every change is handed to ``persist`` as a list of plain records, with
wall-clock deadlines so a restart (or a reboot: the monotonic clock restarts) can restore
them (:meth:`Timers.restore`, BC-27 a/b). Nothing here runs in the background.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from hub.act.timer_info import TimerError, TimerInfo, split_duration


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
        wall: seconds since the epoch (deadlines in ``persist`` records survive a reboot).
        persist: called with :meth:`records` after every change (the store's ``timers``
            table); None keeps timers in memory only.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        persist: Callable[[list[dict]], object] | None = None,
    ) -> None:
        self._clock, self._wall, self._persist = clock, wall, persist
        self._lock = threading.RLock()
        self._timers: dict[str, _Timer] = {}
        self._ids = itertools.count(1)
        self.changed = threading.Condition(self._lock)
        """Notified after every change (the notifier's thread waits on it)."""

    def start(
        self,
        seconds: int,
        name: str = "",
        area: str = "",
        start: tuple[int, int, int] | None = None,
        command: dict | None = None,
    ) -> TimerInfo:
        """Start a timer of ``seconds``; ``start`` is the (h, m, s) as spoken; ``command``
        (JSON-able) makes it a delayed command: it is handed over when the time is up.

        Raises:
            TimerError: ``invalid_duration`` when ``seconds`` is not positive.
        """
        if seconds <= 0:
            raise TimerError("invalid_duration")
        hours, minutes, secs = start or split_duration(seconds)
        with self._lock:
            info = TimerInfo(
                f"timer-{next(self._ids)}",
                name or "",
                area or "",
                hours,
                minutes,
                secs,
                True,
                int(seconds),
                command=command,
            )
            self._timers[info.id] = _Timer(info, self._clock() + seconds, float(seconds))
            self._changed()
        return info

    def status(
        self, name: str = "", area: str = "", start_s: int | None = None, ringing: bool = False
    ) -> list[TimerInfo]:
        """Timers (active and paused; ringing ones too with ``ringing``) matching the
        filters, soonest first."""
        with self._lock:
            infos = [self._info(t) for t in self._timers.values()]
        found = [
            i for i in infos if _fits(i, name, area, start_s) and (ringing or not i.is_ringing)
        ]
        return sorted(
            found, key=lambda i: (not i.is_ringing, not i.is_active, i.total_seconds_left)
        )

    def find_one(
        self, name: str = "", area: str = "", start_s: int | None = None, active: bool | None = None
    ) -> TimerInfo:
        """The one timer matching the filters (``active``: only running / only paused).

        With ``active`` None (cancel), ringing timers count, and one ringing timer is the
        one meant even when others run ("cancel the timer" while it rings, BC-27 c).

        Raises:
            TimerError: ``timer_not_found`` or ``multiple_timers_matched``.
        """
        every = self.status(name, area, start_s, ringing=active is None)
        ringing = [i for i in every if i.is_ringing]
        found = (
            ringing
            if len(ringing) == 1
            else [
                i for i in every if active is None or (i.is_active == active and not i.is_ringing)
            ]
        )
        if not found:
            raise TimerError("timer_not_found")
        if len(found) > 1:
            raise TimerError("multiple_timers_matched")
        return found[0]

    def cancel(self, timer_id: str) -> TimerInfo:
        """Remove a timer (ringing ones too); returns its last state.

        Raises:
            TimerError: ``timer_not_found``.
        """
        with self._lock:
            timer = self._pop(timer_id)
            self._changed()
            return self._info(timer)

    def cancel_all(self, area: str = "") -> int:
        """Remove every timer (of ``area`` when given), ringing ones too; returns how many."""
        with self._lock:
            ids = [k for k, t in self._timers.items() if not area or t.info.area == area]
            for key in ids:
                del self._timers[key]
            self._changed()
            return len(ids)

    def pause(self, timer_id: str) -> TimerInfo:
        """Pause a running timer (a paused one stays paused)."""
        with self._lock:
            timer = self._get(timer_id)
            if timer.info.is_active:
                timer.left = max(0.0, timer.end_at - self._clock())
                timer.info = replace(timer.info, is_active=False)
                self._changed()
            return self._info(timer)

    def resume(self, timer_id: str) -> TimerInfo:
        """Resume a paused timer (a running one keeps running)."""
        with self._lock:
            timer = self._get(timer_id)
            if not timer.info.is_active:
                timer.end_at = self._clock() + timer.left
                timer.info = replace(timer.info, is_active=True)
                self._changed()
            return self._info(timer)

    def add(self, timer_id: str, seconds: int) -> TimerInfo:
        """Add ``seconds`` (negative: remove, not below zero) to a timer's time left."""
        with self._lock:
            timer = self._get(timer_id)
            now = self._clock()
            left = (timer.end_at - now if timer.info.is_active else timer.left) + seconds
            timer.left = max(0.0, left)
            timer.end_at = now + timer.left
            self._changed()
            return self._info(timer)

    def finished(self) -> list[TimerInfo]:
        """The running timers whose time is up, oldest first, now ringing.

        A delayed command (``command`` set) is removed instead: it does not ring.
        """
        with self._lock:
            now = self._clock()
            due = sorted(
                (
                    t
                    for t in self._timers.values()
                    if t.info.is_active and not t.info.is_ringing and t.end_at <= now
                ),
                key=lambda t: t.end_at,
            )
            for timer in due:
                timer.info = replace(timer.info, is_ringing=True, is_active=False)
                timer.left = 0.0
                if timer.info.command is not None:
                    del self._timers[timer.info.id]
            if due:
                self._changed()
            return [self._info(t) for t in due]

    def ringing(self, area: str = "") -> list[TimerInfo]:
        """The ringing timers (of ``area`` when given)."""
        return [i for i in self.status(area=area, ringing=True) if i.is_ringing]

    def stop_ringing(self, area: str = "", timer_id: str = "") -> list[TimerInfo]:
        """Stop (remove) the ringing timers, of ``area`` or the one ``timer_id`` when given."""
        with self._lock:
            done = [
                t
                for t in self._timers.values()
                if t.info.is_ringing
                and (not area or t.info.area == area)
                and (not timer_id or t.info.id == timer_id)
            ]
            for timer in done:
                del self._timers[timer.info.id]
            if done:
                self._changed()
            return [self._info(t) for t in done]

    def next_due_in(self) -> float | None:
        """Seconds until the next running timer is up (0 when overdue), None when none runs."""
        with self._lock:
            ends = [
                t.end_at
                for t in self._timers.values()
                if t.info.is_active and not t.info.is_ringing
            ]
            return max(0.0, min(ends) - self._clock()) if ends else None

    # -- persistence ------------------------------------------------------------------------
    def records(self) -> list[dict]:
        """Every timer as a JSON-able record: ``id``, ``name``, ``area``, ``start`` [h, m, s],
        ``state`` (``active``/``paused``/``ringing``), ``ends_at`` (epoch seconds, running
        timers), ``left_s`` (paused timers) and ``command``."""
        with self._lock:
            now, wall = self._clock(), self._wall()
            return [_record(t, now, wall) for t in self._timers.values()]

    def restore(self, records: list[dict], late_command_s: float = 0.0) -> list[TimerInfo]:
        """Load stored records (after a restart); returns the timers that finished while the
        hub was off ("missed": they are not restored and do not ring).

        A delayed command due at most ``late_command_s`` seconds ago is restored anyway (it
        runs at the next :meth:`finished`): a restart or a reload does not lose it.
        Ringing records are dropped (they rang before the restart); malformed ones are skipped.
        """
        missed: list[TimerInfo] = []
        with self._lock:
            now, wall = self._clock(), self._wall()
            for rec in records:
                timer = _from_record(rec, now, wall)
                if timer is None:
                    continue
                late = timer.info.command is not None and timer.end_at > now - late_command_s
                if timer.info.is_active and timer.end_at <= now and not late:
                    missed.append(replace(timer.info, total_seconds_left=0))
                else:
                    self._timers[timer.info.id] = timer
            top = max((_number(k) for k in self._timers), default=0)
            self._ids = itertools.count(max(top, _peek(self._ids) - 1) + 1)
            if len(self._timers) != len(records):  # some left out; else stored as they are
                self._changed()
            else:
                self.changed.notify_all()
        return missed

    def _changed(self) -> None:
        """Persist and wake waiters. Lock held."""
        if self._persist is not None:
            try:
                self._persist(self.records())
            except Exception as exc:
                logging.getLogger(__name__).warning("timers not stored: %s", exc)
        self.changed.notify_all()

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


def _record(timer: _Timer, now: float, wall: float) -> dict:
    info = timer.info
    state = "ringing" if info.is_ringing else "active" if info.is_active else "paused"
    return {
        "id": info.id,
        "name": info.name,
        "area": info.area,
        "start": [info.start_hours, info.start_minutes, info.start_seconds],
        "state": state,
        "ends_at": wall + (timer.end_at - now) if info.is_active else None,
        "left_s": timer.left,
        "command": info.command,
    }


def _from_record(rec: dict, now: float, wall: float) -> _Timer | None:
    """A timer from its record (monotonic deadline re-based on ``now``), None if unusable."""
    try:
        state, (h, m, s) = rec["state"], (int(x) for x in rec["start"])
        if state == "ringing":
            return None
        active = state == "active"
        left = float(rec["ends_at"]) - wall if active else float(rec["left_s"])
        info = TimerInfo(
            str(rec["id"]),
            str(rec.get("name") or ""),
            str(rec.get("area") or ""),
            h,
            m,
            s,
            active,
            max(0, int(round(left))),
            command=rec.get("command"),
        )
    except (KeyError, TypeError, ValueError):
        logging.getLogger(__name__).warning("stored timer skipped: %r", rec)
        return None
    return _Timer(info, now + left, max(0.0, left))


def _number(timer_id: str) -> int:
    tail = timer_id.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _peek(counter) -> int:
    """The next value of an ``itertools.count`` without consuming it (its repr)."""
    return int(repr(counter)[6:-1])


def _fits(info: TimerInfo, name: str, area: str, start_s: int | None) -> bool:
    """True when the timer matches the given name, area and start duration."""
    if name and info.name.casefold() != name.strip().casefold():
        return False
    if area and info.area != area:
        return False
    started = info.start_hours * 3600 + info.start_minutes * 60 + info.start_seconds
    return start_s is None or started == start_s
