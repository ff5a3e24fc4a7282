"""Download progress on stderr: a tqdm bar on a terminal, a few log lines otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

_LOG_STEPS = (25, 50, 75)
"""Percentages at which a non-terminal stream gets a line (besides start and end)."""


def _mb(n: int) -> str:
    """Bytes as megabytes with one decimal (``41205931`` -> ``"41.2 MB"``)."""
    return f"{n / 1e6:.1f} MB"


class Progress:
    """Reports the bytes of one download as they arrive.

    On a terminal (``stream.isatty()``) a ``tqdm`` bar (bytes, rate, time left). Elsewhere
    (logs, pipes, CI) a line at the start, at 25/50/75 % and at the end, so a log is not
    flooded.

    Args:
        label: what is downloaded (a file name).
        total: expected size in bytes; 0 when unknown (no percentages then).
        done: bytes already there (a resumed ``.part``).
        stream: where to write; default ``sys.stderr``.
    """

    def __init__(self, label: str, total: int, done: int = 0, stream: TextIO | None = None):
        self.label, self.total, self.done = label, total, done
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar = None
        self._logged = {p for p in _LOG_STEPS if self._percent() >= p}
        if self.tty:
            # lazy: tqdm (about 0.2 s) only when a download shows progress; hub --help imports this
            from tqdm import tqdm

            self._bar = tqdm(total=total or None, initial=done, desc=label, unit="B",
                             unit_scale=True, unit_divisor=1000, file=self.stream,
                             mininterval=0.1, leave=True, dynamic_ncols=True)
        else:
            resumed = f", resuming at {_mb(done)}" if done else ""
            self._write(f"{label}: downloading {_mb(total) if total else '? MB'}{resumed}\n")

    def _percent(self) -> int:
        """Whole percent done, or 0 when the total is unknown."""
        return min(100, self.done * 100 // self.total) if self.total else 0

    def _write(self, text: str) -> None:
        """Write and flush."""
        self.stream.write(text)
        self.stream.flush()

    def update(self, n: int) -> None:
        """Count ``n`` more bytes."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        for step in _LOG_STEPS:
            if step not in self._logged and self._percent() >= step:
                self._logged.add(step)
                self._write(f"{self.label}: {step}% ({_mb(self.done)} of {_mb(self.total)})\n")

    def close(self, ok: bool = True) -> None:
        """Finish the display: the bar's last state, or a final line (``done``/``stopped``)."""
        word = "done" if ok else "stopped"
        if self._bar is not None:
            self._bar.set_postfix_str(word, refresh=True)
            self._bar.close()
        else:
            self._write(f"{self.label}: {word} at {_mb(self.done)}\n")
