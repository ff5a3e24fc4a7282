"""Fake engines for graph and CLI tests: canned transcripts, canned LLM text, quick TTS.

Each replaces one factory of :data:`hub.core.engines.DEFAULT_FACTORIES`; the rules, the actor and
the FAQ stay real.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

import numpy as np

from hub.resilience.load import FixedProbe
from hub.settings import load_settings
from hub.tts.piper import AudioChunk

FAST_TIMEOUTS = {"asr": 1.0, "rules": 1.0, "llm_intent": 1.0, "llm_answer": 1.0, "act": 1.0,
                 "tts": 1.0}
"""Short enough for hang tests, long enough for a loaded 2-core CI machine."""


@dataclass(frozen=True)
class FakeTranscript:
    text: str
    alternatives: tuple[str, ...] = ()
    rejected: bool = False
    engine: str = "fake"
    segments: tuple[str, ...] = ()
    unsure: bool = False
    rejected_text: str = ""


class FakeAsr:
    """Hears ``text`` in any audio; counts calls."""

    name = "fake"

    def __init__(self, text: str, segments: tuple[str, ...] = (), unsure: bool = False):
        self.text, self.segments, self.calls, self.unsure = text, segments, 0, unsure

    def transcribe(self, samples, cancel: threading.Event | None = None):
        self.calls += 1
        return FakeTranscript(self.text, (self.text,), segments=self.segments,
                              unsure=self.unsure)


class FakeTts:
    """0.1 s of a constant tone per sentence at 16 kHz; counts sentences."""

    rate = 16000

    def __init__(self):
        self.sentences: list[str] = []

    def synthesize(self, text: str, cancel: threading.Event | None = None):
        for sentence in [s for s in text.replace("?", ".").split(".") if s.strip()]:
            self.sentences.append(sentence)
            yield AudioChunk(pcm=b"\x10\x00" * 1600, rate=self.rate, text=sentence)


class FakeLlm:
    """Answers ``classify`` with the next of ``replies`` (the last one repeats)."""

    name = "fake-llm"

    def __init__(self, replies=('{"intent": "answer", "slots": {}, "confidence": 0.9}',),
                 answer=("Blue light scatters more.",)):
        self.replies, self.answer_sentences, self.calls = list(replies), answer, []

    def classify(self, text, cancel=None, strict=False):
        self.calls.append((text, strict))
        reply = self.replies[min(len(self.calls) - 1, len(self.replies) - 1)]
        if isinstance(reply, Exception):
            raise reply
        return reply

    def answer(self, question, cancel=None):
        yield from self.answer_sentences


def settings(*, llm: bool = False, deadline_s: float = 8.0, **resilience):
    """The sample home's settings with short timeouts; the LLM on or off at every entry."""
    base = load_settings(None)
    entries = ("run", "replay", "ask") if llm else ()
    res = dataclasses.replace(base.resilience, timeouts_s=dict(FAST_TIMEOUTS),
                              deadline_s=deadline_s, max_load_factor=1.0, **resilience)
    return dataclasses.replace(base, resilience=res, llm=dataclasses.replace(
        base.llm, intents_on=entries, answers_on=entries))


def make_hub(*, text="turn on the kitchen light", llm=None, tts=None, store=None,
             inject=(), entry="replay", **kw):
    """A Hub with fake ASR/TTS (and LLM when given) around the real rules, actor and FAQ."""
    from hub.core.hub import Hub

    asr, tts = FakeAsr(text), tts or FakeTts()
    factories = {"asr": lambda hub: asr, "tts": lambda hub: tts}
    if llm is not None:
        factories["llm"] = lambda hub: llm
    hub = Hub(settings(llm=llm is not None, **kw), entry=entry, factories=factories,
              store=store, probe=FixedProbe(), inject=inject)
    hub.fake_asr, hub.fake_tts = asr, tts
    return hub


def speech(seconds: float = 1.0) -> np.ndarray:
    """Non-silent int16 audio (the fake ASR ignores its content)."""
    t = np.arange(int(16000 * seconds)) / 16000
    return (3000 * np.sin(2 * np.pi * 220 * t)).astype(np.int16)


class FakeDevices:
    """A device backend that counts what it is asked to publish."""

    def __init__(self):
        self.published = []

    def publish(self, action, cancel=None, wait_s=None):
        self.published.append((action["entity"], action["service"]))
        return "done"

    def on_turn(self, trace):
        """No hub entities to update."""


def wait_for(predicate, timeout_s: float = 10.0) -> bool:
    """Poll ``predicate`` every 20 ms until it is true or ``timeout_s`` seconds pass."""
    import time

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
