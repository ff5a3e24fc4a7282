"""A question about an attribute (brightness, color, volume, battery) is answered with that
attribute, or with "the device has none" when its kind of device has none ("how bright is the
front door": a lock), or "I don't know" when its kind has one the hub was never told; never
with the device's state in its place ("Front door is locked.", the breaker's finding)."""

from __future__ import annotations

from datetime import UTC

import pytest

from hub.act import Actor
from hub.act.timers import Timers
from hub.intents.match import IntentMatch, with_asked_attribute

from intent_table import NOW, table_home


def ask(name: str, attribute: str, **attrs) -> str:
    """The answer to HassGetState about ``name``'s ``attribute`` (``attrs`` set first)."""
    home = table_home()
    if attrs:
        home.set_state(name, home.state(name), **attrs)
    actor = Actor(home, Timers(clock=lambda: 0.0), clock=lambda: NOW, tz=UTC)
    match = IntentMatch(
        "HassGetState", {"name": name, "attribute": attribute}, "", entities=(name,)
    )
    return actor.execute(match, "row:0").response


@pytest.mark.parametrize(
    "name, attribute, answer",
    [
        ("Front Door", "brightness", "Sorry, Front Door has no brightness"),
        ("Garage Door", "color", "Sorry, Garage Door has no color"),
        ("Front Door", "volume", "Sorry, Front Door has no volume"),
        ("TV", "brightness", "Sorry, TV has no brightness"),
        ("Kitchen Light", "volume", "Sorry, Kitchen Light has no volume"),
    ],
)
def test_finding_odd_an_attribute_its_kind_of_device_lacks_is_said_to_be_missing(
    name, attribute, answer
):
    assert ask(name, attribute) == answer


@pytest.mark.parametrize(
    "name, attribute, attrs, answer",
    [
        ("TV", "volume", {}, "I don't know the volume of TV"),
        ("TV", "volume", {"volume_level": 0.25}, "TV volume is 25%"),
        ("Kitchen Light", "color", {}, "I don't know the color of Kitchen Light"),
        ("Kitchen Light", "color", {"color_name": "red"}, "Kitchen Light color is red"),
        ("Front Door", "battery_level", {}, "I don't know the battery level of Front Door"),
        ("Front Door", "battery_level", {"battery_level": 80}, "Front Door battery level is 80"),
    ],
)
def test_finding_odd_an_attribute_its_kind_has_is_said_or_not_known(name, attribute, attrs, answer):
    assert ask(name, attribute, **attrs) == answer


@pytest.mark.parametrize(
    "said, attribute",
    [
        ("how bright is the front door", "brightness"),
        ("what's the brightness of the front door", "brightness"),
        ("what colour is the garage door", "color"),
        ("how loud is the tv", "volume"),
        ("what is the battery of the front door", "battery_level"),
        ("is the front door locked", None),
    ],
)
def test_finding_odd_a_loose_state_reading_keeps_the_attribute_asked(said, attribute):
    loose = IntentMatch("HassGetState", {"name": "Front Door"}, said, source="fuzzy")
    assert with_asked_attribute(loose, said).slots.get("attribute") == attribute


def test_finding_odd_only_a_state_reading_without_an_attribute_gets_one():
    asked = IntentMatch("HassGetState", {"name": "EcoBee", "attribute": "current_temperature"}, "")
    assert with_asked_attribute(asked, "how bright is it") is asked
    command = IntentMatch("HassTurnOn", {"name": "Kitchen Light"}, "")
    assert with_asked_attribute(command, "make it bright") is command
