"""Handlers whose whole effect is what the hub says: HassRespond and HassBroadcast.

HassRespond speaks the response its sentence chose (``hello``, ``creator``, ...).
HassBroadcast is spoken on the hub itself: the response is the message (the ``announce``
addition); the action records it (``assist_satellite.announce``) for other satellites.
"""

from __future__ import annotations

from hub.act.common import Context, Outcome, action, refuse
from hub.act.responses import render
from hub.intents.rules import IntentMatch


def respond(ctx: Context, match: IntentMatch) -> Outcome:
    """HassRespond: the fixed answer of the sentence's response key."""
    return Outcome(render(match.intent, match.response or "default", match.slots))


def broadcast(ctx: Context, match: IntentMatch) -> Outcome:
    """HassBroadcast: say ``message`` on the hub."""
    message = str(match.slots.get("message", "") or "").strip()
    if not message:
        return refuse("nothing_to_do")
    text = render(match.intent, "announce", {**match.slots, "message": message})
    return Outcome(text, (action("hub", "assist_satellite", "announce", message=message),))
