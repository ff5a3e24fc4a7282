"""Delayed commands from every path get the same check when they are set (hub.intents.delay):
a sensitive one is asked back before the timer starts, one that cannot run is asked back, one
whose command the rules do not understand is refused, and a match that skipped the check never
starts a timer (hub.act.timing.start)."""

from __future__ import annotations

import json

from hub.intents.match import IntentMatch

from fakes import FakeLlm
from test_timers_delayed import clocked_hub


def llm_hub(slots: dict):
    """A hub whose LLM classifies everything as ``HassStartTimer`` with these slots."""
    reply = json.dumps({"intent": "HassStartTimer", "slots": slots, "confidence": 0.9})
    return clocked_hub(llm=FakeLlm(replies=(reply,)))


def test_llm_delayed_unlock_is_asked_back_before_the_timer_starts():
    hub = llm_hub({"minutes": 10, "conversation_command": "unlock the front door"})
    trace = hub.turn_text("ten minutes from now make the front door open up")
    assert trace["source"] == "llm"
    assert trace["response"] == "Do you want me to unlock the Front Door in 10 minutes?"
    assert hub.timers.status() == []
    assert hub.turn_text("yes")["response"] == "Command will be executed in 10 minutes."
    [timer] = hub.timers.status()
    assert timer.command["confirmed"] == ["Front Door"]
    hub.clock_.advance(600)
    [alert] = hub.events.tick()
    assert alert.command["done"] and hub.home.state("Front Door") == "unlocked"


def test_llm_delayed_command_that_cannot_run_is_asked_back_and_starts_nothing():
    hub = llm_hub({"seconds": 10, "conversation_command": "turn off the lights"})
    hub.conversation().area = ""  # no area known for "the lights"
    hub.home.satellite_area = ""
    trace = hub.turn_text("in a little while make everything dark")
    assert trace["response"] == "Which area do you mean?"
    assert hub.timers.status() == []


def test_llm_delayed_command_the_rules_do_not_understand_is_refused():
    hub = llm_hub({"seconds": 10, "conversation_command": "make the house cosy"})
    trace = hub.turn_text("in ten seconds make the house cosy")
    assert trace["response"] == "Sorry, I don't know what to do then."
    assert hub.timers.status() == []


def test_llm_delayed_command_on_a_device_nobody_named_is_refused():
    hub = llm_hub({"seconds": 10, "conversation_command": "unlock the front door"})
    trace = hub.turn_text("ten seconds from now the kitchen light should go off")
    assert trace["response"] == "Sorry, I'm not sure which device you mean."
    assert hub.timers.status() == [] and not hub.conversation().awaiting_confirmation


def test_llm_delayed_command_runs_in_the_area_it_was_said_in():
    hub = llm_hub({"minutes": 10, "conversation_command": "turn off the lights"})
    hub.conversation().area = "Kitchen"
    hub.home.set_state("Kitchen Light", "on")
    trace = hub.turn_text("ten minutes from now make it dark in here")
    assert trace["response"] == "Command will be executed in 10 minutes."
    assert hub.timers.status()[0].command == {
        "text": "turn off the lights",
        "area": "Kitchen",
        "confirmed": [],
    }
    hub.clock_.advance(600)
    [alert] = hub.events.tick()
    assert alert.command["actions"] == ["light.turn_off Kitchen Light"]


def test_fuzzy_delayed_unlock_is_asked_back_before_the_timer_starts():
    """ "front door unlock" is only read by the fuzzy matcher: the delay around it is checked
    like a rules one (it was not understood at all before)."""
    hub = clocked_hub()
    trace = hub.turn_text("in 10 seconds front door unlock")
    assert trace["response"] == "Do you want me to unlock the Front Door in 10 seconds?"
    assert hub.timers.status() == []
    assert hub.turn_text("no")["response"] == "Okay, I won't."
    hub.clock_.advance(20)
    assert hub.events.tick() == [] and hub.home.state("Front Door") == "locked"


def test_fuzzy_delayed_command_runs_when_its_timer_ends():
    hub = clocked_hub()
    hub.home.set_state("Kitchen Light", "on")
    trace = hub.turn_text("kitchen lite off in 10 seconds")
    assert trace["response"] == "Command will be executed in 10 seconds."
    hub.clock_.advance(10)
    [alert] = hub.events.tick()
    assert alert.command["done"] and hub.home.state("Kitchen Light") == "off"


def test_a_delayed_match_that_skipped_the_check_starts_no_timer():
    """The act layer's last line: a HassStartTimer with a command but without its checked
    command match (``command``) is refused, never set to run an unchecked command later."""
    hub = clocked_hub()
    match = IntentMatch(
        intent="HassStartTimer",
        text="x",
        source="llm",
        response="command",
        slots={"seconds": 10, "duration_s": 10, "conversation_command": "unlock the front door"},
    )
    outcome = hub.engines.actor().execute(match, idempotency_key="t:0")
    assert outcome.actions == () and hub.timers.status() == []
    assert "don't know what to do then" in outcome.response


def test_fuzzy_never_reads_a_delayed_command_it_cannot_understand_as_a_plain_timer():
    """Before, the fuzzy matcher read "in ten seconds make the house cosy" as a 10-second
    timer and dropped the command."""
    hub = clocked_hub()
    trace = hub.turn_text("in ten seconds make the house cosy")
    assert trace["intent"] is None and hub.timers.status() == []
    assert hub.turn_text("ten second timer please")["response"] == "Timer set for 10 seconds."
