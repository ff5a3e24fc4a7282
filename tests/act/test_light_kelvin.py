"""BC-43: "set the living room lamp to 2700 kelvin" reaches the light as color_temp_kelvin
(HassLightSet's ``temperature`` slot is Kelvin for lights), and on to the wire (Zigbee2MQTT
mireds); a light without color_temp says it can't, and nothing is sent."""

from __future__ import annotations

import functools
import json
import tomllib
from datetime import UTC

from hub.act import Actor
from hub.act.timers import Timers
from hub.devices.dialects.z2m import Z2mDevice
from hub.home import Home
from hub.intents.rules import Rules
from hub.paths import DATA_DIR
from hub.settings import IntentSettings, settings_from_dict

LAMP = {
    "name": "Living Room Lamp",
    "domain": "light",
    "features": ["brightness", "color_temp"],
    "state": "off",
}


def lamp_home() -> Home:
    data = tomllib.loads((DATA_DIR / "home-en.toml").read_text(encoding="utf-8"))
    data["home"]["entities"] = [*data["home"]["entities"], LAMP]
    return Home.from_settings(settings_from_dict(data).home)


@functools.lru_cache(maxsize=1)
def rules() -> Rules:
    return Rules(lamp_home(), IntentSettings())


def say(text: str):
    home = lamp_home()
    match = rules().recognize(text) or next(iter(rules().recognize_more(text)), None)
    assert match is not None, text
    actor = Actor(home, Timers(clock=lambda: 0.0), clock=lambda: 0.0, tz=UTC)
    return match, actor.execute(match, "k:1"), home


def test_bc43_kelvin_reaches_the_light_as_color_temp_kelvin():
    match, outcome, home = say("set the living room lamp to 2700 kelvin")
    assert match.intent == "HassLightSet"
    assert match.slots.get("name") == "Living Room Lamp"
    assert outcome.response == "Color temperature set"
    [action] = outcome.actions
    assert action["entity"] == "Living Room Lamp" and action["service"] == "turn_on"
    assert action["data"] == {"color_temp_kelvin": 2700}
    assert home.state("Living Room Lamp") == "on"
    assert home.attributes("Living Room Lamp")["color_temp_kelvin"] == 2700
    message = Z2mDevice("Living Room Lamp", "Living Room Lamp").command(action)
    assert json.loads(message.payload) == {"state": "ON", "color_temp": 370}


def test_bc43_a_light_without_color_temp_says_it_cannot():
    match, outcome, home = say("set the bed light to 2700 kelvin")
    assert match.intent == "HassLightSet"
    assert not outcome.actions
    assert outcome.response != "Sorry, there is nothing to do."
    assert "support" in outcome.response.lower() or "can't" in outcome.response.lower()
    assert home.state("Bed Light") == "off"
