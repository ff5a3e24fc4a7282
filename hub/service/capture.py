"""The one owner of the microphone: a thread that reads it all the time into a bounded queue.

Only this thread opens, reads and closes the input stream, so a stop never closes a stream
another thread is blocked reading (that was the segfault on SIGTERM). The queue holds at
most :data:`QUEUE_S` of audio; when the listener falls behind, the oldest blocks are dropped
and counted (BC-35). While the device is missing or being reopened, the thread waits in
short slices, beating its heartbeat, so the systemd watchdog keeps being fed (BC-20).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from hub.errors import DeviceUnavailableError

log = logging.getLogger("hub.service.capture")

QUEUE_S = 2.0
"""Most audio waiting for the listener (s); older blocks are dropped past this."""
BLOCK_S = 0.05
"""Length of one block from the microphone (s); see :data:`hub.audio.mic.BLOCK_S`."""
SLICE_S = 0.25
"""Longest single sleep while waiting for a device, so a stop is seen at once."""


class Stopping(Exception):
    """Raised inside the waiting microphone when the daemon stops."""


class Capture:
    """Reads the microphone on its own thread; :attr:`blocks` is what it read: ``(read_at,
    block)`` pairs (monotonic seconds when the read returned, int16 16 kHz mono), then None.

    Args:
        open_mic: ``open_mic(sleep=...)`` returning an open :class:`hub.audio.mic.Mic`.
        on_waiting: called with True while the device is being waited for, False once read.
        on_open: called once, when the device opened the first time.
        clock: monotonic seconds.
    """

    def __init__(
        self,
        open_mic: Callable,
        on_waiting: Callable[[bool], None] = lambda w: None,
        on_open: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._open, self._on_waiting, self._clock = open_mic, on_waiting, clock
        self._on_open = on_open
        self.blocks: queue.Queue = queue.Queue(maxsize=round(QUEUE_S / BLOCK_S))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._waiting = False
        self.beat = clock()
        """Monotonic time the thread last showed it is alive (a block read, a wait slice)."""
        self.dropped = 0
        """Blocks dropped because the listener was behind."""
        self.error: DeviceUnavailableError | None = None
        """Why capture ended on its own (the device never came back), else None."""

    def start(self) -> None:
        """Start the capture thread."""
        self._thread = threading.Thread(target=self._run, name="hub-capture", daemon=True)
        self._thread.start()

    def _sleep(self, seconds: float) -> None:
        """The microphone's back-off pause, in slices; raises :class:`Stopping` on stop."""
        self._set_waiting(True)
        end = self._clock() + seconds
        while True:
            self.beat = self._clock()
            left = end - self._clock()
            if self._stop.wait(min(SLICE_S, max(0.0, left))):
                raise Stopping
            if left <= 0:
                return

    def _set_waiting(self, waiting: bool) -> None:
        if waiting != self._waiting:
            self._waiting = waiting
            self._on_waiting(waiting)

    def _run(self) -> None:
        mic = None
        try:
            mic = self._open(sleep=self._sleep)
            self._set_waiting(False)
            self._on_open()
            for block in mic.blocks(self._stop):  # ends at a stop, even if no audio comes
                self.beat = self._clock()
                self._set_waiting(False)
                self._put((self.beat, block))
                if self._stop.is_set():
                    break
        except Stopping:
            pass
        except DeviceUnavailableError as exc:
            self.error = exc
        finally:
            if mic is not None:
                mic.close()  # this thread owns the stream: nobody else is reading it
            self._put(None)

    def _put(self, block) -> None:
        while True:
            try:
                self.blocks.put_nowait(block)
                return
            except queue.Full:
                try:
                    self.blocks.get_nowait()
                    self.dropped += 1
                    if self.dropped in (1, 10) or self.dropped % 100 == 0:
                        log.warning(
                            "listener behind: %d audio blocks (%d ms) dropped so far",
                            self.dropped,
                            round(self.dropped * BLOCK_S * 1000),
                        )
                except queue.Empty:
                    pass

    def stop(self, timeout_s: float = 2.0) -> bool:
        """Ask the thread to stop and wait for it; False when it is still blocked in a read."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout_s)
        return not self._thread.is_alive()
