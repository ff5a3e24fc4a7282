"""Satellites under faults: a long outage, a mislabelled stream (BC-45 f), a slow LLM, and the
local microphone in the house-wide wake claim; against fake satellites (asyncio servers)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest
from fake_satellite import CountingEndpointer, FakeSatellite, StubHub
from wyoming.audio import AudioChunk
from wyoming.ping import Ping
from wyoming.pipeline import PipelineStage, RunPipeline

from hub.config.satellites import SatelliteSettings
from hub.satellites.claims import DUPLICATE_CODE, WakeClaims
from hub.satellites.convert import PaceCheck
from hub.satellites.link import SatelliteLink
from hub.satellites.redial import Redial
from hub.satellites.turns import SatelliteTurns

from fakes import FakeAsr, FakeTts, settings


def _link(uri, turns, *, clock=None, claims=None, redial=None, area="Kitchen"):
    link = SatelliteLink(
        SatelliteSettings(uri=uri, name="sat0", area=area),
        turns,
        claims or WakeClaims(lambda: 0.0),
        clock=clock or (lambda: 0.0),
        redial=redial or Redial(rng=random.Random(1)),
    )
    turns.links = [link]
    return link


def test_redial_backs_off_when_reached_and_probes_only_while_unreachable():
    redial = Redial(cap_s=30, probe_s=2, rng=random.Random(3))
    waits = []
    for _ in range(10):  # it accepts the connection, then fails: Wyoming sessions, backed off
        redial.failed(reached=True)
        waits.append(redial.plan())
    assert all(probe is None for _, probe in waits)
    assert waits[0][0] <= 0.5 and 15 <= waits[-1][0] <= 30
    for _ in range(10):  # its port is closed: the same backoff, bare connects every 2 s
        redial.failed(reached=False)
    delay, probe = redial.plan()
    assert 15 <= delay <= 30 and probe == 2
    redial.served()
    assert redial.plan()[1] is None and redial.plan()[0] <= 0.5


def test_satellite_back_after_a_long_outage_is_found_by_a_probe(caplog):
    """Its backoff has grown to ≥ 30 minutes; the satellite's return is still served (the
    test's 20 s guard would fail without the probes)."""
    caplog.set_level(logging.INFO, "hub.satellites")

    async def main():
        turns = SatelliteTurns(StubHub(), ThreadPoolExecutor(2), CountingEndpointer)
        sat = FakeSatellite()
        uri = await sat.start()
        link = _link(uri, turns, redial=Redial(cap_s=7200, probe_s=0.05, rng=random.Random(1)))
        stop = asyncio.Event()
        task = asyncio.create_task(link.run(stop))
        await sat.wait_for(lambda: link.sessions == 1)
        await sat.stop()
        await sat.wait_for(lambda: link.live is None and link.redial.unreachable)
        link.redial.attempt = 20  # an outage long enough for the backoff to reach its cap
        await sat.wait_for(lambda: link.redial.attempt > 20)  # a full attempt failed meanwhile
        assert link.redial.plan()[0] >= 1800
        await sat.start(sat.port)
        await sat.wait_for(lambda: link.sessions == 2 and "run-satellite" in sat.types())
        await asyncio.sleep(0.3)  # a second session would have been made by now
        stop.set()
        await task
        return link

    link = asyncio.run(main())
    assert link.sessions == 2
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    back = [r.getMessage() for r in caplog.records if "back after" in r.getMessage()]
    assert len(back) == 1


def test_bc45_f_pace_check_finds_a_whole_multiple_of_real_time():
    for channels_sent, expected in ((2, 2), (1, 0), (3, 3)):
        now = [0.0]
        pace = PaceCheck(lambda now=now: now[0])
        while not pace.decided:
            pace.add(2048 * channels_sent, 16000, 2, 1)  # 1024 frames of `channels_sent`
            now[0] += 1024 / 16000
        assert pace.mislabelled == expected
    now = [0.0]
    pace = PaceCheck(lambda: now[0])
    while not pace.decided:  # 1.5 times: a burst, not a channel count: left alone
        pace.add(3072, 16000, 2, 1)
        now[0] += 1024 / 16000
    assert pace.mislabelled == 0


def _stereo_stream(clock, labelled_channels: int, seconds: float = 3.0):
    """A satellite streaming 2-channel 16 kHz speech-like audio at real speed (the fake clock
    moves by each chunk's true duration), labelled with ``labelled_channels``."""

    async def run(handler):
        await handler.write_event(
            RunPipeline(start_stage=PipelineStage.ASR, end_stage=PipelineStage.TTS).event()
        )
        frames = 1024
        t = np.arange(int(16000 * seconds)) / 16000
        mono = (0.4 * np.sin(2 * np.pi * 300 * t) * 32767).astype("<i2")
        data = np.repeat(mono[:, None], 2, axis=1).ravel().tobytes()
        for i in range(0, len(data), frames * 4):
            clock.now += frames / 16000
            chunk = AudioChunk(
                rate=16000, width=2, channels=labelled_channels, audio=data[i : i + frames * 4]
            )
            await handler.write_event(chunk.event())
            await asyncio.sleep(0.002)  # let the hub read it at "its" time

    return run


def _serve_one(on_run_of, caplog):
    from fakes import Clock

    caplog.set_level(logging.INFO, "hub.satellites")

    async def main():
        clock = Clock(0.0)
        hub = StubHub()
        turns = SatelliteTurns(hub, ThreadPoolExecutor(2), lambda: CountingEndpointer(4000))
        sat = FakeSatellite(on_run=on_run_of(clock))
        link = _link(await sat.start(), turns, clock=clock)
        stop = asyncio.Event()
        task = asyncio.create_task(link.run(stop))
        await sat.wait_for(lambda: "transcript" in sat.types())
        stop.set()
        await task
        return hub, sat

    return asyncio.run(main())


def test_bc45_f_two_channels_labelled_mono_is_noticed_and_serves_no_turn(caplog):
    hub, sat = _serve_one(lambda clock: _stereo_stream(clock, 1), caplog)
    assert hub.calls == []  # that stream is not used for a turn
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    noticed = [w for w in warnings if "pace" in w]
    assert len(noticed) == 1, warnings
    assert "sat0" in noticed[0] and "--mic-channel-index" in noticed[0]
    errors = [e.data["code"] for e in sat.events if e.type == "error"]
    assert errors == ["mislabelled-audio"]


def test_bc45_f_the_same_stream_labelled_right_is_a_turn(caplog):
    hub, sat = _serve_one(lambda clock: _stereo_stream(clock, 2), caplog)
    assert len(hub.calls) == 1
    assert not [r for r in caplog.records if "pace" in r.getMessage()]


class _SlowLlm:
    """An LLM engine whose answer takes as long as the test wants (a 12 s call on a Pi)."""

    name = "slow-llm"

    def __init__(self):
        self.entered, self.gate = threading.Event(), threading.Event()

    def classify(self, text, cancel=None, strict=False):
        return '{"intent": "answer", "slots": {}, "confidence": 0.9}'

    def answer(self, question, cancel=None):
        self.entered.set()
        self.gate.wait(60)
        yield "Blue light scatters more."


def test_pings_answered_during_a_slow_llm_call():
    from hub.core.hub import Hub
    from hub.resilience.load import FixedProbe

    llm = _SlowLlm()
    base = settings(llm=True, deadline_s=120.0)
    timeouts = {**base.resilience.timeouts_s, "llm_intent": 60.0, "llm_answer": 60.0}
    slow = dataclasses.replace(
        base, resilience=dataclasses.replace(base.resilience, timeouts_s=timeouts)
    )
    asr, tts = FakeAsr("why is the sky blue"), FakeTts()
    factories = {"asr": lambda h: asr, "tts": lambda h: tts, "llm": lambda h: llm}
    hub = Hub(slow, entry="run", speak=True, factories=factories, probe=FixedProbe())

    async def stream(handler):
        await handler.write_event(
            RunPipeline(start_stage=PipelineStage.ASR, end_stage=PipelineStage.TTS).event()
        )
        await handler.write_event(
            AudioChunk(rate=16000, width=2, channels=1, audio=bytes(16000)).event()
        )

    async def main():
        turns = SatelliteTurns(hub, ThreadPoolExecutor(3), lambda: CountingEndpointer(4000))
        sat = FakeSatellite(on_run=stream)
        link = _link(await sat.start(), turns, clock=hub.clock)
        stop = asyncio.Event()
        task = asyncio.create_task(link.run(stop))
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, llm.entered.wait, 30)
        pongs = []
        for i in range(3):  # the satellite pings while the LLM is busy
            await sat.handler.write_event(Ping(text=f"p{i}").event())
            await sat.wait_for(lambda i=i: f"p{i}" in [e.data.get("text") for e in sat.events])
            pongs.append("audio-start" not in sat.types())
        llm.gate.set()
        await sat.wait_for(lambda: "transcript" in sat.types(), 60)
        stop.set()
        await task
        return pongs, sat

    pongs, sat = asyncio.run(main())
    assert pongs == [True, True, True]  # all three answered before the answer began
    assert "audio-start" in sat.types()


def test_local_microphone_and_satellites_share_the_wake_claim():
    """A wake heard by the local microphone and a satellite gives one turn."""
    from hub.service.supervisor import Supervisor

    claims = WakeClaims(lambda: 0.0, 0.5)
    wake = SimpleNamespace(process=lambda block: True, reset=lambda: None)
    speaker = SimpleNamespace(playing=False, cancel=lambda: False)
    gate = SimpleNamespace(heard=lambda block, at: None, is_echo=lambda: False)
    hub = SimpleNamespace(settings=settings(), on_wake=lambda: None)
    opened = []
    sup = Supervisor(hub, None, speaker, wake, lambda t: opened.append(t) or "endpointer", gate)
    sup.claim = lambda at: claims.claim("local microphone", at)
    block = np.zeros(1280, np.int16)

    assert claims.claim("sat0", 10.0)  # the satellite heard it first
    assert sup._step(10.2, block, None) is None and opened == []  # local: duplicate, no turn
    assert sup._step(20.0, block, None) == "endpointer"  # later, the local mic wins...
    assert not claims.claim("sat0", 20.1)  # ...and the satellite is the duplicate

    async def main():  # a real link told so, the way the satellite hears it
        turns = SatelliteTurns(StubHub(), ThreadPoolExecutor(2), CountingEndpointer)

        async def woke(handler):
            await handler.write_event(
                RunPipeline(start_stage=PipelineStage.ASR, end_stage=PipelineStage.TTS).event()
            )

        sat = FakeSatellite(on_run=woke)
        link = _link(await sat.start(), turns, claims=claims, clock=lambda: 20.2)
        stop = asyncio.Event()
        task = asyncio.create_task(link.run(stop))
        await sat.wait_for(lambda: "error" in sat.types())
        stop.set()
        await task
        return turns, sat

    turns, sat = asyncio.run(main())
    assert [e.data["code"] for e in sat.events if e.type == "error"] == [DUPLICATE_CODE]
    assert turns.turns == 0


@pytest.mark.models
def test_satellite_endpointer_has_the_local_microphones_final_rule():
    """Issue 21: a satellite's utterance ends by the same ``[asr]`` rules as the local
    microphone's, the recognizer's final-state check included (``final_silence_ms``)."""
    from hub.satellites.serve import endpointer_factory

    from live_audio import silence, synth

    asked = []
    engine = SimpleNamespace(complete=lambda audio: asked.append(len(audio)) or True)
    engines = SimpleNamespace(loaded=lambda name: True, asr=lambda: engine)
    base = settings()
    audio = np.concatenate([synth("turn on the lights"), silence(1.0)])
    reasons, checks = {}, {}
    for final_ms in (300, 0):
        asked.clear()
        asr = dataclasses.replace(base.asr, final_silence_ms=final_ms)
        hub = SimpleNamespace(settings=dataclasses.replace(base, asr=asr), engines=engines)
        endpointer = endpointer_factory(hub)()
        for i in range(0, len(audio), 1024):
            if endpointer.push(audio[i : i + 1024]):
                break
        reasons[final_ms] = endpointer.reason
        checks[final_ms] = list(asked)
    assert reasons == {300: "final", 0: "silence"}
    # asked in the pause (again after a pause inside the speech: the early check), never off
    assert checks[300] and checks[0] == []
