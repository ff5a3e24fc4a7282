"""Is the microphone hearing the hub's own answer? (BC-26: a hub must not wake on itself.)

Without acoustic echo cancellation the microphone picks up the speaker. A wake (or stop)
detection while the hub speaks is its own echo when the input's loudness envelope follows
the envelope of what was played: the normalized cross-correlation of the two 10 ms RMS
envelopes, over the last :data:`WINDOW_S` and at lags -:data:`LEAD_S` to :data:`MAX_LAG_S` (speaker,
room and sound server delay), reaches ``threshold``. Envelopes, not waveforms, so a room's
reverberation or a resampler's phase does not hide the echo; a user speaking over the
answer makes the input diverge from it. Where the sound server can cancel echo
(PulseAudio/PipeWire ``module-echo-cancel``), its output is the better microphone; this
check still runs on it.

The echo path is measured, never assumed (issue 18): every :data:`MEASURE_S` of loud playback
the same correlation is taken on the window just heard, and the lower quartile of the last
:data:`PATH_WINDOWS` such windows is the device's coupling. With an acoustic path nearly every
window of playback follows the output (0.8-1.0); without one (a headset, a line-in, the test
FIFO) the windows in which nobody speaks score 0, while those holding a user's speech score
0.3-0.8 by chance (a wake word's envelope can match a chime's; measured in the live dialog rig,
median 0.56 over a ring talked over), so the quartile, not the median, tells them apart. A
device below :data:`COUPLED` never has a detection judged echo. Until a first window was
measured, a detection is judged by its own window alone.
Source: envelope cross-correlation as in double-talk detectors
(Benesty et al., "A new class of doubletalk detectors based on cross-correlation", 2000).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from hub.audio.format import RATE

FRAME = 160
"""Samples per envelope frame (10 ms)."""
WINDOW_S = 1.5
"""Input compared with the reference: the last 1.5 s (a wake word lasts about 1 s)."""
MAX_LAG_S = 0.6
"""Longest speaker-to-microphone delay looked for (s)."""
LEAD_S = 0.3
"""How much earlier than its placement the played audio may reach the microphone (s): a
block is placed when the device took it, which can be after it began to play (one 100 ms
output block, a thread scheduled late)."""
GAP_S = 0.25
"""A microphone block read this much later than the audio before it ends is placed anew
(audio is missing: blocks dropped, the device reopened, a pipe or network source stalled)."""
MEASURE_S = 0.5
"""How often the echo path is measured while the hub plays (s of microphone audio)."""
PATH_WINDOWS = 16
"""Measurements of the echo path kept (their lower quartile is the device's coupling)."""
COUPLED = 0.5
"""Coupling (lower-quartile correlation) at or above which the input follows the output."""
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
        r = reference[end - n : end]
        if len(r) < n:
            break
        r = r - r.mean()
        r_norm = float(np.sqrt(np.dot(r, r)))
        if r_norm > 0:
            best = max(best, float(np.dot(m, r)) / (m_norm * r_norm))
    return best


class EchoGate:
    """Keeps what was played and what was heard, and judges detections during playback.

    Both envelopes live on one clock: a played block is placed where the device plays it
    (right after the block before it, or when it was handed over if the device had run
    dry), a heard block where the microphone thread read it (``heard(..., at=)``). So a
    listener that falls behind under load, or a speaker thread handing blocks over late
    while the device plays from its buffer, does not shift one envelope against the other
    (an arrival-order axis did: the echo drifted 30 ms inside one window and scored 0.66).

    Thread-safe: the speaker thread calls :meth:`played`, the listening thread calls
    :meth:`heard` and :meth:`is_echo`.

    Args:
        threshold: correlation at or above which a detection is echo (``wake.echo_correlation``).
        tail_s: how long after the last played audio its echo is still looked for
            (``wake.tail_guard_s``).
        clock: monotonic seconds (tests pass a fake).
    """

    def __init__(
        self,
        threshold: float = 0.7,
        tail_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.threshold, self.tail_s, self._clock = threshold, tail_s, clock
        self._keep = round((WINDOW_S + MAX_LAG_S + LEAD_S) * RATE / FRAME) + 50
        self._mic: dict[int, float] = {}
        self._ref: dict[int, float] = {}
        self._ref_until = -1.0
        self._heard_at = -1.0
        self._mic_next = -1
        self._lock = threading.Lock()
        self._path: deque[float] = deque(maxlen=PATH_WINDOWS)
        self._measured_at = -1.0
        self.echoes = 0
        """Detections judged to be the hub's own echo so far."""

    @staticmethod
    def _frame(t: float) -> int:
        return round(t * RATE / FRAME)

    def played(self, pcm: bytes, rate: int = RATE, channels: int = 1) -> None:
        """``pcm`` (int16 interleaved, ``rate`` Hz) was handed to the output device just now."""
        samples = np.frombuffer(pcm, dtype=np.int16)[:: max(1, channels)]
        env = _envelope(samples, rate)
        with self._lock:
            start = max(self._ref_until, self._clock())
            self._ref_until = start + len(samples) / rate
            first = self._frame(start)
            for i, value in enumerate(env):
                self._ref[first + i] = float(value)
            _prune(self._ref, first + len(env) - self._keep)

    def heard(self, samples: np.ndarray, at: float | None = None) -> None:
        """``samples`` (int16 16 kHz mono) were read from the microphone at ``at`` (monotonic
        seconds, when the read returned; default: now).

        The microphone's audio is continuous: a block follows the one before it, frame for
        frame, however irregularly the reads return. It is placed by ``at`` only when that
        is earlier than the continuation (audio cannot be read before it was recorded) or
        later by more than :data:`GAP_S`.
        """
        env = _envelope(samples)
        at = self._clock() if at is None else at
        with self._lock:
            last = self._mic_next + len(env) - 1
            read = self._frame(at)
            if self._mic_next < 0 or read < last or read - last > GAP_S * RATE / FRAME:
                last = read
            for i, value in enumerate(env):
                self._mic[last - len(env) + 1 + i] = float(value)
            self._mic_next = last + 1
            self._heard_at = max(self._heard_at, at)
            _prune(self._mic, last - self._keep)
        if self.speaking() and at - self._measured_at >= MEASURE_S:
            self._measured_at = at
            corr = self._correlation()
            if corr is not None:
                self._path.append(corr)

    @property
    def coupling(self) -> float | None:
        """Lower quartile of the input/output correlation over the last measured windows of
        playback; None before the first one."""
        with self._lock:
            return float(np.percentile(self._path, 25)) if self._path else None

    def _correlation(self) -> float | None:
        """Correlation of the last :data:`WINDOW_S` heard with what was played over it (best
        lag); None when the reference was quiet (nothing to compare)."""
        n = round(WINDOW_S * RATE / FRAME)
        lag, lead = round(MAX_LAG_S * RATE / FRAME), round(LEAD_S * RATE / FRAME)
        with self._lock:
            last = self._mic_next - 1
            mic = np.array([self._mic.get(i, 0.0) for i in range(last - n + 1, last + 1)])
            ref = np.array(
                [self._ref.get(i, 0.0) for i in range(last - n - lag + 1, last + lead + 1)]
            )
        if ref.max() < QUIET_RMS:
            return None
        return envelope_correlation(mic, ref, lag + lead)

    def speaking(self) -> bool:
        """True when the latest audio heard was read while the hub played, or within
        ``tail_s`` after it ended (judged at the time it was read, not when it is judged)."""
        with self._lock:
            at = self._heard_at if self._heard_at >= 0 else self._clock()
            return self._ref_until >= 0 and at <= self._ref_until + self.tail_s

    def is_echo(self) -> bool:
        """Whether what the microphone holds now is mostly the hub's own output.

        False when nothing was played recently, and on a device whose measured coupling is
        below :data:`COUPLED` (its input does not follow its output). Counts the echoes found.
        """
        if not self.speaking():
            return False
        coupling = self.coupling
        if coupling is not None and coupling < COUPLED:
            return False
        corr = self._correlation()
        echo = corr is not None and corr >= self.threshold
        self.echoes += echo
        return echo

    def clear(self) -> None:
        """Forget the reference not yet played (playback was cancelled)."""
        with self._lock:
            now = self._clock()
            for i in [i for i in self._ref if i > self._frame(now)]:
                del self._ref[i]
            self._ref_until = min(self._ref_until, now)


def _prune(frames: dict[int, float], before: int) -> None:
    """Drop the frames of ``frames`` older than index ``before``."""
    for i in [i for i in frames if i < before]:
        del frames[i]
