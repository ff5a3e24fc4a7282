"""The turns of satellites: run on a thread pool in the satellite's conversation, answered back.

The answer streams to the satellite that asked as it is synthesized (each sentence as
``audio-start``, 2048-byte ``audio-chunk``s, ``audio-stop`` at the end), then a ``transcript``
(a 1.0 satellite goes back to its wake word on it). Timer rings go to the satellites of the
timer's area; an announcement (HassBroadcast: the ``assist_satellite.announce`` action) goes
to every other satellite, or to those of the area it names.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop

from hub.core.timers import synthesize
from hub.graph.state import EngineSet

log = logging.getLogger("hub.satellites")

CHUNK_BYTES = 2048
"""Bytes of audio per ``audio-chunk`` sent to a satellite."""


def audio_events(pcm: bytes, rate: int):
    """``audio-start``, ``audio-chunk``s of 2048 bytes, ``audio-stop`` for int16 mono ``pcm``."""
    yield AudioStart(rate=rate, width=2, channels=1).event()
    for i in range(0, len(pcm), CHUNK_BYTES):
        yield AudioChunk(rate=rate, width=2, channels=1, audio=pcm[i : i + CHUNK_BYTES]).event()
    yield AudioStop().event()


class SatelliteHost(Protocol):
    """What the satellites use of the hub that serves them (:class:`hub.core.hub.Hub`): its
    settings (``satellites``, ``asr``, ``wake``), engines, monotonic clock (seconds), timer
    events (``on_timer_finished(callback) -> callback``), a conversation per satellite, a
    turn on int16 mono 16 kHz samples, and ``on_wake()`` (returns at once: a wake word was
    heard, the turn that follows is readied while it is spoken)."""

    @property
    def settings(self) -> Any: ...
    @property
    def engines(self) -> EngineSet: ...
    @property
    def clock(self) -> Callable[[], float]: ...
    @property
    def events(self) -> Any: ...

    def conversation(
        self, conversation_id: str | None = ..., *, area: str | None = None
    ) -> Any: ...

    def answer_audio(
        self, samples: Any, *, started: float | None = None, conversation: Any = None
    ) -> Any: ...

    def on_wake(self) -> None: ...


class _Player:
    """A conversation's player that hands chunks from the turn's thread to the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue):
        self.loop, self.queue, self.used = loop, queue, False

    def enqueue(self, chunk) -> None:
        self.used = True
        self.loop.call_soon_threadsafe(self.queue.put_nowait, chunk)


class SatelliteTurns:
    """What the satellites of one hub share: the hub, a thread pool, wake and endpointing.

    Args:
        host: the hub that serves them (a :class:`SatelliteHost`, built with ``speak=True``).
        executor: where turns run (never on the event loop).
        make_endpointer: ``() -> hub.audio.endpoint.Endpointer`` for one utterance.
        make_wake: ``() -> WakeWord | None``: the hub's own wake word for a satellite that
            streams always (None: off).
    """

    def __init__(
        self, host: SatelliteHost, executor, make_endpointer, make_wake=lambda: None
    ) -> None:
        self.hub, self.executor = host, executor
        self.make_endpointer, self.make_wake = make_endpointer, make_wake
        self.links: list = []
        self.claims = None
        """The house-wide :class:`hub.satellites.claims.WakeClaims` (set by ``serve.build``)."""
        self.turns = self.duplicates = 0
        self.traces: list[dict] = []
        """The traces of the last turns (newest last, at most 100)."""

    def conversation_of(self, sat):
        """The satellite's own conversation, in its area."""
        return self.hub.conversation(f"satellite:{sat.name}", area=sat.area or None)

    async def answer(self, link, samples, wire, ended: float) -> None:
        """Run the turn of ``samples`` for ``link`` and send its answer on ``wire``."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        player = _Player(loop, queue)
        link.conversation.player = player
        sender = asyncio.create_task(self._send(queue, wire))
        try:
            result = await loop.run_in_executor(
                self.executor,
                partial(
                    self.hub.answer_audio, samples, conversation=link.conversation, started=ended
                ),
            )
        finally:
            link.conversation.player = None
            queue.put_nowait(None)
        await sender
        if not player.used and result.pcm:
            for event in audio_events(result.pcm, result.rate):
                await wire.send(event)
        self._count(result, link)
        await wire.send(Transcript(text=result.trace.get("transcript") or "").event())
        await self._announce(link, result)

    async def _send(self, queue: asyncio.Queue, wire) -> None:
        started, rate = False, None
        while (chunk := await queue.get()) is not None:
            if not started:
                rate, started = chunk.rate, True
                await wire.send(AudioStart(rate=rate, width=2, channels=1).event())
            for i in range(0, len(chunk.pcm), CHUNK_BYTES):
                await wire.send(
                    AudioChunk(
                        rate=rate, width=2, channels=1, audio=chunk.pcm[i : i + CHUNK_BYTES]
                    ).event()
                )
        if started:
            await wire.send(AudioStop().event())

    def _count(self, result, link) -> None:
        self.turns += 1
        trace = {
            **result.trace,
            "satellite": link.sat.name,
            "area": link.sat.area or None,
            "endpoint": link.endpoint[0],
            "endpointed_at": link.endpoint[1],
            "acted_on": [
                a.get("entity") for o in result.outcomes for a in getattr(o, "actions", ())
            ],
        }
        self.traces = (self.traces + [trace])[-100:]
        log.info(
            "satellite %s: turn %s -> %s", link.sat.name, trace.get("intent"), trace.get("response")
        )

    async def _announce(self, link, result) -> None:
        """Say each announcement of ``result`` on the other satellites (of its area)."""
        for outcome in result.outcomes:
            for action in getattr(outcome, "actions", ()):
                if action.get("service") != "announce":
                    continue
                data = action.get("data") or {}
                area = data.get("area") or None
                targets = [
                    x for x in self.links if x is not link and (area is None or x.sat.area == area)
                ]
                await self.say(str(data.get("message") or ""), targets)

    async def say(self, text: str, links, pcm: bytes | None = None, rate: int = 0) -> int:
        """Speak ``text`` (or play ``pcm``) on ``links`` that are connected; returns how many."""
        if pcm is None:
            if not text:
                return 0
            pcm, rate = await asyncio.get_running_loop().run_in_executor(
                self.executor, synthesize, self.hub, text
            )
        sent = 0
        for link in links:
            wire = link.live
            if wire is None or wire.closed:
                continue
            try:
                for event in audio_events(pcm, rate):
                    await wire.send(event)
                sent += 1
            except (ConnectionError, OSError):
                log.info("satellite %s: gone while speaking", link.sat.name)
        return sent

    def ring(self, alert, loop: asyncio.AbstractEventLoop) -> None:
        """A timer ring (from the timer thread): played on the satellites of its area."""
        area = alert.timer.area or None
        links = [x for x in self.links if area is None or x.sat.area == area]
        if alert.pcm and links:
            asyncio.run_coroutine_threadsafe(
                self.say(alert.text, links, alert.pcm, alert.rate), loop
            )
