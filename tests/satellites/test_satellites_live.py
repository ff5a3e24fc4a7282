"""The hub serving real ``wyoming-satellite`` 1.0.0 processes (``scripts/wyoming-satellite.sh``).

Each satellite runs with ``--mic-command`` playing Piper's "turn on the lights" at real speed
(22050 Hz: the hub converts it), ``--snd-command`` appending what it is sent to a file, and
``--wake-uri`` a wake service that fires on the mic's tone (so it streams after a detection,
``run-pipeline`` from the ``asr`` stage).
"""

from __future__ import annotations

import logging
import time

import pytest
from real_satellite import AREAS, VENV, RealSatellite, wait

from hub.core.hub import Hub
from hub.settings import settings_from_dict

from wyoming_support import say

pytestmark = [pytest.mark.live, pytest.mark.models]


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    import wave

    from hub.satellites.serve import start_satellites

    if not (VENV / "bin" / "python").exists():
        pytest.fail(f"no wyoming-satellite at {VENV}: run scripts/wyoming-satellite.sh")
    tmp = tmp_path_factory.mktemp("sats")
    with wave.open(str(say("turn on the lights", tmp / "lights.wav", rate16k=False))) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (22050, 1, 2)
        pcm = w.readframes(w.getnframes())
    raw = tmp / "lights.raw"
    raw.write_bytes(pcm + bytes(2 * 22050))
    sats = [RealSatellite(tmp, i, raw) for i in range(3)]
    settings = settings_from_dict(
        {
            "home": {
                "areas": [{"name": a} for a in AREAS],
                "entities": [
                    {"name": f"{a} Light", "domain": "light", "area": a, "state": "off"}
                    for a in AREAS
                ],
            },
            "llm": {"intents_on": [], "answers_on": []},
            "satellites": [
                {"uri": f"tcp://127.0.0.1:{s.port}", "name": f"sat{s.i}", "area": AREAS[s.i]}
                for s in sats
            ],
        }
    )
    hub = Hub(settings, entry="run", speak=True)
    hub.engines.warm(["asr", "rules", "tts", "devices"])
    turns, stop = start_satellites(hub)
    wait(lambda: all(x.sessions >= 1 for x in turns.links), 60, "three sessions")
    yield sats, turns
    stop()
    for s in sats:
        s.stop()


def settled(path, quiet_s: float = 1.5, timeout: float = 30.0) -> None:
    """Wait until ``path`` has not grown for ``quiet_s`` seconds (an answer still streaming
    to the speaker file would otherwise count against the next satellite's turn)."""
    end, size, since = time.monotonic() + timeout, -1, time.monotonic()
    while time.monotonic() < end:
        now = path.stat().st_size
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path.name} kept growing for {timeout} s")


def test_each_satellite_acts_in_its_own_area_and_hears_its_answer(rig):
    sats, turns = rig
    for i, sat in enumerate(sats):
        before = turns.turns
        sizes = [s.snd.stat().st_size for s in sats]
        sat.fire()
        wait(lambda before=before: turns.turns > before, 90, f"the turn of sat{i}")
        trace = turns.traces[-1]
        assert trace["satellite"] == f"sat{i}"
        assert trace["acted_on"] == [f"{AREAS[i]} Light"], trace
        wait(
            lambda sat=sat, size=sizes[i]: sat.snd.stat().st_size > size + 10_000,
            30,
            "the answer audio",
        )
        settled(sat.snd)  # the whole answer is written before the next turn's sizes
        assert [s.snd.stat().st_size for j, s in enumerate(sats) if j != i] == [
            x for j, x in enumerate(sizes) if j != i
        ]  # nobody else spoke


def test_same_wake_on_two_satellites_is_one_turn(rig):
    sats, turns = rig
    time.sleep(2.0)  # after the previous test's turns: outside the duplicate window
    before, dups = turns.turns, turns.duplicates
    sats[0].fire()
    sats[1].fire()  # the mics poll their trigger every 46 ms: wakes within 100 ms
    wait(lambda: turns.duplicates > dups and turns.turns > before, 90, "turn and duplicate")
    time.sleep(3.0)  # a second turn would have started by now
    assert turns.turns == before + 1
    assert turns.duplicates == dups + 1


def test_killed_satellite_comes_back_with_one_session(rig, caplog):
    sats, turns = rig
    caplog.set_level(logging.INFO, "hub.satellites")
    link = turns.links[2]
    sessions = link.sessions
    sats[2].proc.kill()
    sats[2].proc.wait(10)
    wait(lambda: link.live is None, 30, "the drop to be seen")
    started = time.monotonic()
    sats[2].start()
    wait(lambda: link.sessions == sessions + 1 and link.live is not None, 30, "reconnect")
    print(f"satellite back after {time.monotonic() - started:.2f} s")
    time.sleep(1.0)
    assert link.sessions == sessions + 1
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    before = turns.turns
    sats[2].fire()  # the new session serves turns
    wait(lambda: turns.turns > before, 90, "a turn on the new session")
    assert turns.traces[-1]["acted_on"] == ["Bedroom Light"]


def test_satellite_unreachable_for_60_s_comes_back_with_one_session(rig, caplog):
    """Its port closed for 60 s (the backoff reaches its 30 s cap): the hub probes every 2 s,
    so the return is served at once; the time it took is printed (BENCHMARKS.md)."""
    sats, turns = rig
    caplog.set_level(logging.INFO, "hub.satellites")
    link = turns.links[1]
    sessions = link.sessions
    sats[1].proc.kill()
    sats[1].proc.wait(10)
    wait(lambda: link.live is None, 30, "the drop to be seen")
    time.sleep(60.0)
    assert link.redial.plan()[1] is not None  # long backoff: it is probing
    started = time.monotonic()
    sats[1].start()
    wait(lambda: link.sessions == sessions + 1 and link.live is not None, 60, "reconnect")
    print(f"satellite back {time.monotonic() - started:.2f} s after a 60 s outage")
    time.sleep(2.0)
    assert link.sessions == sessions + 1
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    before = turns.turns
    sats[1].fire()
    wait(lambda: turns.turns > before, 90, "a turn after the outage")
    assert turns.traces[-1]["acted_on"] == ["Office Light"]
