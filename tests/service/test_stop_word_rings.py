"""A stop word heard by ``hub run``'s stop listener (no wake word) while an alarm or a timer
rings: the ringing stops, silently (as Home Assistant's stop word and common alarm clocks do),
and the ``stopped`` event line says what stopped (tester's notes: an alarm stopped this way
printed ``"timer": true``)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np

from hub.resilience.load import FixedProbe
from hub.service.supervisor import Supervisor

from fakes import ROOMY_TIMEOUTS, Clock, FakeAsr, FakeTts, settings

START = datetime(2026, 6, 1, 5, 0, tzinfo=UTC).timestamp()
AUDIO = np.ones(4000, np.int16)
"""The stop word's audio (the stop listener hands it over with the phrase it read)."""


class Lines:
    def __init__(self):
        self.lines: list[dict] = []

    def write(self, text):
        self.lines += [json.loads(line) for line in text.splitlines() if line.strip()]

    def flush(self):
        pass


def ringing_supervisor(command: str, seconds: float):
    """A supervisor around a fake-engine hub in which ``command`` (a timer or an alarm) was
    set and rings after ``seconds``; its speaker records what it is asked to say."""
    from hub.core.hub import Hub

    base = settings(timeouts_s=ROOMY_TIMEOUTS)
    cfg = dataclasses.replace(
        base,
        home=dataclasses.replace(base.home, time_zone="Europe/London"),
        alarms=dataclasses.replace(base.alarms, clock_check="off"),
    )
    clock = Clock(now=1000.0, wall=START)
    hub = Hub(
        cfg,
        factories={"asr": lambda h: FakeAsr("x"), "tts": lambda h: FakeTts()},
        store=None,
        probe=FixedProbe(),
        clock=clock,
        wall=clock.wall,
    )
    assert hub.turn_text(command)["response"]
    clock.advance(seconds)
    assert hub.events.tick() and hub.events.stop_armed  # it rings
    said: list = []
    speaker = SimpleNamespace(playing=True, cancel=lambda: True, say=said.append)
    wake = SimpleNamespace(process=lambda block: False, reset=lambda: None)
    out = Lines()
    sup = Supervisor(hub, None, speaker, wake, lambda s: None, None, out=out)
    return sup, out, said


def test_tester_stop_word_stops_an_alarm_and_its_event_says_alarm_not_timer():
    sup, out, said = ringing_supervisor("set an alarm for 7 am", 3600.0)  # 06:00Z is 7 AM BST
    sup.over.on_heard("stop", AUDIO)
    assert out.lines == [
        {"event": "stopped", "said": "stop", "playback": True, "timer": False, "alarm": True}
    ]
    assert not sup.hub.events.stop_armed and said == []  # silent: the silence is the answer
    assert sup.hub.alarms.records()[0].state == "done"


def test_stop_word_stops_a_timer_and_its_event_says_timer():
    sup, out, said = ringing_supervisor("set a timer for 30 seconds", 30.0)
    sup.over.on_heard("enough", AUDIO)
    assert out.lines[-1]["timer"] is True and out.lines[-1]["alarm"] is False
    assert not sup.hub.events.stop_armed and said == []


def test_stop_word_when_nothing_rings_only_cuts_the_answer():
    sup, out, _ = ringing_supervisor("set a timer for 30 seconds", 30.0)
    sup.hub.events.stop()
    sup.over.on_heard("stop", AUDIO)
    assert (out.lines[-1]["timer"], out.lines[-1]["alarm"], out.lines[-1]["playback"]) == (
        False,
        False,
        True,
    )
