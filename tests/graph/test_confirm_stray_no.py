"""A "no" or "never mind" with nothing pending: a short "Okay." from the rules, never the
LLM (hub.graph.nodes.rules, HassNevermind in hub.act.timing); a "stop" still pauses."""

from __future__ import annotations

import pytest

from fakes import FakeLlm, make_hub


@pytest.mark.parametrize(
    "text", ["no", "no thanks", "nope", "cancel", "nevermind", "never mind", "never mind that"]
)
def test_stray_no_or_never_mind_says_okay_without_the_llm(text):
    llm = FakeLlm()
    hub = make_hub(text=text, llm=llm)
    hub.home.set_state("Kitchen Light", "on")
    trace = hub.turn_text(text)
    assert trace["response"] == "Okay."
    assert llm.calls == []
    assert hub.home.state("Kitchen Light") == "on"


def test_never_mind_is_hass_nevermind_and_changes_nothing():
    hub = make_hub(text="never mind")
    trace = hub.turn_text("never mind")
    assert trace["intent"] == "HassNevermind" and trace["response"] == "Okay."


def test_a_no_to_a_question_still_cancels_it():
    hub = make_hub(text="unlock the front door")
    assert hub.turn_text("unlock the front door")["response"].startswith("Do you want me to")
    assert hub.turn_text("no")["response"] == "Okay, I won't."
    assert hub.home.state("Front Door") == "locked"
    assert hub.turn_text("no")["response"] == "Okay."  # the question is gone


def test_stray_yes_still_has_nothing_to_confirm():
    assert make_hub(text="yes").turn_text("yes")["response"] == "There's nothing to confirm."
