"""Run one node's work with a timeout that stops the work (design.md, "Timeouts that stop the
work"), and map any exception into the :mod:`hub.errors` tree.

The work runs in its own worker thread and receives a :class:`threading.Event`; on timeout the
event is set and the caller gets :class:`~hub.errors.TimeoutError_` at once. Cooperative work
(llama.cpp stopping criteria, ASR feeding loop, TTS per sentence) checks the event and stops;
work that never checks it is abandoned, never waited for. Threads are bounded: each call takes
one of :data:`MAX_WORKERS` slots until its worker ends, so hung workers cannot pile up; with no
slot free the call fails fast with :class:`~hub.errors.TransientError`.

At interpreter exit, workers still running (told to stop) are joined for up to
:data:`EXIT_JOIN_S`: native engines (llama.cpp, onnxruntime) abort the whole process
("terminate called without an active exception", exit 134) when it ends under them.
"""

from __future__ import annotations

import atexit
import errno
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hub.errors import FatalError, HubError, InvalidOutputError, TimeoutError_, TransientError

T = TypeVar("T")

MAX_WORKERS = 8
"""Most worker threads alive at once, abandoned (still running) ones included."""

TRANSIENT_ERRNOS = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EBUSY, errno.EINTR})
"""``OSError`` numbers that mean "busy, try again"."""

_MAX_MESSAGE = 200

EXIT_JOIN_S = 10.0
"""At exit, the longest wait in all for abandoned workers to stop."""

_LIVE: set[threading.Thread] = set()
_LIVE_LOCK = threading.Lock()


def join_workers(timeout_s: float = EXIT_JOIN_S) -> int:
    """Wait up to ``timeout_s`` for every worker thread to end; how many are still running."""
    end = time.monotonic() + timeout_s
    with _LIVE_LOCK:
        live = list(_LIVE)
    for thread in live:
        thread.join(max(0.0, end - time.monotonic()))
    return sum(t.is_alive() for t in live)


atexit.register(join_workers)


class WorkerSlots:
    """A bounded count of worker threads; the orchestrator may own its own."""

    def __init__(self, limit: int = MAX_WORKERS):
        self.limit = limit
        self._free = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._busy = 0

    def try_take(self) -> bool:
        """Take a slot if one is free, without waiting."""
        if not self._free.acquire(blocking=False):
            return False
        with self._lock:
            self._busy += 1
        return True

    def give_back(self) -> None:
        """Return a slot (the worker ended)."""
        with self._lock:
            self._busy -= 1
        self._free.release()

    @property
    def busy(self) -> int:
        """Worker threads alive now."""
        with self._lock:
            return self._busy


DEFAULT_SLOTS = WorkerSlots()


def _one_line(node: str, exc: BaseException) -> str:
    """``"node: Type: message"`` on one line, at most 200 characters."""
    text = " ".join(str(exc).split()) or "(no message)"
    text = f"{node}: {type(exc).__name__}: {text}"
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def _is_port_audio_error(exc: BaseException) -> bool:
    sd = sys.modules.get("sounddevice")  # never import it here: it loads PortAudio
    return sd is not None and isinstance(exc, getattr(sd, "PortAudioError", ()))


def classify(exc: BaseException, node: str) -> HubError:
    """Map ``exc`` raised in ``node`` to a :class:`~hub.errors.HubError` (the original is the
    caller's to chain with ``raise ... from exc``).

    - a HubError passes through (its ``node`` filled in when missing);
    - ``TimeoutError`` (``socket.timeout``) -> timeout;
    - ``ConnectionError``, ``OSError`` with EAGAIN/EWOULDBLOCK/EBUSY/EINTR,
      ``sounddevice.PortAudioError`` -> transient;
    - ``ValueError`` (``json.JSONDecodeError`` included) from parsing output -> invalid_output;
    - ``FileNotFoundError`` (a missing model), ``MemoryError``, ``ImportError`` and anything
      else -> fatal.
    """
    if isinstance(exc, HubError):
        if exc.node is None:
            exc.node = node
        return exc
    message = _one_line(node, exc)
    if isinstance(exc, TimeoutError):
        return TimeoutError_(message, node=node)
    if isinstance(exc, ConnectionError) or _is_port_audio_error(exc):
        return TransientError(message, node=node)
    if isinstance(exc, OSError) and exc.errno in TRANSIENT_ERRNOS:
        return TransientError(message, node=node)
    if isinstance(exc, (json.JSONDecodeError, ValueError)):
        return InvalidOutputError(message, node=node)
    return FatalError(message, node=node)


class _Outcome:
    """What the worker produced: a value or an exception."""

    __slots__ = ("value", "error", "done")

    def __init__(self):
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()


def _start_worker(fn, cancel: threading.Event, node: str, slots: WorkerSlots) -> _Outcome:
    outcome = _Outcome()

    def work():
        try:
            outcome.value = fn(cancel)
        except BaseException as exc:  # handed to the caller, classified there
            outcome.error = exc
        finally:
            slots.give_back()
            outcome.done.set()
            with _LIVE_LOCK:
                _LIVE.discard(threading.current_thread())

    thread = threading.Thread(target=work, name=f"hub-{node}", daemon=True)
    with _LIVE_LOCK:
        _LIVE.add(thread)
    thread.start()
    return outcome


def call_with_timeout(
    fn: Callable[[threading.Event], T],
    timeout_s: float,
    *,
    node: str,
    slots: WorkerSlots = DEFAULT_SLOTS,
) -> T:
    """Run ``fn(cancel)`` in a worker thread and return its result within ``timeout_s``.

    Args:
        fn: the node's work; it should return soon after ``cancel`` is set.
        timeout_s: seconds to wait (``TimeoutPolicy.timeout``, already capped by the deadline).
        node: the graph node, named in errors.
        slots: the bound on worker threads.

    Raises:
        TimeoutError_: ``timeout_s`` passed (or was <= 0); ``cancel`` has been set.
        TransientError: every worker slot is held by a running (possibly hung) worker.
        HubError: whatever ``fn`` raised, mapped by :func:`classify`.
    """
    if timeout_s <= 0:
        raise TimeoutError_(f"{node}: no time left in the deadline", node=node)
    if not slots.try_take():
        raise TransientError(
            f"{node}: all {slots.limit} worker threads are busy (earlier calls still running)",
            node=node,
        )
    cancel = threading.Event()
    outcome = _start_worker(fn, cancel, node, slots)
    try:
        outcome.done.wait(timeout_s)
    finally:
        if not outcome.done.is_set():
            cancel.set()  # also when the caller is interrupted
    if not outcome.done.is_set():
        raise TimeoutError_(f"{node}: timed out after {timeout_s:.2f} s", node=node)
    if outcome.error is not None:
        raise classify(outcome.error, node) from outcome.error
    return outcome.value
