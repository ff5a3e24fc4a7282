"""Issue 17 item 2: one clock reaches every node, guard, breaker, retry and the trace's
timings. A hub built with a fake clock answers the time and date of its wall clock, times its
turns on its monotonic clock, and waits out an engine's retry-after on it: nothing sleeps."""

from __future__ import annotations

from datetime import datetime

from hub.errors import FatalError

from fakes import Clock, FakeAsr, FakeTts, make_hub, speech

NOON = datetime(2026, 3, 4, 15, 7).timestamp()
"""A wall-clock reading: 4 March 2026, 3:07 PM local time."""


class SlowAsr(FakeAsr):
    """Takes ``seconds`` of the fake clock to hear its text."""

    def __init__(self, clock: Clock, seconds: float, text: str = "turn on the kitchen light"):
        super().__init__(text)
        self.clock, self.seconds = clock, seconds

    def transcribe(self, samples, cancel=None):
        self.clock.advance(self.seconds)
        return super().transcribe(samples, cancel)


class SlowTts(FakeTts):
    """Takes ``seconds`` of the fake clock before its first chunk."""

    def __init__(self, clock: Clock, seconds: float):
        super().__init__()
        self.clock, self.seconds = clock, seconds

    def synthesize(self, text, cancel=None):
        self.clock.advance(self.seconds)
        yield from super().synthesize(text, cancel)


def test_the_trace_is_timed_on_the_hubs_clock():
    clock = Clock()
    asr = SlowAsr(clock, 0.5)
    hub = make_hub(clock=clock, tts=SlowTts(clock, 0.25), factories={"asr": lambda _: asr})
    trace = hub.turn_audio(speech())
    timings = trace["timings_ms"]
    assert trace["intent"] == "HassTurnOn"
    assert timings["asr"] == 500.0 and timings["rules"] == 0.0 and timings["tts"] == 250.0
    assert timings["ttfa"] == 750.0 and timings["total"] == 750.0


def test_the_time_and_date_said_are_the_hubs_wall_clock():
    clock = Clock(wall=NOON)
    hub = make_hub(clock=clock)
    assert hub.turn_text("what time is it")["response"] == "3:07 PM."
    clock.advance(3600.0)
    assert hub.turn_text("what time is it")["response"] == "4:07 PM."
    assert "2026" in hub.turn_text("what year is it")["response"]


def test_an_engine_that_failed_to_load_is_tried_again_after_the_cooldown_on_the_hubs_clock():
    clock, builds = Clock(), []

    def broken_then_fine(_hub):
        builds.append(clock())
        if len(builds) == 1:
            raise FatalError("no model", node="tts")
        return FakeTts()

    hub = make_hub(clock=clock, factories={"tts": broken_then_fine})
    first = hub.turn_text("turn on the kitchen light")
    assert first["fallback_level"] == 4 and len(builds) == 1  # the placeholder was said
    clock.advance(hub.settings.resilience.breaker_cooldown_s - 1.0)
    assert hub.turn_text("turn off the kitchen light")["fallback_level"] == 4
    assert len(builds) == 1  # not tried again within the cooldown
    clock.advance(1.0)
    assert hub.turn_text("turn on the kitchen light")["fallback_level"] == 0
    assert len(builds) == 2
