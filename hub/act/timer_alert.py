"""One ring of a timer: the chime, what is said (:func:`alert_text`) and the event it makes
(:class:`TimerAlert`). :class:`hub.act.notifier.TimerEvents` rings them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hub.act.timers import TimerInfo

CHIME_RATE = 22050
"""Sample rate of the chime when no voice gives one (Hz)."""


def chime(rate: int = CHIME_RATE) -> bytes:
    """A two-note alert (E6 then C6, 0.18 s each, exponential decay), int16 mono at ``rate``.

    Returns little-endian int16 PCM (about 0.5 s with its trailing pause).
    """
    notes = []
    for freq in (1318.5, 1046.5):
        t = np.arange(int(0.18 * rate)) / rate
        tone = np.sin(2 * np.pi * freq * t) + 0.3 * np.sin(4 * np.pi * freq * t)
        envelope = np.exp(-t * 12.0) * np.minimum(1.0, t / 0.01)
        notes.append(0.35 * tone * envelope)
    notes.append(np.zeros(int(0.15 * rate)))
    return (np.concatenate(notes) * 32767).astype("<i2").tobytes()


def spoken_duration(info: TimerInfo) -> str:
    """The timer's length as an adjective: ``"5 minute"``, ``"1 hour and 30 minute"``."""
    parts = [
        f"{n} {unit}"
        for n, unit in (
            (info.start_hours, "hour"),
            (info.start_minutes, "minute"),
            (info.start_seconds, "second"),
        )
        if n
    ]
    return " and ".join(parts) if parts else "0 second"


def alert_text(info: TimerInfo, missed: bool = False) -> str:
    """``"Your 5 minute timer is done."`` (named: ``"Your pizza timer is done."``); missed:
    ``"Your 5 minute timer finished while I was off."``."""
    label = info.name.strip() or spoken_duration(info)
    return f"Your {label} timer " + ("finished while I was off." if missed else "is done.")


@dataclass(frozen=True)
class TimerAlert:
    """One ring of a timer (or the report of a missed one)."""

    event: str
    """``"timer_finished"`` or ``"timer_missed"`` (``"alarm_ringing"``, ``"reminder"`` for an
    alarm or reminder: :class:`hub.act.alert_ring.AlertRinger`)."""
    timer: TimerInfo
    text: str
    """What is said."""
    pcm: bytes
    """int16 mono: the chime then the speech (the speech only for a missed timer)."""
    rate: int
    repeat: int = 0
    """0 for the first ring, then 1, 2, ... while it keeps ringing."""
    command: dict | None = None
    """A delayed command: what running it gave (:func:`hub.core.timers.run_command`), or
    ``{"text", "done": False, "missed": True}`` when it was due while the hub was off."""
    alert: dict | None = None
    """An alarm's or reminder's own fields (:func:`hub.act.alert_ring.event_fields`); None for
    a timer."""

    def to_json(self, audio: str | None) -> dict:
        """The event line: ``{"event", "name", "duration_s", "audio", "id", "area", "text",
        "repeat"}`` (``audio``: path of the written wav, or None), and ``command`` for a
        delayed command (``{"text", "done", "intent", "response", "status", "actions"}``).
        An alarm or reminder has no ``duration_s`` but its :attr:`alert` fields (``kind``,
        ``time``, ``snoozed``, ``snoozed_until``)."""
        t = self.timer
        length = {"duration_s": t.duration_s} if self.alert is None else self.alert
        line: dict[str, object] = {
            "event": self.event,
            "name": t.name or None,
            **length,
            "audio": audio,
            "id": t.id,
            "area": t.area or None,
            "text": self.text,
            "repeat": self.repeat,
        }
        if self.command is not None:
            line["command"] = self.command
        return line
