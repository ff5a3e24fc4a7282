"""One satellite's connection: the hub is its Wyoming client (a satellite is a TCP server).

Per connection: ``describe`` -> ``info``, then ``run-satellite`` and one ``ping`` (a
satellite that knows pings then pings every 2 s and drops a server whose ``pong`` is 5 s
late; the reader answers at once, since turns run on a thread pool). ``run-pipeline`` from
the ``asr`` stage means the satellite heard its wake word: the wake is claimed house-wide
(:class:`hub.satellites.claims.WakeClaims`); a duplicate is told so at once (``error``
``duplicate_wake_up_detected``, then an empty ``transcript`` so a 1.0 satellite stops
streaming). From the ``wake`` stage the satellite streams always and the hub's own wake word
runs on its audio. Every chunk is converted by its own format (BC-45), the hub endpoints the
utterance (the satellite never has to send ``audio-stop``) and the turn runs in this
satellite's conversation (:class:`hub.satellites.turns.SatelliteTurns`).

The reader only answers pings, claims wakes and queues audio; a pump task per session
converts, checks the stream's pace against its label (BC-45 f:
:class:`hub.satellites.convert.PaceCheck`) and endpoints on the thread pool (the endpointer's
``final`` rule decodes, :func:`hub.audio.endpoint.live_endpointer`), so a ``pong`` never
waits for engine work.

Each capture (a wake, to its endpoint) becomes a turn or one ``capture_dropped`` line
(:meth:`hub.satellites.turns.SatelliteTurns.dropped`, :data:`hub.trace.DROP_REASONS`).

A reset or closed socket cancels the running turn's writes at once (nothing is written after),
the next connection follows :class:`hub.satellites.redial.Redial` (exponential backoff with
jitter capped at 30 s; while the satellite is unreachable, a bare connect every 2 s), and only
one connection is live at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from urllib.parse import urlparse

from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import RunSatellite
from wyoming.wake import Detection

from hub.errors import BadInputError
from hub.satellites.claims import DUPLICATE_CODE
from hub.satellites.convert import PaceCheck, mislabelled_message
from hub.satellites.redial import RECONNECT_CAP_S, Redial
from hub.satellites.wire import Wire
from hub.wyoming.audio_in import ChunkConverter

log = logging.getLogger("hub.satellites")

CONNECT_TIMEOUT_S = 5.0
"""Longest wait for the TCP connection and for ``info`` after ``describe``."""
PROBE_TIMEOUT_S = 2.0
"""Longest wait for the TCP connection of a probe (:mod:`hub.satellites.redial`)."""
_ENDED = object()  # the pump's marker for ``audio-stop``


class SatelliteLink:
    """Keeps one satellite served: connects, serves the connection, reconnects.

    Args:
        sat: its :class:`hub.config.satellites.SatelliteSettings`.
        turns: the :class:`hub.satellites.turns.SatelliteTurns` that run its turns.
        claims: the house-wide :class:`hub.satellites.claims.WakeClaims`.
        clock: monotonic seconds; rng: the jitter's random source (tests seed it).
        redial: the reconnect schedule (default :class:`hub.satellites.redial.Redial`).
    """

    def __init__(
        self,
        sat,
        turns,
        claims,
        *,
        clock=time.monotonic,
        rng=None,
        cap_s: float = RECONNECT_CAP_S,
        redial: Redial | None = None,
    ):
        self.sat, self.turns, self.claims, self.clock = sat, turns, claims, clock
        self.redial = redial or Redial(cap_s, rng=rng)
        parsed = urlparse(sat.uri)
        self.host, self.port = parsed.hostname, parsed.port
        self.conversation = turns.conversation_of(sat)
        self.sessions = 0
        """Connections made so far (each one served until it ended)."""
        self.live: Wire | None = None
        """The connection in use, or None."""
        self._state = "idle"
        self._converter = ChunkConverter()
        self._pace = PaceCheck(clock)
        self._fmt = (0, 0, 0)  # the last chunk's label (rate, width, channels)
        self._bad_fmt: tuple[int, int, int] | None = None  # a mislabelled stream's label
        self._endpointer = self._wake = None  # the open capture's endpointer; the wake word
        self._queue: asyncio.Queue | None = None
        self._turn: asyncio.Task | None = None
        self._releaser: asyncio.Task | None = None  # a held utterance's pace decision
        self._away_since: float | None = None
        self.info: Info | None = None
        self.endpoint: tuple[str, float] = ("", 0.0)
        """Why and when (monotonic s) the last utterance was endpointed."""
        self.ended_by = "disconnected"
        """Why the last connection ended: ``disconnected`` or ``stopping`` (the hub stops)."""

    async def run(self, stop: asyncio.Event) -> None:
        """Serve the satellite until ``stop`` is set (never raises for network errors)."""
        client = None
        while not stop.is_set():
            if client is None:
                client = await self._dial(CONNECT_TIMEOUT_S)
                if client is None:
                    self._unreachable()
            if client is not None:
                await self._serve(client, stop)
            client = await self._pause(stop)

    async def _dial(self, timeout_s: float):
        """A connected client, or None when the satellite cannot be reached."""
        client = AsyncTcpClient(self.host, self.port)
        try:
            await asyncio.wait_for(client.connect(), timeout_s)
        except (TimeoutError, OSError) as exc:
            if self._away_since is None:
                log.info("satellite %s: %s: %s", self.sat.name, type(exc).__name__, exc)
            return None
        return client

    def _unreachable(self) -> None:
        self.redial.failed(reached=False)
        if self._away_since is None:
            self._away_since = self.clock()
            log.info(
                "satellite %s: unreachable; trying every %g s", self.sat.name, self.redial.probe_s
            )

    async def _serve(self, client, stop: asyncio.Event) -> None:
        """Serve one connected client until it ends; the outcome feeds the redial schedule."""
        try:
            served = await self._connection(client, stop)
        except (TimeoutError, OSError, ConnectionError, EOFError) as exc:
            log.info("satellite %s: %s: %s", self.sat.name, type(exc).__name__, exc)
            served = False
        if served:
            self.redial.served()
        else:
            self.redial.failed(reached=True)

    async def _pause(self, stop: asyncio.Event):
        """Wait out the redial delay; a client when a probe connected meanwhile, else None."""
        delay, probe = self.redial.plan()
        loop = asyncio.get_running_loop()
        end = loop.time() + delay
        while not stop.is_set() and (left := end - loop.time()) > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), min(left, probe or left))
            if probe and not stop.is_set() and end - loop.time() > 0:
                client = await self._dial(PROBE_TIMEOUT_S)
                if client is not None:
                    return client
        return None

    async def _connection(self, client, stop: asyncio.Event) -> bool:
        """One connection, served until it ends; True when it got as far as ``info``."""
        wire = Wire(client)
        if self.live is not None:  # one live session: the old one is closed first
            self.live.close()
        self.live = wire
        reader = asyncio.create_task(self._read(client, wire))
        stopper = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
            return reader.done() and not reader.cancelled() and reader.result()
        finally:
            stopper.cancel()
            reader.cancel()
            wire.close()
            self._end_session("stopping" if stop.is_set() else "disconnected")
            await asyncio.gather(reader, stopper, return_exceptions=True)
            with contextlib.suppress(Exception):
                await client.disconnect()
            if self.live is wire:
                self.live = None

    async def _read(self, client, wire: Wire) -> bool:
        await wire.send(Describe().event())
        info = await asyncio.wait_for(self._until_info(client, wire), CONNECT_TIMEOUT_S)
        self.info, self.sessions, self._bad_fmt = info, self.sessions + 1, None
        away = "" if self._away_since is None else f" (back after {self._away():.1f} s)"
        self._away_since = None
        log.warning(
            "satellite %s (%s) connected: session %d%s",
            self.sat.name,
            self.sat.uri,
            self.sessions,
            away,
        )
        await wire.send(RunSatellite().event())
        await wire.send(Ping().event())
        self._queue = asyncio.Queue()
        pump = asyncio.create_task(self._pump(self._queue, wire))
        try:
            while (event := await client.read_event()) is not None:
                await self.on_event(event, wire)
        finally:
            pump.cancel()
            self._queue = None
            await asyncio.gather(pump, return_exceptions=True)
        log.warning("satellite %s: connection closed", self.sat.name)
        return True

    def _away(self) -> float:
        return self.clock() - (self._away_since or self.clock())

    async def _until_info(self, client, wire: Wire) -> Info:
        while (event := await client.read_event()) is not None:
            if Info.is_type(event.type):
                return Info.from_event(event)
            if Ping.is_type(event.type):
                await wire.send(Pong(text=Ping.from_event(event).text).event())
        raise EOFError("closed before info")

    async def on_event(self, event, wire: Wire) -> None:
        """Handle one event from the satellite (never blocks on engine work: audio is queued
        for the pump with its arrival time)."""
        kind = event.type
        if Ping.is_type(kind):
            await wire.send(Pong(text=Ping.from_event(event).text).event())
        elif RunPipeline.is_type(kind):
            await self._run_pipeline(RunPipeline.from_event(event), wire)
        elif Detection.is_type(kind) and self._state == "wake":
            await self._woke(wire, self.clock())
        elif AudioChunk.is_type(kind) and self._queue is not None:
            self._queue.put_nowait((AudioChunk.from_event(event), self.clock()))
        elif AudioStart.is_type(kind):
            self._pace = PaceCheck(self.clock)  # a new stream (its mic reconnected): measure again
        elif AudioStop.is_type(kind) and self._queue is not None:
            self._queue.put_nowait((_ENDED, self.clock()))

    async def _run_pipeline(self, run: RunPipeline, wire: Wire) -> None:
        if self._state == "turn":
            return  # a turn is running: it answers first
        from_wake = run.start_stage == PipelineStage.WAKE
        self._drop_capture("restarted" if from_wake else "wake_word")  # a capture still open
        self._converter, self._pace = ChunkConverter(), PaceCheck(self.clock)
        if from_wake:
            self._wake = self.turns.make_wake()
            self._state = "wake" if self._wake is not None else "idle"
            if self._wake is None:
                log.warning(
                    "satellite %s streams for the hub's wake word, which is off", self.sat.name
                )
            return
        await self._woke(wire, self.clock())

    async def _woke(self, wire: Wire, captured: float) -> None:
        """A wake heard at ``captured``: listen, or tell the satellite it is a duplicate.
        A satellite whose stream was mislabelled (BC-45 f) cannot serve a turn: it claims
        none (until it reconnects, as it does when restarted with other options)."""
        if self._bad_fmt is not None:
            await self._refuse(wire, "mislabelled-audio", "audio not usable", "mislabelled")
            return
        if not self.claims.claim(self.sat.name, captured):
            self.turns.duplicates += 1
            await self._refuse(wire, DUPLICATE_CODE, "duplicate wake word", "duplicate")
            return
        self.turns.host.on_wake()
        self._endpointer = self.turns.make_endpointer()
        self._state = "listen"

    async def _pump(self, queue: asyncio.Queue, wire: Wire) -> None:
        """The session's audio, in order: pace check, conversion, wake word, endpointing."""
        while True:
            chunk, arrived = await queue.get()
            if chunk is _ENDED:
                if self._state in ("listen", "held"):
                    await self._utterance_done(wire, checked=True)
                continue
            await self._audio(chunk, arrived, wire)

    async def _audio(self, chunk: AudioChunk, arrived: float, wire: Wire) -> None:
        if self._state not in ("wake", "listen", "held"):
            return
        self._fmt = (chunk.rate, chunk.width, chunk.channels)
        self._pace.add(len(chunk.audio), *self._fmt, at=arrived)
        if self._pace.mislabelled:
            await self._mislabelled(wire)
            return
        if self._state == "held":
            if self._pace.decided:
                await self._utterance_done(wire, checked=True)
            return
        try:
            block = self._converter.samples(chunk.audio, chunk.rate, chunk.width, chunk.channels)
        except BadInputError as exc:
            log.warning("satellite %s: %s; audio ignored", self.sat.name, exc.message)
            return
        if not block.size:
            return
        loop, run = asyncio.get_running_loop(), self.turns.executor
        if self._state == "wake":  # (and still so once heard: a run-pipeline may come between)
            if await loop.run_in_executor(run, self._wake.process, block):
                self._wake.reset()
                if self._state == "wake":
                    await self._woke(wire, arrived)
            return
        capture = self._endpointer
        if await loop.run_in_executor(run, capture.push, block) and self._endpointer is capture:
            await self._utterance_done(wire)

    async def _refuse(self, wire: Wire, code: str, text: str, reason: str) -> None:
        """No turn for this wake: its ``capture_dropped`` line (``reason``), ``error``
        ``code``, then an empty ``transcript`` (a 1.0 satellite stops streaming on it)."""
        if not self._drop_capture(reason):  # refused before its capture opened
            self.turns.dropped(self, reason)
        await wire.send(Error(text=text, code=code).event())
        await wire.send(Transcript(text="").event())

    async def _mislabelled(self, wire: Wire) -> None:
        """BC-45 (f): the stream runs at a multiple of its label's pace; it serves no turn."""
        listening = self._state in ("listen", "held")
        if self._bad_fmt is None:
            self._bad_fmt = self._fmt
            log.warning("%s", mislabelled_message(self.sat.name, self._pace, self._bad_fmt))
        if listening:
            await self._refuse(wire, "mislabelled-audio", "audio not usable", "mislabelled")

    async def _utterance_done(self, wire: Wire, checked: bool = False) -> None:
        """The endpoint: the turn starts, unless the stream's pace is not decided yet (then
        it is held until it is, or until ``audio-stop``: ``checked``); a capture without
        speech is dropped (``no_speech``) and the satellite told (an empty ``transcript``)."""
        if self._state != "held":
            reason = getattr(self._endpointer, "reason", None) or "audio-stop"
            self.endpoint = (reason, self.clock())
        if not (checked or self._pace.decided):
            self._state = "held"
            self._releaser = asyncio.create_task(self._release(wire, self._pace.due_in()))
            return
        capture, self._endpointer = self._endpointer, None
        samples = capture.audio()
        if not samples.size:
            self._state = "wake" if self._wake is not None else "idle"
            self.turns.dropped(self, "no_speech", capture, endpoint=self.endpoint[0])
            with contextlib.suppress(ConnectionError, OSError):
                await wire.send(Transcript(text="").event())
            return
        self._state = "turn"
        self._turn = asyncio.create_task(self._answer(samples, wire, self.clock(), self.endpoint))

    async def _release(self, wire: Wire, delay_s: float) -> None:
        """A held utterance whose stream sent nothing more: decide its pace by the clock."""
        await asyncio.sleep(delay_s)
        if self._state != "held" or self.live is not wire:
            return
        self._pace.decide()
        if self._pace.mislabelled:
            await self._mislabelled(wire)
        else:
            await self._utterance_done(wire, checked=True)

    async def _answer(self, samples, wire: Wire, ended: float, endpoint) -> None:
        try:
            await self.turns.answer(self, samples, wire, ended, endpoint)
        except (ConnectionError, OSError):
            log.info("satellite %s: gone during its answer", self.sat.name)
        finally:
            self._state = "wake" if self._wake is not None else "idle"

    def _drop_capture(self, reason: str) -> bool:
        """The open capture (listening, or held for its pace) ends without a turn: its
        ``capture_dropped`` line (``reason``); False when no capture was open."""
        if self._state not in ("listen", "held"):
            return False
        if self._releaser is not None and self._releaser is not asyncio.current_task():
            self._releaser.cancel()  # its pace decision was this capture's
        capture, self._endpointer = self._endpointer, None
        self._state = "wake" if self._wake is not None else "idle"
        self.turns.dropped(self, reason, capture)
        return True

    def _end_session(self, reason: str) -> None:
        """The connection ended (``reason``: ``disconnected`` or ``stopping``): an open
        capture is dropped, its turn's writes cancelled (the turn itself runs on), its
        stream forgotten."""
        self.ended_by = reason
        self._drop_capture(reason)
        for task in (self._turn, self._releaser):
            if task is not None and not task.done():
                task.cancel()
        self._turn, self._endpointer, self._state = None, None, "idle"
