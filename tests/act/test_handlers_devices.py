"""Device handlers, table style: turn on/off, light settings, positions, media keys.

Each row is a sentence people say (written by hand), the intent and slots it must give, the
response and the first action ``(entity, service)``; states are checked where they change."""

from __future__ import annotations

import pytest

from intent_table import check_row

ON = "HassTurnOn"
OFF = "HassTurnOff"

TURN = [
    (
        "switch on the kitchen light",
        ON,
        {"name": "Kitchen Light"},
        "Turned on the light",
        ("Kitchen Light", "turn_on"),
    ),
    (
        "could you turn the office light on",
        ON,
        {"name": "Office Light"},
        "Turned on the light",
        ("Office Light", "turn_on"),
    ),
    (
        "bed light on please",
        ON,
        {"name": "Bed Light"},
        "Turned on the light",
        ("Bed Light", "turn_on"),
    ),
    ("turn the tv on", ON, {"name": "TV"}, "Turned on the media player", ("TV", "turn_on")),
    (
        "activate mood lighting",
        ON,
        {"name": "Mood Lighting"},
        "Activated",
        ("Mood Lighting", "turn_on"),
    ),
    ("run party time", ON, {"name": "Party Time"}, "Started", ("Party Time", "turn_on")),
    ("lock the front door", ON, {"name": "Front Door"}, "Locking", ("Front Door", "lock")),
    ("open the garage door", ON, {"name": "Garage Door"}, "Opening", ("Garage Door", "open_cover")),
    (
        "turn off the standing light",
        OFF,
        {"name": "Standing Light"},
        "Turned off the light",
        ("Standing Light", "turn_off"),
    ),
    (
        "kitchen light off",
        OFF,
        {"name": "Kitchen Light"},
        "Turned off the light",
        ("Kitchen Light", "turn_off"),
    ),
    ("switch the tv off", OFF, {"name": "TV"}, "Turned off the media player", ("TV", "turn_off")),
    (
        "close the sliding door",
        OFF,
        {"name": "Sliding Door"},
        "Closing",
        ("Sliding Door", "close_cover"),
    ),
    ("unlock the front door", OFF, {"name": "Front Door"}, "Unlocking", ("Front Door", "unlock")),
    (
        "turn off the lights in the office",
        OFF,
        {"area": "Office", "domain": "light"},
        "Turned off the lights",
        ("Office Light", "turn_off"),
    ),
    (
        "turn off all the lights",
        OFF,
        {"domain": "light"},
        "Turned off all of the lights",
        ("Bed Light", "turn_off"),
    ),
]


@pytest.mark.parametrize("text, intent, slots, response, action", TURN)
def test_turn_on_and_off(text, intent, slots, response, action):
    home = check_row(text, intent, slots, response, action)
    expected = {
        "turn_on": "on",
        "turn_off": "off",
        "lock": "locked",
        "unlock": "unlocked",
        "open_cover": "open",
        "close_cover": "closed",
    }.get(action[1])
    if expected and home.entity(action[0]).domain not in ("script", "scene"):
        assert home.state(action[0]) == expected


LIGHT_SET = [
    (
        "set the kitchen light to 40 percent",
        {"name": "Kitchen Light", "brightness": 40},
        "Brightness set",
        "Kitchen Light",
    ),
    (
        "dim the bed light to 10%",
        {"name": "Bed Light", "brightness": 10},
        "Brightness set",
        "Bed Light",
    ),
    (
        "set the brightness of the bed light to 75",
        {"name": "Bed Light", "brightness": 75},
        "Brightness set",
        "Bed Light",
    ),
    (
        "make the kitchen light red",
        {"name": "Kitchen Light", "color": "red"},
        "Color set",
        "Kitchen Light",
    ),
    ("turn the bed light blue", {"name": "Bed Light", "color": "blue"}, "Color set", "Bed Light"),
]


@pytest.mark.parametrize("text, slots, response, light", LIGHT_SET)
def test_light_set(text, slots, response, light):
    home = check_row(text, "HassLightSet", slots, response, (light, "turn_on"))
    attrs = home.attributes(light)
    assert attrs.get("brightness_pct") == slots.get("brightness", attrs.get("brightness_pct"))
    assert attrs.get("color_name") == slots.get("color", attrs.get("color_name"))


POSITION = [
    ("set the garage door to 50 percent", "Garage Door", 50),
    ("open the sliding door to 30%", "Sliding Door", 30),
    ("set the sliding door position to 80", "Sliding Door", 80),
    ("set the sliding door to 100%", "Sliding Door", 100),
    ("set the garage door position to 0", "Garage Door", 0),
]


@pytest.mark.parametrize("text, name, position", POSITION)
def test_set_position(text, name, position):
    home = check_row(
        text,
        "HassSetPosition",
        {"name": name, "position": position},
        "Position set",
        (name, "set_cover_position"),
    )
    assert home.attributes(name)["current_position"] == position
    assert home.state(name) == ("open" if position else "closed")


MEDIA = [
    ("next track on the tv", "HassMediaNext", "Playing next", "media_next_track", None),
    ("skip this song", "HassMediaNext", "Playing next", "media_next_track", None),
    ("next song", "HassMediaNext", "Playing next", "media_next_track", None),
    ("skip", "HassMediaNext", "Playing next", "media_next_track", None),
    ("skip on the tv", "HassMediaNext", "Playing next", "media_next_track", None),
    (
        "go back to the previous song",
        "HassMediaPrevious",
        "Playing previous",
        "media_previous_track",
        None,
    ),
    ("previous track", "HassMediaPrevious", "Playing previous", "media_previous_track", None),
    (
        "previous song on the tv",
        "HassMediaPrevious",
        "Playing previous",
        "media_previous_track",
        None,
    ),
    (
        "play the previous song",
        "HassMediaPrevious",
        "Playing previous",
        "media_previous_track",
        None,
    ),
    ("previous song please", "HassMediaPrevious", "Playing previous", "media_previous_track", None),
    ("pause the tv", "HassMediaPause", "Paused", "media_pause", "paused"),
    ("pause", "HassMediaPause", "Paused", "media_pause", "paused"),
    ("pause the music", "HassMediaPause", "Paused", "media_pause", "paused"),
    ("pause the tv please", "HassMediaPause", "Paused", "media_pause", "paused"),
    ("pause on the tv", "HassMediaPause", "Paused", "media_pause", "paused"),
]


@pytest.mark.parametrize("text, intent, response, service, state", MEDIA)
def test_media_keys(text, intent, response, service, state):
    home = check_row(text, intent, {}, response, ("TV", service))
    assert home.state("TV") == (state or "playing")


@pytest.mark.parametrize(
    "text", ["resume the tv", "unpause", "resume the music", "resume", "unpause the tv"]
)
def test_media_unpause(text):
    home = check_row(
        text, "HassMediaUnpause", {}, "Resumed", ("TV", "media_play"), states={"TV": "paused"}
    )
    assert home.state("TV") == "playing"


def test_unpause_when_nothing_is_paused_acts_on_nothing():
    check_row("resume the music", "HassMediaUnpause", {}, "Sorry, no device is paused", None)
