"""Wyoming ``transcribe``: speech the grammar rejects is transcribed by the second pass (with
speech evidence); without it the transcript stays empty."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
from wyoming.audio import AudioChunk, AudioStart

from hub.asr import evidence
from hub.asr.base import Transcript
from hub.asr.evidence import Evidence
from hub.asr.whisper_engine import Heard
from hub.wyoming.asr import AsrSession

from fakes import settings


class Rejecting:
    def __init__(self):
        self.segments = []

    def accept(self, pcm):
        return None

    def finish(self):
        return Transcript("", (), rejected=True)


class Engines:
    def __init__(self, text):
        self.text, self.heard = text, []

    def asr(self):
        return SimpleNamespace(stream=Rejecting)

    def asr2(self):
        engines = self

        class Whisper:
            name = "whisper"

            def hear(self, audio, cancel=None, deadline=None):
                engines.heard.append(audio)
                return Heard(engines.text, 0.01, -0.1, 1.0)

            def expected_s(self):
                return 0.0

        return Whisper()

    def rules(self):
        return SimpleNamespace(recognize=lambda text, area=None: None)


def transcribe(engines, measured, sent=None):
    sent = sent if sent is not None else []

    async def send(event):
        sent.append(event)

    async def run(fn, *args):
        return fn(*args)

    async def session():
        hub = SimpleNamespace(settings=settings(), engines=engines, on_wake=lambda: None)
        asr = AsrSession(hub, run, send)
        await asr.audio_start(AudioStart(rate=16000, width=2, channels=1))
        await asr.audio_chunk(
            AudioChunk(rate=16000, width=2, channels=1, audio=np.full(16000, 900, "<i2").tobytes())
        )
        return await asr.audio_stop()

    return asyncio.run(session())


def test_rejected_speech_is_transcribed_by_the_second_pass(monkeypatch):
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(1200, -22.0))
    engines = Engines("What's the date?")
    assert transcribe(engines, True) == "what's the date"
    audio = engines.heard[0]
    assert audio.dtype == np.float32 and len(audio) == 16000


def test_rejected_non_speech_stays_empty(monkeypatch):
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(0, -60.0))
    engines = Engines("Thank you.")
    assert transcribe(engines, False) == "" and engines.heard == []


class Unsure:
    """The grammar heard "turn on the kitchen light" but doubts its on/off; the segment is
    closed (streamed) as soon as audio comes."""

    heard = "turn on the kitchen light"

    def __init__(self):
        self.segments = []

    def accept(self, pcm):
        if not self.segments:
            self.segments.append(SimpleNamespace(text=self.heard, rejected=False, unsure=True))
        return None

    def finish(self):
        return Transcript(self.heard, (self.heard,), unsure=True)


class OnOffRules:
    """Rules that tell "turn on" from "turn off" the kitchen light."""

    def recognize(self, text, area=None):
        if "kitchen light" not in text.lower():
            return None
        intent = "HassTurnOff" if "turn off" in text.lower() else "HassTurnOn"
        return SimpleNamespace(intent=intent, entities=("Kitchen Light",), slots={})


class UnsureEngines(Engines):
    def asr(self):
        return SimpleNamespace(stream=Unsure)

    def rules(self):
        return OnOffRules()


def test_an_unsure_on_off_the_recognizers_disagree_on_never_reaches_home_assistant(
    monkeypatch,
):
    """Over Wyoming the grammar's unsure "turn on" went to Home Assistant as heard (the second
    pass ran only on rejected speech), and HA turned the light on where "off" was said. Now
    the command is heard again; when the two disagree on what it would do, the transcript is
    empty (HA: not understood, nothing done), and the streamed segment never ended the
    utterance early with the doubted text."""
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(1200, -22.0))
    engines = UnsureEngines("Turn off the kitchen light.")
    assert transcribe(engines, True) == ""
    assert len(engines.heard) == 1  # heard again by the second pass


def test_an_unsure_command_both_recognizers_agree_on_is_sent(monkeypatch):
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(1200, -22.0))
    engines = UnsureEngines("Turn on the kitchen light.")
    assert transcribe(engines, True) == "turn on the kitchen light"
    assert len(engines.heard) == 1


def test_breaker_a_doubted_command_too_quiet_to_hear_again_is_withheld_and_never_streamed(
    monkeypatch,
):
    """The breaker's finding: "turn Bed Light off" at -68 dBFS was heard "on" by the grammar,
    unsure; the second pass dropped it as no speech, and the doubted "on" went to Home
    Assistant (also as a ``transcript-chunk`` before the empty final). Now a doubt the second
    pass did not settle (dropped, skipped, failed, disagree) is withheld, and a doubted
    segment is never streamed."""
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(0, -68.0))
    engines = UnsureEngines("Turn off the kitchen light.")
    sent: list = []
    assert transcribe(engines, True, sent) == ""
    assert engines.heard == []  # too quiet to hear again
    assert [e.type for e in sent] == ["transcript-start", "transcript", "transcript-stop"]
    assert all(not (e.data or {}).get("text") for e in sent)


def test_an_unsure_command_whisper_reads_as_no_command_keeps_the_grammars_reading(monkeypatch):
    """Measured live: the grammar heard "turn Bed Light off" right but doubted it, Whisper
    wrote "Turn bedlight off." (no command for the rules): that contradicts no reading, so the
    grammar's is sent, as before doubts were heard again (it was withheld, and Home Assistant
    said it did not understand a clean command)."""
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(1200, -22.0))
    engines = UnsureEngines("Turn the kitchenlight on.")
    assert transcribe(engines, True) == "turn on the kitchen light"
    assert len(engines.heard) == 1


def test_rejected_speech_the_second_pass_hears_with_a_number_is_still_sent(monkeypatch):
    """Measured live over all shared recordings: "set a timer for 5 minutes" (rejected by the
    grammar, heard by Whisper, unsure for its number) was withheld once doubts were: only the
    grammar's own doubt withholds; a rejection's reading goes out as any recognizer's."""
    monkeypatch.setattr(evidence, "measure", lambda samples: Evidence(1200, -22.0))
    engines = Engines("Set a timer for 5 minutes.")
    timer = SimpleNamespace(intent="HassStartTimer", entities=(), slots={"minutes": 5})
    engines.rules = lambda: SimpleNamespace(recognize=lambda text, area=None: timer)
    assert transcribe(engines, True) == "set a timer for 5 minutes"
