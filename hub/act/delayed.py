"""Delayed commands: "turn off the lights in 1 hour" runs "turn off the lights" when its timer ends.

The timer (:mod:`hub.act.timing`) carries ``command = {"text", "area", "confirmed"}``. When
its time is up, :func:`run_command` runs ``text`` as a turn of the hub, through the same
graph as anything said: rules, confirmation, the action via the device backend (so it is sent
once, keyed by that turn's id). The turn belongs to a conversation of its own
(``timer:<id>``) in the timer's area, so it never answers a question waiting in a room.
Sensitive entities named in ``confirmed`` were confirmed when the command was set; any other
sensitive target is asked about, and since nobody can answer that question the command is
not carried out (the question is withdrawn at once).

A delayed command that was due while the hub was off is run on the next start when it was due
at most ``[timers] late_command_s`` before; older ones are only reported (:func:`missed_text`).
"""

from __future__ import annotations

import logging

log = logging.getLogger("hub.act.delayed")


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
    out = {"text": text, "done": False, "intent": None, "response": "", "status": "error",
           "actions": []}
    if not text:
        return out
    conversation = hub.conversation(f"timer:{info.id}", area=command.get("area") or None)
    try:
        result = hub.answer_text(text, conversation=conversation,
                                 preconfirmed=tuple(command.get("confirmed") or ()))
    except Exception as exc:  # noqa: BLE001 - a broken turn must not stop the timer thread
        log.exception("delayed command %r failed", text)
        return {**out, "response": str(getattr(exc, "message", exc))}
    asked = conversation.take_confirmation() is not None  # nobody is there to say yes
    trace = result.trace
    done = bool(result.outcomes) and all(o.ok for o in result.outcomes) and not asked
    actions = [f"{a['domain']}.{a['service']} {a['entity']}"
               for o in result.outcomes for a in o.actions]
    if asked:
        log.warning("delayed command %r not carried out: it needs a yes", text)
    return {"text": text, "done": done, "intent": trace.get("intent"),
            "response": trace.get("response") or "", "status": trace.get("status"),
            "actions": actions}


def missed_text(info) -> str:
    """What is said for a delayed command that was due while the hub was off:
    ``"I was off when it was time to turn off the lights, so I didn't."``."""
    text = str((info.command or {}).get("text") or "do something").strip()
    return f"I was off when it was time to {text}, so I didn't."
