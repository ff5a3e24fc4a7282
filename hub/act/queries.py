"""Handlers that answer questions from the home's state: state, weather, temperature, time."""

from __future__ import annotations

from hub.act.common import Context, Outcome, failed, targets_of
from hub.intents.rules import IntentMatch
from hub.act.responses import (climate_temperature, current_date, current_time, get_state,
                         state_with_unit, weather)


def _state_key(match: IntentMatch) -> str:
    """HassGetState's response key: the sentence's, else ``one_yesno``/``one``/``any``."""
    if match.response:
        return match.response
    if match.slots.get("name"):
        return "one_yesno" if match.slots.get("state") else "one"
    return "any"


def get_state_answer(ctx: Context, match: IntentMatch) -> Outcome:
    """HassGetState: "Yes" / "No, unlocked" / "Outdoor humidity is 64 %" / "Yes, A and B".

    With a ``state`` slot, targets whose state equals it are the matched ones.
    """
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    wanted = match.slots.get("state")
    matched, unmatched = [], []
    for name in targets.entities:
        state = ctx.home.state(name)
        pair = (name, state_with_unit(state, ctx.home.attributes(name)))
        (matched if wanted is None or state == wanted else unmatched).append(pair)
    return Outcome(get_state(_state_key(match), match.slots, matched, unmatched))


def _first_state(ctx: Context, match: IntentMatch):
    """(state, attributes) of the first target, or the failure Outcome."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    name = targets.entities[0]
    return ctx.home.state(name), ctx.home.attributes(name)


def get_weather(ctx: Context, match: IntentMatch) -> Outcome:
    """HassGetWeather from the weather entity's state (and temperature attributes)."""
    found = _first_state(ctx, match)
    return found if isinstance(found, Outcome) else Outcome(weather(*found))


def get_temperature(ctx: Context, match: IntentMatch) -> Outcome:
    """HassClimateGetTemperature: the climate entity's ``current_temperature``."""
    found = _first_state(ctx, match)
    return found if isinstance(found, Outcome) else Outcome(climate_temperature(*found))


HANDLERS = {
    "HassGetState": get_state_answer,
    "HassGetWeather": get_weather,
    "HassClimateGetTemperature": get_temperature,
    "HassGetCurrentTime": lambda ctx, m: Outcome(current_time(ctx.now().time())),
    "HassGetCurrentDate": lambda ctx, m: Outcome(current_date(ctx.now().date())),
}
