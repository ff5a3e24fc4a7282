"""One answer for several commands (s12 finding 2, :func:`hub.act.together.answer`): what
was done, named, in Home Assistant's words; a command only queued or not sent is never said
as done (its sentence comes from :func:`hub.devices.queued.queued_update`)."""

from __future__ import annotations

from hub.act.common import Outcome, action
from hub.act.together import answer, entries, result_of
from hub.intents.match import IntentMatch


def _turn(intent: str, name: str, domain: str, service: str, response: str):
    match = IntentMatch(intent=intent, slots={"name": name}, text="", entities=(name,))
    return match, Outcome(response, (action(name, domain, service),))


KITCHEN = _turn("HassTurnOn", "Kitchen Light", "light", "turn_on", "Turned on the light")
BED = _turn("HassTurnOn", "Bed Light", "light", "turn_on", "Turned on the light")
TV_OFF = _turn("HassTurnOff", "TV", "media_player", "turn_off", "Turned off the media player")
GARAGE = _turn("HassTurnOn", "Garage Door", "cover", "open_cover", "Opening")


def _answer(*pairs, results=None):
    matches, outcomes = [p[0] for p in pairs], [p[1] for p in pairs]
    return answer(matches, outcomes, results or [["done"]] * len(pairs))


def test_finding_repeated_answer_names_what_was_done():
    assert _answer(KITCHEN, BED) == "Turned on the Kitchen Light and the Bed Light."


def test_finding_repeated_answer_mixed_verbs_each_named_in_ha_words():
    said = _answer(KITCHEN, TV_OFF, GARAGE, BED)
    assert said == (
        "Turned on the Kitchen Light and the Bed Light. Turned off the TV. Opening the Garage Door."
    )


def test_finding_repeated_answer_one_command_keeps_home_assistants_answer():
    assert _answer(KITCHEN) == "Turned on the light."


def test_finding_repeated_answer_a_refusal_is_said_as_its_handler_said_it():
    lights = IntentMatch(intent="HassTurnOff", slots={"domain": "light"}, text="")
    asked = Outcome("Which area do you mean?", ok=False, asks="area")
    matches, outcomes = [KITCHEN[0], lights], [KITCHEN[1], asked]
    assert answer(matches, outcomes, [["done"], []]) == (
        "Turned on the Kitchen Light. Which area do you mean?"
    )
    assert [e["result"] for e in entries(matches, outcomes, [["done"], []])] == [
        "done",
        "not_done",
    ]


def test_finding_repeated_answer_never_says_done_of_a_command_not_sent_or_queued():
    for result in ("unreachable", "queued", "ha_queued"):
        said = _answer(KITCHEN, TV_OFF, results=[["done"], [result]])
        assert said == "Turned on the Kitchen Light.", result


def test_finding_trace_command_results():
    outcome = KITCHEN[1]
    assert result_of(outcome, ["done"], "HassTurnOn") == "done"
    assert result_of(outcome, ["queued"], "HassTurnOn") == "queued"
    assert result_of(outcome, ["done", "unreachable"], "HassTurnOn") == "not_sent"
    assert result_of(Outcome("It is 5 PM"), [], "HassGetCurrentTime") == "answered"
