"""HassRespond (fixed answers) and HassBroadcast (spoken on the hub), table style."""

from __future__ import annotations

import pytest

from intent_table import check_row

RESPOND = [
    ("hello", "Hello from Home Assistant."),
    ("hi home assistant", "Hello from Home Assistant."),
    (
        "who made you",
        "I was created by the wonderful Home Assistant community, made up of tinkerers world wide.",
    ),
    ("are you always listening", "No, I only record when you speak the wake word."),
    (
        "what can i say",
        "To learn what you can ask, visit home dash assistant dot I.O. slash voice.",
    ),
    ("where does my data go", "Your data is sent to your Home Assistant server."),
]


@pytest.mark.parametrize("text, response", RESPOND)
def test_respond(text, response):
    check_row(text, "HassRespond", {}, response)


BROADCAST = [
    ("broadcast that dinner is ready", "dinner is ready"),
    ("announce the movie is starting", "the movie is starting"),
    ("broadcast time to go", "time to go"),
    ("broadcast dinner is ready", "dinner is ready"),
    ("announce that the car is here", "the car is here"),
]


@pytest.mark.parametrize("text, message", BROADCAST)
def test_broadcast_is_spoken_on_the_hub(text, message):
    check_row(text, "HassBroadcast", {"message": message}, message, ("hub", "announce"))
