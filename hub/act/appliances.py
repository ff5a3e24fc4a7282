"""Handlers for fans, thermostats, vacuums and lawn mowers (Home Assistant's services).

Each sets the state or attribute the service leaves behind: ``fan.set_percentage`` ->
``percentage``, ``climate.set_temperature`` -> ``temperature``, ``vacuum.start`` ->
``cleaning``, ``vacuum.return_to_base`` -> ``returning``, ``lawn_mower.start_mowing`` ->
``mowing``, ``lawn_mower.dock`` -> ``docked``.
"""

from __future__ import annotations

from dataclasses import replace

from hub.act.common import Context, Outcome, each_target, refuse
from hub.act.responses import render
from hub.intents.match import IntentMatch


def _number(value) -> float | None:
    """A finite number from a slot value, or None."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def fan_speed(ctx: Context, match: IntentMatch) -> Outcome:
    """HassFanSetSpeed: ``percentage`` 0-100 (0 turns the fan off)."""
    value = _number(match.slots.get("percentage"))
    if value is None:
        return refuse("nothing_to_do")
    pct = int(max(0, min(100, round(value))))
    return each_target(
        ctx,
        match,
        "set_percentage",
        "on" if pct else "off",
        {"percentage": pct},
        {"percentage": pct},
    )


def climate_temperature(ctx: Context, match: IntentMatch) -> Outcome:
    """HassClimateSetTemperature: the target ``temperature`` (the home's unit)."""
    value = _number(match.slots.get("temperature"))
    if value is None:
        return refuse("nothing_to_do")
    value = int(value) if value.is_integer() else value
    return each_target(
        ctx, match, "set_temperature", None, {"temperature": value}, {"temperature": value}
    )


def climate_fan_mode(ctx: Context, match: IntentMatch) -> Outcome:
    """HassClimateSetFanMode: ``fan_mode`` (``auto``, ``low``, ...)."""
    mode = str(match.slots.get("fan_mode", "") or "").strip()
    if not mode:
        return refuse("nothing_to_do")
    return each_target(ctx, match, "set_fan_mode", None, {"fan_mode": mode}, {"fan_mode": mode})


def vacuum_start(ctx: Context, match: IntentMatch) -> Outcome:
    """HassVacuumStart: ``vacuum.start`` -> ``cleaning``."""
    return each_target(ctx, match, "start", "cleaning")


def vacuum_return(ctx: Context, match: IntentMatch) -> Outcome:
    """HassVacuumReturnToBase: ``vacuum.return_to_base`` -> ``returning``."""
    return each_target(ctx, match, "return_to_base", "returning")


def vacuum_clean_area(ctx: Context, match: IntentMatch) -> Outcome:
    """HassVacuumCleanArea: clean the ``area`` slot's area (the vacuum may live elsewhere)."""
    area = str(match.slots.get("area", "") or "")
    if not area:
        return refuse("need_area")
    others = {k: v for k, v in match.slots.items() if k != "area"}
    target = replace(match, slots=others)  # the area is where to clean, not the vacuum's
    outcome = each_target(
        ctx, target, "clean_area", "cleaning", {"cleaning_area": area}, {"area": area}
    )
    if not outcome.ok:
        return outcome
    return Outcome(render(match.intent, "default", match.slots), outcome.actions)


def mower_start(ctx: Context, match: IntentMatch) -> Outcome:
    """HassLawnMowerStartMowing: ``lawn_mower.start_mowing`` -> ``mowing``."""
    return each_target(ctx, match, "start_mowing", "mowing")


def mower_dock(ctx: Context, match: IntentMatch) -> Outcome:
    """HassLawnMowerDock: ``lawn_mower.dock`` -> ``docked``."""
    return each_target(ctx, match, "dock", "docked")
