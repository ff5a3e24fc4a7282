"""Whole turns (``Hub.answer_text``) for the breaker's open findings, in the sample home and
the shared fixture home, without an LLM, with the LLM failing (the relaxed rules, L2) and with
an LLM that proposes the wrong reading:

1. "A and B" where B names what the home lacks: nothing is done (as Home Assistant does) and B
   gets its own error, never a fuzzy reading that acts twice on one device;
2. two contradictory action words are never resolved by leaving one out;
3. a condition read as a device name, and a question about an attribute the device's kind
   does not have, are never answered with another fact;
4. every answer ends as a sentence ("Timer cancelled.").
"""

from __future__ import annotations

import dataclasses
import tomllib

import pytest

from hub.act.honest import NOTHING_DONE
from hub.act.responses import sentence
from hub.core.hub import Hub
from hub.graph.answers import NOT_UNDERSTOOD
from hub.llm.guard import UNSURE
from hub.paths import DATA_DIR
from hub.resilience.load import FixedProbe
from hub.settings import settings_from_dict

from fakes import ROOMY_TIMEOUTS, FakeAsr, FakeDevices, FakeLlm, FakeTts, settings, speech
from shared_data import home_toml

HOMES = {"sample": DATA_DIR / "home-en.toml", "fixture": home_toml()}
"""The sample home and the shared fixture home (the same home on a bare clone)."""

PATHS = ("no_llm", "llm_failed")
"""Without an LLM (the fuzzy matcher is the last reader), and with it failing (then the
relaxed rules read, L2)."""


def parts_hub(home: str, path: str, llm: FakeLlm | None = None) -> Hub:
    """A hub over ``HOMES[home]`` with fake devices (``hub.fake_devices``), a fake recognizer
    (``hub.fake_asr``) and, for
    ``llm_failed``, an LLM whose intent call fails (``llm``: an LLM of the test's own)."""
    data = tomllib.loads(HOMES[home].read_text(encoding="utf-8"))
    if path == "llm_failed":
        llm = FakeLlm()
    cfg = settings(llm=llm is not None, timeouts_s=ROOMY_TIMEOUTS)
    cfg = dataclasses.replace(cfg, home=settings_from_dict(data).home)
    devices, asr = FakeDevices(), FakeAsr("")
    factories = {
        "asr": lambda h: asr,
        "tts": lambda h: FakeTts(),
        "devices": lambda h: devices,
    }
    if llm is not None:
        factories["llm"] = lambda h: llm
    hub = Hub(
        cfg,
        entry="ask",
        factories=factories,
        probe=FixedProbe(),
        speak=False,
        inject=["llm_intent=error"] if path == "llm_failed" else (),
    )
    hub.fake_devices, hub.fake_llm, hub.fake_asr = devices, llm, asr
    return hub


def states(hub: Hub) -> dict:
    return {
        e.name: (hub.home.state(e.name), hub.home.attributes(e.name)) for e in hub.home.entities
    }


def assert_nothing_done(hub: Hub, before: dict, trace: dict) -> None:
    assert states(hub) == before, trace
    assert hub.fake_devices.published == [], trace
    assert hub.timers.status() == [], trace
    assert hub.conversation().take_confirmation() is None, trace  # nothing asked back either
    assert trace["intent"] is None, trace


# -- 1. "A and B", B about something the home lacks ------------------------------------------
LACKING = [
    ("turn on the office light and turn off the attic light", "area called attic"),
    ("turn on the office light and turn off the garden lights", "area called garden"),
    ("turn on the kitchen light and the attic fan", "area called attic"),
    ("turn on the office light and then turn off the attic light", "area called attic"),
    ("turn off the office light, turn on the attic light", "area called attic"),
    (
        "turn on the office light and turn off the attic light and turn on the kitchen light",
        "area called attic",
    ),
    ("turn on the kitchen light and the office light and the attic fan", "area called attic"),
    ("turn off the kitchen light and unlock the back door", "device called back door"),
    ("unlock the front door and turn on the attic light", "area called attic"),
    ("turn on the office light and turn off the attic light please", "area called attic"),
]


@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("text, missing", LACKING)
def test_finding_and_part_the_home_lacks_does_nothing_and_says_which_part(
    home, path, text, missing
):
    hub = parts_hub(home, path)
    before = states(hub)
    trace = hub.turn_text(text)
    assert_nothing_done(hub, before, trace)
    assert trace["response"] == f"Sorry, I am not aware of any {missing}. {NOTHING_DONE}", trace
    assert trace["source"] == "rules" and trace["fallback_level"] == 0, trace
    assert not (hub.fake_llm and hub.fake_llm.calls)  # read by the rules: the LLM never asked


@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize(
    "text, done",
    [
        ("turn on the kitchen light and turn off the office light", {"Kitchen Light": "on"}),
        ("turn on the kitchen light and the standing light", {"Standing Light": "on"}),
        ("turn off the tv and the office light", {"Office Light": "off"}),
        ("turn on the kichen light and turn off the office light", {"Office Light": "off"}),
    ],
)
def test_finding_and_parts_all_understood_are_all_done(home, text, done):
    hub = parts_hub(home, "no_llm")
    trace = hub.turn_text(text)
    assert {name: hub.home.state(name) for name in done} == done, trace
    assert len(hub.fake_devices.published) == 2, trace


@pytest.mark.parametrize(
    "segments",
    [
        ("turn on the office light", "turn off the attic light"),
        ("turn on the kitchen light", "turn off the office light", "open the attic window"),
    ],
)
def test_finding_and_spoken_segments_are_all_done_or_none(segments):
    hub = parts_hub("sample", "no_llm")
    hub.fake_asr.text, hub.fake_asr.segments = " ".join(segments), segments
    before = states(hub)
    trace = hub.turn_audio(speech())  # each segment one command of the recognizer's
    assert_nothing_done(hub, before, trace)
    assert trace["response"] == f"Sorry, I am not aware of any area called attic. {NOTHING_DONE}"


@pytest.mark.parametrize("home", HOMES)
def test_finding_and_a_fuzzy_reading_never_acts_twice_on_one_device(home):
    hub = parts_hub(home, "no_llm")
    trace = hub.turn_text("turn the tv on and the lights off")  # was: the TV on, then off
    # now read as Home Assistant's two commands, "turn the lights off" with the verb carried
    # over (hub.intents.multi.carried); the lights need an area, asked, not guessed
    assert hub.fake_devices.published == [("TV", "turn_on")], trace
    assert [(c["intent"], c["result"]) for c in trace["commands"]] == [
        ("HassTurnOn", "done"),
        ("HassTurnOff", "not_done"),
    ]
    assert trace["response"] == "Turned on the TV. Which area do you mean?", trace


# -- 2. two contradictory action words ---------------------------------------------------------
CONTRADICTORY = [
    "turn on the kitchen light off",
    "switch on the bed light off",
    "turn off the office light on",
    "open the garage door closed",
    "turn the kitchen light on off",
]


@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("text", CONTRADICTORY)
def test_finding_relaxed_contradictory_words_are_never_resolved_by_dropping_one(home, path, text):
    hub = parts_hub(home, path)
    before = states(hub)
    trace = hub.turn_text(text)
    assert_nothing_done(hub, before, trace)
    assert trace["response"] == NOT_UNDERSTOOD, trace


@pytest.mark.parametrize(
    "text, reply",
    [
        ("turn on the kitchen light off", '"HassTurnOff", "slots": {"name": "Kitchen Light"}'),
        ("turn off the office light on", '"HassTurnOn", "slots": {"name": "Office Light"}'),
        ("open the garage door closed", '"HassTurnOff", "slots": {"name": "Garage Door"}'),
    ],
)
def test_finding_relaxed_an_llm_reading_of_contradictory_words_is_not_acted_on(text, reply):
    llm = FakeLlm((f'{{"intent": {reply}, "confidence": 0.95}}',))
    hub = parts_hub("sample", "llm", llm=llm)
    before = states(hub)
    trace = hub.turn_text(text)
    assert_nothing_done(hub, before, trace)
    assert trace["response"] == UNSURE and llm.calls, trace


@pytest.mark.parametrize("path", PATHS)
def test_finding_relaxed_a_left_out_word_without_its_opposite_still_reads(path):
    hub = parts_hub("sample", path)
    hub.home.set_state("TV", "playing", volume_level=0.5)
    trace = hub.turn_text("lower the volume on the tv")  # "on" left out, no "off" said
    assert trace["intent"] == "HassSetVolumeRelative", trace
    assert hub.home.attributes("TV")["volume_level"] < 0.5


# -- 3. odd answers that take no action ------------------------------------------------------
CONDITIONS = [
    "turn on the light unless it's dark",
    "turn off the tv unless someone is watching",
    "turn on the lamp if it gets dark",
    "turn off the heater when i leave",
    "open the blinds as soon as the sun is up",
]


@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("text", CONDITIONS)
def test_finding_odd_a_condition_is_never_a_device_name(home, path, text):
    hub = parts_hub(home, path)
    before = states(hub)
    trace = hub.turn_text(text)
    assert_nothing_done(hub, before, trace)
    assert trace["response"] == NOT_UNDERSTOOD, trace


ATTRIBUTE_QUESTIONS = [
    ("what is the brightness of the front door", "Sorry, Front Door has no brightness."),
    ("what's the brightness of the front door", "Sorry, Front Door has no brightness."),
    ("is the front door bright", "Sorry, Front Door has no brightness."),
    ("what is the volume of the front door", "Sorry, Front Door has no volume."),
    ("what is the battery of the front door", "I don't know the battery level of Front Door."),
    ("what is the volume of the tv", "I don't know the volume of TV."),
]
RELAXED_ATTRIBUTE_QUESTIONS = [
    ("how bright is the front door", "Sorry, Front Door has no brightness."),
    ("what color is the front door", "Sorry, Front Door has no color."),
    ("what colour is the garage door", "Sorry, Garage Door has no color."),
    ("how loud is the front door", "Sorry, Front Door has no volume."),
    ("how bright is the tv", "Sorry, TV has no brightness."),
]


@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("text, answer", ATTRIBUTE_QUESTIONS)
def test_finding_odd_an_attribute_the_device_lacks_is_said_so(home, path, text, answer):
    hub = parts_hub(home, path)
    before = states(hub)
    trace = hub.turn_text(text)
    assert trace["response"] == answer, trace
    assert trace["intent"] == "HassGetState" and states(hub) == before


@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("text, answer", RELAXED_ATTRIBUTE_QUESTIONS)
def test_finding_odd_a_relaxed_reading_keeps_the_attribute_asked(home, text, answer):
    hub = parts_hub(home, "llm_failed")
    trace = hub.turn_text(text)
    assert trace["response"] == answer, trace
    assert trace["fallback_level"] == 2, trace


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "text", [t for t, _ in ATTRIBUTE_QUESTIONS + RELAXED_ATTRIBUTE_QUESTIONS if "door" in t]
)
def test_finding_odd_a_door_question_about_an_attribute_never_says_its_state(path, text):
    trace = parts_hub("sample", path).turn_text(text)
    assert not any(s in trace["response"] for s in ("locked", "closed", "open")), trace


def test_finding_odd_an_attribute_the_hub_knows_is_said():
    hub = parts_hub("sample", "no_llm")
    hub.home.set_state("TV", "playing", volume_level=0.3)
    assert hub.turn_text("what is the volume of the tv")["response"] == "TV volume is 30%."


# -- 4. every answer ends as a sentence --------------------------------------------------------
def test_finding_stop_timer_cancelled_while_it_rings_ends_with_a_full_stop():
    hub = parts_hub("sample", "no_llm")
    assert hub.turn_text("set a timer for 30 seconds")["intent"] == "HassStartTimer"
    hub.timers._clock = lambda: 10**9  # far past its end
    hub.events.tick()
    assert hub.events.stop_armed
    trace = hub.turn_text("stop")
    assert (trace["intent"], trace["response"]) == ("HassCancelTimer", "Timer cancelled.")


@pytest.mark.parametrize(
    "text",
    [
        "set a timer for 5 minutes",
        "cancel the timer",
        "stop",
        "turn on the kitchen light",
        "is the front door locked",
        "what time is it",
        "pause the tv",
        "set the tv volume to 20",
        "what is on my shopping list",
        "add milk to my shopping list",
        "turn on the attic light",
        "hello",
        "blah blah",
    ],
)
def test_finding_stop_every_answer_ends_as_a_sentence(text):
    hub = parts_hub("sample", "no_llm")
    response = hub.turn_text(text)["response"]
    assert response and response[-1] in ".!?", response


@pytest.mark.parametrize(
    "answer, said",
    [
        (("Blue light scatters more",), "Blue light scatters more."),
        (("It scatters.", "Mostly blue"), "It scatters. Mostly blue."),
        (("Blue light scatters more:",), "Blue light scatters more."),
    ],
)
def test_finding_stop_an_llm_answer_s_last_sentence_ends_with_a_full_stop(answer, said):
    llm = FakeLlm(('{"intent": "answer", "confidence": 0.9}',), answer=answer)
    hub = parts_hub("sample", "llm", llm=llm)
    assert hub.turn_text("why is the sky blue")["response"] == said


@pytest.mark.parametrize(
    "text, said",
    [
        ("Timer cancelled", "Timer cancelled."),
        ("Done.", "Done."),
        ("Is it on?", "Is it on?"),
        ("These are the items:", "These are the items."),
        ('Playing "Blue"', 'Playing "Blue".'),
        ("  ", ""),
    ],
)
def test_finding_stop_a_response_ends_as_a_sentence(text, said):
    assert sentence(text) == said
