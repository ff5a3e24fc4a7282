"""The daemon's speaker: plays each turn's sentences as TTS makes them, and can be cut off.

One playback thread per turn. :meth:`Speaker.cancel` (barge-in, the stop word) stops the
answer at the next 100 ms block and aborts the output stream, so already-buffered audio is
dropped too. Every block handed to the device is also given to the echo check
(:class:`hub.service.echo.EchoGate`), and the moment the last one was handed over is kept:
follow-up listening opens only after it (BC-26), never on a timer.
"""

from __future__ import annotations

import logging
import queue
import threading
import time

from hub.audio.pcm import AudioChunk
from hub.errors import HubError

log = logging.getLogger("hub.service.speaker")

POLL_S = 0.05
"""How often the playback thread waiting for the next sentence checks for a cancel (s)."""
HOLD_MAX_S = 1.5
"""Longest a :meth:`Speaker.hold` pauses playback without a release or a cancel (s)."""


class _Held:
    """The player's cancel flag: between two blocks it also waits while the speaker is held
    (:meth:`Speaker.hold`), at most :data:`HOLD_MAX_S`."""

    def __init__(self, cancel: threading.Event, resume: threading.Event):
        self._cancel, self._resume = cancel, resume

    def is_set(self) -> bool:
        if not self._cancel.is_set():
            self._resume.wait(HOLD_MAX_S)
        return self._cancel.is_set()

    def set(self) -> None:
        self._cancel.set()


class Speaker:
    """Plays turns on a :class:`hub.audio.player.Player`; ``enqueue`` is the conversation hook.

    Args:
        player: anything with ``play(chunks, cancel, on_write)``.
        gate: the echo check fed with every block played, or None.
        clock: monotonic seconds.
    """

    def __init__(self, player, gate=None, clock=time.monotonic):
        self._player, self._gate, self._clock = player, gate, clock
        self._queue: queue.Queue | None = None
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._pushed = False
        self._resume = threading.Event()
        self._resume.set()
        self._lock = threading.Lock()
        self.last_output_at: float | None = None
        """Monotonic time the last block of the last turn was handed to the device."""
        self.cancelled = 0
        """Turns cut off so far (barge-in, stop word)."""

    def start_turn(self) -> None:
        """Open a turn: chunks enqueued from now on play in order, after the previous turn."""
        self.wait()
        with self._lock:
            self._queue, self._pushed = queue.Queue(), False
            self._cancel = threading.Event()
            self._thread = threading.Thread(
                target=self._play, args=(self._queue, self._cancel), name="hub-speaker", daemon=True
            )
            self._thread.start()

    def _chunks(self, q: queue.Queue, cancel: threading.Event):
        while not cancel.is_set():
            try:
                chunk = q.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if chunk is None:
                return
            yield chunk

    def _written(self, pcm: bytes, rate: int, channels: int) -> None:
        self.last_output_at = self._clock()
        if self._gate is not None:
            self._gate.played(pcm, rate, channels)

    def _play(self, q: queue.Queue, cancel: threading.Event) -> None:
        try:
            self._player.play(self._chunks(q, cancel), _Held(cancel, self._resume), self._written)
        except HubError as exc:
            log.warning("playback failed: %s", exc.message)
        except Exception as exc:
            log.warning("playback failed: %s: %s", type(exc).__name__, exc)
        finally:
            self.last_output_at = self._clock()

    def enqueue(self, chunk) -> None:
        """Play ``chunk`` (an AudioChunk) after those before it; dropped after a cancel."""
        with self._lock:
            if self._queue is not None and not self._cancel.is_set():
                self._pushed = True
                self._queue.put(chunk)

    def finish(self, pcm: bytes | None = None, rate: int | None = None) -> None:
        """Close the turn; play ``pcm`` (cached or placeholder audio) when TTS streamed nothing."""
        with self._lock:
            if self._queue is None:
                return
            if not self._pushed and pcm and rate and not self._cancel.is_set():
                self._queue.put(AudioChunk(pcm=pcm, rate=rate, text=""))
            self._queue.put(None)
            self._queue = None

    def say(self, chunk) -> None:
        """Play one AudioChunk as a turn of its own (a timer ringing)."""
        self.start_turn()
        self.enqueue(chunk)
        self.finish()

    @property
    def playing(self) -> bool:
        """True while a turn's playback thread runs (waiting for sentences or playing)."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def hold(self) -> None:
        """Pause playback after the block being written (a stop word may have been said: the
        stop listener decodes it); :meth:`release` or :meth:`cancel` ends the pause, else it
        ends by itself after :data:`HOLD_MAX_S`."""
        self._resume.clear()

    def release(self) -> None:
        """Go on playing after a :meth:`hold`."""
        self._resume.set()

    def cancel(self) -> bool:
        """Stop the current turn now; True when something was playing."""
        with self._lock:
            was = self.playing and not self._cancel.is_set()
            self._cancel.set()
            self._resume.set()
            self._queue = None
        if was:
            self.cancelled += 1
            if self._gate is not None:
                self._gate.clear()
        return was

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until the current turn has played (or was cancelled); False on timeout."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout_s)
        return not thread.is_alive()
