"""TTS down (``--inject tts=hang`` / ``tts=error``): the pre-rendered sentence that stands in
for an answer that could not be synthesized is true for that answer. "Done." only when every
command was carried out; a question asked back that was not heard is withdrawn (a later "yes"
does nothing); the trace's ``response`` is what was played."""

from __future__ import annotations

import pytest

from hub.errors import TransientError
from hub.graph.answers import CANT_SPEAK, DONE, NOTHING_TO_CONFIRM
from hub.store.db import Store

from fakes import FAST_TIMEOUTS, ROOMY_TIMEOUTS, FakeTts, make_hub

FAULTS = ["hang", "error"]
TIMEOUTS = {**ROOMY_TIMEOUTS, "tts": FAST_TIMEOUTS["tts"]}  # only the faulted node is short


def tts_down_hub(tmp_path, fault: str, **kw):
    """A hub whose canned answers were rendered while the TTS worked, then ``tts=fault``."""
    hub = make_hub(
        store=Store(tmp_path / "hub.db"), inject=[f"tts={fault}"], timeouts_s=TIMEOUTS, **kw
    )
    hub.engines.warm(["tts"])  # start-up: the canned answers are rendered (no fault there)
    return hub


@pytest.mark.parametrize("fault", FAULTS)
def test_an_unheard_confirmation_question_is_withdrawn_and_never_answered_done(tmp_path, fault):
    hub = tts_down_hub(tmp_path, fault)
    result = hub.answer_text("unlock the front door")
    trace = result.trace
    assert trace["response"] == CANT_SPEAK and trace["fallback_level"] == 4
    assert result.pcm == hub.canned_audio(CANT_SPEAK).pcm  # the trace says what was played
    assert trace["status"] == "degraded" and "tts" in {e["node"] for e in trace["errors"]}
    assert not hub.conversation().awaiting_answer  # the question was not heard: withdrawn
    hub.faults.clear()  # the TTS works again
    yes = hub.answer_text("yes")
    assert yes.trace["response"] == NOTHING_TO_CONFIRM and not yes.outcomes
    assert hub.home.state("Front Door") == "locked"


@pytest.mark.parametrize("fault", FAULTS)
def test_a_yes_while_tts_is_still_down_unlocks_nothing(tmp_path, fault):
    hub = tts_down_hub(tmp_path, fault)
    hub.answer_text("unlock the front door")
    yes = hub.answer_text("yes")
    assert not yes.outcomes and hub.home.state("Front Door") == "locked"
    assert yes.trace["response"] == CANT_SPEAK  # not "Done."


@pytest.mark.parametrize(
    "question",
    ["is the office light on", "what time is it", "what timers do I have"],
)
def test_a_question_is_never_answered_done(tmp_path, question):
    hub = tts_down_hub(tmp_path, "error")
    trace = hub.turn_text(question)
    assert trace["response"] == CANT_SPEAK, trace
    assert trace["response"] != DONE


def test_a_command_not_carried_out_is_not_done(tmp_path):
    hub = tts_down_hub(tmp_path, "error")
    trace = hub.turn_text("turn on the garden light")  # the home has none
    assert trace["response"] == CANT_SPEAK


def test_a_done_command_says_done(tmp_path):
    hub = tts_down_hub(tmp_path, "hang")
    result = hub.answer_text("turn on the kitchen light")
    assert hub.home.state("Kitchen Light") == "on"
    assert result.trace["response"] == DONE and result.pcm == hub.canned_audio(DONE).pcm


def test_nothing_rendered_a_done_command_says_it_cannot_speak_not_that_it_failed():
    """No store: nothing was rendered, so the shipped clip plays; never the shipped
    "Sorry, I can't do that right now." for a command that was done."""
    hub = make_hub(inject=["tts=error"], timeouts_s=TIMEOUTS)
    result = hub.answer_text("turn on the kitchen light")
    assert hub.home.state("Kitchen Light") == "on"
    assert result.trace["response"] == CANT_SPEAK and result.pcm


class FailsOnSecondSentence(FakeTts):
    """Says the first sentence of each text, then fails (a TTS that dies half-way)."""

    def synthesize(self, text, cancel=None):
        for i, chunk in enumerate(super().synthesize(text, cancel)):
            if i == 1:
                raise TransientError("tts: voice crashed", node="tts")
            yield chunk


class Player:
    """A conversation's player that records what it was handed."""

    def __init__(self):
        self.chunks = []

    def enqueue(self, chunk):
        self.chunks.append(chunk)


def test_the_trace_says_what_was_played_when_the_tts_fails_half_way(tmp_path):
    hub = make_hub(
        store=Store(tmp_path / "hub.db"), tts=FailsOnSecondSentence(), timeouts_s=TIMEOUTS
    )
    hub.engines.warm(["tts"])
    player = hub.conversation().player = Player()
    result = hub.answer_text("turn on the kitchen light and turn off the office light")
    trace = result.trace
    heard = [c.text for c in player.chunks]
    assert heard[0] != DONE and heard[-1] == DONE  # the first sentence (each try), then "Done."
    assert trace["response"] == " ".join(heard)
    assert result.pcm == b"".join(c.pcm for c in player.chunks)
