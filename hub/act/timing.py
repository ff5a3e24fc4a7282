"""Handlers for the timer intents and HassNevermind.

A timer started by voice belongs to the satellite's area (as Home Assistant ties it to the
device); commands find their timer by ``name``, ``area`` and ``start_hours``/``start_minutes``/
``start_seconds`` (Home Assistant's slots). Timer actions use domain ``timer`` and the timer's id.
"""

from __future__ import annotations

from hub.act.common import Context, Outcome, action
from hub.intents.rules import IntentMatch, duration_s
from hub.act.responses import cancel_all, simple, timer_changed, timer_status
from hub.act.timers import TimerError


def _filters(match: IntentMatch) -> dict:
    """Timer filters from the slots: name, area, start duration in seconds."""
    slots = match.slots
    has_start = any(f"start_{k}" in slots for k in ("hours", "minutes", "seconds"))
    return {"name": str(slots.get("name", "") or ""), "area": str(slots.get("area", "") or ""),
            "start_s": duration_s(slots, "start_") if has_start else None}


def _seconds(match: IntentMatch) -> int:
    """The duration the command names, in seconds (``duration_s`` else hours/min/s)."""
    value = match.slots.get("duration_s")
    return int(value) if value is not None else duration_s(match.slots)


def start(ctx: Context, match: IntentMatch) -> Outcome:
    """HassStartTimer: "Timer set for 5 minutes and 30 seconds"."""
    seconds = _seconds(match)
    h, m, s = (match.slots.get(k) for k in ("hours", "minutes", "seconds"))
    spoken = (int(h or 0), int(m or 0), int(s or 0)) if (h or m or s) else None
    area = match.slots.get("area") or ctx.home.satellite_area
    info = ctx.timers.start(seconds, str(match.slots.get("name", "") or ""), area, spoken)
    slots = match.slots if spoken else {**match.slots, **_hms(seconds)}
    return Outcome(timer_changed("HassStartTimer", slots),
                   (action(info.id, "timer", "start", seconds=seconds, name=info.name,
                           area=info.area),))


def _hms(seconds: int) -> dict:
    """``{"hours", "minutes", "seconds"}`` of a duration given only in seconds."""
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return {"hours": hours, "minutes": minutes, "seconds": secs}


def _one(ctx: Context, match: IntentMatch, service: str, active=None) -> Outcome:
    """Cancel, pause or resume the one timer the command names."""
    info = ctx.timers.find_one(active=active, **_filters(match))
    do = {"cancel": ctx.timers.cancel, "pause": ctx.timers.pause,
          "unpause": ctx.timers.resume}[service]
    do(info.id)
    return Outcome(simple(match.intent, "default", match.slots),
                   (action(info.id, "timer", service),))


def change(ctx: Context, match: IntentMatch) -> Outcome:
    """HassIncreaseTimer / HassDecreaseTimer: "5 minutes added to timer"."""
    seconds = _seconds(match)
    if seconds <= 0:
        raise TimerError("invalid_duration")
    info = ctx.timers.find_one(**_filters(match))
    sign = 1 if match.intent == "HassIncreaseTimer" else -1
    ctx.timers.add(info.id, sign * seconds)
    service = "increase" if sign > 0 else "decrease"
    return Outcome(timer_changed(match.intent, match.slots),
                   (action(info.id, "timer", service, seconds=seconds),))


def cancel_every(ctx: Context, match: IntentMatch) -> Outcome:
    """HassCancelAllTimers: "Canceled 2 timers."."""
    area = str(match.slots.get("area", "") or "")
    ids = [t.id for t in ctx.timers.status(area=area)]
    count = ctx.timers.cancel_all(area)
    return Outcome(cancel_all(count, area), tuple(action(i, "timer", "cancel") for i in ids))


def status(ctx: Context, match: IntentMatch) -> Outcome:
    """HassTimerStatus: "4 minutes and 50 seconds left."."""
    return Outcome(timer_status(ctx.timers.status(**_filters(match))))


HANDLERS = {
    "HassStartTimer": start,
    "HassCancelTimer": lambda ctx, m: _one(ctx, m, "cancel"),
    "HassPauseTimer": lambda ctx, m: _one(ctx, m, "pause", active=True),
    "HassUnpauseTimer": lambda ctx, m: _one(ctx, m, "unpause", active=False),
    "HassIncreaseTimer": change,
    "HassDecreaseTimer": change,
    "HassCancelAllTimers": cancel_every,
    "HassTimerStatus": status,
    "HassNevermind": lambda ctx, m: Outcome(""),
}
