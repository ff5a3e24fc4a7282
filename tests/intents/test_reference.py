"""References (issue 18 item 3): "turn it off" / "turn them off" / "make it brighter" /
"set it to 50 percent" mean what this conversation last acted on, for a few minutes of the
conversation's clock; typed, spoken and Wyoming alike; a sensitive "it" is still asked back."""

from __future__ import annotations

from dialog_helpers import dialog_hub, said

from hub.core.conversation import REFERENCE_WINDOW_S
from hub.intents.reference import WHICH_DEVICE


def test_turn_it_off_after_turning_the_kitchen_light_on():
    hub = dialog_hub()
    hub.turn_text("turn on the kitchen light")
    done = hub.turn_text("turn it off")
    assert done["intent"] == "HassTurnOff" and done["slots"]["name"] == "Kitchen Light"
    assert hub.fake_devices.published == [
        ("Kitchen Light", "turn_on"),
        ("Kitchen Light", "turn_off"),
    ]
    assert hub.home.state("Kitchen Light") == "off"


def test_brighter_dimmer_and_a_percent_refer_to_the_light():
    hub = dialog_hub()
    hub.turn_text("set the kitchen light to 50 percent")
    assert hub.turn_text("make it brighter")["response"] == "Brightness set."
    assert hub.home.attributes("Kitchen Light")["brightness_pct"] == 75
    hub.turn_text("make it dimmer")
    hub.turn_text("make it dimmer")
    assert hub.home.attributes("Kitchen Light")["brightness_pct"] == 25
    hub.turn_text("set it to 40 percent")
    assert hub.home.attributes("Kitchen Light")["brightness_pct"] == 40
    assert hub.home.state("Kitchen Light") == "on"


def test_them_means_every_entity_and_it_asks_which_one():
    hub = dialog_hub()
    hub.turn_text("turn on the kitchen light and turn on the office light")
    asked = hub.turn_text("turn it off")
    assert asked["response"] == "Which one?"
    assert hub.turn_text("the office one")["slots"]["name"] == "Office Light"
    assert hub.home.state("Office Light") == "off" and hub.home.state("Kitchen Light") == "on"
    hub.turn_text("turn on the kitchen light and turn on the office light")
    hub.turn_text("turn them off")
    assert hub.home.state("Office Light") == hub.home.state("Kitchen Light") == "off"


def test_the_reference_expires_with_the_conversation_clock():
    hub = dialog_hub()
    hub.turn_text("turn on the kitchen light")
    hub.test_clock.now += REFERENCE_WINDOW_S - 1
    assert hub.turn_text("turn it off")["intent"] == "HassTurnOff"
    hub.turn_text("turn it on")
    hub.test_clock.now += REFERENCE_WINDOW_S + 1
    late = hub.turn_text("turn it off")
    assert late["response"] == WHICH_DEVICE and hub.home.state("Kitchen Light") == "on"


def test_with_nothing_to_refer_to_it_asks_which_device_and_takes_a_name():
    from hub.act.responses import error_text

    assert error_text("no_target") == WHICH_DEVICE
    hub = dialog_hub()
    assert hub.turn_text("turn it on")["response"] == WHICH_DEVICE
    assert hub.fake_devices.published == []
    assert hub.turn_text("the bed light")["slots"]["name"] == "Bed Light"
    assert hub.fake_devices.published == [("Bed Light", "turn_on")]


def test_each_conversation_has_its_own_it():
    hub = dialog_hub()
    kitchen, office = hub.conversation("sat-kitchen"), hub.conversation("sat-office")
    hub.turn_text("turn on the kitchen light", conversation=kitchen)
    hub.turn_text("turn on the office light", conversation=office)
    hub.turn_text("turn it off", conversation=kitchen)
    assert hub.home.state("Kitchen Light") == "off" and hub.home.state("Office Light") == "on"


def test_a_sensitive_it_needs_the_usual_yes():
    hub = dialog_hub()
    hub.home.set_state("Front Door", "locked")
    assert hub.turn_text("is the front door locked")["response"] == "Yes."
    asked = hub.turn_text("unlock it")
    assert asked["response"] == "Do you want me to unlock the Front Door?"
    assert hub.fake_devices.published == [] and hub.home.state("Front Door") == "locked"
    hub.turn_text("yes")
    assert hub.home.state("Front Door") == "unlocked"


def test_a_sensitive_it_said_no_to_is_not_done():
    hub = dialog_hub()
    hub.turn_text("open the garage door")
    hub.turn_text("yes")
    assert hub.home.state("Garage Door") == "open"
    assert hub.turn_text("close it")["response"] == "Do you want me to close the Garage Door?"
    hub.turn_text("no")
    assert hub.home.state("Garage Door") == "open"


def test_spoken_it_goes_through_the_same_rules():
    hub = dialog_hub()
    said(hub, "turn on the kitchen light")
    assert said(hub, "turn it off")["slots"]["name"] == "Kitchen Light"
    assert hub.home.state("Kitchen Light") == "off"


def test_wyoming_transcripts_refer_per_client():
    from hub.wyoming.handle import handle_text

    hub = dialog_hub()
    context = {"conversation_id": "wyoming-sat"}
    handle_text(hub, "turn on the kitchen light", context, "default")
    event = handle_text(hub, "turn it off", context, "default")
    assert event.type == "handled" and hub.home.state("Kitchen Light") == "off"
    assert (
        handle_text(hub, "turn it on", {"conversation_id": "other"}, "default").data["text"]
        == WHICH_DEVICE
    )
    assert hub.home.state("Kitchen Light") == "off"


def test_what_time_is_it_is_not_a_reference():
    hub = dialog_hub()
    hub.turn_text("turn on the kitchen light")
    assert hub.turn_text("what time is it")["intent"] == "HassGetCurrentTime"
    assert hub.home.state("Kitchen Light") == "on"
