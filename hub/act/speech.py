"""Handlers whose whole effect is what the hub says: HassRespond and HassBroadcast.

HassRespond speaks the response its sentence chose (``hello``, ``creator``, ...).
HassBroadcast is spoken on the hub itself: the response is the message (the ``announce``
addition); the action records it (``assist_satellite.announce``) for other satellites, with
the ``area`` when the message ends "in the <area>" of a known area ("announce dinner is ready
in the kitchen": the Kitchen's satellites say "dinner is ready").
"""

from __future__ import annotations

from hub.act.common import Context, Outcome, action, refuse
from hub.act.responses import render
from hub.intents.match import IntentMatch


def respond(ctx: Context, match: IntentMatch) -> Outcome:
    """HassRespond: the fixed answer of the sentence's response key."""
    return Outcome(render(match.intent, match.response or "default", match.slots))


def broadcast(ctx: Context, match: IntentMatch) -> Outcome:
    """HassBroadcast: say ``message`` on the hub."""
    message = str(match.slots.get("message", "") or "").strip()
    if not message:
        return refuse("nothing_to_do")
    message, area = _area_suffix(ctx, message)
    text = render(match.intent, "announce", {**match.slots, "message": message})
    extra = {"area": area} if area else {}
    return Outcome(text, (action("hub", "assist_satellite", "announce", message=message, **extra),))


def _area_suffix(ctx: Context, message: str) -> tuple[str, str | None]:
    """``message`` without a trailing "in [the] <area>" of the home, and that area (or None)."""
    words = message.split()
    for i in range(len(words) - 2, 0, -1):
        if words[i].lower() != "in":
            continue
        rest = words[i + 1 :]
        if rest and rest[0].lower() == "the":
            rest = rest[1:]
        area = ctx.home.canonical_area(" ".join(rest)) if rest else None
        if area:
            return " ".join(words[:i]), area
    return message, None
