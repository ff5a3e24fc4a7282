"""Whole turns: a sentence with a word that changes its meaning is never acted on by a loose
reading (the fuzzy matcher, the relaxed rules when the LLM fails, the LLM itself); nothing
changes in the home, no timer starts, and the hub says it did not understand. Fillers left out
still act."""

from __future__ import annotations

import pytest

from hub.graph.answers import NOT_UNDERSTOOD
from hub.llm.guard import UNSURE

from fakes import ROOMY_TIMEOUTS, FakeLlm, make_hub

NOT_ACTED = [
    "don't turn on the kitchen light",
    "dont turn off the office light",
    "please don't turn on the bed light",
    "never unlock the front door",
    "never close the sliding door",
    "do not open the garage door",
    "no turn off the office light",
    "turn off all the lights except the kitchen",
    "turn off all the lights but not the kitchen",
    "switch off every light other than the office light",
    "turn off the lights apart from the kitchen light",
    "set a timer for minus 5 minutes",
    "set a timer for negative 10 minutes",
    "turn on the kitchen light tomorrow",
    "turn off the office light tonight",
    "unlock the front door later",
    "open the garage door tomorrow",
    "pause the tv later",
    "turn on the bed light afterwards",
    "turn on the kitchen light in the morning",
    "turn on the kitchen light at 7 pm",
    "switch on the standing light on monday",
    "turn on the kitchen light when dark",
]


def _states(hub) -> dict:
    return {e.name: hub.home.state(e.name) for e in hub.home.entities}


def _assert_nothing_done(hub, before, trace):
    assert _states(hub) == before, trace
    assert hub.timers.status() == [] and hub.alarms.active() == []
    assert hub.conversation().take_confirmation() is None  # nothing asked back either
    assert trace["intent"] is None, trace


@pytest.mark.parametrize("text", NOT_ACTED)
def test_relaxed_rules_after_a_failed_llm_never_act_past_a_lost_meaning(text):
    hub = make_hub(llm=FakeLlm(), inject=["llm_intent=error"], timeouts_s=ROOMY_TIMEOUTS)
    before = _states(hub)
    trace = hub.turn_text(text)
    _assert_nothing_done(hub, before, trace)
    assert trace["response"] == NOT_UNDERSTOOD, trace


@pytest.mark.parametrize("text", NOT_ACTED)
def test_without_an_llm_a_lost_meaning_is_not_understood(text):
    hub = make_hub(timeouts_s=ROOMY_TIMEOUTS)
    before = _states(hub)
    trace = hub.turn_text(text)
    _assert_nothing_done(hub, before, trace)
    assert trace["response"] == NOT_UNDERSTOOD, trace


@pytest.mark.parametrize(
    "text, reply",
    [
        ("turn on the kitchen light tomorrow", '"HassTurnOn", "slots": {"name": "Kitchen Light"}'),
        ("lock the front door at 10 pm", '"HassTurnOn", "slots": {"name": "Front Door"}'),
        ("set a timer for minus 5 minutes", '"HassStartTimer", "slots": {"minutes": 5}'),
        ("turn on the bed light if it gets dark", '"HassTurnOn", "slots": {"name": "Bed Light"}'),
        ("switch off the tv on sunday", '"HassTurnOff", "slots": {"name": "TV"}'),
    ],
)
def test_llm_intent_without_the_said_time_sign_or_condition_is_not_acted_on(text, reply):
    llm = FakeLlm((f'{{"intent": {reply}, "confidence": 0.95}}',))
    hub = make_hub(llm=llm, timeouts_s=ROOMY_TIMEOUTS)
    before = _states(hub)
    trace = hub.turn_text(text)
    _assert_nothing_done(hub, before, trace)
    assert trace["response"] == UNSURE and llm.calls, trace


@pytest.mark.parametrize(
    "text",
    [
        "please turn on the kitchen light thanks",
        "could you turn on the kitchen light",
        "um turn on the kitchen light",
        "turn on the kitchen light now please",
    ],
)
def test_filler_words_left_out_still_act(text):
    hub = make_hub(llm=FakeLlm(), inject=["llm_intent=error"], timeouts_s=ROOMY_TIMEOUTS)
    trace = hub.turn_text(text)
    assert hub.home.state("Kitchen Light") == "on", trace
    assert trace["intent"] == "HassTurnOn"


def test_a_delayed_command_with_a_filler_still_starts_its_timer():
    hub = make_hub(llm=FakeLlm(), inject=["llm_intent=error"], timeouts_s=ROOMY_TIMEOUTS)
    trace = hub.turn_text("um turn on the kitchen light in 5 minutes")
    assert trace["intent"] == "HassStartTimer", trace
    assert len(hub.timers.status()) == 1 and hub.home.state("Kitchen Light") == "off"
