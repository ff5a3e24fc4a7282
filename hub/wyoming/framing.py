"""Reading and writing Wyoming frames, every step with a timeout, every bad frame named.

A frame is one JSON header line (``type``, optional ``data``, ``data_length``,
``payload_length``), then ``data_length`` bytes of JSON data, then ``payload_length`` bytes
of payload (github.com/OHF-Voice/wyoming, "Event format"). The package's own reader turns
every error into "end of stream" or lets ``KeyError``/``IncompleteReadError`` escape; this one
says why a frame is bad (:class:`FrameError`), so the handler can log one WARNING naming the
reason and close only that connection (case BC-23 e). A frame read whole whose data is not a
JSON object (``[]``, ``"x"``, ``3``, not JSON at all) leaves the stream framed: it is returned
as :class:`BadData`, answered with one ``error`` event, and the connection reads on; so is
one whose data nests deeper than Python's JSON parser goes (``[`` * 200000: its
``RecursionError`` never escapes). A header line that nests so deep is a :class:`FrameError`
(its lengths cannot be read, so the stream cannot be framed: one WARNING, the connection
closed).
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass

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


@dataclass(frozen=True)
class BadData:
    """A whole frame (its lengths known, its bytes read) whose data is not a JSON object: the
    stream can still be framed. ``type`` is the event's type, ``reason`` what is wrong."""

    type: str
    reason: str

    @property
    def message(self) -> str:
        """One line for the ``error`` event, e.g. ``"recognize: data is not a JSON object
        (got array)"``."""
        return f"{self.type}: {self.reason}"


def _not_object(value) -> str | None:
    """Why ``value`` (the JSON of a frame's data) is no object, or None when it is one."""
    return None if isinstance(value, dict) else f"data is not a JSON object (got {_kind(value)})"


def _kind(value) -> str:
    """The JSON name of ``value``'s type."""
    for kind, name in ((bool, "boolean"), ((int, float), "number"), (str, "string")):
        if isinstance(value, kind):
            return name
    return "array" if isinstance(value, list) else "null" if value is None else "object"


def _depth() -> int:
    """About how deep JSON may nest before Python's parser gives up (its recursion limit)."""
    return sys.getrecursionlimit()


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
    except RecursionError:  # its lengths cannot be read: the stream cannot be framed
        raise FrameError(f"header nests deeper than {_depth()} levels") from None
    if not isinstance(header, dict):
        raise FrameError("header is not a JSON object")
    if not isinstance(header.get("type"), str) or not header["type"]:
        raise FrameError("header has no type")
    return header


async def read_event(
    reader: asyncio.StreamReader, idle_timeout_s: float | None
) -> Event | BadData | None:
    """The next event, :class:`BadData` for a whole frame whose data (in the header or in its
    ``data_length`` bytes) is not a JSON object, or None when the peer closed the connection
    between frames.

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
    data_length, payload_length = _length(header, "data_length"), _length(header, "payload_length")
    inline = header.get("data")
    problem = None if inline is None else _not_object(inline)
    data = dict(inline) if isinstance(inline, dict) else {}
    if data_length:
        raw = await _exactly(reader, data_length, "data")
        try:
            extra = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            extra, problem = {}, problem or f"data is not JSON ({exc})"
        except RecursionError:  # every byte of it was read: the stream is still framed
            extra, problem = {}, problem or f"data nests deeper than {_depth()} levels"
        problem = problem or _not_object(extra)
        if isinstance(extra, dict):
            data.update(extra)
    payload = await _exactly(reader, payload_length, "payload") if payload_length else None
    if problem is not None:  # every byte of the frame was read: the stream is still framed
        return BadData(header["type"], problem)
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
