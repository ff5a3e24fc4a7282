"""Download progress on stderr: a redrawn line on a terminal, a few log lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

_REDRAW_S = 0.1
"""Shortest time between two redraws of the terminal line, seconds."""
_LOG_STEPS = (25, 50, 75)
"""Percentages at which a non-terminal stream gets a line (besides start and end)."""


def _mb(n: int) -> str:
    """Bytes as megabytes with one decimal (``41205931`` -> ``"41.2 MB"``)."""
    return f"{n / 1e6:.1f} MB"


class Progress:
    """Reports the bytes of one download as they arrive.

    On a terminal (``stream.isatty()``) one line is redrawn with a carriage return, at most
    every 0.1 s: ``label  37% [#######.............]  15.2 of 41.2 MB  3.1 MB/s``. Elsewhere
    (logs, pipes, CI) it writes a line at the start, at 25/50/75 % and at the end.

    Args:
        label: what is downloaded (a file name).
        total: expected size in bytes; 0 when unknown (no percentages then).
        done: bytes already there (a resumed ``.part``).
        stream: where to write; default ``sys.stderr``.
        clock: monotonic seconds; injectable for tests.
    """

    def __init__(self, label: str, total: int, done: int = 0, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.label, self.total, self.done = label, total, done
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start, self._start_bytes, self._last = clock(), done, 0.0
        self._logged = {p for p in _LOG_STEPS if self._percent() >= p}
        if not self.tty:
            resumed = f", resuming at {_mb(done)}" if done else ""
            self._write(f"{label}: downloading {_mb(total) if total else '? MB'}{resumed}\n")

    def _percent(self) -> int:
        """Whole percent done, or 0 when the total is unknown."""
        return min(100, self.done * 100 // self.total) if self.total else 0

    def _write(self, text: str) -> None:
        """Write and flush."""
        self.stream.write(text)
        self.stream.flush()

    def _rate(self) -> float:
        """Bytes per second since this Progress started."""
        elapsed = self.clock() - self._start
        return (self.done - self._start_bytes) / elapsed if elapsed > 0 else 0.0

    def _line(self) -> str:
        """The terminal line for the current state."""
        pct = self._percent()
        bar = "#" * (pct // 5) + "." * (20 - pct // 5)
        total = f" of {_mb(self.total)}" if self.total else ""
        return (f"\r{self.label}  {pct:3d}% [{bar}]  {self.done / 1e6:.1f}{total}"
                f"  {self._rate() / 1e6:.1f} MB/s ")

    def update(self, n: int) -> None:
        """Count ``n`` more bytes."""
        self.done += n
        if self.tty:
            now = self.clock()
            if now - self._last >= _REDRAW_S:
                self._last = now
                self._write(self._line())
            return
        for step in _LOG_STEPS:
            if step not in self._logged and self._percent() >= step:
                self._logged.add(step)
                self._write(f"{self.label}: {step}% ({_mb(self.done)} of {_mb(self.total)})\n")

    def close(self, ok: bool = True) -> None:
        """Finish the display: a final line (``done`` or ``stopped``)."""
        word = "done" if ok else "stopped"
        if self.tty:
            self._write(self._line() + f"{word}\n")
        else:
            self._write(f"{self.label}: {word} at {_mb(self.done)}\n")
