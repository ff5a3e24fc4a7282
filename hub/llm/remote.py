"""Remote engine: an OpenAI-compatible server (llama-server, Ollama) over HTTP, stdlib only.

``POST {url}/v1/chat/completions`` with ``"stream": true``; the reply is Server-Sent Events,
one ``data: {json chunk}`` line per delta, ending with ``data: [DONE]`` (OpenAI chat
completions streaming format). ``http.client`` (the layer under ``urllib.request``) is used so
that a cancel can shut the socket down: a read blocked on a stalled server returns at once.
Each socket operation has the settings' timeout. Library-internal retries: none.

Errors: refused/reset connection and HTTP 5xx/429 -> TransientError; socket timeout ->
TimeoutError_; other HTTP errors -> FatalError; a malformed event -> InvalidOutputError.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.parse
from collections.abc import Collection, Iterator

from hub.errors import FatalError, InvalidOutputError, TimeoutError_, TransientError
from hub.llm import prompts
from hub.llm.stream import stream_sentences
from hub.settings import HomeSettings, LlmSettings

CANCEL_POLL_S = 0.05
"""How often the cancel watcher looks at the cancel event while a request is open."""
CLASSIFY_MAX_TOKENS = 80
"""Longest classify output."""


class RemoteEngine:
    """:class:`hub.llm.LlmEngine` over an OpenAI-compatible chat-completions server."""

    name = "remote"

    def __init__(self, settings: LlmSettings, home: HomeSettings, intents: Collection[str]):
        url = urllib.parse.urlsplit(settings.url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise FatalError(f"llm.url: not an http(s) URL: {settings.url!r}", node="llm")
        self._url, self._settings, self._home = url, settings, home
        self._intents = tuple(intents)
        self._schema = prompts.intent_schema(self._intents, prompts.home_names(home), shared=False)

    def classify(
        self, text: str, cancel: threading.Event | None = None, strict: bool = False
    ) -> str:
        """Raw JSON text for ``text`` (schema sent as ``response_format``).

        Raises:
            TimeoutError_: cancelled, or the server was silent longer than the timeout.
            TransientError, FatalError, InvalidOutputError: see the module docstring.
        """
        body = {
            "messages": prompts.classify_messages(text, self._intents, self._home, strict),
            "max_tokens": CLASSIFY_MAX_TOKENS,
            "temperature": 0.0,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "intent", "schema": self._schema},
            },
        }
        finish: dict = {}
        raw = "".join(self._deltas(body, cancel, finish))
        if cancel is not None and cancel.is_set():
            raise TimeoutError_("llm classify cancelled", node="llm_intent")
        if finish.get("reason") == "length":  # cut JSON is never acted on
            raise InvalidOutputError(
                "llm classify output cut by the token limit", node="llm_intent"
            )
        return raw

    def answer(self, question: str, cancel: threading.Event | None = None) -> Iterator[str]:
        """At most two sentences, each yielded as soon as the server has streamed it."""
        body = {
            "messages": prompts.answer_messages(question, self._home),
            "max_tokens": self._settings.max_tokens,
            "temperature": 0.0,
        }
        finish: dict = {}
        return stream_sentences(
            self._deltas(body, cancel, finish),
            prompts.ANSWER_SENTENCES,
            cancel,
            keep_tail=lambda: finish.get("reason") != "length",
        )

    def _connect(self) -> http.client.HTTPConnection:
        """A new connection to the server with the configured timeout."""
        cls = (
            http.client.HTTPSConnection
            if self._url.scheme == "https"
            else http.client.HTTPConnection
        )
        return cls(self._url.hostname, self._url.port, timeout=self._settings.timeout_s)

    def _deltas(
        self, body: dict, cancel: threading.Event | None, finish: dict | None = None
    ) -> Iterator[str]:
        """Text deltas of one streamed chat completion; stops when ``cancel`` is set.

        ``finish["reason"]`` gets the server's ``finish_reason`` when it sends one.
        """
        body = {**body, "stream": True}
        if self._settings.remote_model:
            body["model"] = self._settings.remote_model
        path = self._url.path.rstrip("/") + "/v1/chat/completions"
        conn, done = self._connect(), threading.Event()
        try:
            conn.request(
                "POST",
                path,
                json.dumps(body).encode(),
                {"Content-Type": "application/json", "Accept": "text/event-stream"},
            )
            if cancel is not None:
                _watch(conn.sock, cancel, done)  # getresponse() may hand the socket over
            response = conn.getresponse()
            _check_status(response)
            yield from _sse_deltas(response, cancel, finish)
        except TimeoutError:
            raise TimeoutError_(f"llm server {self._settings.url} timed out", node="llm") from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            if cancel is not None and cancel.is_set():
                return
            raise TransientError(f"llm server {self._settings.url}: {exc}", node="llm") from None
        finally:
            done.set()
            conn.close()


def _watch(sock: socket.socket | None, cancel: threading.Event, done: threading.Event) -> None:
    """Shut ``sock`` down as soon as ``cancel`` is set (unblocks a pending read)."""

    def run():
        while not done.wait(CANCEL_POLL_S):
            if cancel.is_set():
                try:
                    if sock is not None:
                        sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return

    threading.Thread(target=run, name="llm-cancel", daemon=True).start()


def _check_status(response: http.client.HTTPResponse) -> None:
    """Raise the HubError for a non-200 reply."""
    if response.status == 200:
        return
    detail = response.read(200).decode("utf-8", "replace")
    message = f"llm server answered HTTP {response.status}: {detail}"
    if response.status >= 500 or response.status == 429:
        raise TransientError(message, node="llm")
    raise FatalError(message, node="llm")


def _sse_deltas(
    response, cancel: threading.Event | None, finish: dict | None = None
) -> Iterator[str]:
    """Content deltas of an OpenAI chat-completions SSE stream, until ``[DONE]`` or cancel.

    ``finish["reason"]`` is set from the chunk that carries ``finish_reason``.
    """
    for line in response:
        if cancel is not None and cancel.is_set():
            return
        line = line.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            choice = json.loads(data)["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            raise InvalidOutputError(
                f"malformed event from llm server: {data[:80]!r}", node="llm"
            ) from None
        if finish is not None and isinstance(choice, dict) and choice.get("finish_reason"):
            finish["reason"] = choice["finish_reason"]
        text = (choice.get("delta") or {}).get("content")
        if text:
            yield text
