"""Question handlers, table style: states and attributes from [home], the weather entity,
the thermostat, and the clock (2025-01-01 12:05 UTC). Nothing here changes anything."""

from __future__ import annotations

import pytest

from intent_table import check_row

STATE = [
    ("what is the outdoor humidity", {"name": "Outdoor Humidity"}, "Outdoor humidity is 64 %"),
    ("is the front door locked", {"name": "Front Door", "state": "locked"}, "Yes"),
    ("is the garage door open", {"name": "Garage Door", "state": "open"}, "No, closed"),
    ("is the office light on", {"name": "Office Light", "state": "on"}, "Yes"),
    ("is the kitchen light off", {"name": "Kitchen Light", "state": "off"}, "Yes"),
    ("what's the state of the tv", {"name": "TV"}, "Tv is playing"),
    ("are any lights on", {"state": "on", "domain": "light"}, "Yes, Office Light"),
    ("which lights are on", {"state": "on", "domain": "light"}, "Office Light"),
    ("how many lights are on", {"state": "on", "domain": "light"}, "1"),
    ("are all the lights off", {"state": "off", "domain": "light"}, "No, Office Light is not off"),
    # any attribute of [home], only when the entity has it
    (
        "what's the ecobee's current temperature",
        {"name": "EcoBee", "attribute": "current_temperature"},
        "EcoBee current temperature is 21.5",
    ),
    (
        "tell me the items on chores",
        {"name": "Chores", "attribute": "items"},
        "Chores items is ['dishes', 'laundry']",
    ),
    (
        "what are the items on the shopping list",
        {"name": "Shopping List", "attribute": "items"},
        "Sorry, Shopping List has no items",
    ),
]


@pytest.mark.parametrize("text, slots, response", STATE)
def test_get_state(text, slots, response):
    check_row(text, "HassGetState", slots, response)


@pytest.mark.parametrize(
    "text",
    [
        "what's the weather",
        "what is the weather like",
        "tell me the weather",
        "how's the weather in new york",
        "what's the weather like outside",
    ],
)
def test_get_weather_from_the_weather_entity(text):
    check_row(text, "HassGetWeather", {}, "Sunny")


@pytest.mark.parametrize(
    "text",
    [
        "what's the temperature",
        "how warm is it in here",
        "what is the ecobee temperature",
        "how hot is it",
        "what's the temp",
    ],
)
def test_climate_get_temperature(text):
    check_row(text, "HassClimateGetTemperature", {}, "21.5 degrees")


@pytest.mark.parametrize(
    "text",
    [
        "what time is it",
        "what's the time",
        "tell me the time",
        "what time is it now",
        "what's the time right now",
    ],
)
def test_current_time_from_the_clock(text):
    check_row(text, "HassGetCurrentTime", {}, "12:05 PM")


@pytest.mark.parametrize(
    "text",
    [
        "what's the date",
        "what is today's date",
        "tell me the date",
        "what is the date today",
        "what day is it today",
    ],
)
def test_current_date_from_the_clock(text):
    check_row(text, "HassGetCurrentDate", {}, "January 1st, 2025")


@pytest.mark.parametrize(
    "text", ["nevermind", "never mind", "forget it", "cancel that", "never mind that"]
)
def test_nevermind_says_okay_and_does_nothing(text):
    check_row(text, "HassNevermind", {}, "Okay.")
