"""The breaker's finding 4: a frame whose data nests deeply (``[`` * 200000) killed the
connection's task with an unlogged ``RecursionError`` ("Task exception was never retrieved").
Now such data is one ``error`` event and the connection reads on; nesting inside the header
line (its lengths unreadable, so the stream cannot be framed) closes the connection with one
WARNING. And finding 1's kind on the wire: one utterance's audio is bounded like a file's."""

from __future__ import annotations

import asyncio
import json
import logging
from types import SimpleNamespace

import pytest
from wyoming.audio import AudioChunk, AudioStart

from hub.audio.format import BYTES_PER_SECOND
from hub.audio.load import MAX_AUDIO_S
from hub.errors import BadInputError
from hub.wyoming.asr import AsrSession
from hub.wyoming.framing import FrameError, parse_header

from fakes import make_hub, settings
from wyoming_support import READ_TIMEOUT_S, Server, free_port

DEEP = b"[" * 200_000 + b"]" * 200_000


@pytest.fixture(scope="module")
def server():
    hub = make_hub(entry="run")
    hub.engines.warm(["rules"])
    srv = Server(hub, free_port())
    yield srv
    srv.stop()


def _frame(event_type: str, data: bytes = b"") -> bytes:
    header = {"type": event_type, **({"data_length": len(data)} if data else {})}
    return json.dumps(header).encode() + b"\n" + data


async def _answers(port: int, wire: bytes, count: int) -> tuple[list[dict], bytes]:
    """Write ``wire``, read ``count`` answers (headers, data merged), then what is left until
    the hub closes or 1 s passes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(wire)
        await writer.drain()
        out = []
        for _ in range(count):
            header = json.loads(await asyncio.wait_for(reader.readline(), READ_TIMEOUT_S))
            if header.get("data_length"):
                body = await asyncio.wait_for(
                    reader.readexactly(header["data_length"]), READ_TIMEOUT_S
                )
                header.setdefault("data", {}).update(json.loads(body))
            out.append(header)
        try:
            rest = await asyncio.wait_for(reader.read(), READ_TIMEOUT_S)
        except TimeoutError:
            rest = b"(still open)"
        return out, rest
    finally:
        writer.close()


def test_finding4_deeply_nested_data_is_one_error_and_the_connection_reads_on(server, caplog):
    wire = (
        _frame("recognize", DEEP)
        + _frame("ping", b'{"text": "still here"}')
        + _frame("recognize", b'{"text": "turn on the kitchen light"}')
    )
    (error, pong, intent), rest = asyncio.run(_answers(server.port, wire, 3))
    assert error["type"] == "error" and error["data"]["code"] == "BadInputError"
    assert error["data"]["text"].startswith("recognize: data nests deeper than"), error
    assert pong["type"] == "pong" and pong["data"]["text"] == "still here"
    assert intent["type"] == "intent" and intent["data"]["name"] == "HassTurnOn"
    assert rest == b"(still open)"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_finding4_nesting_inside_the_header_line_closes_with_one_warning(server, caplog):
    nested = b'{"type": "ping", "data": {"text": ' + b"[" * 30_000 + b"]" * 30_000 + b"}}\n"
    assert len(nested) < 1 << 16  # under the header line limit: read whole, then parsed
    with caplog.at_level(logging.WARNING, logger="hub.wyoming"):
        answers, rest = asyncio.run(_answers(server.port, nested + _frame("ping"), 0))
    assert answers == [] and rest == b""  # closed by the hub, nothing answered
    warnings = [r.getMessage() for r in caplog.records if r.name == "hub.wyoming"]
    assert len(warnings) == 1 and "closing the connection: header nests deeper" in warnings[0]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_finding4_header_recursion_is_a_frame_error():
    with pytest.raises(FrameError, match="header nests deeper than"):
        parse_header(b'{"type": "x", "data": ' + DEEP + b"}")


def test_finding1_one_wyoming_utterance_is_bounded_like_a_file():
    """Audio past :data:`MAX_AUDIO_S` in one utterance is refused (an ``error`` event by the
    connection's parts) instead of being kept without limit."""
    fed = bytearray()
    stream = SimpleNamespace(segments=[], accept=fed.extend)
    engines = SimpleNamespace(asr=lambda: SimpleNamespace(stream=lambda: stream))
    hub = SimpleNamespace(settings=settings(), engines=engines, on_wake=lambda: None)

    async def run(fn, *args):
        return fn(*args)

    async def send(event):
        pass

    async def go():
        asr = AsrSession(hub, run, send)
        await asr.audio_start(AudioStart(rate=16000, width=2, channels=1))
        minute = bytes(60 * BYTES_PER_SECOND)
        for _ in range(int(MAX_AUDIO_S // 60)):
            await asr.audio_chunk(AudioChunk(16000, 2, 1, minute))
        with pytest.raises(BadInputError, match="more than 600 s of audio in one utterance"):
            await asr.audio_chunk(AudioChunk(16000, 2, 1, bytes(2)))

    asyncio.run(go())
    assert len(fed) == MAX_AUDIO_S * BYTES_PER_SECOND
