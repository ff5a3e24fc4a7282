"""Case BC-10's cap in the trace: when the TTS cuts a long answer (``[tts] max_chars``), the
trace's ``response`` is what was spoken (the kept sentences and the cut notice, as the TTS said
them) and ``response_full`` holds the whole answer; an answer that fits is unchanged."""

from __future__ import annotations

from types import SimpleNamespace

from hub.settings import TtsSettings
from hub.tts.piper import PiperTts
from hub.tts.textnorm import CUT_NOTICE

from fakes import FakeLlm, make_hub


class ToneVoice:
    """A Piper voice stand-in: 10 ms of audio per character, at 16 kHz."""

    config = SimpleNamespace(sample_rate=16000)

    def synthesize(self, text):
        yield SimpleNamespace(audio_int16_bytes=b"\x10\x00" * 160 * len(text))


LONG = (
    "Dragons are large winged reptiles of legend. They guard gold in deep caves. "
    "Knights ride out to fight them. Most stories end with a feast."
)


def capped_hub(max_chars: int, **kw):
    return make_hub(tts=PiperTts(ToneVoice(), TtsSettings(max_chars=max_chars)), **kw)


def test_bc10_trace_response_is_the_spoken_text_of_a_cut_answer():
    hub = capped_hub(60, llm=FakeLlm(answer=(LONG,)))
    trace = hub.turn_text("tell me about dragons please?")
    assert trace["source"] == "llm"
    assert trace["response"] == "Dragons are large winged reptiles of legend. " + CUT_NOTICE
    assert trace["response_full"] == LONG
    assert "Knights" not in trace["response"]


def test_bc10_a_cut_rules_answer_is_traced_as_spoken():
    hub = capped_hub(30)
    trace = hub.turn_text("broadcast dinner is ready come down now and bring the plates please")
    assert trace["response"] == "dinner is ready come down now. " + CUT_NOTICE
    assert trace["response_full"] == "dinner is ready come down now and bring the plates please."


def test_bc10_an_answer_that_fits_has_no_response_full():
    hub = capped_hub(600, llm=FakeLlm(answer=(LONG,)))
    trace = hub.turn_text("tell me about dragons please?")
    assert trace["response"] == LONG and "response_full" not in trace
