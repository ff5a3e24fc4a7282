"""Reading and writing Wyoming frames, every step with a timeout, every bad frame named.

A frame is one JSON header line (``type``, optional ``data``, ``data_length``,
``payload_length``), then ``data_length`` bytes of JSON data, then ``payload_length`` bytes
of payload (github.com/OHF-Voice/wyoming, "Event format"). The package's own reader turns
every error into "end of stream" or lets ``KeyError``/``IncompleteReadError`` escape; this one
says why a frame is bad (:class:`FrameError`), so the handler can log one WARNING naming the
reason and close only that connection (case BC-23 e).
"""

from __future__ import annotations

import asyncio
import json

from wyoming.event import Event, async_write_event

FRAME_TIMEOUT_S = 5.0
"""Longest wait for the rest of a frame once its header line has arrived."""

WRITE_TIMEOUT_S = 5.0
"""Longest wait for one event to be written and drained (a client that stops reading)."""

LINE_LIMIT = 1 << 16
"""Longest header line (bytes): asyncio's default stream limit, as the package uses."""

MAX_BLOCK = 16 << 20
"""Largest ``data_length`` or ``payload_length`` accepted (bytes)."""


class FrameError(Exception):
    """A malformed frame; ``str(exc)`` is the reason, one line."""


def _length(header: dict, key: str) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BLOCK:
        raise FrameError(f"{key} {value!r} is not a length between 0 and {MAX_BLOCK}")
    return value


async def _exactly(reader: asyncio.StreamReader, n: int, what: str) -> bytes:
    try:
        return await asyncio.wait_for(reader.readexactly(n), FRAME_TIMEOUT_S)
    except asyncio.IncompleteReadError as exc:
        raise FrameError(
            f"connection closed inside a frame: {what} of {n} bytes, got {len(exc.partial)}"
        ) from None
    except TimeoutError:
        raise FrameError(
            f"{what} of {n} bytes not complete after {FRAME_TIMEOUT_S:.0f} s"
        ) from None


def parse_header(line: bytes) -> dict:
    """The header line as a dict with a string ``type``.

    Raises:
        FrameError: not UTF-8 JSON, not an object, or no string ``type``.
    """
    try:
        header = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise FrameError("header is not a JSON object")
    if not isinstance(header.get("type"), str) or not header["type"]:
        raise FrameError("header has no type")
    if not isinstance(header.get("data", {}), dict):
        raise FrameError("header data is not a JSON object")
    return header


async def read_event(reader: asyncio.StreamReader, idle_timeout_s: float | None) -> Event | None:
    """The next event, or None when the peer closed the connection between frames.

    Args:
        reader: the connection's stream (limit :data:`LINE_LIMIT`).
        idle_timeout_s: longest wait for a header line; then ``asyncio.TimeoutError``
            (None: no limit).
    Raises:
        FrameError: a malformed frame (the reason is the message).
        asyncio.TimeoutError: no header line within ``idle_timeout_s``.
    """
    try:
        line = await asyncio.wait_for(reader.readline(), idle_timeout_s)
    except ValueError:  # asyncio.LimitOverrunError, re-raised by readline as ValueError
        raise FrameError(f"header line longer than {LINE_LIMIT} bytes") from None
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise FrameError(f"connection closed inside a header line ({len(line)} bytes)")
    header = parse_header(line)
    data = dict(header.get("data") or {})
    data_length, payload_length = _length(header, "data_length"), _length(header, "payload_length")
    if data_length:
        raw = await _exactly(reader, data_length, "data")
        try:
            extra = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            raise FrameError(f"data is not JSON: {exc}") from None
        if not isinstance(extra, dict):
            raise FrameError("data is not a JSON object")
        data.update(extra)
    payload = await _exactly(reader, payload_length, "payload") if payload_length else None
    return Event(type=header["type"], data=data, payload=payload)


async def write_event(
    writer: asyncio.StreamWriter, event: Event, timeout_s: float = WRITE_TIMEOUT_S
) -> None:
    """Write ``event`` and drain, within ``timeout_s``.

    Raises:
        asyncio.TimeoutError: the peer did not take the bytes in time.
        ConnectionError: the peer is gone.
    """
    await asyncio.wait_for(async_write_event(event, writer), timeout_s)
