"""Is a satellite's audio what its label says? (BC-45 f)

Each chunk is converted by its own format with :class:`hub.wyoming.audio_in.ChunkConverter`
(shared with the Wyoming ASR server); this module checks the stream's pace.
"""

from __future__ import annotations

PACE_AFTER_S = 1.0
"""Wall-clock seconds of a stream after which its pace is checked against its label (BC-45 f)."""
PACE_TOLERANCE = 0.15
"""How far (fraction of the multiple) the pace may be from a whole multiple of the label's."""


class PaceCheck:
    """Does a stream deliver as many samples per wall-clock second as its label says? (BC-45 f)

    ``wyoming-satellite --mic-channel-index`` with volume, gain or noise processing labels the
    whole interleaved 2-channel chunk as one channel: the stream then carries twice the
    samples its label implies per second (and a wrong ``--mic-command-rate`` or ``--channels``
    a whole multiple). The audio of chunks 1..*n* is counted against the wall time from the
    first chunk's arrival to chunk *n*'s (the first chunk itself is left out: it may be a buffer,
    as the VAD satellite's 2 s pre-roll is). Once :data:`PACE_AFTER_S` have passed the pace
    is decided; it is :attr:`mislabelled` when within :data:`PACE_TOLERANCE` of a whole
    multiple ≥ 2 of real time.

    Args:
        clock: monotonic seconds (a fake in tests); after_s: see :data:`PACE_AFTER_S`.
    """

    def __init__(self, clock, after_s: float = PACE_AFTER_S):
        self.clock, self.after_s = clock, after_s
        self._start: float | None = None
        self._audio_s = 0.0
        self.pace: float | None = None
        """Seconds of labelled audio per wall-clock second, once decided; None before."""

    @property
    def decided(self) -> bool:
        """True once the pace is measured."""
        return self.pace is not None

    @property
    def mislabelled(self) -> int:
        """The whole multiple (2, 3, ...) of real time the stream runs at, or 0 (it is fine
        or not decided yet)."""
        if self.pace is None:
            return 0
        k = round(self.pace)
        return k if k >= 2 and abs(self.pace - k) <= PACE_TOLERANCE * k else 0

    def add(self, nbytes: int, rate: int, width: int, channels: int, at: float | None = None):
        """Count one chunk of ``nbytes`` labelled ``rate``/``width``/``channels`` that arrived
        at ``at`` (monotonic s; default now)."""
        now = self.clock() if at is None else at
        if self._start is None:
            self._start = now
            return
        self._audio_s += nbytes / max(1, rate * width * channels)
        if now - self._start >= self.after_s:
            self.decide(now)

    def due_in(self) -> float:
        """Seconds until the pace is decided by the clock alone (0 once decided)."""
        if self.pace is not None:
            return 0.0
        start = self.clock() if self._start is None else self._start
        return max(0.0, start + self.after_s - self.clock())

    def decide(self, now: float | None = None) -> None:
        """Measure the pace now (or at ``now``) if not done yet; a stream that sent one chunk
        or none is taken as real time."""
        now = self.clock() if now is None else now
        if self.pace is None:
            elapsed = now - (now if self._start is None else self._start)
            self.pace = self._audio_s / elapsed if elapsed > 0 and self._audio_s else 1.0


def mislabelled_message(satellite: str, check: PaceCheck, label: tuple[int, int, int]) -> str:
    """The one WARNING for ``satellite``'s mislabelled stream (BC-45 f): its pace, its label
    ``(rate Hz, width bytes, channels)`` and the likely wrong setting."""
    return (
        f"satellite {satellite}: its audio arrives at {check.pace or 0.0:.1f}x the pace its "
        f"label says ({label[0]} Hz, {label[1]} bytes, {label[2]} channel(s)): likely "
        f"--mic-channel-index with a {check.mislabelled}-channel mic labelled as one channel, "
        "or a wrong --mic-command-rate/--mic-command-channels; its audio is not used"
    )
