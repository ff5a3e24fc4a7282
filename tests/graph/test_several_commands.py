"""Whole turns of several commands in one sentence (s12 findings): the elided verb read,
one answer naming what was done, mixed results said honestly, every command in the trace
and the journal, and a sensitive device in any part asked about before anything is done."""

from __future__ import annotations

import pytest

from hub.graph.answers import NOT_UNDERSTOOD
from hub.intents import multi
from hub.intents.match import IntentMatch
from hub.store.db import Store

from fakes import FakeDevices, FakeLlm, make_hub


class Devices(FakeDevices):
    """Fake devices whose result for some entities is not "done"."""

    def __init__(self, results: dict[str, str]):
        super().__init__()
        self.results = results

    def publish(self, action, cancel=None, wait_s=None):
        super().publish(action, cancel, wait_s)
        return self.results.get(action["entity"], "done")


def several_hub(results: dict[str, str] | None = None, store=None):
    devices = Devices(results or {})
    hub = make_hub(entry="ask", store=store, factories={"devices": lambda h: devices})
    hub.fake_devices = devices
    return hub


def commands(trace: dict) -> list[tuple]:
    return [(c["intent"], c["entities"], c["result"]) for c in trace["commands"]]


def test_finding_repeated_answer_whole_turn_names_what_was_done(tmp_path):
    store = Store(tmp_path / "hub.db")
    hub = several_hub(store=store)
    trace = hub.turn_text("turn on the kitchen light and the bed light")
    assert trace["response"] == "Turned on the Kitchen Light and the Bed Light."
    assert hub.fake_devices.published == [
        ("Kitchen Light", "turn_on"),
        ("Bed Light", "turn_on"),
    ]
    expected = [
        ("HassTurnOn", ["Kitchen Light"], "done"),
        ("HassTurnOn", ["Bed Light"], "done"),
    ]
    assert commands(trace) == expected
    journaled = store.turns_since()[0]  # the journal holds every command too
    assert commands(journaled) == expected


def test_finding_elided_verb_whole_turn_turns_off_what_the_part_says():
    hub = several_hub()
    trace = hub.turn_text("turn on the kitchen light and off the tv")
    assert hub.fake_devices.published == [("Kitchen Light", "turn_on"), ("TV", "turn_off")]
    assert trace["response"] == "Turned on the Kitchen Light. Turned off the TV."
    assert trace["source"] == "rules"  # strict readings (it was the fuzzy matcher's)


@pytest.mark.parametrize(
    ("result", "said", "entry"),
    [
        ("unreachable", "Turned on the Kitchen Light. The TV is not reachable.", "not_sent"),
        (
            "queued",
            "Turned on the Kitchen Light. I'll turn off the TV when it's reachable.",
            "queued",
        ),
    ],
)
def test_finding_repeated_answer_mixed_results_never_say_done_of_what_may_not_be(
    result, said, entry
):
    hub = several_hub({"TV": result})
    trace = hub.turn_text("turn on the kitchen light and turn off the tv")
    assert trace["response"] == said
    assert commands(trace) == [
        ("HassTurnOn", ["Kitchen Light"], "done"),
        ("HassTurnOff", ["TV"], entry),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "turn off the tv and open the garage door",
        "open the sliding door and the garage door",  # the sensitive one in the elided part
        "turn on the kitchen light and then unlock the front door",
    ],
)
def test_finding_sensitive_device_in_any_part_asks_first_and_no_does_nothing(text):
    hub = several_hub()
    before = {e.name: hub.home.state(e.name) for e in hub.home.entities}
    asked = hub.turn_text(text)
    assert asked["asked_back"] and not asked["acted"], asked
    assert asked["response"].startswith("Do you want me to "), asked
    assert {c["result"] for c in asked["commands"]} == {"asked_back"}
    assert len(asked["commands"]) == 2
    refused = hub.turn_text("no")
    assert not refused["acted"] and refused["commands"] == []
    assert hub.fake_devices.published == []
    assert {e.name: hub.home.state(e.name) for e in hub.home.entities} == before


def test_finding_sensitive_device_in_elided_part_yes_does_both():
    hub = several_hub()
    hub.turn_text("open the sliding door and the garage door")
    done = hub.turn_text("yes")
    assert hub.fake_devices.published == [
        ("Sliding Door", "open_cover"),
        ("Garage Door", "open_cover"),
    ]
    assert done["response"] == "Opening the Sliding Door and the Garage Door."
    assert [c["result"] for c in done["commands"]] == ["done", "done"]


def test_finding_elided_part_in_doubt_is_not_understood_nor_asked_of_the_llm(monkeypatch):
    def two_readings(part, before, recognize):
        return [
            IntentMatch(intent="HassTurnOn", slots={"domain": "light"}, text=""),
            IntentMatch(intent="HassTurnOff", slots={"domain": "light"}, text=""),
        ]

    monkeypatch.setattr(multi, "carried", two_readings)
    llm = FakeLlm(replies=('{"intent": "HassTurnOn", "slots": {"name": "TV"}, "confidence": 0.9}',))
    hub = make_hub(entry="ask", llm=llm)
    trace = hub.turn_text("turn the tv on and the lights")
    assert trace["response"] == NOT_UNDERSTOOD and not trace["acted"], trace
    assert llm.calls == [] and trace["commands"] == []


@pytest.mark.parametrize(
    "text",
    [
        "turn off the tv and party time",
        "turn the tv off and party time",
        "turn off the kitchen light, party time",
    ],
)
def test_breaker_a_bare_script_name_after_turn_off_is_not_run(text):
    """The breaker's finding: "turn off the tv and party time" answered "Turned off the TV.
    Started the Party Time.": the bare name, a command by itself, ran the script though the
    sentence said "off". A part without action words read as another intent than the part
    before is a doubt: not understood, nothing done."""
    hub = several_hub()
    trace = hub.turn_text(text)
    assert trace["response"] == NOT_UNDERSTOOD
    assert hub.fake_devices.published == []


def test_breaker_a_bare_script_name_after_turn_on_still_runs():
    hub = several_hub()
    trace = hub.turn_text("turn on the tv and party time")
    assert commands(trace) == [
        ("HassTurnOn", ["TV"], "done"),
        ("HassTurnOn", ["Party Time"], "done"),
    ]


def test_breaker_two_list_adds_in_one_sentence_are_two_items():
    """The breaker's finding: "add milk to my shopping list and add bread to my shopping list"
    stored one item, "milk to my shopping list and add bread": the list's wildcard slot
    swallowed the second command. Parts that each match by themselves are the commands;
    "add milk and eggs to my shopping list" stays one item, as Home Assistant reads it."""
    hub = several_hub()
    trace = hub.turn_text(
        "add milk to my shopping list and turn on the tv and add bread to my shopping list"
    )
    assert [(c["intent"], c["result"]) for c in trace["commands"]] == [
        ("HassListAddItem", "done"),
        ("HassTurnOn", "done"),
        ("HassListAddItem", "done"),
    ]
    assert hub.home.attributes("Shopping List")["items"][-2:] == ["milk", "bread"]
    trace = hub.turn_text("add milk and eggs to my shopping list")
    assert hub.home.attributes("Shopping List")["items"][-1] == "milk and eggs"


@pytest.mark.parametrize(
    "text, said",
    [
        (
            "set the bed light to 50 percent and the kitchen light to 20 percent",
            "Brightness set: the Bed Light and the Kitchen Light.",
        ),
        (
            "set the kitchen light to red and the bed light",
            "Color set: the Kitchen Light and the Bed Light.",
        ),
        ("set the bed light to 50 percent and turn on the tv", "Brightness set. Turned on the TV."),
    ],
)
def test_breaker_the_same_answer_for_several_devices_is_said_once_with_their_names(text, said):
    """The breaker's finding: "Brightness set. Brightness set." (and "Color set. Color set.")
    said twice what was done and not to which devices."""
    hub = several_hub()
    trace = hub.turn_text(text)
    assert trace["response"] == said
    assert all(c["result"] == "done" for c in trace["commands"])
