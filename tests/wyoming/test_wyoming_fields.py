"""Wyoming events whose data fields are missing or of the wrong type (a ``synthesize`` whose
``text`` is an int or null, ``{}``, an ``audio-start`` whose rate is a string...): each gets
one ``error`` event naming the field and its type, and the connection stays open for the next
event. A real socket client (the ``wyoming`` package's), as the other Wyoming tests."""

from __future__ import annotations

import asyncio

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.ping import Ping

from hub.wyoming.fields import FIELDS, problem

from fakes import make_hub
from wyoming_support import READ_TIMEOUT_S, Server, free_port, read_until

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
    ("ping", {"text": 5}, "ping: 'text' must be a string (got int)"),
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
    events = [Event(type=kind, data=data) for kind, data, _ in BAD if kind != "ping"]
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
