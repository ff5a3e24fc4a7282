"""The turns of satellites: run on a thread pool in the satellite's conversation, answered back.

The answer streams to the satellite that asked as it is synthesized (each sentence as
``audio-start``, 2048-byte ``audio-chunk``s, ``audio-stop`` at the end), then a ``transcript``
(a 1.0 satellite goes back to its wake word on it). Timer rings go to the satellites of the
timer's area; an announcement (HassBroadcast: the ``assist_satellite.announce`` action) goes
to every other satellite, or to those of the area it names.

Trace (issue 18): each turn prints its trace line as the local microphone's does, with
``satellite``, ``area``, ``endpoint`` and ``capture`` (``wake``), also when the satellite
went away during it (the turn runs to its end on the thread pool); each capture that ends
without a turn prints one ``capture_dropped`` line (:meth:`SatelliteTurns.dropped`,
:func:`hub.trace.capture_line`), with ``satellite``. Lines go to the writer given (``hub
run``: the supervisor's, so no two lines interleave; ``hub serve``: stdout).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop

from hub.audio.format import RATE
from hub.core.timers import synthesize
from hub.graph.state import EngineSet
from hub.trace import DROP_REASONS, LineWriter, capture_line

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
        lines: the trace output, ``lines(dict)`` writes one JSON line (default: a
            :class:`hub.trace.LineWriter` on stdout); called from the event loop and from
            the turns' threads.
    """

    def __init__(
        self,
        host: SatelliteHost,
        executor,
        make_endpointer,
        make_wake=lambda: None,
        lines: Callable[[dict], None] | None = None,
    ) -> None:
        self.host, self.executor = host, executor
        self.make_endpointer, self.make_wake = make_endpointer, make_wake
        self.lines = lines if lines is not None else LineWriter()
        self.links: list = []
        self.claims = None
        """The house-wide :class:`hub.satellites.claims.WakeClaims` (set by ``serve.build``)."""
        self.turns = self.duplicates = 0
        self.traces: deque[dict] = deque(maxlen=100)
        """The traces of the last turns (newest last, at most 100), each with
        ``endpointed_at`` (monotonic s) and ``acted_on`` (entity names) beside its line's."""
        self._lock = threading.Lock()

    def conversation_of(self, sat):
        """The satellite's own conversation, in its area."""
        return self.host.conversation(f"satellite:{sat.name}", area=sat.area or None)

    def dropped(self, link, reason: str, endpointer=None, **extra) -> None:
        """A capture of ``link`` ended without a turn: one ``capture_dropped`` line
        (:func:`hub.trace.capture_line`, ``reason`` a key of :data:`hub.trace.DROP_REASONS`;
        ``endpointer``: the capture's, or None; ``extra``: more fields) with ``satellite``
        and ``area``, and a log line. Thread-safe."""
        name = link.sat.name
        line = capture_line(
            reason, endpointer, "wake", satellite=name, area=link.sat.area or None, **extra
        )
        log.info("satellite %s: capture dropped (%s): %s", name, reason, DROP_REASONS[reason])
        self.lines(line)

    async def answer(self, link, samples, wire, ended: float, endpoint=("", 0.0)) -> None:
        """Run the turn of ``samples`` (int16 16 kHz) for ``link`` and send its answer on
        ``wire``; ``ended``: when the utterance ended (monotonic s); ``endpoint``: why and
        when it was endpointed. Cancelled (the connection ended), the turn still runs to its
        end and prints its line; one that had not started yet is dropped (``link.ended_by``:
        ``disconnected`` or ``stopping``)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        player = _Player(loop, queue)
        link.conversation.player = player
        sender = asyncio.create_task(self._send(queue, wire))
        job = self.executor.submit(self._turn, link, samples, ended, endpoint)
        try:
            result = await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            if job.cancel():  # it had not started: it never will
                size_s = round(len(samples) / RATE, 2)
                self.dropped(link, link.ended_by, endpoint=endpoint[0], audio_s=size_s)
            raise
        finally:
            link.conversation.player = None
            queue.put_nowait(None)
        await sender
        if result is None:  # the turn failed (its line says so): the satellite stops streaming
            await wire.send(Transcript(text="").event())
            return
        if not player.used and result.pcm:
            for event in audio_events(result.pcm, result.rate):
                await wire.send(event)
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

    def _turn(self, link, samples, ended: float, endpoint):
        """The turn, on the thread pool: its result with its trace line printed, or None
        when it raised (then a ``turn_failed`` line)."""
        try:
            result = self.host.answer_audio(samples, conversation=link.conversation, started=ended)
        except Exception as exc:  # one failed turn must not end the satellite's service
            log.error("satellite %s: turn failed: %s: %s", link.sat.name, type(exc).__name__, exc)
            self.dropped(
                link,
                "turn_failed",
                endpoint=endpoint[0],
                audio_s=round(len(samples) / RATE, 2),
                error=f"{type(exc).__name__}: {exc}",
            )
            return None
        self._count(result, link, endpoint)
        return result

    def _count(self, result, link, endpoint) -> None:
        """Count the turn, keep its trace and print its line (the local microphone's trace
        with ``satellite``, ``area``, ``endpoint`` and ``capture``)."""
        line = {
            **result.trace,
            "satellite": link.sat.name,
            "area": link.sat.area or None,
            "endpoint": endpoint[0],
            "capture": "wake",
        }
        acted = [a.get("entity") for o in result.outcomes for a in getattr(o, "actions", ())]
        with self._lock:
            self.turns += 1
            self.traces.append({**line, "endpointed_at": endpoint[1], "acted_on": acted})
        log.info(
            "satellite %s: turn %s -> %s", link.sat.name, line.get("intent"), line.get("response")
        )
        self.lines(line)

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
                self.executor, synthesize, self.host, text
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
