"""A native model kept in memory only while it is used (Ollama's ``keep_alive``).

:class:`Resident` owns one loaded object (a ``llama_cpp.Llama``): a call holds it through
:meth:`Resident.use`, which loads it when it was released; ``keep_s`` seconds after the last
call ends, one daemon :class:`threading.Timer` (cancelled and re-armed by each call, so an idle
process is never woken) frees it and returns the memory to the system (``malloc_trim``).
:meth:`Resident.prefetch` loads it on a thread of its own ahead of a call (``hub run`` does so
when a voice turn starts, so the load overlaps the recognizer instead of the LLM's timeout).

Concurrency: loading, every use and freeing happen under one lock, so the object is never
freed while a generation runs (a timer that fires while the lock is held does nothing; the
call that holds it re-arms the timer when it ends), and :meth:`Resident.close` (at exit) waits
for a running use or free to end before it frees the object itself: llama.cpp's threads must
be stopped before the process ends (see :mod:`hub.llm.llama`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from hub.errors import TransientError
from hub.resilience.memory import release_free_memory

log = logging.getLogger(__name__)

T = TypeVar("T")

LOAD_WAIT_S = 30.0
"""How long a use waits for a load in progress (another call's, or a prefetch)."""


class Resident(Generic[T]):
    """One object loaded on first use and freed ``keep_s`` seconds after its last use.

    Args:
        load: builds the object (may raise; the error reaches the caller of :meth:`use`).
        free: releases it (``Llama.close`` and whatever else refers to it); called under the
            lock, never during a use.
        keep_s: seconds the object stays loaded after a use; 0: freed right after each use
            (on the timer thread, so the caller does not wait for it); negative: never freed
            before :meth:`close`.
        obj: an object already loaded (counts as loaded; the timer starts at its first use,
            or at :meth:`release`).
        name: for logs and error messages.
        clock: monotonic seconds (how long the object was idle, said when it is freed).
    """

    def __init__(
        self,
        load: Callable[[], T],
        free: Callable[[T], None],
        keep_s: float,
        obj: T | None = None,
        name: str = "llm",
        clock: Callable[[], float] = time.monotonic,
    ):
        self._load, self._free, self.keep_s, self._obj = load, free, keep_s, obj
        self._name, self._clock = name, clock
        self._used_at: float | None = None  # monotonic end of the last use; None: never used
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._uses = 0  # bumped by every use: a timer armed before a later use does nothing
        self.closing = threading.Event()
        """Set by :meth:`close`: uses are refused, running generations should stop."""
        self.loads = 0
        """How many times the object was loaded by :meth:`use` (not counting ``obj``)."""
        self._loading = False  # a load is running (callers then wait for it, LOAD_WAIT_S)
        self._prefetching = threading.Event()

    @property
    def obj(self) -> T | None:
        """The object while it is loaded, else None (use it only inside :meth:`use`)."""
        return self._obj

    @property
    def loaded(self) -> bool:
        """True while the object is in memory."""
        return self._obj is not None

    @contextmanager
    def use(self, wait_s: float) -> Iterator[T]:
        """Hold the object for one call, loading it first if it was released.

        Waits up to ``wait_s`` seconds for another call to end. When the block ends, the
        unload timer is re-armed (``keep_s``).

        Raises:
            TransientError: closing, or still busy after ``wait_s``.
            Whatever ``load`` raises.
        """
        if self.closing.is_set():
            raise TransientError(f"{self._name} is shutting down", node=self._name)
        if not self._lock.acquire(timeout=wait_s) and not (
            self._loading and self._lock.acquire(timeout=LOAD_WAIT_S)
        ):
            raise TransientError(f"{self._name} is busy with another generation", node=self._name)
        try:
            if self.closing.is_set():
                raise TransientError(f"{self._name} is closed", node=self._name)
            self._uses += 1
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._obj is None:
                start, self._loading = self._clock(), True
                try:
                    self._obj = self._load()
                finally:
                    self._loading = False
                self.loads += 1
                log.info("%s loaded in %.2f s", self._name, self._clock() - start)
            yield self._obj
        finally:
            self._used_at = self._clock()
            self._arm()
            self._lock.release()

    def prefetch(self) -> bool:
        """Start loading the object on a daemon thread when it is released (a voice turn's
        start: the load then runs while the recognizer decodes, not inside the LLM's call).

        Returns True when a load was started. A use that arrives meanwhile waits for it.
        """
        if self._obj is not None or self.closing.is_set() or self._prefetching.is_set():
            return False
        self._prefetching.set()

        def run() -> None:
            try:
                with self.use(LOAD_WAIT_S):
                    pass
            except Exception as exc:
                log.warning("%s prefetch failed: %s", self._name, exc)
            finally:
                self._prefetching.clear()

        threading.Thread(target=run, name=f"hub-{self._name}-prefetch", daemon=True).start()
        return True

    def _arm(self) -> None:
        """Start the unload timer (under the lock, at the end of a use)."""
        if self.keep_s < 0 or self.closing.is_set() or self._obj is None:
            return
        timer = threading.Timer(self.keep_s, self._expire, args=(self._uses,))
        timer.daemon = True  # never keeps the process alive
        timer.name = f"hub-{self._name}-unload"
        self._timer = timer
        timer.start()

    def _expire(self, uses: int) -> None:
        """Timer thread: free the object unless it was used since arming.

        Waits for the lock: the use that armed this timer may still be ending (``keep_s``
        0), and a later use bumps ``_uses`` and arms a timer of its own.
        """
        self._lock.acquire()
        try:
            if uses == self._uses and not self.closing.is_set():
                self._release()
        finally:
            self._lock.release()

    def release(self) -> bool:
        """Free the object now (after start-up, when ``keep_s`` allows it: not negative).

        Returns True when it was freed, False when it is always resident, not loaded, or in
        use (then the use's own timer frees it later).
        """
        if self.keep_s < 0 or not self._lock.acquire(blocking=False):
            return False
        try:
            self._uses += 1
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return self._release(idle=False)
        finally:
            self._lock.release()

    def _release(self, idle: bool = True) -> bool:
        """Free the object (under the lock); True when there was one. ``idle``: freed by the
        timer, the log says how long since the last use ended; else freed on request
        (:meth:`release`, after start-up)."""
        obj, self._obj = self._obj, None
        if obj is None:
            return False
        self._free(obj)
        del obj
        release_free_memory(collect=False)
        if idle and self._used_at is not None:
            log.info("%s released (idle %.0f s)", self._name, self._clock() - self._used_at)
        else:
            log.info("%s released until its next use", self._name)
        return True

    def close(self, wait_s: float) -> bool:
        """Refuse new uses, wait up to ``wait_s`` s for a running one, and free the object.

        Safe to call twice and from :mod:`atexit`. Returns False when a use was still running
        after ``wait_s`` (the object is then left loaded).
        """
        self.closing.set()
        timer = self._timer
        if timer is not None:
            timer.cancel()
        if not self._lock.acquire(timeout=wait_s):
            log.warning("%s still in use after %.1f s at close", self._name, wait_s)
            return False
        try:
            obj, self._obj = self._obj, None
            if obj is not None:
                self._free(obj)
        finally:
            self._lock.release()
        return True
