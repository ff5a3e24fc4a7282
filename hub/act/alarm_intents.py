"""Handlers of the hub's alarm and reminder intents (``HubAlarmSet``, ``HubAlarmList``,
``HubAlarmCancel``, ``HubAlarmSnooze``, ``HubReminderSet``; sentences in
``hub/data/sentences/alarms.yaml``) on :class:`hub.act.alarms.Alerts` (``ctx.alerts``).

A clock time is ``alarm_hour`` (0-23), ``alarm_minute`` and ``alarm_period`` (am/pm: 7 pm is
19:00, 12 am is 00:00; none: the hour as said). ``alarm_day`` "tomorrow" sets the first local
date; ``alarm_repeat`` (daily/weekdays/weekends) makes it recurring. The answer gives the
local time and day of the next fire ("Alarm set for 7 AM on Sunday."). Clock-time requests on
an unsynchronized clock are refused (``clock_unsynced``) and store nothing; relative
reminders ("in 20 minutes") are set anyway. Alarm actions use domain ``alarm``.
"""

from __future__ import annotations

from datetime import time, timedelta

from hub.act.alarms import Alert, AlertError, Alerts
from hub.act.common import Context, Outcome, action, refuse
from hub.act.lost import noted
from hub.act.responses import render
from hub.intents.rules import IntentMatch

_REPEAT_WORDS = {"daily": "every day", "weekdays": "every weekday", "weekends": "every weekend"}


def clock_time(slots: dict) -> time | None:
    """The wall time the slots name, None when they name none.

    Raises:
        AlertError: ``invalid_time`` for an hour or minute out of range (13 pm).
    """
    if slots.get("alarm_hour") is None:
        return None
    hour, minute = int(slots["alarm_hour"]), int(slots.get("alarm_minute") or 0)
    period = slots.get("alarm_period")
    if period and hour > 12:
        raise AlertError("invalid_time")
    if period == "pm" and hour < 12:
        hour += 12
    elif period == "am" and hour == 12:
        hour = 0
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise AlertError("invalid_time")
    return time(hour, minute)


def _alerts(ctx: Context) -> Alerts:
    """The hub's alarms and reminders.

    Raises:
        AlertError: ``not_handled`` when this hub keeps none ("Sorry, I can't do that yet").
    """
    if ctx.alerts is None:
        raise AlertError("not_handled")
    return ctx.alerts


def _first_day(ctx: Context, slots: dict):
    """The local date asked for ("today", "tomorrow"), else None (the next one)."""
    day = slots.get("alarm_day")
    if not day:
        return None
    alerts = _alerts(ctx)
    today = alerts.now().astimezone(alerts.zone).date()
    return today + timedelta(days=1) if day == "tomorrow" else today


def _target(ctx: Context) -> str:
    return ctx.home.satellite_area or ""


def set_alarm(ctx: Context, match: IntentMatch) -> Outcome:
    """HubAlarmSet: "Alarm set for 7 AM on Sunday."."""
    at = clock_time(match.slots)
    if at is None:
        raise AlertError("invalid_time")
    repeat = str(match.slots.get("alarm_repeat") or "")
    alert = _alerts(ctx).add_at(
        "alarm", at, repeat, _first_day(ctx, match.slots), target=_target(ctx)
    )
    when = alert.when()
    if repeat:
        first, day = when.split(" on ")
        clock = clock_words(at)
        text = render(
            match.intent,
            "repeat" if first == clock else "repeat_moved",
            match.slots,
            clock=clock,
            day=day,
            first=first,
            repeat=_REPEAT_WORDS[repeat],
        )
    else:
        text = render(match.intent, "default", match.slots, when=when)
    return Outcome(
        text, (action(alert.id, "alarm", "set", at=alert.next_fire.isoformat(), recurrence=repeat),)
    )


def describe(alert: Alert) -> str:
    """``"7 AM on Sunday"``, ``"7 AM every weekday"`` (a recurring alert by its wall time,
    even when its next ring is moved by a daylight-saving gap, BC-47); a snoozed one by the
    time it was set for, not the snooze's."""
    if alert.recurrence and alert.rule is not None:
        return f"{clock_words(alert.rule.at)} {_REPEAT_WORDS[alert.recurrence]}"
    return alert.set_when()


def listed(alert: Alert) -> str:
    """:func:`describe`, and the snooze when it is snoozed: ``"11:47 PM on Saturday, snoozed
    until 11:57 PM"`` (as an alarm clock lists it: its time, then "snoozing until")."""
    if alert.snoozed_from is None:
        return describe(alert)
    return f"{describe(alert)}, snoozed until {alert.when().split(' on ')[0]}"


def clock_words(at: time) -> str:
    """``"7 AM"``, ``"1:30 AM"``, ``"12 PM"`` for a wall time."""
    hour = at.hour % 12 or 12
    clock = f"{hour}" if at.minute == 0 else f"{hour}:{at.minute:02d}"
    return f"{clock} {'AM' if at.hour < 12 else 'PM'}"


def list_alarms(ctx: Context, match: IntentMatch) -> Outcome:
    """HubAlarmList: "You have 2 alarms: 7 AM on Sunday and 6:30 AM every weekday."; a snoozed
    one "11:47 PM on Saturday, snoozed until 11:57 PM"."""
    alarms = _alerts(ctx).active("alarm")
    if not alarms:
        return noted(ctx, "alerts", Outcome(render(match.intent, "none", match.slots)), empty=True)
    said = Outcome(
        render(
            match.intent,
            "default",
            match.slots,
            count=len(alarms),
            items=_joined([listed(a) for a in alarms]),
        )
    )
    return noted(ctx, "alerts", said, empty=False)


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def cancel_alarm(ctx: Context, match: IntentMatch) -> Outcome:
    """HubAlarmCancel: "Alarm for 7 AM on Sunday cancelled."; when several fit, asks which
    one (and cancels none); when none is at the time asked but others are set, says which are
    ("You have no alarm at 7 PM, only 7 AM on Sunday"), so a misheard AM/PM cancels nothing."""
    at = clock_time(match.slots)
    found = _alerts(ctx).matching("alarm", at)
    if not found:
        others = _alerts(ctx).active("alarm")
        if others and at is not None:  # 7 AM heard as 7 PM, or a wrong time: say which exist
            return refuse(
                "alarm_not_at", asked=clock_words(at), items=_joined([describe(a) for a in others])
            )
        raise AlertError("alarm_not_found")
    if len(found) > 1:
        return refuse("alarm_which", items=_joined([describe(a) for a in found]))
    _alerts(ctx).cancel(found[0].id)
    return Outcome(
        render(match.intent, "default", match.slots, when=describe(found[0])),
        (action(found[0].id, "alarm", "cancel"),),
    )


def snooze(ctx: Context, match: IntentMatch) -> Outcome:
    """HubAlarmSnooze: "Snoozed for 10 minutes." (the default from ``[alarms] snooze_min``)."""
    minutes = match.slots.get("snooze_minutes") or _alerts(ctx).snooze_min
    alert = _alerts(ctx).snooze(float(minutes))
    return Outcome(
        render(match.intent, "default", match.slots, minutes=f"{float(minutes):g}"),
        (action(alert.id, "alarm", "snooze", minutes=float(minutes)),),
    )


def set_reminder(ctx: Context, match: IntentMatch) -> Outcome:
    """HubReminderSet: "I'll remind you to take out the trash at 7 PM on Monday." or
    "... in 20 minutes." (relative: works before the clock is synchronized)."""
    slots = match.slots
    message = str(slots.get("reminder") or "").strip()
    if not message:
        return refuse("nothing_to_do")
    minutes = int(slots.get("reminder_minutes") or 0) + 60 * int(slots.get("reminder_hours") or 0)
    if minutes:
        alert = _alerts(ctx).add_in("reminder", minutes * 60, message, _target(ctx))
        hours, mins = divmod(minutes, 60)
        parts = [
            f"{n} {unit}{'s' if n != 1 else ''}"
            for n, unit in ((hours, "hour"), (mins, "minute"))
            if n
        ]
        when = "in " + " and ".join(parts)
    else:
        at = clock_time(slots)
        if at is None:
            raise AlertError("invalid_time")
        alert = _alerts(ctx).add_at(
            "reminder", at, "", _first_day(ctx, slots), message, _target(ctx)
        )
        when = "at " + alert.when()
    return Outcome(
        render(match.intent, "default", slots, reminder=message, when=when),
        (action(alert.id, "alarm", "remind", at=alert.next_fire.isoformat()),),
    )


def _clock_words(slots: dict) -> str:
    """ "7 PM", "6:30 AM" for the slots' clock time ("" when they name none or a bad one)."""
    try:
        at = clock_time(slots)
    except AlertError:
        return ""
    return "" if at is None else clock_words(at)


def asked_back(intent: str, slots: dict) -> str | None:
    """What an alarm or reminder request would do, in words, for a question asked back
    ("Do you want me to <this>?"): ``"remind you to take out the trash at 7 PM tomorrow"``,
    ``"set an alarm for 7 AM every weekday"``; None for any other intent."""
    clock = _clock_words(slots)
    day = f" {slots['alarm_day']}" if slots.get("alarm_day") in ("today", "tomorrow") else ""
    repeat = f" {_REPEAT_WORDS[slots['alarm_repeat']]}" if slots.get("alarm_repeat") else ""
    if intent == "HubReminderSet":
        minutes = int(slots.get("reminder_minutes") or 0)
        hours = int(slots.get("reminder_hours") or 0)
        parts = [
            f"{n} {u}{'s' if n != 1 else ''}"
            for n, u in ((hours, "hour"), (minutes, "minute"))
            if n
        ]
        when = "in " + " and ".join(parts) if parts else f"at {clock}{day}"
        return f"remind you to {str(slots.get('reminder') or '').strip()} {when}"
    if intent == "HubAlarmSet":
        return f"set an alarm for {clock}{day}{repeat}"
    if intent == "HubAlarmCancel":
        return f"cancel the {clock} alarm" if clock else "cancel the alarm"
    if intent == "HubAlarmSnooze":
        return "snooze the alarm"
    return None
