"""Stream one file into a ``.part`` file, hashing as it arrives, resuming with HTTP Range.

The core is :func:`download_part`: it appends to an existing ``.part`` when the server answers
a ``Range: bytes=N-`` request with ``206 Partial Content`` (RFC 9110, section 14), and starts
over when the server ignores the range (``200``), refuses it (``416``) or names another start.
It returns the sha256 of the whole ``.part``; deciding whether that is right, and renaming, is
the caller's job (:mod:`hub.models.install`).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import socket
from pathlib import Path
from typing import BinaryIO, TextIO
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

from hub import __version__
from hub.errors import BadInputError, TransientError
from hub.models.progress import Progress
from hub.paths import open_regular

NETWORK_TIMEOUT_S = 30.0
"""Seconds to wait for a connection, and for each read of the body."""
CHUNK_BYTES = 1 << 16
"""Bytes read and hashed at a time."""
_CONTENT_RANGE_RE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")


class NetworkError(TransientError):
    """The host cannot be reached, answered with an HTTP error, or the transfer broke off.

    ``hub models fetch`` exits with 3 on it; a broken-off transfer keeps its ``.part``.
    """


class ChecksumError(BadInputError):
    """The bytes received are not the file the manifest names (wrong size or sha256)."""


def host_of(url: str) -> str:
    """``host[:port]`` of a URL, for messages."""
    return urlsplit(url).netloc or url


def _reason(exc: BaseException) -> str:
    """A short reason for a network failure (``connection refused``, ``timed out``, ...)."""
    if isinstance(exc, URLError) and not isinstance(exc, HTTPError):
        exc = exc.reason if isinstance(exc.reason, BaseException) else exc
    if isinstance(exc, socket.gaierror):
        return f"name not resolved ({exc.strerror or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


def _content_range_start(resp) -> int | None:
    """Start offset of a 206 answer's ``Content-Range``, or None when it cannot be read."""
    match = _CONTENT_RANGE_RE.match(resp.headers.get("Content-Range", "").strip())
    return int(match.group(1)) if match else None


def _open_http(url: str, offset: int, timeout: float) -> tuple[BinaryIO | None, int, int]:
    """GET ``url`` from byte ``offset``: ``(body, start, full_size)``; body None on ``416``.

    ``start`` is where the body begins in the file (``offset`` on 206, else 0); ``full_size``
    is the whole file's length when the server says (else 0).

    Raises:
        NetworkError: unreachable host, an HTTP error status, or a broken connection.
    """
    request = Request(url, headers={"User-Agent": f"hub/{__version__}",
                                    "Accept-Encoding": "identity"})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        resp = urlopen(request, timeout=timeout)  # noqa: S310 - URL comes from the manifest
    except HTTPError as exc:
        exc.close()
        if exc.code == 416 and offset:
            return None, 0, 0
        raise NetworkError(f"download failed: {url}: HTTP {exc.code} {exc.reason}",
                           node="models") from None
    except (URLError, OSError, http.client.HTTPException) as exc:
        raise NetworkError(f"cannot reach {url}: {_reason(exc)}", node="models") from None
    length = int(resp.headers.get("Content-Length") or 0)
    if resp.status == 206 and _content_range_start(resp) == offset:
        total = resp.headers.get("Content-Range", "").rsplit("/", 1)[-1]
        return resp, offset, int(total) if total.isdigit() else 0
    if resp.status == 206:  # a range we did not ask for: start over without one
        resp.close()
        return _open_http(url, 0, timeout)
    return resp, 0, length


def _open_local(path: Path, offset: int) -> tuple[BinaryIO, int, int]:
    """Open a file copied by hand as if it were downloaded, from byte ``offset``.

    Raises:
        BadInputError: the file cannot be read.
    """
    try:
        handle = open_regular(path)  # a FIFO or device could be read forever
        size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror or exc}", node="models") from None
    start = offset if offset <= size else 0
    handle.seek(start)
    return handle, start, size


def _open_source(source: str | Path, offset: int, timeout: float):
    """Open an http(s) URL or a local file from ``offset``; see :func:`_open_http`."""
    if isinstance(source, Path):
        return _open_local(source, offset)
    return _open_http(source, offset, timeout)


def _hash_prefix(part: Path, length: int) -> "hashlib._Hash":
    """A sha256 object fed with the first ``length`` bytes of ``part``."""
    hasher = hashlib.sha256()
    if length:
        with open_regular(part) as handle:
            while chunk := handle.read(min(CHUNK_BYTES, length)):
                hasher.update(chunk)
                length -= len(chunk)
                if not length:
                    break
    return hasher


def sha256_file(path: Path) -> str:
    """Hex sha256 of a whole file, read in chunks."""
    return _hash_prefix(path, path.stat().st_size).hexdigest()


def _existing_bytes(part: Path, expected: int) -> int:
    """Bytes of ``part`` worth keeping: its size, or 0 (removed) when it is longer than the file."""
    size = part.stat().st_size if part.exists() else 0
    if expected and size > expected:
        part.unlink()
        return 0
    return size


class _Broken(Exception):
    """Reading the body failed (reset, timeout, TLS error); carries a short reason."""


def _read(body: BinaryIO) -> bytes:
    """The next chunk of ``body``; b"" at its end.

    Raises:
        _Broken: the transfer failed while reading (never for errors writing the ``.part``).
    """
    try:
        return body.read(CHUNK_BYTES)
    except (OSError, http.client.HTTPException) as exc:
        raise _Broken(_reason(exc)) from None


def _copy(body: BinaryIO, out: BinaryIO, hasher, progress: Progress, limit: int) -> int:
    """Copy ``body`` to ``out`` until it ends, hashing; return bytes copied.

    Raises:
        ChecksumError: more than ``limit`` bytes arrived (``limit`` 0: no limit).
        _Broken: reading failed.
    """
    copied = 0
    while chunk := _read(body):
        out.write(chunk)
        hasher.update(chunk)
        copied += len(chunk)
        progress.update(len(chunk))
        if limit and copied > limit:
            raise ChecksumError("the server sent more bytes than the manifest's size",
                                node="models")
    return copied


def download_part(source: str | Path, part: Path, expected_size: int = 0, *,
                  label: str | None = None, stream: TextIO | None = None,
                  timeout: float = NETWORK_TIMEOUT_S) -> str:
    """Fetch ``source`` (URL or local file) into ``part``, resuming it; return its sha256.

    A complete ``.part`` (``expected_size`` bytes) is only hashed. A longer one is removed.

    Raises:
        NetworkError: unreachable, HTTP error, or the transfer broke off (``part`` is kept).
        ChecksumError: the server's size differs from ``expected_size`` (``part`` removed).
        OSError: the ``.part`` cannot be written (disk full, permissions).
    """
    offset = _existing_bytes(part, expected_size)
    if expected_size and offset == expected_size:
        return sha256_file(part)
    body, start, total = _open_source(source, offset, timeout)
    if body is None:  # 416: the .part cannot be resumed; start over
        part.unlink(missing_ok=True)
        body, start, total = _open_source(source, 0, timeout)
    with body:
        if expected_size and total and total != expected_size:
            part.unlink(missing_ok=True)
            raise ChecksumError(f"{host_of(str(source))} offers {total} bytes for "
                                f"{part.name.removesuffix('.part')}; the manifest says "
                                f"{expected_size}", node="models")
        hasher = _hash_prefix(part, start)
        progress = Progress(label or part.name, total or expected_size, start, stream)
        ok, want = False, total or expected_size
        try:
            with part.open("r+b" if start else "wb") as out:
                out.seek(start)
                out.truncate()
                done = start + _copy(body, out, hasher, progress, expected_size - start
                                     if expected_size else 0)
            ok = not want or done == want
        except _Broken as exc:
            done, reason = part.stat().st_size, str(exc)
        else:
            reason = "the connection closed early"
        finally:
            progress.close(ok)
    if not ok:
        raise NetworkError(f"download of {part.name.removesuffix('.part')} from "
                           f"{host_of(str(source))} stopped at {done} of {want or '?'} bytes: "
                           f"{reason}; run the same command again to resume", node="models")
    return hasher.hexdigest()
