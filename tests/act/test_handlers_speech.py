"""HassRespond (fixed answers) and HassBroadcast (spoken on the hub), table style."""

from __future__ import annotations

import pytest

from intent_table import check_row

RESPOND = [  # Home Assistant's answers, but where untrue of an offline hub (test_respond_untrue)
    ("hello", "Hello!"),
    ("hi home assistant", "Hello!"),
    ("who made you", "I am hub, an offline voice assistant built on Home Assistant's intents."),
    ("are you always listening", "No, I only record when you speak the wake word."),
    (
        "what can i say",
        "You can ask me to control the devices in your home, set timers, alarms and lists, "
        "and ask short questions.",
    ),
    (
        "where does my data go",
        "Your voice is heard on this device and never sent anywhere. Only the commands you "
        "give go to your devices and the services you set up.",
    ),
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
