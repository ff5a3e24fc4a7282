"""The device's echo path as measured while the hub plays (issue 18): does its input follow its
output, and when it does, how late, how loud and over what noise floor.

:class:`hub.service.echo.EchoGate` hands over each window it measured (the input's 10 ms RMS
envelope and the played envelope at their best alignment). A window is evidence only when it
is clear: correlated at least :data:`ECHO_WINDOW` (the echo path shows), or correlated less
than :data:`QUIET_WINDOW` while the input stayed flat (silence or steady noise under loud
playback: there is no path). A window holding a user's speech is neither, whatever the
device (speech over the answer lowers an echo's correlation, and matches an answer's envelope
only by chance: 0.3-0.8 measured, 0.85 and more in none of 372 such windows replayed), nor is
a window whose echo came at two delays (the sound server paused the output: an underrun).
Echo windows count once :data:`AGREEING` of them agree on the delay (a chance match comes at a
delay of its own; the first one, replayed, came at 380 ms where the echo was at -60 ms). The
coupling is the share of the last :data:`PATH_WINDOWS` clear windows that showed the path
(measured, issue 18: the lower quartile of every window, used before, fell under the bar
whenever the user talked over most rings, and the hub's own voice then went unchecked).

From the agreeing echo windows come the path's delay, power gain and noise floor, so a span
whose correlation an underrun spoiled is still known for echo by its power: no more than
:data:`ENERGY_RATIO` times the echo the path predicts for it (the power comparison of an
echo-reference gate: soniqo/speech-swift PR #163); a user speaking over the echo adds power
(:data:`DOUBLE_TALK`).
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from hub.audio.format import RATE

ECHO_WINDOW = 0.85
"""A measured window correlating at least this much shows the echo path."""
QUIET_WINDOW = 0.45
"""A measured window correlating less than this, over a flat input, shows there is none."""
FLAT_CV = 0.3
"""An input envelope whose standard deviation is below this share of its mean is flat."""
PATH_WINDOWS = 16
"""Clear windows kept (about 8 s of playback): the coupling is theirs."""
AGREEING = 2
"""Echo windows that must agree on the delay before the path counts as shown."""
DELAY_TOLERANCE = 5
"""Frames (10 ms) by which echo windows' delays may differ and still agree."""
COUPLED = 0.5
"""Coupling (share of clear windows showing the path) at or above which input follows output."""
ENERGY_RATIO = 1.4
"""Input power over a span at most this many times the echo predicted for it is echo, however
it correlates (measured: the hub's own voice 0.6-1.2 times the prediction, also when an
underrun had moved its echo; a user as loud as the echo speaking over it 1.6 and more)."""
DOUBLE_TALK = 3.0
"""Input power over a span more than this many times the echo predicted for it is not echo,
however well its envelope follows the playback (a user speaking over the answer, twice as loud
as its echo: 3.2 times and more, measured)."""


def envelope(samples: np.ndarray, rate: int = RATE) -> np.ndarray:
    """10 ms RMS frames of int16 mono ``samples`` at ``rate`` Hz (float64 values)."""
    size = max(1, rate // 100)
    n = len(samples) - len(samples) % size
    frames = samples[:n].astype(np.float64).reshape(-1, size)
    return np.sqrt(np.mean(frames * frames, axis=1))


def best_alignment(mic: np.ndarray, reference: np.ndarray, max_lag: int) -> tuple[float, int]:
    """Highest normalized correlation of ``mic`` with ``reference`` delayed by 0..max_lag, and
    that delay.

    Args:
        mic: envelope of the input, the most recent frame last (n frames).
        reference: envelope of what was played over the same time, plus ``max_lag`` frames
            before it (n + max_lag frames, the most recent last).
        max_lag: frames of delay to try.

    Returns:
        ``(correlation, lag)``: correlation in [-1, 1], 0 when either signal is flat (no echo
        can be shown); lag in frames (``reference[len - lag - n : len - lag]`` matched).
    """
    n = len(mic)
    best, best_lag = 0.0, 0
    m = mic - mic.mean()
    m_norm = float(np.sqrt(np.dot(m, m)))
    if n < 10 or m_norm == 0:
        return 0.0, 0
    for lag in range(max_lag + 1):
        end = len(reference) - lag
        r = reference[end - n : end]
        if len(r) < n:
            break
        r = r - r.mean()
        r_norm = float(np.sqrt(np.dot(r, r)))
        if r_norm > 0 and (c := float(np.dot(m, r)) / (m_norm * r_norm)) > best:
            best, best_lag = c, lag
    return best, best_lag


def _flat(mic: np.ndarray) -> bool:
    """True when the envelope ``mic`` barely moves (silence, steady noise)."""
    mean = float(mic.mean())
    return mean < 1.0 or float(mic.std()) < FLAT_CV * mean


class EchoPath:
    """The measured echo path of one device (thread-safe; see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: deque[tuple[int, float, float] | None] = deque(maxlen=PATH_WINDOWS)
        """The clear windows: (delay, power gain, noise floor) of an echo window, None for a
        quiet one."""

    def measured(self, corr: float, delay: int, mic: np.ndarray, ref: np.ndarray) -> None:
        """One window: ``corr`` and ``delay`` (frames, mic after reference) its best
        alignment, ``mic`` its input envelope and ``ref`` the played envelope at that delay
        (as long)."""
        mic_p, ref_p = mic * mic, ref * ref
        norm = float(np.dot(ref_p, ref_p))
        with self._lock:
            if corr >= ECHO_WINDOW and norm > 0:
                floor = float(np.percentile(mic_p, 10))
                gain = max(0.0, float(np.dot(mic_p - floor, ref_p)) / norm)
                self._windows.append((delay, gain, floor))
            elif corr < QUIET_WINDOW and _flat(mic):
                self._windows.append(None)

    def _echoes(self) -> list[tuple[int, float, float]]:
        """The echo windows that agree on the delay (within :data:`DELAY_TOLERANCE`) with the
        most others, the latest ones on a tie (an underrun moves the delay for good), when at
        least :data:`AGREEING` do; else none (a user's speech matches the playback by chance
        at a delay of its own, measured)."""
        with self._lock:
            echoes = [w for w in self._windows if w is not None]
        groups = [[w for w in echoes if abs(w[0] - e[0]) <= DELAY_TOLERANCE] for e in echoes]
        best = max(reversed(groups), key=len, default=[])
        return best if len(best) >= AGREEING else []

    @property
    def coupling(self) -> float | None:
        """Share of the clear windows kept that showed the path (its echo windows counted
        once they agree on a delay); None while nothing is clear."""
        echoes = len(self._echoes())
        with self._lock:
            quiet = sum(w is None for w in self._windows)
        return echoes / (echoes + quiet) if echoes + quiet else None

    @property
    def delay(self) -> int | None:
        """The path's delay (frames, median of its agreeing echo windows'), or None."""
        echoes = self._echoes()
        return int(np.median([w[0] for w in echoes])) if echoes else None

    def explained(self, mic: np.ndarray, ref: np.ndarray) -> float | None:
        """Input power over a span (``mic``) over the echo predicted for it from ``ref``, the
        played envelope at :attr:`delay` (as long): power gain times its power plus the noise
        floor; None before an echo window was measured."""
        echoes = self._echoes()
        if not echoes:
            return None
        gain, floor = (float(np.median([w[i] for w in echoes])) for i in (1, 2))
        predicted = gain * float(np.sum(ref * ref)) + floor * len(mic)
        return float(np.sum(mic * mic)) / predicted if predicted > 0 else None

    def summary(self) -> str:
        """``coupling 0.94, delay -60 ms`` for a log line."""
        coupling, delay = self.coupling, self.delay
        text = "not measured yet" if coupling is None else f"{coupling:.2f}"
        return f"coupling {text}" + ("" if delay is None else f", delay {delay * 10} ms")
