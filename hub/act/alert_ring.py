"""Alarms and reminders rung through the timer ring path (:class:`hub.act.notifier.TimerEvents`).

:class:`AlertRinger` is a source of :class:`~hub.act.timer_alert.TimerAlert` events the timer
events poll every round: a due alarm rings (chime + "Your 7 AM alarm." / "Your wake up alarm.")
every ``ring_every_s`` until it is stopped, snoozed or has rung ``[alarms] ring_s`` (then it
is "missed"); a due reminder says "Reminder: take out the trash." once. One due while the hub
was off (within the grace period) says when it was due: "Your alarm was due at 7 AM.". The
listeners (speaker, stdout) are the timers' own, so an alarm plays where a timer plays and
"stop" silences both. Events: ``alarm_ringing``, ``reminder``. Alerts missed while the hub was
off are said once, before the answer of the next turn (:func:`missed_notice`).
"""

from __future__ import annotations

from collections.abc import Callable

from hub.act.alarms import Alert, Alerts
from hub.act.timer_alert import CHIME_RATE, TimerAlert, chime
from hub.act.timers import TimerInfo


def alert_text(alert: Alert, missed: bool = False) -> str:
    """What is said for ``alert``: ``"Reminder: take out the trash."``, ``"Your 7 AM alarm."``,
    snoozed: ``"Your 11:47 PM alarm (snoozed)."`` (its set time, never the snooze's), late:
    ``"Your 7 AM alarm was due at 7 AM on Sunday."``; missed: ``"You missed ..."``."""
    if alert.kind == "reminder":
        text = f"Reminder: {alert.label.strip().rstrip('.') or 'it is time'}."
    else:
        snoozed = " (snoozed)" if alert.snoozed_from is not None else ""
        text = f"Your {alert.label or set_time(alert)} alarm{snoozed}."
    if missed:
        return f"You missed your {alert.label or alert.set_when()} {alert.kind} while I was off."
    if alert.due_at is not None:
        was = Alert(**{**alert.__dict__, "next_fire": alert.due_at}).when()
        return f"{text[:-1]} was due at {was}."
    return text


def set_time(alert: Alert) -> str:
    """The clock time ``alert`` was set for: ``"11:47 PM"`` (a snooze does not move it)."""
    return alert.set_when().split(" on ")[0]


def event_fields(alert: Alert) -> dict:
    """What an ``alarm_ringing`` / ``reminder`` event line says of ``alert`` besides the ring:
    ``kind``, ``time`` (the clock time it was set for), ``snoozed`` (ringing again after a
    snooze), ``snoozed_until`` (its clock time then, else None). No ``duration_s``: an alarm
    has none."""
    snoozed = alert.snoozed_from is not None
    return {
        "kind": alert.kind,
        "time": set_time(alert),
        "snoozed": snoozed,
        "snoozed_until": alert.when().split(" on ")[0] if snoozed else None,
    }


def missed_notice(alerts: Alerts) -> str:
    """ "You missed your 7 AM on Sunday alarm while I was off." for each alert missed while
    the hub was off, once (""; nothing missed or already said)."""
    return " ".join(alert_text(a, missed=True) for a in alerts.take_missed())


def as_timer(alert: Alert) -> TimerInfo:
    """The alert in the shape the timer listeners take (id, label as name, room as area)."""
    return TimerInfo(alert.id, alert.label, alert.target, 0, 0, 0, False, 0, is_ringing=True)


class AlertRinger:
    """Rings :class:`~hub.act.alarms.Alerts` (see the module doc).

    Args:
        alerts: the hub's alarms and reminders.
        speak: ``text -> (pcm, rate)`` or None (chime only); raising is the chime only too.
        ring_every_s: seconds between the starts of two rings of one alarm.
    """

    def __init__(
        self, alerts: Alerts, speak: Callable | None = None, ring_every_s: float = 8.0
    ) -> None:
        self.alerts, self._speak, self.ring_every_s = alerts, speak, ring_every_s
        self._last: dict[str, float] = {}
        self._repeats: dict[str, int] = {}
        self._audio: dict[tuple[str, str], tuple[bytes, int] | None] = {}

    def tick(self) -> tuple[list[TimerAlert], list[TimerInfo]]:
        """One round: (alerts to play, alarms that stopped ringing because they rang out)."""
        now = self.alerts._wall()
        out = []
        for alert in self.alerts.due():
            kind = "reminder" if alert.kind == "reminder" else "alarm_ringing"
            out.append(self._event(kind, alert, 0))
            if alert.kind != "reminder":
                self._last[alert.id], self._repeats[alert.id] = now, 0
        ended = self.alerts.rang_out()
        for alert in self.alerts.ringing():
            if alert.id in self._last and now - self._last[alert.id] >= self.ring_every_s:
                self._last[alert.id] = now
                self._repeats[alert.id] += 1
                out.append(self._event("alarm_ringing", alert, self._repeats[alert.id]))
        for alert in ended:
            self._last.pop(alert.id, None)
        return out, [as_timer(a) for a in ended]

    def stop(self, target: str = "") -> list[TimerInfo]:
        """Stop the ringing alarms (of ``target``); returns them as timer infos."""
        stopped = self.alerts.stop(target)
        for alert in stopped:
            self._last.pop(alert.id, None)
        return [as_timer(a) for a in stopped]

    def ringing(self) -> bool:
        """True while an alarm rings."""
        return bool(self.alerts.ringing())

    def next_due_in(self) -> float | None:
        """Seconds to the next alert (see :meth:`hub.act.alarms.Alerts.next_due_in`)."""
        return self.alerts.next_due_in()

    def _event(self, event: str, alert: Alert, repeat: int) -> TimerAlert:
        text = alert_text(alert)
        speech = self._audio.get((alert.id, text))
        if speech is None and self._speak is not None:
            try:
                speech = self._speak(text)
            except Exception:
                speech = None
            self._audio = {k: v for k, v in self._audio.items() if k[0] != alert.id}
            self._audio[(alert.id, text)] = speech
        rate = speech[1] if speech else CHIME_RATE
        pcm = chime(rate) + (speech[0] if speech else b"")
        return TimerAlert(
            event, as_timer(alert), text, pcm, rate, repeat, alert=event_fields(alert)
        )
