"""Timer events for the line-oriented commands (``hub ask -``, ``hub replay``).

A finished timer prints one JSON line (:meth:`hub.act.notifier.TimerAlert.to_json`) with its
alert written as ``DIR/timer-<id>.wav``; only the first ring is printed (the repeats are for a
speaker). At the end of the input the command waits for timers that are up within
``[timers] exit_grace_s`` (:func:`finish`); longer ones stay in the store for the next start.
"""

from __future__ import annotations

import os
import wave
from collections.abc import Callable
from pathlib import Path


def write_wav(path: Path, pcm: bytes, rate: int) -> str:
    """Write int16 mono ``pcm`` at ``rate`` Hz to ``path`` atomically; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".wav.part")
    with wave.open(str(tmp), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    os.replace(tmp, path)
    return str(path)


def print_events(hub, out_dir: Path | None, emit: Callable[[dict], None]) -> None:
    """Print ``hub``'s timer events with ``emit(dict)``, their audio in ``out_dir`` (default:
    the cache folder's ``timers``), and start the timer thread."""
    from hub.paths import cache_dir

    folder = Path(out_dir) if out_dir is not None else cache_dir() / "timers"

    def show(alert) -> None:
        if alert.repeat:
            return
        audio = None
        if alert.pcm:
            name = f"{alert.event.replace('_', '-')}-{alert.timer.id}.wav"
            try:
                audio = write_wav(folder / name, alert.pcm, alert.rate)
            except OSError as exc:
                print(f"hub: timer alert not written: {exc}", flush=True,
                      file=__import__("sys").stderr)
        emit(alert.to_json(audio))

    hub.events.on_timer_finished(show)
    hub.events.start()


def finish(hub) -> None:
    """Wait for timers up within ``[timers] exit_grace_s``, then stop the timer thread."""
    hub.events.wait_for_due(hub.settings.timers.exit_grace_s)
    hub.events.close()
