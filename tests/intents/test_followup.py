"""Slot answers (issue 18 item 3): "Which area do you mean?" -> "kitchen" completes the intent
in the next turn of the same conversation only, and expires like a confirmation."""

from __future__ import annotations

import pytest
from dialog_helpers import dialog_hub, said

from hub.core.conversation import CONFIRM_WINDOW_S
from hub.intents.followup import AREA, NAME, SlotQuestion, slot_value

WHICH_AREA = "Which area do you mean?"


@pytest.mark.parametrize("answer", ["kitchen", "in the kitchen", "the Kitchen please", "Kitchen."])
def test_which_area_is_answered_by_an_area(answer):
    hub = dialog_hub()
    hub.home.set_state("Office Light", "on")
    asked = hub.turn_text("turn off the lights")
    assert asked["response"] == WHICH_AREA and hub.fake_devices.published == []
    done = hub.turn_text(answer)
    assert done["intent"] == "HassTurnOff" and done["slots"]["area"] == "Kitchen"
    assert hub.fake_devices.published == [("Kitchen Light", "turn_off")]
    assert hub.home.state("Kitchen Light") == "off" and hub.home.state("Office Light") == "on"


def test_the_answer_is_taken_by_voice_too():
    hub = dialog_hub()
    assert said(hub, "turn on the lights")["response"] == WHICH_AREA
    done = said(hub, "in the office")
    assert done["slots"]["area"] == "Office" and hub.home.state("Office Light") == "on"
    assert hub.fake_devices.published == [("Office Light", "turn_on")]


def test_the_question_expires_with_the_conversation_clock():
    hub = dialog_hub()
    hub.turn_text("turn off the lights")
    hub.test_clock.now += CONFIRM_WINDOW_S + 1
    late = hub.turn_text("kitchen")
    assert late["response"] == "Sorry, I couldn't understand that."
    assert hub.fake_devices.published == []


@pytest.mark.parametrize("no", ["no", "never mind", "cancel"])
def test_a_no_cancels_the_question(no):
    hub = dialog_hub()
    hub.turn_text("turn off the lights")
    assert hub.turn_text(no)["response"] == "Okay."
    assert hub.turn_text("kitchen")["response"] == "Sorry, I couldn't understand that."
    assert hub.fake_devices.published == []


def test_anything_else_is_a_new_request_and_forgets_the_question():
    hub = dialog_hub()
    hub.turn_text("turn off the lights")
    other = hub.turn_text("turn on the bed light")
    assert other["intent"] == "HassTurnOn" and hub.fake_devices.published == [
        ("Bed Light", "turn_on")
    ]
    assert hub.turn_text("kitchen")["response"] == "Sorry, I couldn't understand that."
    assert hub.fake_devices.published == [("Bed Light", "turn_on")]


def test_the_answer_belongs_to_the_conversation_that_was_asked():
    hub = dialog_hub()
    kitchen, office = hub.conversation("sat-a"), hub.conversation("sat-b")
    hub.turn_text("turn off the lights", conversation=kitchen)
    assert hub.turn_text("kitchen", conversation=office)["response"] != "Turned off the lights."
    assert hub.fake_devices.published == []
    assert hub.conversation("sat-a").awaiting_answer


def test_a_delayed_command_gets_its_area_from_the_answer():
    hub = dialog_hub()
    assert hub.turn_text("turn off the lights in 1 hour")["response"] == WHICH_AREA
    done = hub.turn_text("kitchen")
    assert done["intent"] == "HassStartTimer"
    (timer,) = hub.timers.status()
    assert timer.command["text"] == "turn off the lights" and timer.command["area"] == "Kitchen"


def test_an_area_answer_to_a_sensitive_action_is_still_asked_back():
    """The completed intent goes the usual way: a sensitive target needs its yes."""
    from hub.intents.followup import fill

    hub = dialog_hub()
    match = hub.engines.rules().recognize("open the garage door")
    question = SlotQuestion(match, NAME, ("Garage Door", "Sliding Door"))
    hub.conversation().ask_slot(question)
    asked = hub.turn_text("the garage one")
    assert asked["response"] == "Do you want me to open the Garage Door?"
    assert hub.fake_devices.published == []
    assert fill(hub.home, match, NAME, "Sliding Door").entities == ("Sliding Door",)


def test_slot_values_fillers_and_choices():
    hub = dialog_hub()
    match = hub.engines.rules().recognize("turn on the bed light")
    area = SlotQuestion(match, AREA)
    assert slot_value(hub.home, area, "um, in the office please") == "Office"
    assert slot_value(hub.home, area, "the garden") is None
    assert slot_value(hub.home, area, "") is None
    which = SlotQuestion(match, NAME, ("Kitchen Light", "Bed Light"))
    assert slot_value(hub.home, which, "the kitchen one") == "Kitchen Light"
    assert slot_value(hub.home, which, "light") is None, "part of both: not a choice"
    assert slot_value(hub.home, SlotQuestion(match, NAME), "the TV") == "TV"


BARE = ["kitchen light", "the kitchen light", "Bed Light", "kitchen", "in the office please"]


@pytest.mark.parametrize("bare", BARE)
def test_bc22_a_bare_name_or_area_is_no_command_without_a_question(bare):
    """BC-22's kind (over-matching acts where nothing was asked): a bare entity name or area
    is a slot answer only while a question waits. Without one it does nothing, typed, spoken
    and over Wyoming alike (Home Assistant's ``[<the>] {name}`` HassTurnOn sentence turned
    "kitchen light" on; the grammar hears bare names for "Which one?" answers)."""
    from hub.graph.answers import NOT_UNDERSTOOD
    from hub.wyoming.handle import handle_text, recognize_text

    hub = dialog_hub()
    typed = hub.turn_text(bare)
    spoken = said(hub, bare)
    wyoming = handle_text(hub, bare, {"conversation_id": "sat"}, "default")
    assert typed["response"] == spoken["response"] == NOT_UNDERSTOOD, (typed, spoken)
    assert typed.get("intent") is None and spoken.get("intent") is None
    assert wyoming.type == "not-handled"
    assert recognize_text(hub, bare).type == "not-recognized"
    assert hub.fake_devices.published == []


def test_bc22_a_bare_name_still_answers_which_device():
    hub = dialog_hub()
    asked = hub.turn_text("turn it on")  # nothing acted on yet: "Which device do you mean?"
    assert asked["response"].startswith("Which") and hub.fake_devices.published == []
    done = said(hub, "kitchen light")
    assert done["intent"] == "HassTurnOn" and done["slots"]["name"] == "Kitchen Light"
    assert hub.fake_devices.published == [("Kitchen Light", "turn_on")]
    assert said(hub, "kitchen light")["response"] == "Sorry, I couldn't understand that."
    assert hub.fake_devices.published == [("Kitchen Light", "turn_on")]


@pytest.mark.parametrize(
    "question, answer",
    [
        ("is the kitchen light on", "No, off."),
        ("is the front door locked", "Yes."),
        ("kitchen light is on", None),
    ],
)
def test_bc22_a_name_with_words_of_a_request_is_not_bare(question, answer):
    """Only articles and "please" make a name bare: "is" and "on" make a question of it."""
    from hub.intents.followup import bare_slot

    hub = dialog_hub()
    assert bare_slot(hub.home, question) is None
    if answer:
        assert hub.turn_text(question)["response"] == answer
