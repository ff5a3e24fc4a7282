"""What an asked-back question says: a device change as a verb on the devices, any other
intent (a timer, a list, a media search heard by the second pass) in the words heard."""

from __future__ import annotations

from hub.graph.confirmation import question
from hub.home import Home
from hub.intents.match import IntentMatch

from fakes import settings


def home():
    return Home.from_settings(settings().home)


def test_a_timer_asked_back_is_said_in_the_words_heard_not_as_a_device_change():
    match = IntentMatch("HassStartTimer", {"minutes": 5}, "set a timer for 5 minutes")
    assert question(home(), [match]) == "Do you want me to set a timer for 5 minutes?"


def test_a_media_search_asked_back_names_what_to_play():
    match = IntentMatch(
        "HassMediaSearchAndPlay",
        {"search_query": "the beatles"},
        "play the beatles",
        entities=("TV",),
    )
    assert question(home(), [match]) == "Do you want me to play the beatles?"


def test_an_on_off_asked_back_is_still_a_verb_on_the_device():
    match = IntentMatch(
        "HassTurnOff", {"name": "Bed Light"}, "turn of bed light", entities=("Bed Light",)
    )
    assert question(home(), [match]) == "Do you want me to turn off the Bed Light?"
