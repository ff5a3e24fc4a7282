"""Two commands in one sentence whose second part has no verb of its own (s12 finding 1):
the previous part's verb frame is carried over when exactly one reading comes of it
(:func:`hub.intents.multi.carried`), else nothing is guessed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hub.intents.match import IntentMatch
from hub.intents.multi import frames, more_matches, split_commands, split_reading

from intent_table import rules

ELIDED = [
    (
        "turn the tv on and the lights off",
        [("HassTurnOn", {"name": "TV"}), ("HassTurnOff", {"domain": "light"})],
    ),
    (
        "turn on the kitchen light and off the tv",
        [("HassTurnOn", {"name": "Kitchen Light"}), ("HassTurnOff", {"name": "TV"})],
    ),
    (
        "turn on the kitchen light and the bed light",
        [("HassTurnOn", {"name": "Kitchen Light"}), ("HassTurnOn", {"name": "Bed Light"})],
    ),
    (
        "turn on kitchen light and bed light",
        [("HassTurnOn", {"name": "Kitchen Light"}), ("HassTurnOn", {"name": "Bed Light"})],
    ),
    (
        "turn the tv on and the lights",
        [("HassTurnOn", {"name": "TV"}), ("HassTurnOn", {"domain": "light"})],
    ),
    (
        "open the sliding door and the garage door",
        [("HassTurnOn", {"name": "Sliding Door"}), ("HassTurnOn", {"name": "Garage Door"})],
    ),
    (
        "set the kitchen light to 50 percent and the bed light",
        [
            ("HassLightSet", {"name": "Kitchen Light", "brightness": 50}),
            ("HassLightSet", {"name": "Bed Light", "brightness": 50}),
        ],
    ),
    (
        "turn on the kitchen light, the bed light and the tv",
        [
            ("HassTurnOn", {"name": "Kitchen Light"}),
            ("HassTurnOn", {"name": "Bed Light"}),
            ("HassTurnOn", {"name": "TV"}),
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), ELIDED)
def test_finding_elided_verb_is_carried_from_the_part_before(text, expected):
    found = split_commands(text, lambda part: rules().recognize(part, None))
    assert found is not None, text
    assert [(m.intent, m.slots) for m in found] == expected
    assert all(m.source == "rules" for m in found)  # strict readings, not the fuzzy matcher's


@pytest.mark.parametrize(
    "text",
    [
        "open the garage door and the front door",  # a lock: "open the front door" is no command
        "turn on the kitchen light and banana",
        "turn on the kitchen light and off",
    ],
)
def test_finding_elided_part_the_rules_do_not_read_is_no_split(text):
    assert split_reading(text, lambda part: rules().recognize(part, None)) == (None, False)


def test_finding_elided_verb_frame_never_takes_the_target_or_a_number():
    assert frames("turn the tv on", "TV") == [("turn", ""), ("turn", "on")]
    assert frames("turn on kitchen light", "Kitchen Light") == [("turn", ""), ("turn on", "")]
    assert frames("set 50 percent on the bed light", "Bed Light") == [("set", "")]
    assert frames("stop") == []


def _match(intent: str, **slots) -> IntentMatch:
    return IntentMatch(intent=intent, slots=slots, text="", entities=())


READ = {
    "turn the tv on": _match("HassTurnOn", name="TV"),
    "turn the lights": _match("HassTurnOff", domain="light"),  # two different readings
    "turn the lights on": _match("HassTurnOn", domain="light"),
}


def test_finding_elided_part_with_two_readings_is_not_guessed():
    found, doubt = split_reading("turn the tv on and the lights", READ.get)
    assert (found, doubt) == (None, True)


def test_finding_elided_part_with_two_readings_is_not_read_fuzzily_either():
    fuzzy_calls = []
    engine = SimpleNamespace(
        recognize=lambda text, area: READ.get(text),
        recognize_delayed=lambda text, area: fuzzy_calls.append(text),
        fuzzy=None,
        home=None,
    )
    assert more_matches(engine, "turn the tv on and the lights", None) == []
    assert fuzzy_calls == []


def test_finding_elided_readings_that_do_the_same_are_one():
    same = {**READ, "turn the lights": READ["turn the lights on"]}
    found, doubt = split_reading("turn the tv on and the lights", same.get)
    assert found is not None and not doubt
    assert [m.slots for m in found] == [{"name": "TV"}, {"domain": "light"}]
