"""Honest answers for what is not there (issue 22 item 5): Home Assistant's error responses,
never "Timer cancelled" for nothing, never "couldn't understand" for a known kind of request."""

from __future__ import annotations

import pytest
from dialog_helpers import dialog_hub, said

from hub.act.honest import nothing_to_stop

NO_TIMER = "Sorry, I couldn't find that timer."


@pytest.mark.parametrize("text", ["stop", "stop it", "Stop.", "cancel the timer", "stop the timer"])
def test_stop_with_no_timer_and_nothing_playing_says_there_is_no_timer(text):
    hub = dialog_hub(drop_domains=("media_player",))
    trace = hub.turn_text(text)
    assert trace["response"] == NO_TIMER and trace["intent"] == "HassCancelTimer"
    assert hub.fake_devices.published == []


def test_a_ring_that_ended_meanwhile_is_not_said_cancelled():
    hub = dialog_hub(drop_domains=("media_player",))
    hub.events.stops_ringing = lambda text: True  # it rang when the word was heard ...
    hub.events.stop = lambda area="": []  # ... and had rung out when it was stopped
    assert hub.events.stop_request("stop") is None
    assert hub.turn_text("stop")["response"] == NO_TIMER


def test_stop_while_the_tv_plays_pauses_it():
    hub = dialog_hub()
    hub.home.set_state("TV", "playing")
    assert nothing_to_stop("stop", hub.timers, hub.home) is None
    assert hub.turn_text("stop")["intent"] == "HassMediaPause"
    assert hub.home.state("TV") == "paused"


@pytest.mark.parametrize(
    "text", ["turn up the volume", "next song", "pause the music", "set the volume to 50"]
)
def test_media_requests_without_a_media_player(text):
    hub = dialog_hub(drop_domains=("media_player",))
    trace = hub.turn_text(text)
    assert trace["response"] == "Sorry, I am not aware of any media player."
    assert hub.fake_devices.published == []


@pytest.mark.parametrize(
    "text, answer",
    [
        ("unlock the back door", "Sorry, I am not aware of any device called back door."),
        ("turn on the charm", "Sorry, I am not aware of any device called charm."),
        ("turn on the lights in the garden", "Sorry, I am not aware of any area called garden."),
    ],
)
def test_no_such_device_or_area_is_a_short_true_sentence(text, answer):
    hub = dialog_hub()
    assert hub.turn_text(text)["response"] == answer
    assert hub.fake_devices.published == []


def test_the_voice_path_says_the_same():
    hub = dialog_hub(drop_domains=("media_player",))
    assert said(hub, "turn up the volume")["response"] == (
        "Sorry, I am not aware of any media player."
    )


@pytest.mark.parametrize("text", ["tell me a joke", "what is the meaning of life"])
def test_other_sentences_are_left_to_the_faq(text):
    hub = dialog_hub()
    trace = hub.turn_text(text)
    assert trace["source"] == "faq" and "not aware" not in trace["response"]


def test_known_devices_are_not_answered_as_missing():
    from hub.act.honest import misses_of

    hub = dialog_hub()
    misses = misses_of(hub.home)
    assert misses.answer("turn on the kitchen light") is None
    assert misses.answer("turn on the light") is None
    assert hub.turn_text("turn on the kitchen light")["response"] == "Turned on the light."
