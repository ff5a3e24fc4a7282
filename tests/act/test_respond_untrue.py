"""The new user's finding: "hello" answered "Hello from Home Assistant." and "where does my
data go" "Your data is sent to your Home Assistant server.": Home Assistant's own HassRespond
answers, untrue of an offline hub that is not Home Assistant. The hub's ``[instead]`` table
replaces them; every other HassRespond answer is still Home Assistant's."""

from __future__ import annotations

import pytest

from hub.act.responses import english_intents, render

THEIRS = english_intents()["responses"]["intents"]["HassRespond"]


@pytest.mark.parametrize("key", ["hello", "data", "commands", "creator"])
def test_newuser_home_assistants_untrue_answers_are_replaced(key):
    said = render("HassRespond", key, {})
    assert said and said != THEIRS[key]
    assert "Home Assistant server" not in said and "home dash assistant" not in said.lower()
    assert not said.startswith("Hello from")


def test_newuser_the_other_answers_stay_home_assistants():
    assert render("HassRespond", "listening", {}) == THEIRS["listening"]
