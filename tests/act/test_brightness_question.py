"""A brightness question ("what is the brightness of the kitchen light", "how bright is ...")
is answered with the brightness when it is known, "I don't know" when it is not; never with
the light's on/off state instead ("Kitchen Light is on")."""

from __future__ import annotations

import pytest

from fakes import ROOMY_TIMEOUTS, make_hub

ASKED = [
    "what is the brightness of the kitchen light",
    "what's the kitchen light's brightness",
    "how bright is the kitchen light",
]


def hub_with_kitchen(state: str, **attrs):
    hub = make_hub(entry="ask", timeouts_s=ROOMY_TIMEOUTS)
    hub.home.set_state("Kitchen Light", state, **attrs)
    return hub


@pytest.mark.parametrize("asked", ASKED)
def test_a_known_brightness_is_said(asked):
    hub = make_hub(entry="ask", timeouts_s=ROOMY_TIMEOUTS)
    hub.turn_text("set the kitchen light to 40 percent")
    trace = hub.turn_text(asked)
    assert (trace["intent"], trace["slots"].get("attribute")) == ("HassGetState", "brightness")
    assert trace["response"] == "Kitchen Light brightness is 40%."


@pytest.mark.parametrize("asked", ASKED)
def test_an_unknown_brightness_is_not_known(asked):
    trace = hub_with_kitchen("on").turn_text(asked)
    assert trace["response"] == "I don't know how bright Kitchen Light is."
    assert "is on" not in trace["response"]


def test_a_light_that_is_off_is_said_to_be_off():
    trace = hub_with_kitchen("off").turn_text("how bright is the kitchen light")
    assert trace["response"] == "Kitchen Light is off."


def test_an_unreachable_light_is_not_answered_from():
    trace = hub_with_kitchen("unavailable", brightness_pct=80).turn_text(ASKED[0])
    assert trace["response"] == "Sorry, I can't check the Kitchen Light right now."


def test_a_brightness_the_device_has_not_confirmed_is_not_stated():
    hub = make_hub(entry="ask", timeouts_s=ROOMY_TIMEOUTS)
    hub.turn_text("set the kitchen light to 40 percent")
    hub.home.mark_unconfirmed("Kitchen Light", "key-1", "turn on")
    trace = hub.turn_text(ASKED[0])
    assert trace["response"] == (
        "I've asked the Kitchen Light to turn on; it hasn't confirmed yet."
    )
