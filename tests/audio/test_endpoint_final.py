"""Issue 18 item 4: the endpointer's ``final`` rule (Kaldi's "final state and a short
silence"): 300 ms of silence end the utterance when the recognizer reads the audio so far as a
whole grammar sentence; otherwise the 500 ms rule applies, so a 0.4 s pause inside a command
does not cut it. Frame counts are exact (a scripted VAD); the real recognizer is used on the
hub's own voice."""

from __future__ import annotations

import numpy as np
import pytest

from hub.audio.endpoint import Endpointer

from live_audio import blocks, silence, speech_extent, synth


class ScriptedVad:
    """A VAD answering from a list of frame decisions, then False."""

    def __init__(self, decisions):
        self.decisions, self.calls = list(decisions), 0

    def __call__(self, frame):
        self.calls += 1
        return self.decisions[self.calls - 1] if self.calls <= len(self.decisions) else False


class Asked:
    """A ``complete`` that answers from a list and records the audio it was asked about."""

    def __init__(self, *answers):
        self.answers, self.audio = list(answers), []

    def __call__(self, audio):
        self.audio.append(audio.copy())
        return self.answers[len(self.audio) - 1]


def ended_at(ep: Endpointer, frames: int) -> int | None:
    """Push ``frames`` 10 ms frames of zeros; the frame count at which it ended, or None."""
    for i in range(frames):
        if ep.push(np.zeros(160, np.int16)):
            return i + 1
    return None


def test_a_whole_sentence_ends_after_the_short_silence():
    asked = Asked(True)
    ep = Endpointer(500, 15.0, vad=ScriptedVad([True] * 50), final_silence_ms=300, complete=asked)
    assert ended_at(ep, 200) == 50 + 30 and ep.reason == "final"
    assert len(asked.audio) == 1 and np.array_equal(asked.audio[0], ep.audio())


def test_no_whole_sentence_waits_for_the_long_silence_and_asks_once_per_pause():
    asked = Asked(False, False)
    vad = ScriptedVad([True] * 50 + [False] * 35 + [True] * 40)
    ep = Endpointer(500, 15.0, vad=vad, final_silence_ms=300, complete=asked)
    assert ended_at(ep, 400) == 125 + 50 and ep.reason == "silence"
    assert len(asked.audio) == 2  # once in the pause, once after the end


def test_without_a_check_or_with_the_rule_off_only_the_long_silence_ends_it():
    for kwargs in ({"final_silence_ms": 300}, {"final_silence_ms": 0, "complete": Asked()}):
        ep = Endpointer(500, 15.0, vad=ScriptedVad([True] * 50), **kwargs)
        assert ended_at(ep, 200) == 100 and ep.reason == "silence"


def test_a_failing_check_counts_as_not_complete():
    def broken(audio):
        raise RuntimeError("decoder busy")

    ep = Endpointer(500, 15.0, vad=ScriptedVad([True] * 50), final_silence_ms=300, complete=broken)
    assert ended_at(ep, 200) == 100 and ep.reason == "silence"


def test_too_little_speech_is_not_asked_about():
    asked = Asked()
    ep = Endpointer(500, 15.0, vad=ScriptedVad([True] * 5), final_silence_ms=300, complete=asked)
    assert ended_at(ep, 100) is None and not asked.audio


# -- the real recognizer on the hub's voice ----------------------------------------------------
@pytest.fixture(scope="module")
def engine():
    """The shared home's recognizer, its grammar from the user's cache (as ``hub run``)."""
    from hub.asr import make_asr_engine
    from hub.settings import load_settings

    from shared_data import home_toml

    settings = load_settings(str(home_toml()))
    return make_asr_engine(settings.asr, settings.home)


def endpoint(engine, audio: np.ndarray) -> Endpointer:
    ep = Endpointer(500, 15.0, start_timeout_s=8.0, final_silence_ms=300, complete=engine.complete)
    for block in blocks(audio, 800):
        if ep.push(block):
            break
    return ep


@pytest.mark.models
@pytest.mark.parametrize("text", ["turn on the kitchen light", "kitchen", "turn it off"])
def test_a_spoken_sentence_ends_on_the_final_rule_and_its_decode_is_reused(engine, text):
    audio = np.concatenate([silence(0.5), synth(text), silence(1.5)])
    ep = endpoint(engine, audio)
    assert ep.reason == "final"
    decoded = engine._last
    assert engine.transcribe(ep.audio()) is decoded[1] and decoded[1].text == text


@pytest.mark.models
def test_a_0_4_s_pause_inside_a_command_does_not_end_it(engine):
    first_part, second_part = synth("turn off the"), synth("kitchen light")
    _, end = speech_extent(first_part)
    begin, _ = speech_extent(second_part)
    audio = np.concatenate(
        [silence(0.5), first_part[:end], silence(0.4), second_part[begin:], silence(1.5)]
    )
    ep = endpoint(engine, audio)
    assert ep.reason in ("final", "silence")
    assert engine.transcribe(ep.audio()).text == "turn off the kitchen light"
