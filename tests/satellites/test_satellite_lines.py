"""Issue 18: a satellite's turn prints its trace line as the local microphone's does, and every
satellite capture that ends without a turn prints one ``capture_dropped`` line saying why;
against fake satellites (asyncio Wyoming servers) and a stub hub."""

from __future__ import annotations

import asyncio
import io
import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
from fake_satellite import CountingEndpointer, FakeSatellite, StubHub
from wyoming.audio import AudioChunk, AudioStop
from wyoming.pipeline import PipelineStage, RunPipeline

from hub.config.satellites import SatelliteSettings
from hub.satellites.claims import WakeClaims
from hub.satellites.link import SatelliteLink
from hub.satellites.serve import build
from hub.satellites.turns import SatelliteTurns
from hub.trace import DROP_REASONS, LineWriter, capture_line


class Lines:
    """The trace output of a test: every line written, as dicts (thread-safe)."""

    def __init__(self):
        self.lines: list[dict] = []
        self._lock = threading.Lock()

    def __call__(self, line: dict) -> None:
        json.dumps(line)  # what the real writer does with it: it must be JSON
        with self._lock:
            self.lines.append(line)

    def turns(self) -> list[dict]:
        return [x for x in self.lines if "event" not in x]

    def dropped(self) -> list[dict]:
        return [x for x in self.lines if x.get("event") == "capture_dropped"]


class Endpointers:
    """``make()`` for the links: :class:`CountingEndpointer` s of ``samples``, kept in
    :attr:`made` so a test sees the capture's audio arrive."""

    def __init__(self, samples: int = 8000):
        self.samples, self.made = samples, []

    def __call__(self):
        self.made.append(CountingEndpointer(self.samples))
        return self.made[-1]

    def heard(self) -> bool:
        return bool(self.made and self.made[-1].blocks)


def run_pipeline(stage=PipelineStage.ASR):
    return RunPipeline(start_stage=stage, end_stage=PipelineStage.TTS).event()


async def speak(handler, seconds: float, stop: bool = False, stage=PipelineStage.ASR):
    """``run-pipeline`` then ``seconds`` of a 16 kHz mono tone at real speed (the pace check
    takes it as labelled), then ``audio-stop`` if told."""
    await handler.write_event(run_pipeline(stage))
    t = np.arange(int(16000 * seconds)) / 16000
    pcm = (0.3 * np.sin(2 * np.pi * 300 * t) * 32767).astype("<i2").tobytes()
    for i in range(0, len(pcm), 2048):
        await handler.write_event(
            AudioChunk(rate=16000, width=2, channels=1, audio=pcm[i : i + 2048]).event()
        )
        await asyncio.sleep(1024 / 16000)
    if stop:
        await handler.write_event(AudioStop().event())


def make_turns(hub, lines, endpointers, workers: int = 4):
    return SatelliteTurns(hub, ThreadPoolExecutor(workers), endpointers, lines=lines)


async def serve(turns, sats, areas, claims=None):
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
    for sat in sats:
        await sat.wait_for(lambda sat=sat: "run-satellite" in sat.types())
    return stop, tasks


async def ended(stop, tasks):
    stop.set()
    await asyncio.gather(*tasks)


def test_issue18_a_satellite_turn_prints_the_local_trace_line_with_its_fields():
    lines = Lines()

    async def main():
        turns = make_turns(StubHub(), lines, Endpointers(4000))
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        await speak(sat.handler, 0.5)
        await sat.wait_for(lambda: "transcript" in sat.types())
        await ended(stop, tasks)
        return turns

    turns = asyncio.run(main())
    (line,) = lines.lines
    assert line == {
        "transcript": "turn on the lights Kitchen",
        "intent": "HassTurnOn",
        "response": "Done.",
        "satellite": "sat0",
        "area": "Kitchen",
        "endpoint": "silence",
        "capture": "wake",
    }
    assert turns.turns == 1 and turns.traces[-1]["endpointed_at"] > 0  # kept in memory too


def test_issue18_duplicate_wake_is_one_turn_and_one_duplicate_line():
    lines = Lines()

    async def main():
        turns = make_turns(StubHub(), lines, Endpointers(4000))
        sats = [FakeSatellite(), FakeSatellite()]
        stop, tasks = await serve(turns, sats, ["Kitchen", "Office"])
        await asyncio.gather(*(speak(s.handler, 0.5) for s in sats))
        for s in sats:
            await s.wait_for(lambda s=s: "transcript" in s.types())
        await ended(stop, tasks)
        return sats

    sats = asyncio.run(main())
    loser = next(i for i, s in enumerate(sats) if "error" in s.types())
    assert [x["satellite"] for x in lines.turns()] == [f"sat{1 - loser}"]
    (dropped,) = lines.dropped()
    assert dropped == {
        "event": "capture_dropped",
        "reason": "duplicate",
        "capture": "wake",
        "satellite": f"sat{loser}",
        "area": ["Kitchen", "Office"][loser],
    }


def test_issue18_no_speech_before_audio_stop_is_dropped_and_the_satellite_told():
    lines = Lines()

    async def main():
        hub = StubHub()
        turns = make_turns(hub, lines, Endpointers(10**6))
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        await sat.handler.write_event(run_pipeline())
        await sat.handler.write_event(AudioStop().event())  # nothing said
        await sat.wait_for(lambda: "transcript" in sat.types())
        await ended(stop, tasks)
        return hub, sat

    hub, sat = asyncio.run(main())
    assert hub.calls == []  # no turn
    (dropped,) = lines.dropped()
    assert dropped["reason"] == "no_speech" and dropped["endpoint"] == "audio-stop"
    assert dropped["satellite"] == "sat0" and dropped["audio_s"] == 0.0
    assert [e.data["text"] for e in sat.events if e.type == "transcript"] == [""]


def test_issue18_no_speech_before_the_wake_speech_timeout_is_dropped():
    """The real endpointer's start timeout (``[wake] speech_timeout_s``) on silence."""
    from hub.audio.endpoint import Endpointer

    lines = Lines()
    made = []

    def make():
        made.append(Endpointer(500, 15.0, start_timeout_s=0.3, vad=lambda f: False))
        return made[-1]

    async def main():
        hub = StubHub()
        turns = SatelliteTurns(hub, ThreadPoolExecutor(2), make, lines=lines)
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        await speak(sat.handler, 0.6)
        await sat.wait_for(lambda: "transcript" in sat.types())
        await ended(stop, tasks)
        return hub

    hub = asyncio.run(main())
    assert hub.calls == []
    (dropped,) = lines.dropped()
    assert (dropped["reason"], dropped["endpoint"], dropped["speech_s"]) == (
        "no_speech",
        "timeout",
        0.0,
    )


def test_issue18_connection_lost_during_the_capture_is_dropped_disconnected():
    lines = Lines()
    endpointers = Endpointers(10**6)  # never ends by itself

    async def main():
        turns = make_turns(StubHub(), lines, endpointers)
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        speaking = asyncio.create_task(speak(sat.handler, 3.0))
        await sat.wait_for(endpointers.heard)
        sat.handler.writer.transport.abort()  # the satellite is gone mid-command
        await sat.wait_for(lambda: bool(lines.dropped()))
        speaking.cancel()
        await asyncio.gather(speaking, return_exceptions=True)
        await ended(stop, tasks)

    asyncio.run(main())
    (dropped,) = lines.dropped()
    assert dropped["reason"] == "disconnected" and dropped["satellite"] == "sat0"
    assert dropped["audio_s"] > 0 and dropped["endpoint"] is None  # cut, not endpointed
    assert lines.turns() == []


def test_issue18_hub_stopping_during_the_capture_is_dropped_stopping():
    lines = Lines()
    endpointers = Endpointers(10**6)

    async def main():
        turns = make_turns(StubHub(), lines, endpointers)
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        speaking = asyncio.create_task(speak(sat.handler, 3.0))
        await sat.wait_for(endpointers.heard)
        await ended(stop, tasks)
        speaking.cancel()
        await asyncio.gather(speaking, return_exceptions=True)

    asyncio.run(main())
    assert [x["reason"] for x in lines.dropped()] == ["stopping"]


def test_issue18_a_new_run_pipeline_during_the_capture_drops_it_wake_word_or_restarted():
    lines = Lines()
    endpointers = Endpointers(10**6)

    async def main():
        turns = make_turns(StubHub(), lines, endpointers)
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        await speak(sat.handler, 0.2)  # a capture open, not ended
        await speak(sat.handler, 0.2)  # the satellite's wake word again: a new capture
        await sat.handler.write_event(run_pipeline(PipelineStage.WAKE))  # it starts over
        await sat.wait_for(lambda: len(lines.dropped()) == 2)
        await ended(stop, tasks)

    asyncio.run(main())
    assert [x["reason"] for x in lines.dropped()] == ["wake_word", "restarted"]
    assert all(x["audio_s"] > 0 for x in lines.dropped())


def test_issue18_bc45_f_mislabelled_stream_is_dropped_mislabelled():
    from fakes import Clock

    lines = Lines()

    async def main():
        clock = Clock(0.0)
        turns = make_turns(StubHub(), lines, Endpointers(10**6))
        sat = FakeSatellite()
        uri = await sat.start()
        link = SatelliteLink(
            SatelliteSettings(uri=uri, name="sat0", area="Kitchen"),
            turns,
            WakeClaims(lambda: 0.0),
            clock=clock,
            rng=random.Random(1),
        )
        turns.links = [link]
        stop = asyncio.Event()
        task = asyncio.create_task(link.run(stop))
        await sat.wait_for(lambda: "run-satellite" in sat.types())
        await sat.handler.write_event(run_pipeline())
        stereo = bytes(1024 * 4)  # 1024 frames of 2 channels, labelled as one
        while "error" not in sat.types():
            clock.now += 1024 / 16000
            chunk = AudioChunk(rate=16000, width=2, channels=1, audio=stereo)
            await sat.handler.write_event(chunk.event())
            await asyncio.sleep(0.002)
        await sat.handler.write_event(run_pipeline())  # its next wake: refused at once
        await sat.wait_for(lambda: sat.types().count("error") == 2)
        await ended(stop, [task])

    asyncio.run(main())
    assert [x["reason"] for x in lines.dropped()] == ["mislabelled", "mislabelled"]
    first, second = lines.dropped()
    assert first["audio_s"] > 0 and "audio_s" not in second  # the second never listened


class _FailingHub(StubHub):
    def answer_audio(self, samples, *, conversation, started=None, **_):
        raise RuntimeError("broken graph")


def test_issue18_a_satellite_turn_that_raises_is_dropped_turn_failed():
    lines = Lines()

    async def main():
        turns = make_turns(_FailingHub(), lines, Endpointers(4000))
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        await speak(sat.handler, 0.5)
        await sat.wait_for(lambda: "transcript" in sat.types())
        await speak(sat.handler, 0.5)  # the satellite is served on
        await sat.wait_for(lambda: sat.types().count("transcript") == 2)
        await ended(stop, tasks)
        return sat

    sat = asyncio.run(main())
    assert [x["reason"] for x in lines.dropped()] == ["turn_failed"] * 2
    assert lines.dropped()[0]["error"] == "RuntimeError: broken graph"
    assert lines.dropped()[0]["endpoint"] == "silence"
    assert [e.data["text"] for e in sat.events if e.type == "transcript"] == ["", ""]


def test_issue18_a_turn_the_satellite_left_during_still_prints_its_line():
    """The reset cancels the answer's writes, not the turn (it may act): its line comes."""
    gate = threading.Event()
    lines = Lines()

    async def main():
        hub = StubHub(gate)
        turns = make_turns(hub, lines, Endpointers(4000))
        sat = FakeSatellite()
        stop, tasks = await serve(turns, [sat], ["Kitchen"])
        await speak(sat.handler, 0.5)
        await sat.wait_for(lambda: len(hub.calls) == 1)
        sat.handler.writer.transport.abort()
        while turns.links[0].live is not None:
            await asyncio.sleep(0.01)
        gate.set()  # the turn ends after its satellite left
        await sat.wait_for(lambda: bool(lines.lines))
        await ended(stop, tasks)

    asyncio.run(main())
    assert [x.get("satellite") for x in lines.turns()] == ["sat0"]
    assert lines.dropped() == []


def test_issue18_a_turn_cancelled_before_it_started_is_dropped_with_why_its_link_ended():
    gate = threading.Event()
    lines = Lines()
    executor = ThreadPoolExecutor(1)
    executor.submit(gate.wait, 30)  # the only worker is busy: the turn waits its turn
    hub = StubHub()
    turns = SatelliteTurns(hub, executor, Endpointers(), lines=lines)
    sat = SatelliteSettings(uri="tcp://127.0.0.1:1", name="sat0", area="Kitchen")
    link = SimpleNamespace(sat=sat, conversation=turns.conversation_of(sat), ended_by="stopping")
    wire = SimpleNamespace(send=None)

    async def main():
        task = asyncio.create_task(
            turns.answer(link, np.ones(8000, np.int16), wire, 0.0, ("final", 0.0))
        )
        await asyncio.sleep(0.05)
        task.cancel()  # its connection ended: the hub stops
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())
    gate.set()
    executor.shutdown(wait=True)
    assert hub.calls == []
    assert lines.dropped() == [
        {
            "event": "capture_dropped",
            "reason": "stopping",
            "capture": "wake",
            "satellite": "sat0",
            "area": "Kitchen",
            "endpoint": "final",
            "audio_s": 0.5,
        }
    ]


def test_issue18_satellite_lines_go_to_the_writer_given_else_stdout(capsys):
    host = SimpleNamespace(settings=SimpleNamespace(satellites=()), clock=lambda: 0.0)
    writer = LineWriter(io.StringIO())
    assert build(host, lines=writer).lines is writer  # hub run: the supervisor's writer
    turns = build(host)  # hub serve: stdout
    turns.lines(capture_line("duplicate", satellite="sat0"))
    out = capsys.readouterr().out
    assert json.loads(out) == {
        "event": "capture_dropped",
        "reason": "duplicate",
        "capture": "wake",
        "satellite": "sat0",
    }


def test_issue18_every_drop_reason_is_documented_in_the_readme():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    trace = readme[readme.index("## The trace") : readme.index("## Fallback levels")]
    assert [r for r in DROP_REASONS if f"`{r}`" not in trace] == []


class _Chunky:
    """A stream that writes each string in small pieces, yielding between them (as a
    pipe's buffered writer may): lines from two threads would interleave without a lock."""

    def __init__(self):
        self.text = ""

    def write(self, text: str) -> None:
        for i in range(0, len(text), 7):
            self.text += text[i : i + 7]
            threading.Event().wait(0.0001)

    def flush(self) -> None:
        pass


def test_issue18_lines_from_many_threads_never_interleave():
    out = _Chunky()
    writer = LineWriter(out)

    def write(k: int) -> None:
        for i in range(20):
            writer({"thread": k, "i": i, "pad": "x" * 50})

    threads = [threading.Thread(target=write, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    lines = [json.loads(x) for x in out.text.splitlines()]
    assert sorted((x["thread"], x["i"]) for x in lines) == [
        (k, i) for k in range(4) for i in range(20)
    ]
