"""Remote engine against a real OpenAI-compatible SSE server on 127.0.0.1 (http.server)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hub.errors import FatalError, InvalidOutputError, TimeoutError_, TransientError
from hub.llm import make_llm
from hub.llm.remote import RemoteEngine
from hub.settings import HomeSettings, LlmSettings

from fakes import wait_for

HOME = HomeSettings(
    areas=({"name": "Kitchen"},),
    entities=({"name": "Kitchen Light", "domain": "light", "area": "Kitchen"},),
)
INTENTS = ("HassTurnOn", "HassTurnOff")


class Server:
    """A tiny chat-completions server: replies with ``pieces`` as SSE, optionally stalling."""

    def __init__(self):
        self.pieces: list[str] = []
        self.status = 200
        self.raw_events: list[str] | None = None
        self.stall_after: int | None = None
        self.release = threading.Event()
        self.requests: list[tuple[str, dict]] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, body))
                self.send_response(server.status)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if server.status != 200:
                    self.wfile.write(b"model not loaded")
                    return
                for i, event in enumerate(server.events()):
                    if server.stall_after is not None and i == server.stall_after:
                        server.release.wait(600)  # until close(): longer than any join
                    try:
                        self.wfile.write(f"data: {event}\n\n".encode())
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return  # the hub stopped reading (a stop or timeout): as a server does

        return Handler

    def events(self) -> list[str]:
        if self.raw_events is not None:
            return self.raw_events
        chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
        chunks += [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in self.pieces]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        return [json.dumps(c) for c in chunks] + ["[DONE]"]

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def engine(url: str, **kw) -> RemoteEngine:
    return make_llm(LlmSettings(url=url, **kw), HOME, INTENTS)


def test_classify_streams_the_json_and_sends_the_schema(server):
    server.pieces = [
        '{"intent": "Hass',
        'TurnOn", "slots": {"name": "Kitchen Light"}, ',
        '"confidence": 0.9}',
    ]
    raw = engine(server.url, remote_model="smol").classify("kitchen light on please")
    assert raw == '{"intent": "HassTurnOn", "slots": {"name": "Kitchen Light"}, "confidence": 0.9}'
    path, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["stream"] is True and body["model"] == "smol"
    assert body["messages"][-1] == {"role": "user", "content": "kitchen light on please"}
    branches = body["response_format"]["json_schema"]["schema"]["oneOf"]
    intents = [b["properties"]["intent"]["const"] for b in branches]
    assert intents == ["HassTurnOn", "HassTurnOff", "answer", "none"]
    assert branches[0]["properties"]["slots"]["properties"]["name"]["enum"] == ["Kitchen Light"]
    assert branches[2]["properties"]["slots"]["properties"] == {}


def test_answer_yields_at_most_two_sentences(server):
    server.pieces = ["The kitchen", " light is on. It is", " bright! A third", " one."]
    assert list(engine(server.url).answer("is the light on?")) == [
        "The kitchen light is on.",
        "It is bright!",
    ]


def test_cancel_stops_a_stalled_stream(server):
    server.pieces = ["First sentence. ", "Second sentence."]
    server.stall_after = 2  # role chunk, first piece, then the server stalls
    cancel, got = threading.Event(), []
    # the read timeout is far off: only the cancel can end the stalled stream within the join
    stream = engine(server.url, timeout_s=600.0).answer("tell me", cancel)
    worker = threading.Thread(target=lambda: got.extend(stream))
    worker.start()
    assert wait_for(lambda: got, 60)  # list.extend appends each sentence as it is yielded
    cancel.set()
    worker.join(timeout=60.0)
    assert not worker.is_alive()
    assert got == ["First sentence."]


def test_cancelled_classify_raises_timeout(server):
    server.pieces = ['{"intent": ', '"HassTurnOn"}']
    server.stall_after = 1
    cancel, errors = threading.Event(), []

    def run():
        try:
            engine(server.url, timeout_s=600.0).classify("x", cancel)  # only cancel ends it
        except TimeoutError_ as exc:
            errors.append(exc.kind)

    worker = threading.Thread(target=run)
    worker.start()
    threading.Event().wait(0.2)
    cancel.set()
    worker.join(timeout=60.0)
    assert not worker.is_alive()
    assert errors == ["timeout"]


def test_silent_server_times_out(server):
    server.pieces = ["Hello."]
    server.stall_after = 0
    with pytest.raises(TimeoutError_):
        list(engine(server.url, timeout_s=0.3).answer("hi"))


@pytest.mark.parametrize(
    ("status", "error"), [(503, TransientError), (429, TransientError), (404, FatalError)]
)
def test_http_errors_map_to_the_error_tree(server, status, error):
    server.status = status
    with pytest.raises(error) as info:
        engine(server.url).classify("x")
    assert f"HTTP {status}" in info.value.message


def test_malformed_event_is_invalid_output(server):
    server.raw_events = ['{"choices": [{"delta": {"content": "ok"}}]}', "not json"]
    with pytest.raises(InvalidOutputError):
        engine(server.url).classify("x")


def test_refused_connection_is_transient():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(TransientError):
        engine(f"http://127.0.0.1:{port}").classify("x")


def test_bad_url_is_fatal():
    with pytest.raises(FatalError):
        engine("ftp://example")
