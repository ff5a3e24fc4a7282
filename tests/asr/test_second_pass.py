"""The second pass's decision (hub.asr.second_pass) with stub engines: when it runs, what it
does with agreement and disagreement, and the hallucination guard (case BC-37, stub level)."""

from __future__ import annotations

import numpy as np
import pytest

from hub.asr import evidence
from hub.asr.base import Transcript
from hub.asr.evidence import Evidence, rejection
from hub.asr.second_pass import needed, second_pass
from hub.asr.whisper_engine import Heard

SPOKEN = Evidence(speech_ms=1200, dbfs=-22.0)


class StubWhisper:
    """Writes ``heard`` for any audio; records calls."""

    name = "whisper"

    def __init__(self, heard: Heard):
        self.heard, self.calls = heard, []

    def hear(self, audio, cancel=None, deadline=None):
        self.calls.append(audio)
        return self.heard

    def expected_s(self):
        return 0.0


class StubScorer:
    """Alignment scores from a table; ``doubts`` from a set."""

    def __init__(self, scores=None, doubtful=()):
        self.table, self.doubtful = scores or {}, set(doubtful)

    def scores(self, samples, texts):
        return [self.table.get(t) for t in texts]

    def doubts(self, samples, text):
        return text in self.doubtful


def interpret(text):
    """A toy reading: the action word and the rest."""
    words = text.split()
    if "on" in words:
        return ("on", " ".join(w for w in words if w != "on"))
    if "off" in words:
        return ("off", " ".join(w for w in words if w not in ("off",)))
    return None


@pytest.fixture
def spoken(monkeypatch):
    """Every clip counts as 1.2 s of speech (the VAD is tested with real audio elsewhere)."""
    monkeypatch.setattr(evidence, "measure", lambda samples: SPOKEN)


AUDIO = np.full(16000, 1000, dtype=np.int16)


def heard(text, nsp=0.01, lp=-0.1, cr=1.0):
    return Heard(text, nsp, lp, cr, (text,))


def test_sure_grammar_result_runs_nothing(spoken):
    engine = StubWhisper(heard("turn off the kitchen light"))
    first = Transcript("turn on the kitchen light", ("turn on the kitchen light",))
    decision = second_pass(first, AUDIO, engine, interpret=interpret)
    assert needed(first) is None and decision.transcript is first and decision.trace == {}
    assert engine.calls == []


def test_rejected_speech_takes_the_second_reading(spoken):
    engine = StubWhisper(heard("What's the date?"))
    first = Transcript("", (), rejected=True)
    decision = second_pass(first, AUDIO, engine, interpret=interpret)
    assert decision.transcript.text == "what's the date"
    assert not decision.transcript.rejected and decision.trace["outcome"] == "used"
    assert len(engine.calls) == 1


def test_second_pass_input_is_float32_in_range(spoken):
    engine = StubWhisper(heard("next"))
    second_pass(Transcript("", (), rejected=True), AUDIO, engine)
    audio = engine.calls[0]
    assert audio.dtype == np.float32 and audio.ndim == 1 and np.abs(audio).max() <= 1.0
    assert audio[0] == pytest.approx(1000 / 32768)


def test_a_rejected_command_the_scorer_doubts_is_asked_back(spoken):
    engine = StubWhisper(heard("Turn on the bed light."))
    scorer = StubScorer(doubtful={"turn on the bed light"})
    decision = second_pass(
        Transcript("", (), rejected=True), AUDIO, engine, interpret=interpret, scorer=scorer
    )
    assert decision.transcript.unsure and decision.transcript.text == "turn on the bed light"


def test_unsure_reading_confirmed_by_the_second_pass_is_no_longer_unsure(spoken):
    engine = StubWhisper(heard("Turn off the Standing Light."))
    first = Transcript("turn off the standing light", ("turn off the standing light",), unsure=True)
    decision = second_pass(first, AUDIO, engine, interpret=interpret, scorer=StubScorer())
    assert decision.trace["outcome"] == "agree"
    assert decision.transcript.text == first.text and not decision.transcript.unsure


def test_disagreement_is_asked_back_with_the_reading_the_audio_prefers(spoken):
    engine = StubWhisper(heard("Turn off the standing light."))
    first = Transcript("turn on the standing light", ("turn on the standing light",), unsure=True)
    scorer = StubScorer(
        {"turn on the standing light": -5000.0, "turn off the standing light": -4900.0}
    )
    decision = second_pass(first, AUDIO, engine, interpret=interpret, scorer=scorer)
    assert decision.trace["outcome"] == "disagree"
    assert decision.transcript.unsure and decision.transcript.text == "turn off the standing light"


def test_disagreement_keeps_the_grammar_reading_when_the_audio_prefers_it(spoken):
    engine = StubWhisper(heard("Turn off the standing light."))
    first = Transcript("turn on the standing light", (), unsure=True)
    scorer = StubScorer(
        {"turn on the standing light": -4000.0, "turn off the standing light": -4900.0}
    )
    decision = second_pass(first, AUDIO, engine, interpret=interpret, scorer=scorer)
    assert decision.transcript is first and first.unsure


# -- case BC-37 at stub level: (g) no speech, (h) compression, (i) repetition -----------------
def test_bc37_no_speech_prob_drops_a_confident_text_whatever_its_logprob():
    assert rejection(heard("Turn off the lights.", nsp=0.93, lp=-0.2), SPOKEN, 300) == "no_speech"


def test_bc37_vad_without_speech_drops_everything():
    silent = Evidence(speech_ms=0, dbfs=-30.0)
    assert rejection(heard("Turn off the lights.", nsp=0.1, lp=-0.2), silent, 300) == "no_speech"


def test_bc37_compression_ratio_drops_a_loop():
    text = "Thank you. Thank you. Thank you. Thank you."
    assert rejection(heard(text, cr=2.6), SPOKEN, 300) == "compression"
    assert rejection(heard(text, cr=1.2), SPOKEN, 300) == "repetition"


def test_bc37_one_token_repeated_is_a_loop():
    assert rejection(heard("you you you you you"), SPOKEN, 300) == "repetition"


def test_bc37_invented_phrase_is_dropped_when_the_evidence_is_weak():
    weak = Evidence(speech_ms=400, dbfs=-30.0)
    assert rejection(heard("Thank you."), weak, 300) == "invented"
    assert rejection(heard("Thanks for watching!"), weak, 300) == "invented"
    assert rejection(heard("Turn on the bed light."), weak, 300) is None


def test_bc37_low_confidence_text_is_dropped():
    assert rejection(heard("Chocolate list.", lp=-1.4), SPOKEN, 300) == "low_confidence"


def test_bc37_dropped_text_leaves_didnt_catch_and_the_trace_says_why(monkeypatch):
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(0, -80.0))
    engine = StubWhisper(heard("Turn off the lights.", nsp=0.93, lp=-0.2))
    first = Transcript("", (), rejected=True)
    decision = second_pass(first, AUDIO, engine, interpret=interpret)
    assert decision.transcript is first and decision.transcript.rejected
    assert decision.trace["rejected_reason"] == "no_speech" and engine.calls == []


def test_disagreement_within_the_confusion_margin_asks_in_the_second_pass_words(spoken):
    """Measured on shared/audio/real "turn off all of the lights in the Office": the grammar's
    "on" aligned 22 better than Whisper's "off"; within the margin, so "off" is asked."""
    engine = StubWhisper(heard("Turn off all the lights in the office."))
    first = Transcript("turn on all of the lights in the office", (), unsure=True)
    scorer = StubScorer({first.text: -735.8, "turn off all the lights in the office": -758.3})
    decision = second_pass(first, AUDIO, engine, interpret=interpret, scorer=scorer)
    assert decision.transcript.unsure
    assert decision.transcript.text == "turn off all the lights in the office"


class SlowStub(StubWhisper):
    """Expects 10 s per utterance (a stale figure from a load spike)."""

    def expected_s(self):
        return 10.0


def test_rejected_speech_is_heard_though_the_expected_time_exceeds_the_time_left(spoken):
    engine = SlowStub(heard("What's the date?"))
    decision = second_pass(
        Transcript("", (), rejected=True), AUDIO, engine, deadline=3.0, clock=lambda: 0.0
    )
    assert decision.trace["outcome"] == "used" and len(engine.calls) == 1


def test_rejected_speech_with_no_time_left_is_not_heard(spoken):
    engine = SlowStub(heard("What's the date?"))
    first = Transcript("", (), rejected=True)
    decision = second_pass(first, AUDIO, engine, deadline=3.0, clock=lambda: 3.0)
    assert decision.transcript is first and decision.trace["rejected_reason"] == "no_time"
    assert engine.calls == []


def test_an_unsure_command_is_not_heard_again_when_the_expected_time_exceeds_the_time_left(
    spoken,
):
    engine = SlowStub(heard("Turn off the standing light."))
    first = Transcript("turn on the standing light", ("turn on the standing light",), unsure=True)
    decision = second_pass(first, AUDIO, engine, deadline=3.0, clock=lambda: 0.0)
    assert decision.transcript is first and decision.trace["outcome"] == "skipped"
    assert engine.calls == []


def test_a_second_pass_skipped_for_the_model_s_load_loads_it_for_the_next_turn(spoken):
    """Skipping alone would never load the model: its expected time holds the load, so every
    unsure command under load would be skipped and asked back, for good."""
    import threading

    from hub.asr.whisper_engine import WhisperEngine
    from hub.config.asr import AsrSettings

    release = threading.Event()

    def load():
        release.wait(10)
        return object()

    engine = WhisperEngine(AsrSettings(), "", load=load, clock=lambda: 0.0)
    engine.load_s = 5.0  # a load does not fit the 3 s left
    first = Transcript("turn on the standing light", ("turn on the standing light",), unsure=True)
    decision = second_pass(first, AUDIO, engine, deadline=3.0, clock=lambda: 0.0)
    assert decision.trace["outcome"] == "skipped" and not engine.loaded
    warming = engine._warming
    assert warming is not None and warming.is_alive()
    assert engine.warm_later() is None, "one load at a time"
    release.set()
    warming.join(10)
    assert engine.loaded and engine.expected_s() == engine.decode_s


def test_issue18_a_phrase_looping_is_repetition():
    assert rejection(heard("turn on the turn on the turn on the"), None, 0) == "repetition"
    assert rejection(heard("turn on the light and turn on the fan"), None, 0) is None


def test_newuser_the_same_words_that_the_rules_cannot_read_are_not_a_disagreement(spoken):
    """ "turn it off" with nothing to refer to: both recognizers heard it, the rules read
    neither; the trace said "disagree" (found by the new user). It says "unread", and the
    grammar's reading stands, still unsure (asked back)."""
    engine = StubWhisper(heard("Turn it down."))
    first = Transcript("turn it down", ("turn it down",), unsure=True)
    decision = second_pass(first, AUDIO, engine, interpret=interpret, scorer=StubScorer())
    assert decision.trace["outcome"] == "unread"
    assert decision.transcript is first and first.unsure


def test_newuser_an_unsure_command_is_heard_again_whatever_microvad_measured(monkeypatch):
    """ "turn it off" live: microVAD found 290 ms of speech (-18 dBFS), under the 300 ms a
    rejected utterance needs, so the second pass was skipped as "no speech" and the command
    asked back (found by the new user). An unsure command is one of the grammar's sentences:
    it is heard again; speech the grammar rejected still needs the VAD's evidence."""
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(speech_ms=0, dbfs=-18.0))
    engine = StubWhisper(heard("Turn off the standing light."))
    first = Transcript("turn off the standing light", ("turn off the standing light",), unsure=True)
    decision = second_pass(first, AUDIO, engine, interpret=interpret, scorer=StubScorer())
    assert decision.trace["outcome"] == "agree" and not decision.transcript.unsure
    rejected = Transcript("", (), rejected=True)
    kept = second_pass(rejected, AUDIO, engine, interpret=interpret, scorer=StubScorer())
    assert kept.trace["rejected_reason"] == "no_speech" and kept.transcript is rejected
    quiet = Evidence(speech_ms=0, dbfs=-70.0)
    monkeypatch.setattr(evidence, "measure", lambda samples: quiet)
    silent = second_pass(first, AUDIO, engine, interpret=interpret, scorer=StubScorer())
    assert silent.trace["rejected_reason"] == "no_speech"  # a level too low: nobody spoke
