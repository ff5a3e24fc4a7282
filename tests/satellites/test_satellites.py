"""Satellites as a role of the hub, against fake satellites (asyncio Wyoming servers)."""

from __future__ import annotations

import asyncio
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fake_satellite import CountingEndpointer, FakeSatellite, StubHub
from wyoming.audio import AudioChunk
from wyoming.ping import Ping
from wyoming.pipeline import PipelineStage, RunPipeline

from hub.config.satellites import SatelliteSettings
from hub.errors import ConfigError
from hub.satellites.claims import DUPLICATE_CODE, WakeClaims
from hub.satellites.link import SatelliteLink
from hub.satellites.turns import SatelliteTurns
from hub.settings import settings_from_dict
from hub.wyoming.audio_in import ChunkConverter


def tone(rate: int, seconds: float, freq: float = 1000.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return 0.5 * np.sin(2 * np.pi * freq * t)


def encode(x: np.ndarray, width: int, channels: int) -> bytes:
    x = np.repeat(x[:, None], channels, axis=1).ravel()
    return (x * (2 ** (8 * width - 1) - 1)).astype(f"<i{width}").tobytes()


def peak_hz(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples.astype(np.float64)))
    return float(np.argmax(spectrum) * 16000 / len(samples))


def chunks(data: bytes, sizes):
    i = 0
    for size in sizes:
        if i >= len(data):
            return
        yield data[i : i + size]
        i += size
    yield data[i:]


@pytest.mark.parametrize(
    "rate,width,channels", [(16000, 2, 1), (48000, 2, 2), (22050, 2, 1), (16000, 4, 1)]
)  # BC-45 (a)-(d)
def test_bc45_each_chunk_converted_by_its_own_format(rate, width, channels):
    data = encode(tone(rate, 1.0), width, channels)
    conv = ChunkConverter()
    out = b"".join(
        conv.convert(c, rate, width, channels) for c in chunks(data, [2047, 2049] * 10_000)
    )  # (g) odd byte counts
    out += conv.flush()
    samples = np.frombuffer(out, np.int16)
    assert abs(len(samples) - 16000) <= 16  # within 1 ms of 1 s: nothing dropped mid-stream
    assert abs(peak_hz(samples) - 1000) <= 2
    assert 0.4 * 32767 < np.abs(samples).max() <= 32767  # scaled, not raw 32-bit


def test_bc45_format_switch_mid_stream():  # (e): 16000/1 then 48000/2 after a reconnect
    conv = ChunkConverter()
    first = encode(tone(16000, 0.5), 2, 1)
    second = encode(tone(48000, 0.5), 2, 2)
    out = b"".join(conv.convert(c, 16000, 2, 1) for c in chunks(first, [2048] * 100))
    out += b"".join(conv.convert(c, 48000, 2, 2) for c in chunks(second, [2048] * 100))
    samples = np.frombuffer(out + conv.flush(), np.int16)
    assert abs(len(samples) - 16000) <= 16
    assert abs(peak_hz(samples[8000:]) - 1000) <= 4


def test_satellites_config_and_bad_area():
    home = {"areas": [{"name": "Kitchen"}], "entities": []}
    s = settings_from_dict(
        {
            "home": home,
            "satellites": [{"uri": "tcp://127.0.0.1:10700", "name": "k", "area": "Kitchen"}],
        }
    )
    assert s.satellites[0].area == "Kitchen"
    with pytest.raises(ConfigError, match=r"satellites\[0\].area"):
        settings_from_dict(
            {"home": home, "satellites": [{"uri": "tcp://h:1", "name": "k", "area": "Attic"}]}
        )
    with pytest.raises(ConfigError, match=r"satellites\[0\].uri"):
        settings_from_dict({"satellites": [{"uri": "http://h", "name": "k"}]})


def test_claims_first_detection_wins_within_window():
    now = [100.0]
    claims = WakeClaims(lambda: now[0], 0.5)
    assert claims.claim("a", 100.0)
    assert not claims.claim("b", 100.2)
    assert claims.claim("b", 100.6)


async def _stream(handler, seconds: float = 0.6):
    await handler.write_event(
        RunPipeline(start_stage=PipelineStage.ASR, end_stage=PipelineStage.TTS).event()
    )
    data = encode(tone(48000, seconds), 2, 2)
    for c in chunks(data, [4096] * 10_000):
        await handler.write_event(AudioChunk(rate=48000, width=2, channels=2, audio=c).event())


def _turns(hub, samples: int = 8000):
    return SatelliteTurns(hub, ThreadPoolExecutor(4), lambda: CountingEndpointer(samples))


async def _serve(turns, sats, areas, claims=None):
    claims = claims or WakeClaims(lambda: 0.0)  # one instant: every wake within the window
    uris = [await s.start() for s in sats]
    turns.links = [
        SatelliteLink(
            SatelliteSettings(uri=u, name=f"sat{i}", area=a), turns, claims, rng=random.Random(1)
        )
        for i, (u, a) in enumerate(zip(uris, areas, strict=True))
    ]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(x.run(stop)) for x in turns.links]
    return stop, tasks


def test_three_satellites_answer_in_their_own_area():
    async def main():
        hub = StubHub()
        turns = _turns(hub)
        sats = [FakeSatellite(on_run=_stream) for _ in range(3)]
        stop, tasks = await _serve(
            turns, sats, ["Kitchen", "Office", "Bedroom"], claims=WakeClaims(lambda: 0.0, 0.0)
        )
        for s in sats:
            await s.wait_for(lambda s=s: "transcript" in s.types())
        stop.set()
        await asyncio.gather(*tasks)
        return hub, turns, sats

    hub, turns, sats = asyncio.run(main())
    assert sorted(a for a, _ in hub.calls) == ["Bedroom", "Kitchen", "Office"]
    assert all(n >= 8000 for _, n in hub.calls)
    for sat, area in zip(sats, ["Kitchen", "Office", "Bedroom"], strict=True):
        types = sat.types()
        assert types[:2] == ["run-satellite", "ping"]
        assert types.index("audio-start") < types.index("audio-stop") < types.index("transcript")
        sizes = [len(e.payload or b"") for e in sat.events if e.type == "audio-chunk"]
        assert sizes and max(sizes) == 2048
        text = [e for e in sat.events if e.type == "transcript"][0].data["text"]
        assert text.endswith(area)  # its own answer, not another satellite's


def test_same_wake_on_two_satellites_is_one_turn():
    async def main():
        hub = StubHub()
        turns = _turns(hub)
        sats = [FakeSatellite(on_run=_stream) for _ in range(2)]
        stop, tasks = await _serve(turns, sats, ["Kitchen", "Office"])
        await asyncio.wait_for(
            asyncio.gather(*(s.wait_for(lambda s=s: "transcript" in s.types()) for s in sats)), 20
        )
        stop.set()
        await asyncio.gather(*tasks)
        return hub, sats

    hub, sats = asyncio.run(main())
    assert len(hub.calls) == 1
    assert hub.wakes == 1  # the winner's turn is readied (Hub.on_wake), the duplicate's not
    errors = [e for s in sats for e in s.events if e.type == "error"]
    assert len(errors) == 1 and errors[0].data["code"] == DUPLICATE_CODE
    loser = next(s for s in sats if "error" in s.types())
    assert "audio-start" not in loser.types()


def test_ping_answered_while_turn_runs_and_reset_cancels():
    gate = threading.Event()

    async def main():
        hub = StubHub(gate)
        turns = _turns(hub)
        sat = FakeSatellite(on_run=_stream)
        stop, tasks = await _serve(turns, [sat], ["Kitchen"])
        await sat.wait_for(lambda: len(hub.calls) == 1)
        await sat.handler.write_event(Ping(text="during").event())
        await sat.wait_for(lambda: "pong" in sat.types())  # while the turn is held
        pong_before_answer = "audio-start" not in sat.types()
        sat.on_run = None  # the next session streams nothing: any answer there is the old one
        sat.handler.writer.transport.abort()  # the socket is reset mid-turn
        link = turns.links[0]
        while link.live is not None:
            await asyncio.sleep(0.01)
        sat.events.clear()
        gate.set()  # the turn finishes after the reset
        await sat.wait_for(lambda: sat.connections >= 2 and "run-satellite" in sat.types())
        await asyncio.get_running_loop().run_in_executor(None, turns.executor.shutdown)
        await asyncio.sleep(0.1)  # the old turn's result reached the loop
        stop.set()
        await asyncio.gather(*tasks)
        return pong_before_answer, sat, link

    pong_before_answer, sat, link = asyncio.run(main())
    assert pong_before_answer
    assert "audio-start" not in sat.types()  # nothing of the cancelled answer was written
    assert link.sessions == 2


def _connected(turns):
    return all(x.live is not None and x.info is not None for x in turns.links)


def test_timer_rings_on_its_area_and_announcement_on_the_others():
    from types import SimpleNamespace

    from hub.act import Outcome
    from hub.act.common import action

    async def main():
        hub = StubHub()
        turns = _turns(hub)
        sats = [FakeSatellite() for _ in range(3)]
        stop, tasks = await _serve(turns, sats, ["Kitchen", "Office", "Bedroom"])
        while not _connected(turns):
            await asyncio.sleep(0.02)
        alert = SimpleNamespace(
            timer=SimpleNamespace(area="Office"),
            pcm=b"\x03\x00" * 2000,
            rate=22050,
            text="Your 5 minute timer is done.",
        )
        turns.ring(alert, asyncio.get_running_loop())
        await sats[1].wait_for(lambda: "audio-stop" in sats[1].types())
        rung = [("audio-stop" in s.types()) for s in sats]
        for s in sats:
            s.events.clear()
        hub.outcomes = (
            Outcome(
                "dinner is ready.",
                (action("hub", "assist_satellite", "announce", message="dinner is ready"),),
            ),
        )
        sats[0].on_run = None
        await _stream(sats[0].handler)  # the Kitchen asks for the announcement
        for s in sats:
            await s.wait_for(lambda s=s: "audio-stop" in s.types())
        stop.set()
        await asyncio.gather(*tasks)
        return rung, sats

    rung, sats = asyncio.run(main())
    assert rung == [False, True, False]  # the Office's timer rings in the Office only
    assert all("audio-stop" in s.types() for s in sats)  # the answer, and the announcement
    assert "transcript" in sats[0].types() and "transcript" not in sats[1].types()


def test_announcement_to_one_area():
    from hub.act import Outcome
    from hub.act.common import action

    async def main():
        hub = StubHub()
        hub.outcomes = (
            Outcome(
                "dinner is ready.",
                (
                    action(
                        "hub",
                        "assist_satellite",
                        "announce",
                        message="dinner is ready",
                        area="Bedroom",
                    ),
                ),
            ),
        )
        turns = _turns(hub)
        sats = [FakeSatellite(on_run=_stream), FakeSatellite(), FakeSatellite()]
        stop, tasks = await _serve(turns, sats, ["Kitchen", "Office", "Bedroom"])
        await sats[2].wait_for(lambda: "audio-stop" in sats[2].types())
        await sats[0].wait_for(lambda: "transcript" in sats[0].types())
        await asyncio.sleep(0.2)
        stop.set()
        await asyncio.gather(*tasks)
        return sats

    sats = asyncio.run(main())
    assert "audio-start" not in sats[1].types()


def test_announcement_names_its_area_and_timer_takes_the_rooms_area():
    from hub.act.common import Context
    from hub.act.speech import broadcast
    from hub.act.timing import in_area
    from hub.intents.rules import IntentMatch

    from homes import four_rooms

    ctx = Context(home=four_rooms(), timers=None, clock=lambda: 0.0)
    said = broadcast(
        ctx, IntentMatch("HassBroadcast", {"message": "dinner is ready in the kitchen"}, "")
    )
    assert said.actions[0]["data"] == {"message": "dinner is ready", "area": "Kitchen"}
    plain = broadcast(ctx, IntentMatch("HassBroadcast", {"message": "we are in town"}, ""))
    assert plain.actions[0]["data"] == {"message": "we are in town"}
    timer = in_area(IntentMatch("HassStartTimer", {"minutes": 5}, ""), "Office")
    assert timer.slots["area"] == "Office" and "area" in timer.context_slots
    named = IntentMatch("HassStartTimer", {"minutes": 5, "area": "Kitchen"}, "")
    assert in_area(named, "Office").slots["area"] == "Kitchen"


@pytest.mark.parametrize("announce", [True, False], ids=["hub serve", "hub run"])
def test_hub_serve_prints_a_finished_timers_line(announce):
    """``hub serve`` printed no ``timer_finished`` line when a satellite's timer rang (``hub
    run``'s daemon writes it there; found by the breaker): with ``announce_timers`` it writes
    one, once per ring (not for its repeats), beside ringing on the satellite."""
    from types import SimpleNamespace

    from hub.satellites.serve import serve_satellites

    written: list[dict] = []

    async def main():
        hub = StubHub()
        turns = SatelliteTurns(
            hub, ThreadPoolExecutor(4), lambda: CountingEndpointer(8000), lines=written.append
        )
        sat = FakeSatellite()
        uri = await sat.start()
        turns.links = [
            SatelliteLink(
                SatelliteSettings(uri=uri, name="sat0", area="Office"),
                turns,
                WakeClaims(lambda: 0.0),
                rng=random.Random(1),
            )
        ]
        stop = asyncio.Event()
        serving = asyncio.create_task(serve_satellites(turns, stop, announce_timers=announce))
        while not _connected(turns):
            await asyncio.sleep(0.02)
        (ring,) = hub.events._finished
        for repeat in (0, 1):
            alert = SimpleNamespace(
                timer=SimpleNamespace(area="Office"),
                pcm=b"\x03\x00" * 2000,
                rate=22050,
                text="Your 5 minute timer is done.",
                repeat=repeat,
                to_json=lambda audio: {"event": "timer_finished", "audio": audio},
            )
            ring(alert)
        await sat.wait_for(lambda: "audio-stop" in sat.types())
        stop.set()
        await serving
        return sat

    sat = asyncio.run(main())
    assert "audio-stop" in sat.types()  # it rang on the satellite either way
    assert written == ([{"event": "timer_finished", "audio": None}] if announce else [])
