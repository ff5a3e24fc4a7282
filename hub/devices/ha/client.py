"""One WebSocket connection to Home Assistant (``websockets``): login, numbered commands,
event subscriptions. Source: https://developers.home-assistant.io/docs/api/websocket

- Login: ``auth_required`` -> ``{"type": "auth", "access_token"}`` -> ``auth_ok`` or
  ``auth_invalid``, all within ``timeout_s`` (HA drops a client that sends no auth within
  10 s; a host that accepts TCP but never says ``auth_required`` is given up on, BC-41 c).
- Message ids restart at 1 on every connection. A command's result is awaited at most
  ``timeout_s``; when the socket closes, every pending command fails at once with
  :class:`LinkClosed` (its outcome is unknown, BC-41 b).
- Keep-alive: a WebSocket ping every 30 s; no pong within 10 s closes the connection (BC-41 d).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import connect

from hub.errors import ConfigError
from hub.paths import read_user_text

log = logging.getLogger("hub.devices.ha")

PING_S, PONG_S = 30.0, 10.0
"""WebSocket ping interval and the longest wait for its pong."""

MAX_MESSAGE_BYTES = 64 << 20
"""Largest WebSocket message taken from Home Assistant (its registry lists of a large home
are a few MB): a bigger one ends the connection instead of being read without limit."""


class HaError(Exception):
    """Home Assistant answered a command with an error: ``code`` (``not_found``,
    ``service_validation_error``, ``home_assistant_error``, ...) and its message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


class AuthError(HaError):
    """Home Assistant rejected the token (``auth_invalid``)."""


class LinkClosed(HaError):
    """The connection closed (or never opened) before an answer came."""


def websocket_url(url: str) -> str:
    """``http://host:8123`` -> ``ws://host:8123/api/websocket`` (``https`` -> ``wss``)."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if not path.endswith("/api/websocket"):
        path += "/api/websocket"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


class HaClient:
    """A connection to Home Assistant; use ``async with HaClient(...) as ha``.

    Args:
        url: Home Assistant's address (``http://host:8123``).
        token: a long-lived access token.
        timeout_s: longest wait for the handshake and login, and for each answer.
    Raises (from :meth:`open`):
        AuthError: the token was rejected. LinkClosed: no connection, or no login in time.
    """

    def __init__(self, url: str, token: str, timeout_s: float = 10.0) -> None:
        self.url, self.token, self.timeout_s = websocket_url(url), token, timeout_s
        self.ws = None
        self.version = ""
        self._next_id = 1
        self._pending: dict[int, asyncio.Future] = {}
        self._events: dict[int, object] = {}
        self._reader: asyncio.Task | None = None
        self.closed = asyncio.Event()

    async def __aenter__(self) -> HaClient:
        await self.open()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def open(self) -> str:
        """Connect and log in; Home Assistant's version."""
        try:
            self.ws = await asyncio.wait_for(
                connect(
                    self.url,
                    open_timeout=self.timeout_s,
                    ping_interval=PING_S,
                    ping_timeout=PONG_S,
                    max_size=MAX_MESSAGE_BYTES,
                    proxy=None,
                ),
                self.timeout_s,
            )
            first = await self._recv()
            if first.get("type") != "auth_required":
                raise LinkClosed("protocol", f"expected auth_required, got {first.get('type')}")
            await self.ws.send(json.dumps({"type": "auth", "access_token": self.token}))
            answer = await self._recv()
        except (TimeoutError, OSError, ValueError) as exc:
            await self.close()
            raise LinkClosed("unreachable", str(exc) or type(exc).__name__) from None
        except Exception as exc:
            await self.close()
            raise LinkClosed("unreachable", f"{type(exc).__name__}: {exc}") from None
        if answer.get("type") != "auth_ok":
            await self.close()
            raise AuthError("auth_invalid", answer.get("message") or "token rejected")
        self.version = str(answer.get("ha_version", ""))
        self._reader = asyncio.get_running_loop().create_task(self._read())
        return self.version

    async def _recv(self) -> dict:
        text = await asyncio.wait_for(self.ws.recv(), self.timeout_s)
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a Home Assistant message is not a JSON object")
        return data

    async def _read(self) -> None:
        """Route results to their commands and events to their subscriptions until closed."""
        try:
            async for text in self.ws:
                data = json.loads(text)
                for message in data if isinstance(data, list) else [data]:
                    self._route(message)
        except Exception as exc:
            log.info("Home Assistant connection ended: %s", exc or type(exc).__name__)
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(LinkClosed("closed", "the connection closed"))
            self._pending.clear()

    def _route(self, message: dict) -> None:
        mid = message.get("id")
        if message.get("type") == "event":
            callback = self._events.get(mid)
            if callback is not None:
                callback(message.get("event"))
            return
        future = self._pending.pop(mid, None)
        if future is None or future.done():
            return
        if message.get("success", True):
            future.set_result(message.get("result"))
        else:
            err = message.get("error") or {}
            future.set_exception(
                HaError(str(err.get("code", "unknown_error")), str(err.get("message", "")))
            )

    async def send(self, kind: str, **fields) -> tuple[int, asyncio.Future]:
        """Send one command (``{"id", "type": kind, **fields}``); its id and its result."""
        if self.ws is None or self.closed.is_set():
            raise LinkClosed("closed", "not connected")
        mid, self._next_id = self._next_id, self._next_id + 1
        future = self._pending[mid] = asyncio.get_running_loop().create_future()
        try:
            await self.ws.send(json.dumps({"id": mid, "type": kind, **fields}))
        except Exception as exc:
            self._pending.pop(mid, None)
            raise LinkClosed("closed", f"{type(exc).__name__}: {exc}") from None
        return mid, future

    async def request(self, kind: str, **fields):
        """One command and its result.

        Raises:
            HaError: HA answered with an error. LinkClosed: the socket closed first.
            asyncio.TimeoutError: no answer within ``timeout_s``.
        """
        mid, future = await self.send(kind, **fields)
        try:
            return await asyncio.wait_for(future, self.timeout_s)
        finally:
            self._pending.pop(mid, None)

    async def subscribe(self, kind: str, callback, **fields) -> int:
        """A subscription command (``subscribe_events``, ``subscribe_entities``, ...); each
        event is passed to ``callback(event)``. Its id."""
        self._events[self._next_id] = callback  # events may follow the result at once
        mid, future = await self.send(kind, **fields)
        await asyncio.wait_for(future, self.timeout_s)
        return mid

    async def close(self) -> None:
        """Close the socket (pending commands fail at once)."""
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        self.closed.set()


def read_token(settings) -> str:
    """The access token: ``[homeassistant] token_file`` (first line), else the environment
    variable ``token_env``.

    Raises:
        ConfigError: no token, or the file cannot be read.
    """
    if settings.token_file:
        try:
            token = read_user_text(Path(settings.token_file).expanduser(), 64 << 10).strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"homeassistant.token_file: {getattr(exc, 'strerror', None) or exc}: "
                f"{settings.token_file}"
            ) from None
        if not token:
            raise ConfigError(f"homeassistant.token_file: {settings.token_file} is empty")
        return token.splitlines()[0].strip()
    token = os.environ.get(settings.token_env, "").strip()
    if not token:
        raise ConfigError(
            f"homeassistant.token_file: not set, and ${settings.token_env} is "
            f"empty: make a long-lived access token in Home Assistant (your "
            f"profile, Security) and put it in a file"
        )
    return token
