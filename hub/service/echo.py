"""Is the microphone hearing the hub's own answer? (BC-26: a hub must not wake on itself.)

Without acoustic echo cancellation the microphone picks up the speaker. A wake (or stop)
detection while the hub speaks is its own echo when the input's loudness envelope follows
the envelope of what was played: the normalized cross-correlation of the two 10 ms RMS
envelopes, over the last :data:`WINDOW_S` and at lags 0 to :data:`MAX_LAG_S` (speaker,
room and sound server delay), reaches ``threshold``. Envelopes, not waveforms, so a room's
reverberation or a resampler's phase does not hide the echo; a user speaking over the
answer makes the input diverge from it. Where the sound server can cancel echo
(PulseAudio/PipeWire ``module-echo-cancel``), its output is the better microphone; this
check still runs on it. Source: envelope cross-correlation as in double-talk detectors
(Benesty et al., "A new class of doubletalk detectors based on cross-correlation", 2000).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

RATE = 16000
"""Sample rate of both signals (Hz)."""
FRAME = 160
"""Samples per envelope frame (10 ms)."""
WINDOW_S = 1.5
"""Input compared with the reference: the last 1.5 s (a wake word lasts about 1 s)."""
MAX_LAG_S = 0.6
"""Longest speaker-to-microphone delay looked for (s)."""
QUIET_RMS = 50.0
"""Reference frames quieter than this (int16 RMS) count as silence: no echo to find."""


def _envelope(samples: np.ndarray, rate: int = RATE) -> np.ndarray:
    """10 ms RMS frames of int16 mono ``samples`` at ``rate`` Hz (float64 values)."""
    size = max(1, rate // 100)
    n = len(samples) - len(samples) % size
    frames = samples[:n].astype(np.float64).reshape(-1, size)
    return np.sqrt(np.mean(frames * frames, axis=1))


def envelope_correlation(mic: np.ndarray, reference: np.ndarray, max_lag: int) -> float:
    """Highest normalized correlation of ``mic`` with ``reference`` delayed by 0..max_lag.

    Args:
        mic: envelope of the input, the most recent frame last (n frames).
        reference: envelope of what was played over the same time, plus ``max_lag`` frames
            before it (n + max_lag frames, the most recent last).
        max_lag: frames of delay to try.

    Returns:
        A value in [-1, 1]; 0 when either signal is flat (no echo can be shown).
    """
    n = len(mic)
    best = 0.0
    m = mic - mic.mean()
    m_norm = float(np.sqrt(np.dot(m, m)))
    if n < 10 or m_norm == 0:
        return 0.0
    for lag in range(max_lag + 1):
        end = len(reference) - lag
        r = reference[end - n:end]
        if len(r) < n:
            break
        r = r - r.mean()
        r_norm = float(np.sqrt(np.dot(r, r)))
        if r_norm > 0:
            best = max(best, float(np.dot(m, r)) / (m_norm * r_norm))
    return best


class EchoGate:
    """Keeps what was played and what was heard, and judges detections during playback.

    Thread-safe: the speaker thread calls :meth:`played`, the listening thread calls
    :meth:`heard` and :meth:`is_echo`.

    Args:
        threshold: correlation at or above which a detection is echo (``wake.echo_correlation``).
        tail_s: how long after the last played audio its echo is still looked for
            (``wake.tail_guard_s``).
        clock: monotonic seconds (tests pass a fake).
    """

    def __init__(self, threshold: float = 0.7, tail_s: float = 0.5,
                 clock: Callable[[], float] = time.monotonic):
        self.threshold, self.tail_s, self._clock = threshold, tail_s, clock
        keep = round((WINDOW_S + MAX_LAG_S) * RATE / FRAME) + 50
        self._mic: deque[float] = deque(maxlen=keep)
        self._ref: deque[float] = deque(maxlen=keep)
        self._ref_pending: deque[float] = deque()
        self._ref_until = -1.0
        self._lock = threading.Lock()
        self.echoes = 0
        """Detections judged to be the hub's own echo so far."""

    def played(self, pcm: bytes, rate: int = RATE, channels: int = 1) -> None:
        """``pcm`` (int16 interleaved, ``rate`` Hz) was handed to the output device just now."""
        samples = np.frombuffer(pcm, dtype=np.int16)[::max(1, channels)]
        env = _envelope(samples, rate)
        with self._lock:
            self._ref_until = max(self._ref_until, self._clock()) + len(samples) / rate
            self._ref_pending.extend(env)

    def heard(self, samples: np.ndarray) -> None:
        """``samples`` (int16 16 kHz mono) were read from the microphone just now.

        The reference advances with the input, frame for frame (silence when nothing plays),
        so both envelopes share one time axis.
        """
        env = _envelope(samples)
        with self._lock:
            pending = self._ref_pending
            for value in env:
                self._mic.append(value)
                self._ref.append(pending.popleft() if pending else 0.0)

    def speaking(self) -> bool:
        """True while audio is playing or within ``tail_s`` after it ended."""
        with self._lock:
            busy = bool(self._ref_pending)
            return busy or self._clock() <= self._ref_until + self.tail_s

    def is_echo(self) -> bool:
        """Whether what the microphone holds now is mostly the hub's own output.

        False when nothing was played recently. Counts the echoes it finds.
        """
        if not self.speaking():
            return False
        n = round(WINDOW_S * RATE / FRAME)
        lag = round(MAX_LAG_S * RATE / FRAME)
        with self._lock:
            mic = np.array(list(self._mic)[-n:])
            ref = np.array(list(self._ref)[-(n + lag):])
        if len(ref) == 0 or ref.max() < QUIET_RMS:
            return False
        echo = envelope_correlation(mic, ref, lag) >= self.threshold
        self.echoes += echo
        return echo

    def clear(self) -> None:
        """Forget the reference still queued (playback was cancelled)."""
        with self._lock:
            self._ref_pending = deque()
            self._ref_until = self._clock()
