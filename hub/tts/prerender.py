"""Synthesize likely answers ahead of time, while the hub is idle, into the response cache.

A not-yet-cached answer costs Piper 0.3-1.3 s before its first audio on two shared cores
(BENCHMARKS.md, "End of a spoken command"); one found in the cache plays in about a
millisecond. Home Assistant caches its TTS output the same way (its ``tts`` integration keeps
``<hash>_<language>_<options>_<engine>`` files on disk). :class:`Prerenderer` walks a list of
texts (for the rules path: :func:`hub.graph.ahead.likely_answers`) on one thread of its own,
at the lowest CPU priority, and stores each text's audio under the same key the ``tts`` node
reads (text and voice). It renders only while ``busy()`` is False, checked before each text,
so a turn that starts waits at most for the one short sentence being synthesized; it stops
at ``max_bytes`` of audio rendered, at the end of the list, or on :meth:`Prerenderer.stop`;
after that it uses no CPU. A text already stored is skipped (the cache is the store's SQLite
file: it survives a restart).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable

from hub.errors import HubError
from hub.tts.textnorm import CUT_NOTICE

log = logging.getLogger("hub.tts")

IDLE_POLL_S = 0.25
"""How often a paused pre-render looks whether the hub is idle again (s)."""
NICE = 19
"""CPU priority (nice value) of the pre-render thread: the lowest."""


def lower_priority(nice: int = NICE) -> bool:
    """Give the calling thread the nice value ``nice`` (Linux: per thread); False when the
    system does not allow it (then it runs at the process's priority)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
        return True
    except (AttributeError, OSError):
        return False


class Prerenderer:
    """One pass of ahead-of-time synthesis on a daemon thread (see the module doc).

    Args:
        texts: ``texts()`` -> the texts to render, most useful first (called on the thread).
        tts: ``tts()`` -> the TTS engine (``synthesize(text, cancel)`` yielding chunks with
            ``pcm``, ``rate``, ``text``); a :class:`~hub.errors.HubError` stops the pass.
        cache: the response cache: ``has_response_audio(key)``, ``put_response_audio(key,
            pcm, rate)`` (:class:`hub.store.db.Store`).
        key: ``key(text)`` -> the cache key the ``tts`` node uses for that text.
        busy: ``busy()`` -> True while a turn is listened to or answered: rendering waits.
        max_bytes: most audio (bytes of int16 PCM) rendered in one pass.
        clock: monotonic seconds (for the log line).
        name: the thread's name (and the log line's first word).
        log_level: the level of the pass's closing log line (a pass run on every wake word
            logs at DEBUG).
    """

    def __init__(
        self,
        texts: Callable[[], Iterable[str]],
        tts: Callable,
        cache,
        key: Callable[[str], str],
        busy: Callable[[], bool],
        max_bytes: int,
        clock: Callable[[], float] = time.monotonic,
        *,
        name: str = "hub-prerender",
        log_level: int = logging.INFO,
    ):
        self._texts, self._tts, self._cache, self._key = texts, tts, cache, key
        self._name, self._level = name, log_level
        self._busy, self._max_bytes, self._clock = busy, max_bytes, clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.rendered = 0
        """Texts synthesized and stored in this pass."""
        self.stored = 0
        """Texts skipped because they were stored already."""
        self.bytes = 0
        """Bytes of audio rendered in this pass."""
        self.done = threading.Event()
        """Set when the pass ended (finished, stopped, or failed)."""

    def start(self) -> None:
        """Start the pass on a daemon thread (``name``) at the lowest priority."""
        self._thread = threading.Thread(target=self._thread_main, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 2.0) -> None:
        """End the pass (before the next text) and wait up to ``timeout_s`` for the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _thread_main(self) -> None:
        lower_priority()
        try:
            self.run()
        except Exception as exc:  # a pre-render must never take the daemon down
            log.warning("prerender: stopped: %s: %s", type(exc).__name__, exc)
        finally:
            self.done.set()

    def run(self) -> None:
        """The pass itself, on the calling thread (tests call it directly)."""
        start = self._clock()
        for text in self._texts():
            if self.bytes >= self._max_bytes or not self._wait_idle():
                break
            key = self._key(text)
            if self._cache.has_response_audio(key):
                self.stored += 1
                continue
            if not self._render(text, key):
                break
        log.log(
            self._level,
            "%s: done: %d answers rendered, %d already stored, %.1f MB, %.1f s%s",
            self._name.removeprefix("hub-").replace("-", " "),
            self.rendered,
            self.stored,
            self.bytes / 1e6,
            self._clock() - start,
            " (stopped)" if self._stop.is_set() else "",
        )

    def _wait_idle(self) -> bool:
        """Wait while ``busy()``; False when the pass was stopped meanwhile."""
        while not self._stop.is_set() and self._busy():
            self._stop.wait(IDLE_POLL_S)
        return not self._stop.is_set()

    def _render(self, text: str, key: str) -> bool:
        """Synthesize ``text`` and store it under ``key``; False when the TTS failed (the
        pass ends: the engine is down). A turn that starts meanwhile finds the text not
        stored, and this audio is still stored (it is the same text and voice)."""
        try:
            engine = self._tts()
            chunks = list(engine.synthesize(text, self._stop))
        except HubError as exc:
            if not self._stop.is_set():
                log.warning("prerender: TTS failed on %r: %s", text[:40], exc.message)
            return False
        pcm = b"".join(c.pcm for c in chunks)
        if pcm and all(c.text != CUT_NOTICE for c in chunks):  # as the tts node: no cut answer
            self._cache.put_response_audio(key, pcm, chunks[0].rate)
            self.rendered += 1
            self.bytes += len(pcm)
        return True
