"""Wyoming events whose data fields are missing or of the wrong type (a ``synthesize`` whose
``text`` is an int or null, ``{}``, an ``audio-start`` whose rate is a string...): each gets
one ``error`` event naming the field and its type, and the connection stays open for the next
event. A real socket client (the ``wyoming`` package's), as the other Wyoming tests.

Found by the breaker: a ``ping`` with a wrong-typed field got an ``error`` and no ``pong`` (a
keep-alive must never fail: its ``text`` goes back as it came, as the package's own servers
and Home Assistant do), and a frame whose data is not a JSON object (``[]``, ``"x"``, ``3``)
closed the connection without an ``error``: it gets one naming the problem and the connection
reads on (its framing is intact). Tested with raw wire bytes (every read within 1 s) and with
the package's client."""

from __future__ import annotations

import asyncio
import json

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.ping import Ping

from hub.wyoming.fields import FIELDS, problem

from fakes import make_hub
from wyoming_support import READ_TIMEOUT_S, Server, free_port, read_until

ODD_PINGS = [{"text": 5}, {"text": {"id": 1}}, {"text": ["a"]}, {"text": None}, {}, {"x": 1}]
"""Pings with an odd or extra field, or none: each is answered with a pong (text as sent)."""

NOT_OBJECTS = [b"[]", b'"x"', b"3", b"null", b"{not json"]
"""A frame's data bytes that are no JSON object (the last not JSON at all)."""

BAD = [
    ("synthesize", {"text": 5}, "synthesize: 'text' must be a string (got int)"),
    ("synthesize", {"text": None}, "synthesize: 'text' must be a string (got null)"),
    ("synthesize", {}, "synthesize: 'text' must be a string (it is missing)"),
    ("synthesize", {"text": "hi", "voice": "joe"}, "synthesize: 'voice' must be an object"),
    ("synthesize-start", {"voice": ["joe"]}, "synthesize-start: 'voice' must be an object"),
    ("synthesize-chunk", {"text": 3.5}, "synthesize-chunk: 'text' must be a string"),
    ("transcript", {"text": 7}, "transcript: 'text' must be a string (got int)"),
    ("transcript", {}, "transcript: 'text' must be a string (it is missing)"),
    ("transcript", {"text": "hi", "context": "x"}, "transcript: 'context' must be an object"),
    ("recognize", {"text": ["turn on"]}, "recognize: 'text' must be a string (got list)"),
    ("recognize", {"text": None}, "recognize: 'text' must be a string (got null)"),
    ("transcribe", {"language": 5}, "transcribe: 'language' must be a string"),
    ("transcribe", {"transcript_names": "Kitchen"}, "transcribe: 'transcript_names' must be"),
    ("audio-start", {"rate": "16000", "width": 2, "channels": 1}, "audio-start: 'rate' must be"),
    ("audio-start", {"rate": 16000, "width": 2.0, "channels": 1}, "audio-start: 'width' must be"),
    ("audio-start", {"rate": 16000, "width": 2, "channels": True}, "audio-start: 'channels'"),
    ("audio-start", {"rate": 16000, "width": 2}, "audio-start: 'channels' must be an integer"),
    ("audio-chunk", {"rate": None, "width": 2, "channels": 1}, "audio-chunk: 'rate' must be"),
    ("audio-stop", {"timestamp": "now"}, "audio-stop: 'timestamp' must be an integer (got str)"),
    ("detect", {"names": "okay_nabu"}, "detect: 'names' must be a list of strings (got str)"),
]


@pytest.fixture(scope="module")
def server():
    hub = make_hub(entry="run")
    hub.engines.warm(["rules"])  # a recognize is answered within the 1 s read timeout
    srv = Server(hub, free_port())
    yield srv
    srv.stop()


async def _error_then_pong(port: int, events: list[Event]) -> tuple[list[Event], list[Event]]:
    """Send each event and read its one answer; then ping: (answers, events up to pong)."""
    async with AsyncTcpClient("127.0.0.1", port) as client:
        answers = []
        for event in events:
            await client.write_event(event)
            answers.append(await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S))
        await client.write_event(Ping(text="after").event())
        return answers, await read_until(client, "pong")


@pytest.mark.parametrize(("kind", "data", "message"), BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD])
def test_a_wrong_typed_field_is_one_error_and_the_connection_stays_open(
    server, kind, data, message
):
    [error], after = asyncio.run(_error_then_pong(server.port, [Event(type=kind, data=data)]))
    assert error.type == "error" and error.data["code"] == "BadInputError"
    assert error.data["text"].startswith(message), error.data["text"]
    assert [e.type for e in after] == ["pong"] and after[0].data["text"] == "after"


def test_bad_events_in_a_row_each_get_their_error_then_a_good_one_is_answered(server):
    events = [Event(type=kind, data=data) for kind, data, _ in BAD]
    events.append(Event(type="recognize", data={"text": "turn on the kitchen light"}))
    answers, _ = asyncio.run(_error_then_pong(server.port, events))
    assert [a.type for a in answers[:-1]] == ["error"] * (len(events) - 1)
    assert answers[-1].type == "intent" and answers[-1].data["name"] == "HassTurnOn"


def test_every_event_the_server_reads_is_in_the_table():
    from hub.wyoming.handler import KNOWN

    assert KNOWN | {"ping"} <= set(FIELDS)


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("synthesize", {"text": "Hello.", "voice": {"name": "joe"}}),
        ("transcribe", {"language": "en", "transcript_names": ["Kitchen Light"]}),
        ("audio-start", {"rate": 16000, "width": 2, "channels": 1, "timestamp": 0}),
        ("audio-stop", {}),
        ("detect", {"names": ["okay_nabu"]}),
        ("ping", {}),
        ("synthesize-stop", {}),
    ],
)
def test_well_formed_events_pass(kind, data):
    assert problem(Event(type=kind, data=data)) is None


def raw(event_type: str, data: bytes = b"", header_data=None) -> bytes:
    """One frame written by hand: a header line (``data`` inline when ``header_data`` is
    given), then ``data`` as its ``data_length`` bytes."""
    header: dict = {"type": event_type}
    if header_data is not None:
        header["data"] = header_data
    if data:
        header["data_length"] = len(data)
    return json.dumps(header).encode() + b"\n" + data


async def read_raw(reader: asyncio.StreamReader) -> dict:
    """The next frame the hub sends, read by hand, every read within 1 s: its header with
    the data merged in."""
    header = json.loads(await asyncio.wait_for(reader.readline(), READ_TIMEOUT_S))
    if header.get("data_length"):
        body = await asyncio.wait_for(reader.readexactly(header["data_length"]), READ_TIMEOUT_S)
        header.setdefault("data", {}).update(json.loads(body))
    if header.get("payload_length"):
        await asyncio.wait_for(reader.readexactly(header["payload_length"]), READ_TIMEOUT_S)
    return header


async def _raw_session(port: int, frames: list[bytes], answers: int) -> list[dict]:
    """Write ``frames`` on one connection and read ``answers`` frames back."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"".join(frames))
        await writer.drain()
        return [await read_raw(reader) for _ in range(answers)]
    finally:
        writer.close()


@pytest.mark.parametrize("data", ODD_PINGS, ids=str)
def test_bc24_a_ping_with_an_odd_field_gets_its_pong_raw(server, data):
    frames = [raw("ping", json.dumps(data).encode() if data else b""), raw("ping", b'{"text":"2"}')]
    first, second = asyncio.run(_raw_session(server.port, frames, 2))
    assert first["type"] == "pong" and first.get("data", {}).get("text") == data.get("text")
    assert second["type"] == "pong" and second["data"]["text"] == "2"


@pytest.mark.parametrize("data", ODD_PINGS, ids=str)
def test_bc24_a_ping_with_an_odd_field_gets_its_pong_from_the_package_client(server, data):
    async def go():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Event(type="ping", data=data))
            return await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S)

    pong = asyncio.run(go())
    assert pong.type == "pong" and pong.data.get("text") == data.get("text")


@pytest.mark.parametrize("body", NOT_OBJECTS, ids=lambda b: b.decode())
def test_bc23_e_data_that_is_no_object_gets_one_error_and_the_connection_reads_on(server, body):
    frames = [
        raw("recognize", body),
        raw("ping", b'{"text": "still here"}'),
        raw("recognize", b'{"text": "turn on the kitchen light"}'),
    ]
    error, pong, intent = asyncio.run(_raw_session(server.port, frames, 3))
    assert error["type"] == "error" and error["data"]["code"] == "BadInputError"
    assert error["data"]["text"].startswith("recognize: data is not"), error
    assert pong["type"] == "pong" and pong["data"]["text"] == "still here"
    assert intent["type"] == "intent" and intent["data"]["name"] == "HassTurnOn"


@pytest.mark.parametrize("inline", [[], "x", 3], ids=str)
def test_bc23_e_header_data_that_is_no_object_gets_one_error_and_the_connection_reads_on(
    server, inline
):
    frames = [raw("synthesize", header_data=inline), raw("ping", b'{"text": "p"}')]
    error, pong = asyncio.run(_raw_session(server.port, frames, 2))
    assert (
        error["type"] == "error"
        and "synthesize: data is not a JSON object" in error["data"]["text"]
    )
    assert pong["type"] == "pong" and pong["data"]["text"] == "p"


@pytest.mark.parametrize("body", NOT_OBJECTS[:3], ids=lambda b: b.decode())
def test_bc24_a_ping_whose_data_is_no_object_gets_an_error_then_its_pong(server, body):
    error, pong = asyncio.run(_raw_session(server.port, [raw("ping", body)], 2))
    assert error["type"] == "error" and error["data"]["text"].startswith("ping: data is not")
    assert pong["type"] == "pong"


@pytest.mark.parametrize("data", [["turn on"], "turn on", 3], ids=str)
def test_bc23_e_data_that_is_no_object_from_the_package_client(server, data):
    async def go():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Event(type="transcript", data=data))
            error = await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S)
            await client.write_event(Ping(text="after").event())
            return error, await read_until(client, "pong")

    error, after = asyncio.run(go())
    assert error.type == "error" and error.data["text"].startswith("transcript: data is not")
    assert [e.type for e in after] == ["pong"] and after[0].data["text"] == "after"
