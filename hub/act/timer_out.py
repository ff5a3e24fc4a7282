"""Timer events for the line-oriented commands (``hub ask -``, ``hub replay``).

A finished timer prints one JSON line (:meth:`hub.act.timer_alert.TimerAlert.to_json`) with its
alert written as ``DIR/timer-<id>.wav``; only the first ring is printed (the repeats are for a
speaker). At the end of the input the command waits for timers that are up within
``[timers] exit_grace_s`` (:func:`finish`); longer ones stay in the store for the next start.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from hub.audio.wav import write_wav_atomic
from hub.paths import cache_dir


def print_events(events, out_dir: Path | None, emit: Callable[[dict], None]) -> None:
    """Print the timer events of ``events`` (:class:`hub.act.notifier.TimerEvents`) with
    ``emit(dict)``, their audio in ``out_dir`` (default: the cache folder's ``timers``), and
    start the timer thread."""
    folder = Path(out_dir) if out_dir is not None else cache_dir() / "timers"

    def show(alert) -> None:
        if alert.repeat:
            return
        audio = None
        if alert.pcm:
            name = f"{alert.event.replace('_', '-')}-{alert.timer.id}.wav"
            try:
                audio = write_wav_atomic(alert.pcm, alert.rate, folder / name)
            except OSError as exc:
                print(f"hub: timer alert not written: {exc}", flush=True, file=sys.stderr)
        emit(alert.to_json(audio))

    events.on_timer_finished(show)
    events.start()


def finish(events, grace_s: float) -> None:
    """Wait for timers up within ``grace_s`` (``[timers] exit_grace_s``), then stop the timer
    thread of ``events``."""
    events.wait_for_due(grace_s)
    events.close()
