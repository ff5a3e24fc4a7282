"""The hub's timers: kept in its store, rung with its voice, delayed commands run as its turns.

:func:`make_timer_events` builds the :class:`hub.act.notifier.TimerEvents` of a Hub (timers
restored from the store, missed ones queued for the first tick). When a delayed command's
timer ends ("turn off the lights in 1 hour"), :func:`run_command` runs its text as a turn of
the hub, through the same graph as anything said: rules, confirmation, the action via the
device backend (so it is sent once, keyed by that turn's id). The turn belongs to a
conversation of its own (``timer:<id>``) in the timer's area, so it never answers a question
waiting in a room. Sensitive entities named in ``confirmed`` were confirmed when the command
was set; any other sensitive target is asked about, and since nobody can answer that
question the command is not carried out (the question is withdrawn at once).
"""

from __future__ import annotations

import logging

from hub.act.notifier import TimerEvents
from hub.act.timers import Timers

log = logging.getLogger("hub.core.timers")


def make_timer_events(hub) -> TimerEvents:
    """The timers and events of ``hub`` (a :class:`hub.core.hub.Hub`): timers kept in its
    store (restored now; missed ones queued for the first tick) on its clock, alert speech by
    its TTS, delayed commands run as its turns. ``hub.timer_store`` None: memory only."""
    store = hub.timer_store
    persist = store.stored_timers if store is not None else None
    timers = Timers(clock=hub.clock, wall=hub.wall, persist=persist)
    events = TimerEvents(
        timers,
        hub.settings.timers,
        speak=lambda text: synthesize(hub, text),
        clock=hub.clock,
        run_command=lambda info: run_command(hub, info),
    )
    if store is not None:
        events.report_missed(
            timers.restore(store.stored_timers(), late_command_s=hub.settings.timers.late_command_s)
        )
    return events


def synthesize(hub, text: str) -> tuple[bytes, int] | None:
    """``text`` spoken by the hub's voice: ``(pcm, rate)``; raises HubError when TTS is down."""
    tts = hub.engines.tts()
    chunks = list(tts.synthesize(text))
    return (b"".join(c.pcm for c in chunks), chunks[0].rate if chunks else tts.rate)


def run_command(hub, info) -> dict:
    """Run the delayed command of timer ``info`` (a :class:`hub.act.timers.TimerInfo`) as a turn.

    Args:
        hub: the :class:`hub.core.hub.Hub` the timer belongs to.
        info: the finished timer; ``info.command["text"]`` is what is run.
    Returns:
        ``{"text", "done", "intent", "response", "status", "actions"}``: ``done`` is True when
        every command in it was carried out; ``actions`` are ``"domain.service entity"`` strings.
        A failing turn gives ``done`` False and its error as ``response`` (never raises).
    """
    command = info.command or {}
    text = str(command.get("text") or "").strip()
    out = {
        "text": text,
        "done": False,
        "intent": None,
        "response": "",
        "status": "error",
        "actions": [],
    }
    if not text:
        return out
    conversation = hub.conversation(f"timer:{info.id}", area=command.get("area") or None)
    try:
        result = hub.answer_text(
            text, conversation=conversation, preconfirmed=tuple(command.get("confirmed") or ())
        )
    except Exception as exc:
        log.exception("delayed command %r failed", text)
        return {**out, "response": str(getattr(exc, "message", exc))}
    asked = conversation.take_confirmation() is not None  # nobody is there to say yes
    trace = result.trace
    done = bool(result.outcomes) and all(o.ok for o in result.outcomes) and not asked
    actions = [
        f"{a['domain']}.{a['service']} {a['entity']}" for o in result.outcomes for a in o.actions
    ]
    if asked:
        log.warning("delayed command %r not carried out: it needs a yes", text)
    return {
        "text": text,
        "done": done,
        "intent": trace.get("intent"),
        "response": trace.get("response") or "",
        "status": trace.get("status"),
        "actions": actions,
    }
