"""Courtesy words around a command ("hey could you please ... now thanks") do not stop the
rules from reading it; they are only taken off the ends, never where they change meaning."""

from __future__ import annotations

import pytest

from hub.intents.courtesy import without_courtesy
from hub.intents.rules import Rules
from hub.settings import IntentSettings

from homes import fixture_home


@pytest.fixture(scope="module")
def rules() -> Rules:
    return Rules(fixture_home(), IntentSettings())


@pytest.mark.parametrize(
    "text, core",
    [
        ("hey could you please turn on the bed light now thanks", "turn on the bed light"),
        ("Hey, turn on the bed light, please!", "turn on the bed light"),
        ("okay so turn off the fan for me thank you", "turn off the fan"),
        ("turn on the bed light", None),  # nothing to take off
        ("hey", None),  # nothing would be left
        ("heyday lights", None),  # a word that starts like one is not one
        ("set a timer for 5 minutes from now", None),  # "from now" is a time
    ],
)
def test_without_courtesy(text, core):
    assert without_courtesy(text) == core


@pytest.mark.parametrize(
    "text, intent, entities",
    [
        ("hey could you please turn on the bed light now thanks", "HassTurnOn", ("Bed Light",)),
        ("hey turn off the standing light", "HassTurnOff", ("Standing Light",)),
        ("okay please turn on the bed light thank you", "HassTurnOn", ("Bed Light",)),
    ],
)
def test_a_polite_command_is_read_as_the_command(rules, text, intent, entities):
    match = rules.recognize(text)
    assert match is not None, text
    assert (match.intent, match.entities, match.source) == (intent, entities, "rules")


def test_please_dont_is_not_read_as_the_command(rules):
    assert rules.recognize("please don't turn on the bed light") is None
    assert rules.recognize("hey don't turn off the standing light thanks") is None
