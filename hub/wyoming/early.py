"""``hub wyoming`` listening before the hub is built (a cold start takes a minute or more).

The socket listens first; the hub (imports, store, graph) is built on a thread and its engines
warm after it. Until the hub exists, each connection is held by an :class:`EarlyHandler` that
answers ``describe`` at once (listing nothing yet: what is ready is listed as it becomes
ready) and ``ping``, and keeps the other events; when the hub is ready it hands them and the
connection to a :class:`hub.wyoming.handler.HubHandler`. A read is never cancelled halfway
through an event: one reader task per early connection queues what it reads (an event whose
header was read while the hub became ready once lost its header line, and its client never
got an answer).
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from urllib.parse import urlparse

from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler, AsyncServer

from hub.errors import ConfigError
from hub.wyoming.framing import BadData, FrameError, read_event, write_event
from hub.wyoming.info import build_info

log = logging.getLogger("hub.wyoming")

EARLY_EVENTS = 64
"""Events kept per connection while the hub is being built; more close it."""

QUEUED_EVENTS = 64
"""Events an :class:`EventPump` reads ahead of its consumer before it waits (back-pressure)."""


def check_uri(uri: str) -> str:
    """``uri`` if it is ``tcp://HOST:PORT`` or ``unix://PATH``.

    Raises:
        ConfigError: naming ``wyoming.uri``.
    """
    parsed = urlparse(uri)
    try:
        port = parsed.port
    except ValueError:
        port = None
    if parsed.scheme == "tcp" and parsed.hostname and port is not None:
        return uri
    if parsed.scheme == "unix" and parsed.path:
        return uri
    raise ConfigError(f"wyoming.uri: {uri!r} is not tcp://HOST:PORT or unix://PATH")


class Pending:
    """The hub being built: ``ctx`` (a :class:`hub.wyoming.server.Context`) once it is."""

    def __init__(self, language: str = "en"):
        self.ctx = None
        self.ready = asyncio.Event()
        self.info = build_info(
            asr_engine=None, voice=None, wake_models=[], language=language, handle=False
        )


class EventPump:
    """One reader task per connection: every event read goes into a queue, so waiting for
    an event can be cancelled at any time without losing a frame half read (BC-23/BC-41 kind:
    cancelling :func:`hub.wyoming.framing.read_event` between a header line and its data
    dropped the header).

    Args:
        reader: the connection's stream.
        limit: events queued before the pump stops reading (back-pressure).
    """

    def __init__(self, reader: asyncio.StreamReader, limit: int = QUEUED_EVENTS):
        self.reader = reader
        self.queue: asyncio.Queue = asyncio.Queue(limit)
        self.task = asyncio.create_task(self._pump(), name="wyoming reader")

    async def _pump(self) -> None:
        try:
            while True:
                event = await read_event(self.reader, None)
                await self.queue.put(event)
                if event is None:
                    return
        except (FrameError, ConnectionError, OSError) as exc:
            await self.queue.put(exc)

    async def next(self, idle_timeout_s: float | None = None) -> Event | BadData | None:
        """The next event read (or :class:`hub.wyoming.framing.BadData`: a whole frame whose
        data is not a JSON object), or None when the peer closed the connection.

        Raises:
            FrameError, ConnectionError, OSError: what reading raised.
            asyncio.TimeoutError: no event within ``idle_timeout_s`` (None: no limit).
        """
        item = await asyncio.wait_for(self.queue.get(), idle_timeout_s)
        if isinstance(item, BaseException):
            raise item
        return item

    async def close(self) -> None:
        """Stop reading."""
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


class EarlyHandler(AsyncEventHandler):
    """A connection of ``hub wyoming``'s listener (see the module doc).

    Once the hub is ready a connection goes straight to a
    :class:`hub.wyoming.handler.HubHandler`. Before, one :class:`EventPump` reads it; the
    wait for the next event (never the read itself) is what the hub's readiness interrupts,
    and the pump, with what it holds, is handed to the HubHandler.
    """

    def __init__(self, pending: Pending, reader, writer):
        super().__init__(reader, writer)
        self.pending = pending
        self.kept: list[Event | BadData] = []

    async def handle_event(self, event) -> bool:  # pragma: no cover - run() reads itself
        return True

    async def run(self) -> None:
        """Answer ``describe``/``ping`` until the hub is ready, then hand the connection over."""
        if self.pending.ready.is_set():
            await self._hand_over(None)
            return
        pump = EventPump(self.reader)
        try:
            if await self._wait_ready(pump):
                await self._hand_over(pump)
        finally:
            await pump.close()

    async def _wait_ready(self, pump: EventPump) -> bool:
        """Serve ``describe``/``ping`` and keep the rest until the hub is ready (True), or
        until the client leaves or misbehaves (False, the connection closed)."""
        ready = asyncio.create_task(self.pending.ready.wait())
        try:
            while not ready.done():
                get = asyncio.create_task(pump.next())
                await asyncio.wait({get, ready}, return_when=asyncio.FIRST_COMPLETED)
                if not get.done():
                    get.cancel()  # only the wait: the event stays queued in the pump
                    await asyncio.gather(get, return_exceptions=True)
                    return True
                event = get.result()
                if event is None:
                    return False
                if not await self._early_event(event):
                    self.writer.close()
                    return False
        except (FrameError, ConnectionError, OSError) as exc:
            log.info("connection closed before the hub was ready: %s", exc)
            self.writer.close()
            return False
        finally:
            ready.cancel()
        return True

    async def _early_event(self, event: Event | BadData) -> bool:
        """Answer or keep one event read before the hub is ready; False: too many kept. A
        ping is answered whatever its data (a bad one's ``error`` first); other bad data is
        kept, to be answered in its turn."""
        if isinstance(event, BadData) and Ping.is_type(event.type):
            log.info("refused: %s", event.message)
            await write_event(self.writer, Error(text=event.message, code="BadInputError").event())
            await write_event(self.writer, Pong().event())
        elif isinstance(event, Event) and Describe.is_type(event.type):
            info = self.pending.ctx.info if self.pending.ctx else self.pending.info
            await write_event(self.writer, info.event())
        elif isinstance(event, Event) and Ping.is_type(event.type):
            await write_event(self.writer, Pong(text=event.data.get("text")).event())
        elif len(self.kept) < EARLY_EVENTS:
            self.kept.append(event)
        else:
            return False
        return True

    async def _hand_over(self, pump: EventPump | None) -> None:
        # lazy: the handler imports the turn graph; the socket listens before that loads
        from hub.wyoming.handler import HubHandler

        read = pump.next if pump is not None else None
        handler = HubHandler(self.pending.ctx, self.reader, self.writer, read=read)
        for event in self.kept:
            await handler.take(event)
        await handler.run()


async def listen_early(uri: str, pending: Pending) -> AsyncServer:
    """Listen on ``uri`` with :class:`EarlyHandler`s for ``pending``.

    Raises:
        ConfigError: the address cannot be listened on.
    """
    server = AsyncServer.from_uri(uri)
    try:
        await server.start(partial(EarlyHandler, pending))
    except OSError as exc:
        raise ConfigError(f"wyoming.uri: cannot listen on {uri}: {exc.strerror or exc}") from None
    return server
