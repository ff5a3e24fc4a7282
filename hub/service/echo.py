"""Is the microphone hearing the hub's own answer? (BC-26, BC-27: a hub must not wake or stop
on itself.)

Without acoustic echo cancellation the microphone picks up the speaker. A wake (or stop)
detection while the hub speaks is its own echo when the input's loudness envelope follows
the envelope of what was played: the normalized cross-correlation of the two 10 ms RMS
envelopes at lags -:data:`LEAD_S` to :data:`MAX_LAG_S` (speaker, room and sound server delay)
reaches ``threshold``. The span judged is the detection's own: a stop listener's utterance
from its pre-roll to its end, a wake word's last :data:`WINDOW_S`; it is judged when it began
while the hub played or within ``tail_s`` after (issue 18: a stretch of echo judged by its
last window, or by when its last block was heard, passed the check when it held the
playback's start or ended after the playback). Envelopes, not waveforms, so a room's
reverberation or a resampler's phase does not hide the echo; a user speaking over the
answer makes the input diverge from it. Where the sound server can cancel echo
(PulseAudio/PipeWire ``module-echo-cancel``), its output is the better microphone; this
check still runs on it.

The echo path is measured, never assumed (issue 18): while the hub plays, every
:data:`MEASURE_S` the same correlation is taken on the last :data:`WINDOW_S` heard (from the
playback's start at the earliest), once the playback has been loud for :data:`MAX_LAG_S` +
:data:`MEASURE_S` (the slowest echo has then been heard for 0.5 s; a window taken sooner held
none yet, scored 0 and pulled a coupled device under the bar: measured, the stop listener
then decoded the hub's first answer). :class:`hub.service.echo_path.EchoPath` keeps what the
windows show: whether the device couples (a device below
:data:`hub.service.echo_path.COUPLED` never has a detection judged echo), and its echo's
delay, gain and noise floor, from which the power of a span is compared with the echo
predicted for it (a span whose correlation an underrun spoiled is still echo; a user speaking
over the echo is not). It is kept from one answer to the next: one gate per daemon, the path
is the device's, not the answer's. Before the first measurement (the first second of the
daemon's first playback) a detection is judged by its own span's correlation alone.
Source: envelope cross-correlation as in double-talk detectors
(Benesty et al., "A new class of doubletalk detectors based on cross-correlation", 2000).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from hub.audio.format import RATE
from hub.service.echo_path import (
    COUPLED,
    DOUBLE_TALK,
    ENERGY_RATIO,
    EchoPath,
    best_alignment,
    envelope,
)

FRAME = 160
"""Samples per envelope frame (10 ms)."""
WINDOW_S = 1.5
"""Input compared with the reference by default, and measured: the last 1.5 s (a wake word
lasts about 1 s)."""
SPAN_MIN_S = 0.5
"""Shortest span of input judged (s): a shorter one is judged with the audio before it."""
SPAN_MAX_S = 3.0
"""Longest span of input judged (s; the stop listener's utterances last 2.5 s at most)."""
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
QUIET_RMS = 50.0
"""Reference frames quieter than this (int16 RMS) count as silence: no echo to find."""
ONSET_GAP_S = MAX_LAG_S
"""A loud reference frame after this long without one begins a playback (s)."""
LOUD_MIN_S = 0.3
"""Loud reference a window of the echo path's measurement must hold (s)."""


class EchoGate:
    """Keeps what was played and what was heard, and judges detections during playback.

    Both envelopes live on one clock: a played block is placed where the device plays it
    (right after the block before it, or when it was handed over if the device had run
    dry), a heard block where the microphone thread read it (``heard(..., at=)``). So a
    listener that falls behind under load, or a speaker thread handing blocks over late
    while the device plays from its buffer, does not shift one envelope against the other
    (an arrival-order axis did: the echo drifted 30 ms inside one window and scored 0.66).

    Thread-safe: the speaker thread calls :meth:`played`, the listening thread calls
    :meth:`heard` and :meth:`is_echo`. One gate lives as long as the daemon's devices do, so
    the coupling measured during one answer judges the next (it is the device's, not the
    answer's).

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
        self._keep = _frames(SPAN_MAX_S + MAX_LAG_S + LEAD_S) + 50
        self._mic: dict[int, float] = {}
        self._ref: dict[int, float] = {}
        self._ref_until = -1.0
        self._heard_at = -1.0
        self._mic_next = -1
        self._onset = -1  # first loud reference frame of the current playback
        self._last_loud = -1  # latest loud reference frame
        self._lock = threading.Lock()
        self.path = EchoPath()
        """The device's echo path as measured so far."""
        self._measured_at = -1.0
        self.echoes = 0
        """Detections judged to be the hub's own echo so far."""
        self.last_correlation: float | None = None
        """The correlation of the span :meth:`is_echo` judged last (None: nothing to compare)."""
        self.last_ratio: float | None = None
        """Its power over the echo predicted for it (None: not compared)."""

    def played(self, pcm: bytes, rate: int = RATE, channels: int = 1) -> None:
        """``pcm`` (int16 interleaved, ``rate`` Hz) was handed to the output device just now."""
        samples = np.frombuffer(pcm, dtype=np.int16)[:: max(1, channels)]
        env = envelope(samples, rate)
        with self._lock:
            start = max(self._ref_until, self._clock())
            self._ref_until = start + len(samples) / rate
            first = _frame(start)
            for i, value in enumerate(env):
                self._ref[first + i] = float(value)
                if value >= QUIET_RMS:
                    if self._last_loud < 0 or first + i - self._last_loud > _frames(ONSET_GAP_S):
                        self._onset = first + i
                    self._last_loud = first + i
            _prune(self._ref, first + len(env) - self._keep)

    def heard(self, samples: np.ndarray, at: float | None = None) -> None:
        """``samples`` (int16 16 kHz mono) were read from the microphone at ``at`` (monotonic
        seconds, when the read returned; default: now).

        The microphone's audio is continuous: a block follows the one before it, frame for
        frame, however irregularly the reads return. It is placed by ``at`` only when that
        is earlier than the continuation (audio cannot be read before it was recorded) or
        later by more than :data:`GAP_S`. While the hub plays, the echo path is measured
        every :data:`MEASURE_S` (:meth:`_measure`).
        """
        env = envelope(samples)
        at = self._clock() if at is None else at
        with self._lock:
            last = self._mic_next + len(env) - 1
            read = _frame(at)
            if self._mic_next < 0 or read < last or read - last > GAP_S * RATE / FRAME:
                last = read
            for i, value in enumerate(env):
                self._mic[last - len(env) + 1 + i] = float(value)
            self._mic_next = last + 1
            self._heard_at = max(self._heard_at, at)
            _prune(self._mic, last - self._keep)
        self._measure(at)

    def _measure(self, at: float) -> None:
        """Add one measurement of the echo path when one is due and valid: the hub plays, and
        its current playback began loud at least :data:`MAX_LAG_S` + :data:`MEASURE_S` of
        microphone audio ago (so even the slowest echo had time to reach the microphone: a
        window taken sooner held no echo yet and scored 0 on a device with one, issue 18).
        The window is the last :data:`WINDOW_S`, from the playback's start at the earliest."""
        if at - self._measured_at < MEASURE_S:
            return
        with self._lock:
            last, onset = self._mic_next - 1, self._onset
            playing = onset >= 0 and at <= self._ref_until
        if not playing or last - onset < _frames(MAX_LAG_S + MEASURE_S):
            return
        first = max(last - _frames(WINDOW_S) + 1, onset - _frames(LEAD_S))
        aligned = self._align(first, last, _frames(LOUD_MIN_S))
        if aligned is not None:
            self._measured_at = at
            corr, delay = aligned
            mic, ref = self._envelopes(first, last, delay)
            self.path.measured(corr, delay, mic, ref)

    @property
    def coupling(self) -> float | None:
        """The device's coupling (:attr:`hub.service.echo_path.EchoPath.coupling`)."""
        return self.path.coupling

    def _envelopes(self, first: int, last: int, delay: int) -> tuple[np.ndarray, np.ndarray]:
        """The heard envelope of frames ``first``..``last`` and the played one ``delay``
        frames before them (as long)."""
        with self._lock:
            mic = np.array([self._mic.get(i, 0.0) for i in range(first, last + 1)])
            ref = np.array([self._ref.get(i - delay, 0.0) for i in range(first, last + 1)])
        return mic, ref

    def _align(self, first: int, last: int, loud_min: int = 1) -> tuple[float, int] | None:
        """Best alignment of the heard frames ``first``..``last`` with what was played (delay
        from -:data:`LEAD_S` to :data:`MAX_LAG_S`): ``(correlation, delay in frames)``; None
        when the reference held fewer than ``loud_min`` frames louder than :data:`QUIET_RMS`
        (nothing to compare)."""
        lag, lead = _frames(MAX_LAG_S), _frames(LEAD_S)
        with self._lock:
            mic = np.array([self._mic.get(i, 0.0) for i in range(first, last + 1)])
            ref = np.array([self._ref.get(i, 0.0) for i in range(first - lag, last + lead + 1)])
        if int(np.count_nonzero(ref >= QUIET_RMS)) < loud_min:
            return None
        corr, k = best_alignment(mic, ref, lag + lead)
        return corr, k - lead

    def speaking(self) -> bool:
        """True when the latest audio heard was read while the hub played, or within
        ``tail_s`` after it ended (judged at the time it was read, not when it is judged)."""
        with self._lock:
            at = self._heard_at if self._heard_at >= 0 else self._clock()
            return self._ref_until >= 0 and at <= self._ref_until + self.tail_s

    def is_echo(self, span_s: float | None = None) -> bool:
        """Whether the last ``span_s`` of input (default :data:`WINDOW_S`; an utterance's own
        length, kept within :data:`SPAN_MIN_S`..:data:`SPAN_MAX_S`) is mostly the hub's own
        output: the span began while the hub played or within ``tail_s`` after, and its
        envelope follows what was played (correlation at least ``threshold``). On a device
        whose echo path was measured, its power decides with it: no more than
        :data:`hub.service.echo_path.ENERGY_RATIO` times the echo the path predicts is echo
        however it correlates (an underrun moved the echo inside the span), more than
        :data:`hub.service.echo_path.DOUBLE_TALK` times is not (a user speaks over it).

        Judged on the whole span, not the last window: an utterance's start may hold the
        playback's start, and its end may come after the playback ended (issue 18). False on
        a device whose measured coupling is below :data:`hub.service.echo_path.COUPLED` (its
        input does not follow its output); before the first measurement the span's own
        correlation decides. Counts the echoes found; the numbers are kept for
        :meth:`detail`.
        """
        span = min(max(WINDOW_S if span_s is None else span_s, SPAN_MIN_S), SPAN_MAX_S)
        with self._lock:
            last = self._mic_next - 1
            first = last - _frames(span) + 1
            overlaps = self._ref_until >= 0 and first <= _frame(self._ref_until + self.tail_s)
        self.last_correlation = self.last_ratio = None
        coupling = self.coupling
        if last < 0 or not overlaps or (coupling is not None and coupling < COUPLED):
            return False
        aligned = self._align(first, last)
        if aligned is None:
            return False
        self.last_correlation, delay = aligned
        echo = aligned[0] >= self.threshold
        if coupling is not None:  # a coupled device: its measured path predicts the echo
            self.last_ratio = self._ratio(first, last, (delay, self.path.delay))
        if self.last_ratio is not None:
            echo = self.last_ratio <= ENERGY_RATIO or (echo and self.last_ratio <= DOUBLE_TALK)
        self.echoes += echo
        return echo

    def _ratio(self, first: int, last: int, delays) -> float | None:
        """The heard frames' power over the echo the path predicts for them
        (:meth:`hub.service.echo_path.EchoPath.explained`), at the likelier of ``delays``
        (the span's own best one, the path's: an underrun may have moved the echo); None
        before the path's gain was measured."""
        ratios = [
            self.path.explained(*self._envelopes(first, last, d)) for d in delays if d is not None
        ]
        known = [r for r in ratios if r is not None]
        return min(known) if known else None

    def detail(self) -> str:
        """The last judgment's numbers for a log line: its correlation, its power over the
        echo predicted, and the echo path."""
        corr, ratio = self.last_correlation, self.last_ratio
        return "correlation {}{}, {}".format(
            "-" if corr is None else f"{corr:.2f}",
            "" if ratio is None else f", power {ratio:.1f}x the echo",
            self.path.summary(),
        )

    def clear(self) -> None:
        """Forget the reference not yet played (playback was cancelled)."""
        with self._lock:
            now = self._clock()
            for i in [i for i in self._ref if i > _frame(now)]:
                del self._ref[i]
            self._ref_until = min(self._ref_until, now)
            self._last_loud = min(self._last_loud, _frame(now))


def _frame(t: float) -> int:
    """The envelope frame at monotonic time ``t`` (s)."""
    return round(t * RATE / FRAME)


def _frames(seconds: float) -> int:
    """Envelope frames in ``seconds``."""
    return round(seconds * RATE / FRAME)


def _prune(frames: dict[int, float], before: int) -> None:
    """Drop the frames of ``frames`` older than index ``before``."""
    for i in [i for i in frames if i < before]:
        del frames[i]
