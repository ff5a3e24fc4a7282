"""A fake Wyoming satellite (a TCP server, as ``wyoming-satellite`` is) and a stub hub."""

from __future__ import annotations

import asyncio
import threading

from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, Satellite
from wyoming.server import AsyncEventHandler, AsyncServer

from hub.audio.pcm import AudioChunk as HubChunk
from hub.core.conversation import Conversations
from hub.core.hub import TurnResult

INFO = Info(
    satellite=Satellite(
        name="fake",
        attribution=Attribution(name="", url=""),
        installed=True,
        description="fake",
        version="0",
    )
)


class FakeSatellite:
    """Records what the hub sends; ``on_run`` is awaited with the handler at ``run-satellite``."""

    def __init__(self, on_run=None):
        self.events: list[Event] = []
        self.on_run = on_run
        self.handler = None
        self.connections = 0
        self.server = None
        self.changed = asyncio.Event()

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    async def start(self, port: int = 0) -> str:
        self.server = AsyncServer.from_uri(f"tcp://127.0.0.1:{port}")
        sat = self

        class Handler(AsyncEventHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                sat.handler, sat.connections = self, sat.connections + 1

            async def handle_event(self, event: Event) -> bool:
                if Describe.is_type(event.type):
                    await self.write_event(INFO.event())
                    return True
                sat.events.append(event)
                sat.changed.set()
                if event.type == "run-satellite" and sat.on_run is not None:
                    asyncio.create_task(sat.on_run(self))
                return True

        await self.server.start(Handler)
        port = self.server._server.sockets[0].getsockname()[1]
        self.port = port
        return f"tcp://127.0.0.1:{port}"

    async def stop(self) -> None:
        """Close the server and reset the connection (the satellite is gone)."""
        self.server._server.close()
        if self.handler is not None:
            self.handler.writer.transport.abort()
        await self.server._server.wait_closed()

    async def wait_for(self, predicate, timeout: float = 20.0) -> None:
        async def loop():
            while not predicate():
                self.changed.clear()
                await asyncio.wait({asyncio.ensure_future(self.changed.wait())}, timeout=0.02)

        await asyncio.wait_for(loop(), timeout)


class CountingEndpointer:
    """Ends the utterance after ``samples`` samples (no VAD: the test decides; every sample
    counts as speech), with the fields a ``capture_dropped`` line reads."""

    def __init__(self, samples: int = 8000):
        self.limit, self.blocks = samples, []
        self.reason, self.ignored = None, []

    @property
    def speech_s(self) -> float:
        return sum(len(b) for b in self.blocks) / 16000

    def push(self, block) -> bool:
        self.blocks.append(block)
        if sum(len(b) for b in self.blocks) >= self.limit:
            self.reason = "silence"
        return self.reason is not None

    def audio(self):
        import numpy as np

        return np.concatenate(self.blocks or [np.zeros(0)]).astype(np.int16)


class StubEvents:
    def __init__(self):
        self._finished = []

    def on_timer_finished(self, cb):
        self._finished.append(cb)
        return cb


class StubTts:
    rate = 22050

    def synthesize(self, text, cancel=None):
        yield HubChunk(pcm=b"\x02\x00" * 4000, rate=22050, text=text)


class StubEngines:
    def tts(self):
        return StubTts()


class StubHub:
    """``answer_audio`` records the conversation's area and plays one chunk; ``gate`` (a
    threading.Event) holds the turn until set."""

    def __init__(self, gate: threading.Event | None = None):
        self.conversations = Conversations()
        self.calls: list[tuple[str | None, int]] = []
        self.gate = gate
        self.events = StubEvents()
        self.engines = StubEngines()
        self.outcomes = ()
        self.clock = __import__("time").monotonic
        self.wakes = 0

    def on_wake(self):
        self.wakes += 1

    def conversation(self, cid, *, area=None):
        return self.conversations.get(cid, area=area)

    def answer_audio(self, samples, *, conversation, started=None, **_):
        self.calls.append((conversation.area, len(samples)))
        if self.gate is not None:
            self.gate.wait(30)
        pcm = b"\x01\x00" * 3000
        conversation.play(HubChunk(pcm=pcm, rate=22050, text="Done."))
        trace = {
            "transcript": f"turn on the lights {conversation.area}",
            "intent": "HassTurnOn",
            "response": "Done.",
        }
        return TurnResult(trace, pcm, 22050, self.outcomes)
