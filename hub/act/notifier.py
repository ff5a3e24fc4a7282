"""Timer events: a finished timer rings (alert chime + "Your 5 minute timer is done.") until
it is stopped, cancelled or has rung for ``[timers] ring_s``; a timer that finished while the
hub was off is reported once ("... finished while I was off.") and does not ring (BC-27).

:class:`TimerEvents` is the API the entry points use (``hub.events``):
``on_timer_finished(callback)`` is called with a :class:`~hub.act.timer_alert.TimerAlert` at
the first ring and at every repeat (``alert.repeat`` counts them, 0 first) and for missed timers
(``alert.event == "timer_missed"``); ``on_timer_stopped(callback)`` with the
:class:`~hub.act.timers.TimerInfo` when a ringing timer stops (said "stop", cancelled, or
rang out), so a player can cut the alert short. ``stop_armed`` is True while anything rings
(a stop-word detector stays armed for it, BC-27 d). ``tick()`` does one round on the current
clock (tests call it after moving their fake clock); ``start()`` runs it on a thread that
sleeps until the next deadline.

A delayed command's timer does not ring: its command is run (the ``run_command`` callback,
:func:`hub.core.timers.run_command`) and its ``timer_finished`` event carries the result.
:func:`hub.core.timers.make_timer_events` builds the hub's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from hub.act.delayed import missed_text
from hub.act.responses import render, sentence
from hub.act.timer_alert import CHIME_RATE, TimerAlert, alert_text, chime
from hub.act.timers import TimerInfo, Timers

log = logging.getLogger(__name__)

# fmt: off
STOP_WORDS = frozenset({"stop", "stop it", "stop the timer", "stop the alarm", "stop ringing",
                        "stop the alert", "enough", "silence", "quiet", "ok", "okay", "thanks",
                        "thank you", "cancel", "never mind", "nevermind", "dismiss", "shut up",
                        "i'm up", "okay stop", "ok stop"})
# fmt: on
"""What silences a ringing timer when said while it rings (HA satellites' stop word)."""

MAX_WAIT_S = 1.0
"""Longest sleep of the notifier thread between checks (a clock jump is noticed by then)."""

CLOSE_JOIN_S = 10.0
"""At close, the longest wait for the timer thread's alert synthesis in progress."""


@dataclass(frozen=True)
class Stopped:
    """What a stop stopped: the ringing ``timers`` and ``alarms`` (as timer infos)."""

    timers: tuple[TimerInfo, ...] = ()
    alarms: tuple[TimerInfo, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.timers or self.alarms)

    @property
    def response(self) -> str:
        """What is said: Home Assistant's "Timer cancelled." for a timer, "Alarm stopped."
        for an alarm (both when both rang)."""
        said = [sentence(render("HassCancelTimer"))] if self.timers else []
        return " ".join(said + (["Alarm stopped."] if self.alarms else []))


@dataclass
class _Ring:
    info: TimerInfo
    first: float
    last: float
    repeat: int = 0


class TimerEvents:
    """Rings finished timers and tells listeners (see the module doc).

    Args:
        timers: the hub's timers.
        settings: :class:`hub.settings.TimerSettings`.
        speak: ``text -> (pcm, rate)`` or None when speech cannot be made; None: chime only.
        clock: the same monotonic clock as ``timers``.
        run_command: ``TimerInfo -> dict``, runs a finished delayed command and describes
            what it did (:func:`hub.core.timers.run_command`); None: nothing runs it (the
            event's ``command`` says ``done: False``).
    """

    def __init__(
        self,
        timers: Timers,
        settings,
        speak: Callable | None = None,
        clock: Callable[[], float] = time.monotonic,
        run_command: Callable[[TimerInfo], dict] | None = None,
    ) -> None:
        self.timers, self.settings, self._speak, self._clock = timers, settings, speak, clock
        self._run_command = run_command
        self._finished: list[Callable] = []
        self._stopped: list[Callable] = []
        self._ringing: dict[str, _Ring] = {}
        self._audio: dict[str, tuple[bytes, int]] = {}
        self._missed: list[TimerInfo] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._round = threading.Lock()
        self.sources: list = []
        """Other ringers polled every round (:class:`hub.act.alert_ring.AlertRinger`)."""

    # -- listeners ----------------------------------------------------------------------------
    def on_timer_finished(self, callback: Callable[[TimerAlert], object]) -> Callable:
        """Call ``callback(alert)`` at every ring and for every missed timer; returns it."""
        self._finished.append(callback)
        return callback

    def on_timer_stopped(self, callback: Callable[[TimerInfo], object]) -> Callable:
        """Call ``callback(info)`` when a ringing timer stops; returns it."""
        self._stopped.append(callback)
        return callback

    def report_missed(self, infos: list[TimerInfo]) -> None:
        """Queue timers that finished while the hub was off; reported at the next tick."""
        with self._lock:
            self._missed.extend(infos)

    @property
    def stop_armed(self) -> bool:
        """True while any timer rings."""
        return bool(self.timers.ringing()) or any(s.ringing() for s in self.sources)

    # -- stopping -----------------------------------------------------------------------------
    def stop(self, area: str = "") -> list[TimerInfo]:
        """Stop the ringing timers and alarms (of ``area`` when given); returns them."""
        stopped = self.stop_all(area)
        return [*stopped.timers, *stopped.alarms]

    def stop_all(self, area: str = "") -> Stopped:
        """Stop the ringing timers and alarms (of ``area`` when given); says which."""
        stopped = self.timers.stop_ringing(area)
        self._forget([t.id for t in stopped], stopped)
        others = [info for source in self.sources for info in source.stop(area)]
        for info in others:
            self._emit(self._stopped, info)
        return Stopped(tuple(stopped), tuple(others))

    def stops_ringing(self, text: str) -> bool:
        """True when ``text`` is a stop word (:data:`STOP_WORDS`) and a timer rings now."""
        said = " ".join(text.lower().replace(",", " ").replace(".", " ").replace("!", " ").split())
        return said in STOP_WORDS and self.stop_armed

    def stop_word(self, text: str) -> Stopped | None:
        """What ``text`` stopped when it is a stop word and a timer or alarm rings (the ringing
        stops at once), else None (also when the ring ended meanwhile)."""
        if not self.stops_ringing(text):
            return None
        return self.stop_all() or None

    def stop_request(self, text: str) -> dict | None:
        """A turn's state update when ``text`` is a stop word and a timer rings, else None.

        The ringing stops at once; the answer is :attr:`Stopped.response` (Home Assistant's
        "Timer cancelled.", "Alarm stopped."; None when the ring ended meanwhile: nothing was
        cancelled, :mod:`hub.act.honest` answers).
        """
        stopped = self.stop_word(text)
        if stopped is None:
            return None
        return {
            "matches": [],
            "response": stopped.response,
            "source": "rules",
            "intent": "HassCancelTimer" if stopped.timers else "HubAlarmStop",
            "slots": {},
        }

    # -- one round ----------------------------------------------------------------------------
    def tick(self) -> list[TimerAlert]:
        """Ring what is due, repeat or end what rings, report missed timers; returns the
        alerts given to the listeners this round (one round at a time)."""
        with self._round:
            return self._tick()

    def _tick(self) -> list[TimerAlert]:
        alerts = [self._alert("timer_missed", info, 0) for info in self._take_missed()]
        now = self._clock()
        for info in self.timers.finished():
            if info.command is not None:
                alerts.append(self._command(info))
                continue
            with self._lock:
                self._ringing[info.id] = _Ring(info, now, now)
            alerts.append(self._alert("timer_finished", info, 0))
        alerts.extend(self._repeats(now))
        for source in self.sources:
            more, ended = source.tick()
            alerts.extend(more)
            for info in ended:
                self._emit(self._stopped, info)
        for alert in alerts:
            self._emit(self._finished, alert)
        return alerts

    def _command(self, info: TimerInfo) -> TimerAlert:
        """Run a finished delayed command (once: the timer is gone already); its event."""
        text = str((info.command or {}).get("text") or "")
        result = {"text": text, "done": False}
        if self._run_command is not None:
            try:
                result = self._run_command(info)
            except Exception:
                log.exception("delayed command %r failed", text)
        return TimerAlert(
            "timer_finished",
            replace(info, total_seconds_left=0),
            "",
            b"",
            CHIME_RATE,
            command=result,
        )

    def _repeats(self, now: float) -> list[TimerAlert]:
        """Repeat rings that are due; stop the ones that rang out or were cancelled."""
        live = {t.id for t in self.timers.ringing()}
        gone = [k for k in list(self._ringing) if k not in live]
        self._forget(gone, [self._ringing[k].info for k in gone if k in self._ringing])
        out, expired = [], []
        for ring in list(self._ringing.values()):
            if now - ring.first >= self.settings.ring_s:
                expired.append(ring.info)
            elif now - ring.last >= self.settings.ring_every_s:
                ring.last, ring.repeat = now, ring.repeat + 1
                out.append(self._alert("timer_finished", ring.info, ring.repeat))
        for info in expired:
            self.timers.stop_ringing(timer_id=info.id)
        self._forget([i.id for i in expired], expired)
        return out

    def _forget(self, ids: list[str], infos: list[TimerInfo]) -> None:
        with self._lock:
            known = [i for i in infos if self._ringing.pop(i.id, None) is not None]
            for key in ids:
                self._audio.pop(key, None)
        for info in known:
            self._emit(self._stopped, info)

    def _take_missed(self) -> list[TimerInfo]:
        with self._lock:
            missed, self._missed = self._missed, []
        return missed

    def _emit(self, callbacks: list[Callable], value) -> None:
        for callback in callbacks:
            try:
                callback(value)
            except Exception:
                log.exception("timer listener failed")

    # -- audio --------------------------------------------------------------------------------
    def prepare(self, info: TimerInfo) -> tuple[bytes, int]:
        """The alert audio of a timer (chime + its sentence), synthesized once and kept."""
        with self._lock:
            ready = self._audio.get(info.id)
        if ready is not None:
            return ready
        speech = self._say(alert_text(info))
        rate = speech[1] if speech else CHIME_RATE
        audio = (chime(rate) + (speech[0] if speech else b""), rate)
        with self._lock:
            self._audio[info.id] = audio
        return audio

    def _say(self, text: str) -> tuple[bytes, int] | None:
        if self._speak is None:
            return None
        try:
            return self._speak(text)
        except Exception as exc:
            log.warning("timer speech not synthesized: %s", getattr(exc, "message", exc))
            return None

    def _alert(self, event: str, info: TimerInfo, repeat: int) -> TimerAlert:
        command = None
        if event == "timer_missed":
            text = alert_text(info, missed=True)
            if info.command is not None:
                text = missed_text(info)
                command = {
                    "text": str(info.command.get("text") or ""),
                    "done": False,
                    "missed": True,
                }
            speech = self._say(text)
            pcm, rate = speech if speech else (b"", CHIME_RATE)
        else:
            text = alert_text(info)
            pcm, rate = self.prepare(info)
        return TimerAlert(
            event, replace(info, total_seconds_left=0), text, pcm, rate, repeat, command=command
        )

    # -- the thread ---------------------------------------------------------------------------
    def start(self) -> TimerEvents:
        """Run :meth:`tick` on a daemon thread until :meth:`close`; returns self."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="hub-timers", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread (ringing timers stay stored as ringing)."""
        self._closed.set()
        with self.timers.changed:
            self.timers.changed.notify_all()
        if self._thread is not None:
            # A round may be rendering an alert: onnxruntime aborts the process (exit 134,
            # "terminate called without an active exception") when the interpreter ends under
            # a synthesis, so the thread is waited for; a round stops between timers.
            self._thread.join(CLOSE_JOIN_S)

    def _run(self) -> None:
        while not self._closed.is_set():
            try:
                for info in self.timers.status():
                    if self._closed.is_set():
                        break
                    if info.command is None:
                        self.prepare(info)  # before it is due, so it rings on time
                self.tick()
            except Exception:
                log.exception("timer round failed")
            with self.timers.changed:
                if not self._closed.is_set():
                    self.timers.changed.wait(self._sleep_s())

    def _sleep_s(self) -> float:
        due = self.timers.next_due_in()
        waits = [MAX_WAIT_S] + ([due] if due is not None else [])
        waits += [d for d in (s.next_due_in() for s in self.sources) if d is not None]
        if self._ringing or any(s.ringing() for s in self.sources):
            waits.append(0.1)
        return max(0.01, min(waits))

    def wait_for_due(self, grace_s: float, poll_s: float = 0.05) -> None:
        """Block while a running timer will be up within ``grace_s`` from now, until it has
        rung once (``hub ask -`` / ``hub replay`` at the end of their input)."""
        end = time.monotonic() + grace_s
        while time.monotonic() < end:
            due = self.timers.next_due_in()
            if due is None or due > end - time.monotonic():
                return
            if self._thread is None:
                self.tick()
            time.sleep(poll_s)
        with self._round:  # a round that took a timer is over: its listeners were called
            pass
