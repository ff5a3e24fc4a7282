"""Issue 18, latency: what a wake word readies while its command is still being spoken
(:meth:`hub.core.hub.Hub.on_wake`): the clock's answers for the coming minute in the
response cache, and the second recognizer's model in memory."""

from __future__ import annotations

import dataclasses
import threading
from datetime import datetime
from zoneinfo import ZoneInfo

from hub.graph.ahead import clock_answers
from hub.graph.answers import response_key
from hub.home import Home
from hub.settings import load_settings
from hub.store.db import Store

from fakes import Clock, FakeTts, make_hub, wait_for

UTC = ZoneInfo("UTC")


class FakeSecondPass:
    """The second recognizer's warm-up call, counted."""

    def __init__(self):
        self.warmed = threading.Event()
        self.calls = 0

    def warm_later(self):
        self.calls += 1
        self.warmed.set()


def _hub(tmp_path, wall: float, **kw):
    store = Store(tmp_path / "hub.db")
    tts = FakeTts()
    asr2 = FakeSecondPass()
    factories = {"asr2": lambda hub: asr2}
    hub = make_hub(store=store, tts=tts, clock=Clock(wall=wall), factories=factories, **kw)
    hub.speak = True
    return hub, tts, asr2


def _epoch(hour: int, minute: int, second: int) -> float:
    return datetime(2026, 12, 5, hour, minute, second, tzinfo=UTC).timestamp()


def _settle(hub) -> None:
    job = hub._clock_job
    assert job is not None and job.done.wait(10)


def test_clock_answers_are_the_texts_the_rules_path_says(tmp_path):
    home = Home.from_settings(load_settings(None).home)
    texts = clock_answers(home, _epoch(22, 58, 30), UTC)
    assert texts == ["10:58 PM.", "December 5th, 2026."]


def test_issue18_after_a_wake_word_the_time_answer_is_rendered_before_the_question_ends(
    tmp_path,
):
    hub, tts, _ = _hub(tmp_path, _epoch(22, 58, 10))
    hub.alarms.zone = UTC
    hub.on_wake()
    _settle(hub)
    assert set(tts.sentences) == {"10:58 PM", "December 5th, 2026"}
    before = len(tts.sentences)
    hub.clock.advance(2.0)  # the question is spoken, then answered
    trace = hub.turn_text("what time is it")
    assert trace["response"] == "10:58 PM."
    assert len(tts.sentences) == before  # played from the cache: no synthesis in the turn
    assert hub.store.has_response_audio(response_key("10:58 PM.", hub.settings.tts.voice))


def test_issue18_near_a_minute_s_turn_both_minutes_are_rendered(tmp_path):
    hub, tts, _ = _hub(tmp_path, _epoch(22, 58, 57))
    hub.alarms.zone = UTC
    hub.on_wake()
    _settle(hub)
    assert {"10:58 PM", "10:59 PM"} <= set(tts.sentences)


def test_a_second_wake_word_renders_nothing_already_stored(tmp_path):
    hub, tts, _ = _hub(tmp_path, _epoch(22, 58, 10))
    hub.on_wake()
    _settle(hub)
    first = len(tts.sentences)
    hub.on_wake()
    _settle(hub)
    assert first == 2 and len(tts.sentences) == first
    assert hub._clock_job.stored == 2 and hub._clock_job.rendered == 0


def test_issue18_a_wake_word_warms_the_second_recognizer(tmp_path):
    hub, _, asr2 = _hub(tmp_path, _epoch(22, 58, 10))
    hub.on_wake()
    assert asr2.warmed.wait(10) and asr2.calls == 1


def test_without_the_second_pass_nothing_is_loaded(tmp_path):
    hub, _, asr2 = _hub(tmp_path, _epoch(22, 58, 10))
    hub.settings = dataclasses.replace(
        hub.settings, asr=dataclasses.replace(hub.settings.asr, second_pass=False)
    )
    hub.on_wake()
    _settle(hub)
    assert not wait_for(lambda: asr2.calls > 0, 0.5)
    assert not hub.engines.loaded("asr2")


def test_a_hub_that_does_not_speak_or_keeps_no_store_renders_nothing(tmp_path):
    hub, tts, _ = _hub(tmp_path, _epoch(22, 58, 10))
    hub.speak = False
    hub.on_wake()
    assert hub._clock_job is None and tts.sentences == []
    hub.speak = True
    hub.settings = dataclasses.replace(
        hub.settings, tts=dataclasses.replace(hub.settings.tts, prerender=False)
    )
    hub.on_wake()  # [tts] prerender off: nothing is rendered ahead
    assert hub._clock_job is None and tts.sentences == []
    quiet = make_hub(store=None, tts=FakeTts())
    quiet.speak = True
    quiet.on_wake()
    assert quiet._clock_job is None and quiet.fake_tts.sentences == []
