"""Handlers for the timer intents, delayed commands and HassNevermind.

A timer started by voice belongs to the satellite's area (as Home Assistant ties it to the
device); commands find their timer by ``name``, ``area`` and ``start_hours``/``start_minutes``/
``start_seconds`` (Home Assistant's slots). Timer actions use domain ``timer`` and the timer's id.

A delayed command ("turn off the lights in 1 hour": HassStartTimer with response ``command``
and the slot ``conversation_command``) starts a timer that carries the command text
(:meth:`hub.act.timers.Timers.start` ``command={"text", "area", "confirmed"}``);
:mod:`hub.act.delayed` runs ``text`` as a turn in that area when the time is up. A command
on a sensitive entity was asked back when it was set ("Do you want me to unlock the Front
Door in 10 seconds?"): the timer starts only on a yes and ``confirmed`` names those entities.
A command that could not run when it is set (no area known for "turn off the lights in 1
hour", a device the home lacks) starts no timer: it is asked back ("Which area do you mean?")
or refused with Home Assistant's error text at once.
"""

from __future__ import annotations

import dataclasses

from hub.act.common import Context, Outcome, action, failed, refuse, targets_of
from hub.act.lost import noted
from hub.act.responses import render
from hub.act.timers import TimerError, TimerInfo
from hub.intents.match import INTENT_DOMAINS, IntentMatch, duration_s


def in_area(match: IntentMatch, area: str | None) -> IntentMatch:
    """``match`` with the conversation's ``area`` as its ``area`` slot when it starts a timer
    without one (a timer set on a satellite rings on that satellite's area), else ``match``."""
    if match.intent != "HassStartTimer" or not area or match.slots.get("area"):
        return match
    return dataclasses.replace(
        match,
        slots={**match.slots, "area": area},
        context_slots=tuple(match.context_slots) + ("area",),
    )


def _filters(match: IntentMatch) -> dict:
    """Timer filters from the slots: name, area, start duration in seconds."""
    slots = match.slots
    has_start = any(f"start_{k}" in slots for k in ("hours", "minutes", "seconds"))
    return {
        "name": str(slots.get("name", "") or ""),
        "area": str(slots.get("area", "") or ""),
        "start_s": duration_s(slots, "start_") if has_start else None,
    }


def _seconds(match: IntentMatch) -> int:
    """The duration the command names, in seconds (``duration_s`` else hours/min/s)."""
    value = match.slots.get("duration_s")
    return int(value) if value is not None else duration_s(match.slots)


def _hms(seconds: int) -> dict:
    """``{"hours", "minutes", "seconds"}`` of a duration given only in seconds (0s left out)."""
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return {k: v for k, v in (("hours", hours), ("minutes", minutes), ("seconds", secs)) if v}


def start(ctx: Context, match: IntentMatch) -> Outcome:
    """HassStartTimer: "Timer set for 5 minutes"; a delayed command: "Command will be ..."."""
    seconds = _seconds(match)
    command = str(match.slots.get("conversation_command", "") or "").strip()
    if match.response == "command" and not command:
        return refuse("no_command")
    inner = match.command
    if command and inner is None:  # never checked (hub.intents.delay): not set, not run later
        return refuse("no_command")
    if command and inner is not None and inner.intent in INTENT_DOMAINS:
        targets = targets_of(ctx, inner)  # a command that cannot run is refused now, not later
        if not targets.ok:
            return failed(targets)
    h, m, s = (match.slots.get(k) for k in ("hours", "minutes", "seconds"))
    spoken = (int(h or 0), int(m or 0), int(s or 0)) if (h or m or s) else None
    area = match.slots.get("area") or ctx.home.satellite_area
    name = str(match.slots.get("name", "") or "")
    if command:  # a delayed command, run as a turn when the time is up (hub.act.delayed)
        info = ctx.timers.start(
            seconds,
            name,
            area,
            spoken,
            command={"text": command, "area": area or "", "confirmed": _confirmed(ctx, match)},
        )
    else:
        info = ctx.timers.start(seconds, name, area, spoken)
    slots = match.slots if spoken else {**match.slots, **_hms(seconds)}
    key = "command" if command else "default"
    data = {"seconds": seconds, "name": info.name, "area": info.area}
    if command:
        data["command"] = command
    return Outcome(render(match.intent, key, slots), (action(info.id, "timer", "start", **data),))


def _confirmed(ctx: Context, match: IntentMatch) -> list[str]:
    """The sensitive entities a delayed command targets: they were asked about and confirmed
    before it got here (the graph asks first), so its turn does not ask again."""
    out = []
    for name in match.entities:
        entity = ctx.home.entity(name)
        if entity is not None and entity.sensitive and entity.confirm:
            out.append(entity.name)
    return out


def _one(ctx: Context, match: IntentMatch, service: str, active=None) -> Outcome:
    """Cancel, pause or resume the one timer the command names."""
    info = ctx.timers.find_one(active=active, **_filters(match))
    do = {"cancel": ctx.timers.cancel, "pause": ctx.timers.pause, "unpause": ctx.timers.resume}[
        service
    ]
    do(info.id)
    return Outcome(
        render(match.intent, "default", match.slots), (action(info.id, "timer", service),)
    )


def cancel(ctx: Context, match: IntentMatch) -> Outcome:
    """HassCancelTimer: "Timer cancelled"."""
    return _one(ctx, match, "cancel")


def pause(ctx: Context, match: IntentMatch) -> Outcome:
    """HassPauseTimer: "Timer paused"."""
    return _one(ctx, match, "pause", active=True)


def unpause(ctx: Context, match: IntentMatch) -> Outcome:
    """HassUnpauseTimer: "Timer resumed"."""
    return _one(ctx, match, "unpause", active=False)


def change(ctx: Context, match: IntentMatch) -> Outcome:
    """HassIncreaseTimer / HassDecreaseTimer: "5 minutes added to timer"."""
    seconds = _seconds(match)
    if seconds <= 0:
        raise TimerError("invalid_duration")
    info = ctx.timers.find_one(**_filters(match))
    sign = 1 if match.intent == "HassIncreaseTimer" else -1
    ctx.timers.add(info.id, sign * seconds)
    service = "increase" if sign > 0 else "decrease"
    return Outcome(
        render(match.intent, "default", match.slots),
        (action(info.id, "timer", service, seconds=seconds),),
    )


def cancel_every(ctx: Context, match: IntentMatch) -> Outcome:
    """HassCancelAllTimers: "Canceled 2 timers."."""
    area = str(match.slots.get("area", "") or "")
    ids = [t.id for t in ctx.timers.status(area=area)]
    count = ctx.timers.cancel_all(area)
    slots = {**match.slots, "canceled": count}
    return Outcome(
        render(match.intent, "area" if area else "default", slots),
        tuple(action(i, "timer", "cancel") for i in ids),
    )


def timer_view(info: TimerInfo) -> dict:
    """A timer as HassTimerStatus's template sees it (Home Assistant's field names)."""
    hours, minutes, seconds = info.rounded_left
    return {
        "name": info.name,
        "area": info.area,
        "is_active": info.is_active,
        "total_seconds_left": info.total_seconds_left,
        "start_hours": info.start_hours,
        "start_minutes": info.start_minutes,
        "start_seconds": info.start_seconds,
        "rounded_hours_left": hours,
        "rounded_minutes_left": minutes,
        "rounded_seconds_left": seconds,
    }


def status_text(timers: list[TimerInfo]) -> str:
    """HassTimerStatus's answer for these timers: "4 minutes and 50 seconds left."."""
    return render("HassTimerStatus", "default", {"timers": [timer_view(t) for t in timers]})


def status(ctx: Context, match: IntentMatch) -> Outcome:
    """HassTimerStatus: "4 minutes and 50 seconds left."; "I have no timers on record, but
    ..." when the store lost some (:mod:`hub.act.lost`)."""
    timers = ctx.timers.status(**_filters(match))
    return noted(ctx, "timers", Outcome(status_text(timers)), empty=not timers)


def nevermind(ctx: Context, match: IntentMatch) -> Outcome:
    """HassNevermind: nothing is done; a short "Okay." says it was heard (Home Assistant says
    nothing; the hub's answer to silence is "Sorry, I couldn't understand that.")."""
    return Outcome(render(match.intent, "done", match.slots))
