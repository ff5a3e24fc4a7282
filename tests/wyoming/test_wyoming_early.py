"""``hub wyoming``'s own listener (:mod:`hub.wyoming.early`), which serves every connection of
the command, before and after the hub is ready, and the state a connection leaves behind.

The hub behind it is a fake (no model loads): ``ping`` and ``describe`` are answered by the
handler itself, and a ``transcript`` goes to the fake's ``answer_text``, which asks before it
"unlocks" and unlocks on a "yes" in the same conversation, as the real turn graph does.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from wyoming.handle import Handled, NotHandled
from wyoming.info import Info
from wyoming.ping import Pong

from hub.core.conversation import Conversations
from hub.graph.answers import NOT_UNDERSTOOD
from hub.wyoming.early import Pending, listen_early
from hub.wyoming.info import build_info

READ_S = 10.0
"""Longest wait for an answer (the tester's bound); a lost frame never answers at all."""
ROUNDS = 40


def frame(event_type: str, data: dict) -> bytes:
    """One event as the ``wyoming`` package writes it: header line with ``data_length``, then
    the data, all in one write (what every client does for Transcript/Synthesize)."""
    body = json.dumps(data).encode()
    header = json.dumps({"type": event_type, "data_length": len(body)}).encode()
    return header + b"\n" + body


class FakeHub:
    """The part of the Hub the Wyoming handler uses for ``transcript``; records unlocks."""

    def __init__(self):
        self.conversations = Conversations()
        self.unlocked = 0

    def conversation(self, cid, area=None):
        return self.conversations.get(cid, area=area)

    def answer_text(self, text, conversation):
        if text == "unlock the front door":
            conversation.ask_confirmation("unlock lock.front_door")
            return SimpleNamespace(trace={"response": "Do you want me to unlock the Front Door?"})
        if text == "yes" and conversation.take_confirmation() is not None:
            self.unlocked += 1
            return SimpleNamespace(trace={"response": "Unlocking."})
        return SimpleNamespace(trace={"response": NOT_UNDERSTOOD})


def fake_ctx(hub) -> SimpleNamespace:
    """What :class:`hub.wyoming.server.Context` offers the handler, without a real hub."""
    sem = asyncio.Semaphore(2)

    async def run(fn, *args):
        return fn(*args)

    return SimpleNamespace(
        hub=hub,
        info=build_info(asr_engine=None, voice=None, wake_models=[], language="en", handle=True),
        idle_timeout_s=30.0,
        drain_timeout_s=5.0,
        connections=set(),
        wake_models=[],
        run=run,
        turn=lambda: sem,
    )


async def read_one(reader: asyncio.StreamReader) -> dict:
    """The next event's header (with its data merged in)."""
    header = json.loads(await asyncio.wait_for(reader.readline(), READ_S))
    if header.get("data_length"):
        extra = await asyncio.wait_for(reader.readexactly(header["data_length"]), READ_S)
        header.setdefault("data", {}).update(json.loads(extra))
    if header.get("payload_length"):
        await asyncio.wait_for(reader.readexactly(header["payload_length"]), READ_S)
    return header


async def closed_all(conversations) -> bool:
    """True once the server, having seen the clients close, dropped every conversation."""
    for _ in range(500):
        if not len(conversations):
            return True
        await asyncio.sleep(0.01)
    return False


async def start(hub, ready: bool):
    pending = Pending()
    server = await listen_early("tcp://127.0.0.1:0", pending)
    port = server._server.sockets[0].getsockname()[1]
    if ready:
        pending.ctx = fake_ctx(hub)
        pending.ready.set()
    return server, pending, port


async def say(port: int, text: str, context: dict | None = None) -> dict:
    """One connection: send ``transcript`` at once, read the answer, close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data: dict = {"text": text} if context is None else {"text": text, "context": context}
    writer.write(frame("transcript", data))
    try:
        return await read_one(reader)
    finally:
        writer.close()
        await writer.wait_closed()


def test_bc23_data_length_event_sent_at_once_is_answered_after_start_up():
    """The tester's case: a connection to the ready listener that writes one ``data_length``
    event at once (7 of 8 were never answered: the read was cancelled mid-event)."""

    async def main():
        hub = FakeHub()
        server, _, port = await start(hub, ready=True)
        try:
            for i in range(ROUNDS):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(frame("ping", {"text": f"p{i}"}))
                answer = await read_one(reader)
                assert answer["type"] == Pong().event().type, (i, answer)
                assert answer["data"]["text"] == f"p{i}", (i, answer)
                writer.close()
                answer = await say(port, "is the kitchen light on")
                assert answer["type"] == NotHandled().event().type, (i, answer)
        finally:
            await server.stop()

    asyncio.run(main())


def test_bc41_event_being_read_when_the_hub_becomes_ready_is_kept():
    """A connection accepted before the hub is ready, whose ``data_length`` event is being
    read at the moment the hub becomes ready, is answered (the header is not dropped)."""

    async def main():
        for i in range(ROUNDS):
            hub = FakeHub()
            server, pending, port = await start(hub, ready=False)
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(frame("describe", {}))
                assert (await read_one(reader))["type"] == Info(asr=[]).event().type
                writer.write(frame("ping", {"text": f"p{i}"}))
                writer.write(frame("transcript", {"text": "unlock the front door"}))
                await asyncio.sleep(0)  # the header line may be read, the data awaited
                pending.ctx = fake_ctx(hub)
                pending.ready.set()
                answers = [await read_one(reader), await read_one(reader)]
                assert [a["type"] for a in answers] == ["pong", "handled"], (i, answers)
                writer.close()
            finally:
                await server.stop()

    asyncio.run(main())


def test_two_connections_in_sequence_never_share_a_confirmation():
    """A "yes" on a new connection without a conversation id never confirms what another
    connection asked (ids were ``id(handler)``, which Python reuses), and a connection's own
    conversation is dropped when it closes."""

    async def main():
        hub = FakeHub()
        server, _, port = await start(hub, ready=True)
        try:
            for i in range(ROUNDS):
                asked = await say(port, "unlock the front door")
                assert asked["data"]["text"].startswith("Do you want"), (i, asked)
                answer = await say(port, "yes")
                assert answer["data"]["text"] != "Unlocking.", i
                assert hub.unlocked == 0, i
                assert await closed_all(hub.conversations), (i, len(hub.conversations))
        finally:
            await server.stop()

    asyncio.run(main())


def test_a_conversation_id_of_the_client_persists_across_connections():
    """Home Assistant names the conversation: its state outlives the connection."""

    async def main():
        hub = FakeHub()
        server, _, port = await start(hub, ready=True)
        try:
            context = {"conversation_id": "ha-42"}
            asked = await say(port, "unlock the front door", context)
            assert asked["data"]["text"].startswith("Do you want"), asked
            answer = await say(port, "yes", context)
            assert answer["type"] == Handled().event().type, answer
            assert answer["data"]["text"] == "Unlocking." and hub.unlocked == 1
            assert "ha-42" in hub.conversations
        finally:
            await server.stop()

    asyncio.run(main())


def test_bc24_before_the_hub_is_ready_an_odd_ping_is_answered_and_bad_data_gets_its_error():
    """The breaker's findings on the early listener too: a ping with an odd field gets its
    pong, a ping whose data is no JSON object an ``error`` then its pong, and another event
    whose data is no object its ``error`` once the hub is ready; the connection reads on.
    Every read within 1 s."""

    async def one(reader) -> dict:
        return await asyncio.wait_for(read_one(reader), 1.0)

    async def main():
        hub = FakeHub()
        server, pending, port = await start(hub, ready=False)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(frame("ping", {"text": 5}))
            pong = await one(reader)
            assert pong["type"] == "pong" and pong["data"]["text"] == 5
            writer.write(b'{"type": "ping", "data_length": 2}\n[]')
            error, pong = await one(reader), await one(reader)
            assert error["type"] == "error" and error["data"]["text"].startswith("ping: data is")
            assert pong["type"] == "pong"
            writer.write(b'{"type": "transcript", "data_length": 3}\n"x"')
            writer.write(frame("ping", {"text": "after"}))  # answered at once, before the hub
            assert (await one(reader))["data"]["text"] == "after"
            pending.ctx = fake_ctx(hub)
            pending.ready.set()
            error = await one(reader)
            assert error["type"] == "error"
            assert error["data"]["text"] == "transcript: data is not a JSON object (got string)"
            writer.write(frame("transcript", {"text": "unlock the front door"}))
            assert (await one(reader))["type"] == "handled"
            writer.close()
        finally:
            await server.stop()

    asyncio.run(main())
