"""One handler per connection: a reader that never blocks on work, and a worker that does it.

The reader answers ``ping`` and ``describe`` at once (also while a turn is running), drops
unknown events (the first logged, the rest counted into one summary line when the connection
ends; BC-23 d) and queues the rest for the worker, which runs them in order. A ``ping`` is
always answered with a ``pong`` carrying its ``text`` back as it came, as the ``wyoming``
package's servers and Home Assistant do: a keep-alive never fails for an odd field. A frame
whose data is not a JSON object gets one ``error`` event naming the problem (in its turn; a
ping's at once, then its pong) and the connection reads on, as its framing is intact. A
malformed frame (the stream can no longer be framed) closes only this connection, with one
WARNING naming the reason (BC-23 e). Writes are serialized by a lock and time out, so a client
that stops reading loses only its connection.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from functools import partial

from wyoming.event import Event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler

from hub.wyoming.framing import BadData, FrameError, read_event, write_event
from hub.wyoming.parts import Parts

log = logging.getLogger("hub.wyoming")

QUEUE_EVENTS = 256
"""Events queued for the worker before the reader stops reading (back-pressure)."""

KNOWN = frozenset(
    {
        "transcribe",
        "audio-start",
        "audio-chunk",
        "audio-stop",
        "synthesize",
        "synthesize-start",
        "synthesize-chunk",
        "synthesize-stop",
        "detect",
        "transcript",
        "recognize",
        "select-program",
        "pong",
    }
)
"""Event types the worker handles (besides ``ping`` and ``describe``)."""


class UnknownEvents:
    """Counts ignored event types; logs the first and one summary of the rest."""

    def __init__(self, peer: str):
        self.peer, self.suppressed = peer, 0
        self.first: str | None = None

    def seen(self, event_type: str) -> None:
        if self.first is None:
            self.first = event_type
            log.warning("%s: ignoring unknown event %r", self.peer, event_type[:60])
        else:
            self.suppressed += 1

    def summary(self) -> None:
        if self.suppressed:
            log.warning("%s: suppressed %d more unknown events", self.peer, self.suppressed)
            self.suppressed = 0


class HubHandler(AsyncEventHandler):
    """A Wyoming connection served by the shared hub.

    Args:
        server: the :class:`hub.wyoming.server.Context` (hub, info, executor, turn limit).
        reader, writer: the connection's streams.
        read: where events come from: ``await read(idle_timeout_s)`` -> event, BadData, or
            None at the end (an :meth:`hub.wyoming.early.EventPump.next` that read ahead);
            default: :func:`hub.wyoming.framing.read_event` on ``reader``.
    """

    def __init__(
        self,
        server,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        read: Callable[[float | None], Awaitable[Event | BadData | None]] | None = None,
    ):
        super().__init__(reader, writer)
        self.server = server
        self._read = read or partial(read_event, reader)
        self.peer = _peer(writer)
        self.unknown = UnknownEvents(self.peer)
        self._write_lock = asyncio.Lock()
        self._queue: asyncio.Queue = asyncio.Queue(QUEUE_EVENTS)
        self.default_id = f"wyoming-{uuid.uuid4().hex}"
        """This connection's own conversation (never reused; dropped when it closes), for a
        client whose context names none: its "yes" can confirm only its own question."""
        self.parts = Parts(server, self.write_event, default_id=self.default_id)

    async def write_event(self, event: Event) -> None:
        """Write one event (serialized with the other writers of this connection)."""
        async with self._write_lock:
            await write_event(self.writer, event)

    async def take(self, item: Event | BadData) -> None:
        """One thing read: an event (:meth:`handle_event`), or a frame whose data is no JSON
        object, answered with an ``error`` in its turn (a ping's at once, then its pong)."""
        if isinstance(item, Event):
            await self.handle_event(item)
        elif Ping.is_type(item.type):
            await self.parts.bad_data(item)
            await self.write_event(Pong().event())
        else:
            await self._queue.put(item)

    async def handle_event(self, event: Event) -> bool:
        """Answer ``ping``/``describe`` now, queue known events, drop unknown ones."""
        if Ping.is_type(event.type):  # its text goes back as it came, whatever its type
            await self.write_event(Pong(text=event.data.get("text")).event())
        elif Describe.is_type(event.type):
            await self.write_event(self.server.info.event())
        elif event.type in KNOWN:
            await self._queue.put(event)
        else:
            self.unknown.seen(event.type)
        return True

    async def run(self) -> None:
        """Serve until the client leaves, a frame is malformed, or a write times out."""
        worker = asyncio.create_task(self._work(), name=f"wyoming worker {self.peer}")
        self.server.connections.add(asyncio.current_task())
        try:
            await self._read_loop(worker)
        finally:
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
            self.unknown.summary()
            self.server.hub.conversations.drop(self.default_id)
            self.writer.close()
            self.server.connections.discard(asyncio.current_task())

    async def _read_loop(self, worker: asyncio.Task) -> None:
        idle = self.server.idle_timeout_s
        try:
            while not worker.done():
                item = await self._read(idle)
                if item is None:
                    break
                await self.take(item)
            else:
                return
            await self._queue.put(None)  # the client is done sending: finish queued work
            await asyncio.wait_for(asyncio.shield(worker), self.server.drain_timeout_s)
        except FrameError as exc:
            log.warning("%s: closing the connection: %s", self.peer, exc)
        except TimeoutError:
            log.info("%s: closing the connection: idle or not reading", self.peer)
        except (ConnectionError, OSError) as exc:
            log.info("%s: connection lost: %s", self.peer, exc)
        except Exception as exc:  # a bug: this connection ends, logged, never a lost traceback
            log.warning(
                "%s: closing the connection: %s: %s",
                self.peer,
                type(exc).__name__,
                exc,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )

    async def _work(self) -> None:
        while (event := await self._queue.get()) is not None:
            try:
                if isinstance(event, BadData):
                    await self.parts.bad_data(event)
                    continue
                await self.parts.handle(event)
            except (TimeoutError, ConnectionError, OSError):
                log.info("%s: client stopped reading; closing", self.peer)
                self.writer.close()
                return
            except Exception as exc:
                log.warning(
                    "%s: closing the connection: %s failed: %s: %s",
                    self.peer,
                    event.type,
                    type(exc).__name__,
                    exc,
                )
                self.writer.close()
                return


def _peer(writer: asyncio.StreamWriter) -> str:
    name = writer.get_extra_info("peername")
    if isinstance(name, tuple) and len(name) >= 2:
        return f"{name[0]}:{name[1]}"
    return "unix client" if not name else str(name)
