"""Turns through the graph with a grammar pass that rejects or doubts, and a stub second pass:
rules -> act for an agreed command, asked back on disagreement, and the trace's record."""

from __future__ import annotations

import dataclasses

import pytest

from hub.asr import evidence
from hub.asr.base import Transcript
from hub.asr.evidence import Evidence
from hub.asr.whisper_engine import Heard
from hub.graph.hearing import REST_REJECTED_S, REST_S
from hub.resilience.deadline import ManualClock
from hub.resilience.load import FixedProbe

from fakes import FakeAsr, FakeDevices, FakeTts, settings, speech


class StubWhisper:
    name = "whisper"

    def __init__(self, text):
        self.text, self.calls = text, 0

    def hear(self, audio, cancel=None, deadline=None):
        self.calls += 1
        return Heard(self.text, 0.01, -0.1, 1.0, (self.text,))

    def expected_s(self):
        return 0.0


class Grammar(FakeAsr):
    def __init__(self, text, rejected=False, unsure=False):
        super().__init__(text, unsure=unsure)
        self.rejected = rejected

    def transcribe(self, samples, cancel=None):
        self.calls += 1
        if self.rejected:
            return Transcript("", (), rejected=True)
        return Transcript(self.text, (self.text,), unsure=self.unsure)


@pytest.fixture(autouse=True)
def spoken(monkeypatch):
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(1200, -22.0))


class SlowWhisper(StubWhisper):
    """Expects (``expected_s``) and takes (on ``clock``) more time than the turn has for a
    second pass kept :data:`REST_S` before the deadline; records the deadline it was given."""

    def __init__(self, text, clock, expected=6.0, takes=4.0):
        super().__init__(text)
        self.clock, self.expected, self.takes, self.deadlines = clock, expected, takes, []

    def hear(self, audio, cancel=None, deadline=None):
        self.deadlines.append(deadline)
        self.clock.advance(self.takes)
        return super().hear(audio, cancel, deadline)

    def expected_s(self):
        return self.expected


def make(grammar, whisper, second_pass=True, clock=None, asr_s=10.0):
    from hub.core.hub import Hub

    base = settings()
    res = dataclasses.replace(
        base.resilience, timeouts_s={**base.resilience.timeouts_s, "asr": asr_s}
    )
    base = dataclasses.replace(
        base, resilience=res, asr=dataclasses.replace(base.asr, second_pass=second_pass)
    )
    devices = FakeDevices()
    hub = Hub(
        base,
        entry="replay",
        store=None,
        probe=FixedProbe(),
        **({"clock": clock} if clock is not None else {}),
        factories={
            "asr": lambda h: grammar,
            "asr2": lambda h: whisper,
            "tts": lambda h: FakeTts(),
            "devices": lambda h: devices,
        },
    )
    hub.engines.rules()  # built before the turn: the second pass's interpreter needs it
    return hub, devices


def test_a_sure_command_never_runs_the_second_pass():
    whisper = StubWhisper("Turn off the kitchen light.")
    hub, devices = make(Grammar("turn on the kitchen light"), whisper)
    trace = hub.turn_audio(speech())
    assert trace["intent"] == "HassTurnOn" and whisper.calls == 0
    assert "second_pass" not in trace


def test_rejected_speech_heard_by_the_second_pass_reaches_the_rules():
    whisper = StubWhisper("Set a timer for 5 minutes.")
    hub, _ = make(Grammar("", rejected=True), whisper)
    trace = hub.turn_audio(speech())
    assert trace["intent"] == "HassStartTimer" and trace["slots"].get("minutes") == 5
    assert trace["second_pass"]["outcome"] == "used"
    assert trace["second_pass"]["speech_ms"] == 1200


def test_an_unsure_on_off_confirmed_by_the_second_pass_is_done_not_asked():
    hub, devices = make(
        Grammar("turn off the standing light", unsure=True),
        StubWhisper("Turn off the Standing Light."),
    )
    trace = hub.turn_audio(speech())
    assert trace["intent"] == "HassTurnOff" and not trace["response"].startswith("Do you")
    assert trace["second_pass"]["outcome"] == "agree"


def test_an_unsure_on_off_contradicted_by_the_second_pass_is_asked_back():
    hub, devices = make(
        Grammar("turn on the standing light", unsure=True),
        StubWhisper("Turn off the standing light."),
    )
    trace = hub.turn_audio(speech())
    assert trace["response"].startswith("Do you want me to") and devices.published == []
    assert trace["second_pass"]["outcome"] == "disagree"


def test_second_pass_off_keeps_the_grammar_result():
    whisper = StubWhisper("What's the date?")
    hub, _ = make(Grammar("", rejected=True), whisper, second_pass=False)
    trace = hub.turn_audio(speech())
    assert trace["response"] == "Sorry, I didn't catch that." and whisper.calls == 0


def test_rejected_speech_gets_the_turns_time_when_the_second_pass_is_slow():
    """Default deadline (8 s): a second pass expected to take 6 s does not fit before the
    2.5 s kept for an unsure command, but rejected speech has only "didn't catch" to fall
    back on, so it is heard, and its deadline still leaves REST_REJECTED_S for the answer."""
    clock = ManualClock()
    whisper = SlowWhisper("Set a timer for 5 minutes.", clock)
    hub, _ = make(Grammar("", rejected=True), whisper, clock=clock)
    start = clock()
    trace = hub.turn_audio(speech())
    assert whisper.calls == 1 and trace["second_pass"]["outcome"] == "used"
    assert trace["intent"] == "HassStartTimer" and "didn't catch" not in trace["response"]
    assert whisper.deadlines[0] <= start + 8.0 - REST_REJECTED_S
    assert whisper.deadlines[0] > start + 8.0 - REST_S


def test_an_unsure_command_keeps_the_grammar_reading_when_the_second_pass_is_slow():
    clock = ManualClock()
    whisper = SlowWhisper("Turn off the standing light.", clock)
    hub, devices = make(Grammar("turn on the standing light", unsure=True), whisper, clock=clock)
    trace = hub.turn_audio(speech())
    assert whisper.calls == 0 and trace["second_pass"]["rejected_reason"] == "no_time"
    assert trace["response"].startswith("Do you want me to") and devices.published == []


def test_a_second_pass_on_rejected_speech_is_not_cut_at_the_grammars_timeout():
    """asr timeout 1 s (the grammar's), deadline 8 s: the second pass on rejected speech may
    run until REST_REJECTED_S before the deadline, past the grammar's timeout."""
    clock = ManualClock()
    whisper = SlowWhisper("What's the date?", clock)
    hub, _ = make(Grammar("", rejected=True), whisper, clock=clock, asr_s=1.0)
    start = clock()
    trace = hub.turn_audio(speech())
    assert whisper.deadlines[0] == pytest.approx(start + 8.0 - REST_REJECTED_S, abs=0.01)
    assert trace["intent"] == "HassGetCurrentDate" and trace["errors"] == []


def _it_after_kitchen_on(grammar, whisper):
    hub, devices = make(grammar, whisper)
    on = hub.turn_text("turn on the kitchen light")
    assert on["intent"] == "HassTurnOn" and devices.published == [("Kitchen Light", "turn_on")]
    return hub, devices


def test_a_reference_confirmed_by_the_second_pass_is_done_like_the_named_command():
    """Issue 18: "turn it off" (what was last acted on) doubted on/off by the grammar and
    heard alike by the second pass is done, as "turn off the kitchen light" is; before, the
    second pass's interpreter knew no "it", so the two readings never agreed and it asked."""
    hub, devices = _it_after_kitchen_on(
        Grammar("turn it off", unsure=True), StubWhisper("Turn it off.")
    )
    trace = hub.turn_audio(speech())
    assert trace["second_pass"]["outcome"] == "agree", trace
    assert trace["intent"] == "HassTurnOff" and trace["response"].startswith("Turned off"), trace
    assert devices.published[-1] == ("Kitchen Light", "turn_off")


def test_a_reference_the_second_pass_hears_otherwise_is_asked_back_never_done():
    hub, devices = _it_after_kitchen_on(
        Grammar("turn it off", unsure=True), StubWhisper("Turn it on.")
    )
    trace = hub.turn_audio(speech())
    assert trace["second_pass"]["outcome"] == "disagree", trace
    assert trace["response"].startswith("Do you want me to turn"), trace
    assert devices.published == [("Kitchen Light", "turn_on")]


def test_a_reference_named_alike_agrees_with_the_named_command():
    """The grammar's "turn it off" and the second pass's "turn off the kitchen light" are
    the same action (the same entity): agreed, done."""
    hub, devices = _it_after_kitchen_on(
        Grammar("turn it off", unsure=True), StubWhisper("Turn off the kitchen light.")
    )
    trace = hub.turn_audio(speech())
    assert trace["second_pass"]["outcome"] == "agree" and trace["intent"] == "HassTurnOff"
    assert devices.published[-1] == ("Kitchen Light", "turn_off")
