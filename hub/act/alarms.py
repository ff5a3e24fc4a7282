"""Alarms and reminders: kept as plain records, each with its next fire as an aware UTC instant.

An :class:`Alert` is an alarm (rings until stopped, at most ``[alarms] ring_s``, then
"missed") or a reminder (says "Reminder: <message>." once). Clock-time alerts keep their wall
time and IANA zone, and every next fire is recomputed from them (:mod:`hub.act.schedule`,
BC-47); relative ones ("in 20 minutes") keep only the instant. :class:`Alerts` holds them
(thread-safe), hands every change to ``persist`` (the store's ``alerts`` table) and restores
them after a restart: an alert due while the hub was off fires late if it is late by less
than ``[alarms] grace_s`` (and says when it was due), else it is marked missed and reported
once, at the next interaction (:meth:`Alerts.take_missed`). Nothing here runs in the
background: :class:`hub.act.alert_ring.AlertRinger` polls :meth:`Alerts.due`.

States: ``pending`` -> ``ringing`` -> ``done`` (stopped) / ``missed`` (rang out) / ``snoozed``
(-> ``ringing`` again); a recurring alert goes back to ``pending`` with its next fire instead
of ``done``/``missed``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time as _time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import date, datetime, time

from hub.act import schedule
from hub.errors import HubError

log = logging.getLogger(__name__)

STATES = ("pending", "ringing", "snoozed", "missed", "done")
"""Every state an alert has (see the module doc)."""


class AlertError(HubError):
    """An alarm command could not be applied; ``key`` is the response's error key."""

    kind = "bad_input"

    def __init__(self, key: str) -> None:
        super().__init__(key, node="act")
        self.key = key


@dataclass(frozen=True)
class Alert:
    """One alarm or reminder (a stored row of the ``alerts`` table).

    ``wall`` is the wall time asked ("07:00"; "" for a relative one), ``first`` the local
    date it was asked for ("" = the next one), ``next_fire`` aware UTC, ``rang_at`` epoch
    seconds its ringing began, ``due_at`` the instant it was due when it fires late,
    ``snoozed_from`` the instant it was set to ring before it was first snoozed (None: not
    snoozed). A snooze moves ``next_fire`` only: the alarm keeps its name ("your 11:47 PM
    alarm"), as an alarm clock's label does.
    """

    id: str
    kind: str
    next_fire: datetime
    label: str = ""
    wall: str = ""
    recurrence: str = ""
    zone: str = "UTC"
    first: str = ""
    state: str = "pending"
    target: str = ""
    rang_at: float | None = None
    due_at: datetime | None = None
    snoozed_from: datetime | None = None

    @property
    def rule(self) -> schedule.Rule | None:
        """Its :class:`~hub.act.schedule.Rule`, None for a relative alert."""
        if not self.wall:
            return None
        hour, minute = (int(x) for x in self.wall.split(":"))
        first = date.fromisoformat(self.first) if self.first else None
        return schedule.Rule(time(hour, minute), self.recurrence, self.zone, first)

    def when(self) -> str:
        """Its next fire in local words: ``"7 AM on Sunday"``."""
        return schedule.spoken(self.next_fire, schedule.zone(self.zone))

    def set_when(self) -> str:
        """When it was set to ring, in local words (``"11:47 PM on Saturday"``), also while a
        snooze moved its next fire."""
        return schedule.spoken(self.snoozed_from or self.next_fire, schedule.zone(self.zone))


class Alerts:
    """The hub's alarms and reminders (see the module doc).

    Args:
        wall: seconds since the epoch (a fake in tests).
        zone_name: the configured IANA zone (``[home] time_zone``); "" the system's.
        persist: called with :meth:`records` after every change; None: memory only.
        synced: True when the system clock is synchronized (:mod:`hub.act.clocksync`).
        ring_s: an alarm rings this long (seconds) before it is missed.
        grace_s: an alert due while the hub was off still fires if late by less than this.
        snooze_min: minutes a plain "snooze" lasts.
    Raises:
        hub.act.schedule.ScheduleError: ``zone_name`` is not a zone.
    """

    def __init__(
        self,
        wall: Callable[[], float] = _time.time,
        zone_name: str = "",
        persist: Callable[[list[Alert]], object] | None = None,
        synced: Callable[[], bool] = lambda: True,
        ring_s: float = 600.0,
        grace_s: float = 300.0,
        snooze_min: float = 10.0,
    ) -> None:
        self.zone_name = zone_name or schedule.system_zone_name()
        self.zone = schedule.zone(self.zone_name)
        self._wall, self._persist, self.synced = wall, persist, synced
        self.ring_s, self.grace_s, self.snooze_min = ring_s, grace_s, snooze_min
        self._lock = threading.RLock()
        self._alerts: dict[str, Alert] = {}
        self._missed: list[Alert] = []
        self._ids = itertools.count(1)

    def now(self) -> datetime:
        """Now, aware UTC."""
        return schedule.utc_now(self._wall())

    # -- setting ------------------------------------------------------------------------------
    def add_at(
        self,
        kind: str,
        at: time,
        recurrence: str = "",
        first: date | None = None,
        label: str = "",
        target: str = "",
    ) -> Alert:
        """A clock-time alert at wall time ``at`` in the hub's zone.

        Raises:
            AlertError: ``clock_unsynced`` (the time is not known: nothing is stored) or
                ``alarm_past`` (that day's time has passed).
        """
        if not self.synced():
            raise AlertError("clock_unsynced")
        rule = schedule.Rule(at.replace(second=0, microsecond=0), recurrence, self.zone_name, first)
        fire = schedule.next_fire(rule, self.now())
        if fire is None:
            raise AlertError("alarm_past")
        return self._add(
            Alert(
                self._new_id(kind),
                kind,
                fire,
                label,
                at.strftime("%H:%M"),
                recurrence,
                self.zone_name,
                first.isoformat() if first else "",
                target=target,
            )
        )

    def add_in(self, kind: str, seconds: float, label: str = "", target: str = "") -> Alert:
        """A relative alert ``seconds`` real seconds from now (works on an unsynced clock)."""
        fire = schedule.after_seconds(self.now(), seconds)
        return self._add(
            Alert(self._new_id(kind), kind, fire, label, zone=self.zone_name, target=target)
        )

    def _add(self, alert: Alert) -> Alert:
        with self._lock:
            self._alerts[alert.id] = alert
            self._changed()
        return alert

    def _new_id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    # -- reading ------------------------------------------------------------------------------
    def active(self, kind: str | None = None) -> list[Alert]:
        """Pending, snoozed and ringing alerts (of ``kind``), soonest first."""
        with self._lock:
            found = [
                a for a in self._alerts.values() if a.state in ("pending", "snoozed", "ringing")
            ]
        return sorted((a for a in found if kind in (None, a.kind)), key=lambda a: a.next_fire)

    def matching(self, kind: str, at: time | None = None) -> list[Alert]:
        """Active alerts of ``kind`` at wall time ``at`` (every one when None)."""
        wall = at.strftime("%H:%M") if at else None
        return [a for a in self.active(kind) if wall is None or a.wall == wall]

    def ringing(self) -> list[Alert]:
        """The alerts ringing now."""
        return [a for a in self.active() if a.state == "ringing"]

    def next_due_in(self) -> float | None:
        """Seconds until the next pending or snoozed alert fires (0 when due), None if none."""
        times = [a.next_fire.timestamp() for a in self.active() if a.state != "ringing"]
        return max(0.0, min(times) - self._wall()) if times else None

    # -- changing -----------------------------------------------------------------------------
    def cancel(self, alert_id: str) -> Alert:
        """Remove an alert; returns it. Raises AlertError(``alarm_not_found``)."""
        with self._lock:
            alert = self._alerts.pop(alert_id, None)
            if alert is None:
                raise AlertError("alarm_not_found")
            self._changed()
            return alert

    def due(self) -> list[Alert]:
        """Pending or snoozed alerts whose time has come, now ringing (alarms) or done or
        rescheduled (reminders: they speak once); oldest first."""
        now = self.now()
        with self._lock:
            fired = sorted(
                (
                    a
                    for a in self._alerts.values()
                    if a.state in ("pending", "snoozed") and a.next_fire <= now
                ),
                key=lambda a: a.next_fire,
            )
            out = []
            for alert in fired:
                rung = replace(alert, state="ringing", rang_at=self._wall())
                out.append(rung)
                self._alerts[alert.id] = (
                    self._after(rung, "done") if alert.kind == "reminder" else rung
                )
            if fired:
                self._changed()
            return out

    def snooze(self, minutes: float = 10.0) -> Alert:
        """Snooze the ringing alarm ``minutes`` real minutes. Raises AlertError(``not_ringing``)."""
        with self._lock:
            ringing = self.ringing()
            if not ringing:
                raise AlertError("not_ringing")
            alert = replace(
                ringing[0],
                state="snoozed",
                rang_at=None,
                due_at=None,
                next_fire=schedule.after_seconds(self.now(), minutes * 60),
                snoozed_from=ringing[0].snoozed_from or ringing[0].next_fire,
            )
            self._alerts[alert.id] = alert
            self._changed()
            return alert

    def stop(self, target: str = "", ended: str = "done") -> list[Alert]:
        """Stop the ringing alarms (of conversation/room ``target`` when given): ``ended``
        (``done`` or ``missed``), or pending at their next fire when recurring."""
        with self._lock:
            stopped = [a for a in self.ringing() if not target or a.target in ("", target)]
            for alert in stopped:
                self._alerts[alert.id] = self._after(alert, ended)
            if stopped:
                self._changed()
            return stopped

    def rang_out(self) -> list[Alert]:
        """Ringing alarms that rang ``ring_s``: now missed (or at their next fire)."""
        now = self._wall()
        with self._lock:
            out = [
                a
                for a in self.ringing()
                if a.rang_at is not None and now - a.rang_at >= self.ring_s
            ]
            for alert in out:
                self._alerts[alert.id] = self._after(alert, "missed")
            if out:
                self._changed()
            return out

    def _after(self, alert: Alert, ended: str) -> Alert:
        """What an alert becomes when it stops ringing (lock held)."""
        rule = alert.rule
        fire = (
            schedule.next_fire(rule, max(self.now(), alert.next_fire))
            if rule is not None and alert.recurrence
            else None
        )
        if fire is None:
            return replace(alert, state=ended, rang_at=None, snoozed_from=None)
        return replace(
            alert, state="pending", next_fire=fire, rang_at=None, due_at=None, snoozed_from=None
        )

    def rezone(self, zone_name: str) -> None:
        """Use another zone: every pending clock-time alert keeps its wall time and its next
        fire is recomputed in the new zone (:meth:`_rezoned`, BC-47)."""
        with self._lock:
            self.zone_name, self.zone = zone_name, schedule.zone(zone_name)
            for alert in self._rezoned(list(self._alerts.values())):
                self._alerts[alert.id] = alert
            self._changed()

    def _rezoned(self, alerts: list[Alert]) -> list[Alert]:
        """``alerts`` moved to the hub's zone, one INFO line when any was in another: a
        pending clock-time one keeps its wall time and day, its next fire recomputed in UTC
        (:func:`hub.act.schedule.rezoned_fire`); a relative, snoozed or ringing one keeps its
        instant (real seconds), later recurrences follow the new zone."""
        now, out, moved = self.now(), [], []
        for alert in alerts:
            if alert.zone == self.zone_name:
                out.append(alert)
                continue
            new = replace(alert, zone=self.zone_name)
            rule = new.rule
            if rule is not None and alert.state == "pending":
                fire = schedule.rezoned_fire(rule, alert.next_fire, alert.zone, now)
                new = replace(new, next_fire=fire or alert.next_fire)
                moved.append(f"{alert.wall} {alert.next_fire:%H:%MZ}->{new.next_fire:%H:%MZ}")
            out.append(new)
        others = {a.zone for a in alerts} - {self.zone_name}
        if others:
            log.info(
                "alarms: time zone is now %s (was %s); %d kept their wall time (%s)",
                self.zone_name,
                ", ".join(sorted(others)),
                len(moved),
                ", ".join(moved) or "none pending",
            )
        return out

    # -- restarts -----------------------------------------------------------------------------
    def records(self) -> list[Alert]:
        """Every alert (pending, ringing, ... and the last missed/done ones)."""
        with self._lock:
            return list(self._alerts.values())

    def restore(self, alerts: list[Alert]) -> list[Alert]:
        """Load stored alerts after a restart; returns the ones late beyond the grace period
        (now missed; reported once by :meth:`take_missed`). Late ones within the grace fire
        at the next :meth:`due` with ``due_at`` set; ringing ones ring again. Alerts stored
        under another zone (``[home] time_zone`` changed) are first moved to this one
        (:meth:`_rezoned`), so lateness is judged on their recomputed fire."""
        now, late = self.now(), []
        with self._lock:
            rezoned = self._rezoned(alerts)
            changed = rezoned != list(alerts)
            for alert in rezoned:
                if alert.state in ("pending", "snoozed", "ringing") and alert.next_fire <= now:
                    changed = True
                    overdue = now.timestamp() - alert.next_fire.timestamp()
                    alert = replace(alert, state="pending", due_at=alert.next_fire)
                    if overdue > self.grace_s:
                        late.append(replace(alert, state="missed", due_at=None))
                        alert = replace(self._after(alert, "missed"), due_at=None)
                self._alerts[alert.id] = alert
            top = max(
                (int(k.rsplit("-", 1)[1]) for k in self._alerts if k.rsplit("-", 1)[-1].isdigit()),
                default=0,
            )
            self._ids = itertools.count(top + 1)
            self._missed.extend(late)
            if changed:  # what was read is what is stored: no write (a locked store holds none)
                self._changed()
        return late

    def take_missed(self) -> list[Alert]:
        """Alerts missed while the hub was off, once (the next interaction reports them)."""
        with self._lock:
            missed, self._missed = self._missed, []
        return missed

    def _changed(self) -> None:
        """Persist (lock held); a broken store never stops an alarm."""
        if self._persist is None:
            return
        try:
            self._persist(self.records())
        except Exception as exc:
            log.warning("alarms not stored: %s", exc)


def to_dict(alert: Alert) -> dict:
    """The alert as a plain dict (aware datetimes kept; :mod:`hub.store.alerts` stores it)."""
    return asdict(alert)


def from_dict(row: dict) -> Alert | None:
    """An alert from a stored dict; None (logged) when unusable."""
    try:
        fields = {k: row[k] for k in Alert.__dataclass_fields__ if k in row}
        alert = Alert(**fields)
        schedule.require_aware(alert.next_fire, "next_fire")
        return alert if alert.state in STATES else None
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("stored alert skipped (%s): %r", exc, row)
        return None
