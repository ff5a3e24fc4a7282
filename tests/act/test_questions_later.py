"""Questions about later are not delayed commands (only intents with side effects are
delayable, hub.intents.delay): "what time is it in 5 minutes" is answered from the clock now,
"what's the weather in an hour" gets "I don't have a forecast.", and no timer is started.
The clock is 2025-01-01 12:05 UTC (tests/intent_table.py)."""

from __future__ import annotations

import pytest

from hub.act.timers import Timers

from intent_table import check_row, run
from test_timers_delayed import clocked_hub

LATER = [
    ("what time is it in 5 minutes", "HassGetCurrentTime", "In 5 minutes it will be 12:10 PM."),
    ("in 5 minutes what time is it", "HassGetCurrentTime", "In 5 minutes it will be 12:10 PM."),
    ("what time is it in 2 hours", "HassGetCurrentTime", "In 2 hours it will be 2:05 PM."),
    (
        "what's the date in 12 hours",
        "HassGetCurrentDate",
        "In 12 hours it will be January 2nd, 2025.",
    ),
    ("what's the weather in 1 hour", "HassGetWeather", "I don't have a forecast."),
    (
        "is the kitchen light on in 10 minutes",
        "HassGetState",
        "Sorry, I only know how things are now, not in 10 minutes.",
    ),
]


@pytest.mark.parametrize("text, intent, response", LATER)
def test_a_question_about_later_is_answered_now_and_starts_no_timer(text, intent, response):
    timers = Timers(clock=lambda: 0.0)
    check_row(text, intent, {}, response, timers=timers)
    assert timers.status() == []


def test_a_command_with_side_effects_is_still_delayed():
    matches, outcomes, _ = run("turn on the kitchen light in 5 minutes")
    assert matches[0].intent == "HassStartTimer" and matches[0].command.intent == "HassTurnOn"
    assert outcomes[0].response == "Command will be executed in 5 minutes"


@pytest.mark.parametrize(
    "text", ["what's the weather in an hour", "how is the weather going to be in an hour"]
)
def test_the_weather_later_has_no_forecast_through_the_hub(text):
    hub = clocked_hub()
    trace = hub.turn_text(text)
    assert trace["response"].startswith("I don't have a forecast.") and hub.timers.status() == []


def test_what_time_is_it_in_5_minutes_through_the_hub_sets_nothing():
    hub = clocked_hub()
    trace = hub.turn_text("what time is it in 5 minutes")
    assert trace["intent"] == "HassGetCurrentTime"
    assert trace["response"].startswith("In 5 minutes it will be ")
    assert hub.timers.status() == []
    hub.clock_.advance(300)
    assert hub.events.tick() == []  # nothing runs later
