"""Delayed commands: "turn off the lights in 1 hour" runs "turn off the lights" when its timer ends.

The timer (:mod:`hub.act.timing`) carries ``command = {"text", "area", "confirmed"}``. When
its time is up, the orchestrator runs ``text`` as a turn (:func:`hub.core.timers.run_command`,
given to :class:`hub.act.notifier.TimerEvents` as its ``run_command`` callback).

A delayed command that was due while the hub was off is run on the next start when it was due
at most ``[timers] late_command_s`` before; older ones are only reported (:func:`missed_text`).
"""

from __future__ import annotations


def missed_text(info) -> str:
    """What is said for a delayed command that was due while the hub was off:
    ``"I was off when it was time to turn off the lights, so I didn't."``."""
    text = str((info.command or {}).get("text") or "do something").strip()
    return f"I was off when it was time to {text}, so I didn't."
