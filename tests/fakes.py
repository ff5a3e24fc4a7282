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

FAST_TIMEOUTS = {
    "asr": 1.0,
    "rules": 1.0,
    "llm_intent": 1.0,
    "llm_answer": 1.0,
    "act": 1.0,
    "tts": 1.0,
}
"""Short enough for hang tests, long enough for a loaded 2-core CI machine."""

ROOMY_TIMEOUTS = dict.fromkeys(FAST_TIMEOUTS, 5.0)
"""For dialog tests where no node hangs: at load 10 on 2 cores a rules match has taken over
1 s, and a timed-out node there changes the answer the test is about."""
DEFAULT_TIMEOUTS = {**FAST_TIMEOUTS, "rules": ROOMY_TIMEOUTS["rules"]}
""":func:`settings`' own: the fakes' nodes end quickly, the real rules (every test hub's)
get room (a healthy match timed out at 1 s under load 10 and the test got another answer)."""


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
        return FakeTranscript(self.text, (self.text,), segments=self.segments, unsure=self.unsure)


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

    def __init__(
        self,
        replies=('{"intent": "answer", "slots": {}, "confidence": 0.9}',),
        answer=("Blue light scatters more.",),
    ):
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
    """The sample home's settings with short timeouts (:data:`DEFAULT_TIMEOUTS`;
    ``timeouts_s``: others, e.g. :data:`ROOMY_TIMEOUTS`); the LLM on or off at every entry."""
    base = load_settings(None)
    entries = ("run", "replay", "ask") if llm else ()
    res = dataclasses.replace(
        base.resilience,
        timeouts_s=dict(resilience.pop("timeouts_s", DEFAULT_TIMEOUTS)),
        deadline_s=deadline_s,
        max_load_factor=1.0,
        **resilience,
    )
    return dataclasses.replace(
        base,
        resilience=res,
        llm=dataclasses.replace(base.llm, intents_on=entries, answers_on=entries),
    )


def unhurried(base, seconds: float = 600.0):
    """``base`` (Settings) with a turn deadline and every node timeout of ``seconds``, for
    tests of real engines (models, a broker) that check what a turn does, not how fast: at
    load 18 on 2 cores the real LLM outlasted the 8 s deadline and the turn fell back. Each
    wait still ends when its node does."""
    res = dataclasses.replace(
        base.resilience,
        deadline_s=seconds,
        timeouts_s=dict.fromkeys(base.resilience.timeouts_s, seconds),
    )
    return dataclasses.replace(base, resilience=res)


def fault_timeouts(inject=()) -> dict[str, float]:
    """Node timeouts for a test hub: :data:`FAST_TIMEOUTS` for each node a fault is injected
    into (``"node=fault"``), so a hang ends quickly; :data:`ROOMY_TIMEOUTS` for the others, so a
    healthy node on a loaded CI machine (a rules match has taken over 1 s at load 10) is not
    timed out into another answer than the one the test checks."""
    faulted = {str(item).split("=", 1)[0] for item in inject}
    return {
        node: FAST_TIMEOUTS[node] if node in faulted else s for node, s in ROOMY_TIMEOUTS.items()
    }


def make_hub(
    *,
    text="turn on the kitchen light",
    llm=None,
    tts=None,
    store=None,
    inject=(),
    entry="replay",
    clock=None,
    factories=None,
    **kw,
):
    """A Hub with fake ASR/TTS (and LLM when given) around the real rules, actor and FAQ.

    Node timeouts: ``timeouts_s`` when given, else :func:`fault_timeouts` of ``inject``.

    ``clock``: a fake with ``clock()`` (monotonic) and ``clock.wall()`` (epoch seconds), e.g.
    :class:`Clock`; the hub's turns, timers and actions run on it (None: the real clocks).
    ``factories``: more engine factories (they win over the fakes).
    """
    from hub.core.hub import Hub

    asr, tts = FakeAsr(text), tts or FakeTts()
    extra, factories = factories, {"asr": lambda hub: asr, "tts": lambda hub: tts}
    if llm is not None:
        factories["llm"] = lambda hub: llm
    factories.update(extra or {})
    clocks = {"clock": clock, "wall": clock.wall} if clock is not None else {}
    if "timeouts_s" not in kw:
        kw["timeouts_s"] = fault_timeouts(inject)
    hub = Hub(
        settings(llm=llm is not None, **kw),
        entry=entry,
        factories=factories,
        store=store,
        probe=FixedProbe(),
        inject=inject,
        **clocks,
    )
    hub.fake_asr, hub.fake_tts = asr, tts
    return hub


class Clock:
    """A monotonic and a wall clock in one, moved only by :meth:`advance` (tests never sleep).

    ``clock()`` is monotonic seconds, ``clock.wall()`` seconds since the epoch.
    """

    def __init__(self, now: float = 1000.0, wall: float = 1_700_000_000.0) -> None:
        self.now, self.wall_now = now, wall

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return self.wall_now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.wall_now += seconds


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
