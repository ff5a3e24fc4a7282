"""Endpointing: decide when a live utterance has ended (trailing silence after speech).

Voice activity per 10 ms frame comes from microVAD (``pymicro-vad``, the microWakeWord
architecture trained for speech/non-speech; github.com/rhasspy/pymicro-vad) or, where that
wheel is missing, an energy detector with an adaptive noise floor. microVAD needs 0.75 s of
audio before its first decision and lags speech by 0.3-0.45 s, so the utterance keeps a
pre-roll before the detected onset.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

import numpy as np

log = logging.getLogger(__name__)

FRAME = 160
"""Samples per VAD frame (10 ms at 16 kHz)."""
SPEECH_THRESHOLD = 0.5
"""microVAD probability above which a frame is speech."""
ONSET_FRAMES = 3
"""Consecutive speech frames that start an utterance (30 ms: a click is not speech)."""
PREROLL_S = 1.5
"""Audio kept before the detected onset (covers the detector's lag)."""
POSTROLL_S = 0.3
"""Audio kept after the last speech frame; the rest of the trailing silence is dropped."""
ENERGY_MIN_RMS = 300.0
"""Energy detector: frames quieter than this RMS (int16 units, about -40 dBFS) are silence."""
ENERGY_FACTOR = 3.0
"""Energy detector: speech is this many times louder (RMS) than the noise floor."""
ENERGY_WINDOW = 300
"""Energy detector: frames (3 s) over which the noise floor is measured."""

Vad = Callable[[np.ndarray], "bool | None"]
"""A voice activity detector: one 10 ms int16 frame -> speech (True), not (False), or
undecided yet (None)."""


class MicroVadDetector:
    """microVAD (pymicro-vad): True when the speech probability exceeds 0.5."""

    def __init__(self):
        from pymicro_vad import MicroVad

        self._vad = MicroVad()

    def __call__(self, frame: np.ndarray) -> bool | None:
        prob = self._vad.process_10ms(np.ascontiguousarray(frame, dtype="<i2").tobytes())
        return None if prob < 0 else prob > SPEECH_THRESHOLD


class EnergyDetector:
    """RMS against the noise floor: speech when RMS > max(300, 3 × floor).

    The floor is the 10th percentile of the RMS of the last 3 s of frames: speech has
    pauses between words, so the low end of a few seconds is the room's steady noise (a fan
    is learned within the first second), and long speech does not raise it.
    """

    def __init__(self):
        self._history: deque[float] = deque(maxlen=ENERGY_WINDOW)

    def __call__(self, frame: np.ndarray) -> bool:
        rms = float(np.sqrt(np.mean(np.square(frame, dtype=np.float64))))
        self._history.append(rms)
        floor = float(np.percentile(self._history, 10))
        return rms > max(ENERGY_MIN_RMS, ENERGY_FACTOR * floor)


class CombinedDetector:
    """Speech when microVAD says speech *and* the frame is louder than the noise floor.

    microVAD rejects noise that is loud but not speech; the energy gate ends speech at the
    first quiet frame, where microVAD alone lags the end of speech by up to a second.
    """

    def __init__(self):
        self._micro = MicroVadDetector()
        self._energy = EnergyDetector()

    def __call__(self, frame: np.ndarray) -> bool | None:
        loud = self._energy(frame)
        speech = self._micro(frame)
        return None if speech is None else speech and loud


def make_vad(kind: str = "auto") -> Vad:
    """Build a VAD: ``micro`` (pymicro-vad), ``energy``, ``combined`` (both must agree), or
    ``auto`` (combined when pymicro-vad is installed, else energy)."""
    if kind in ("auto", "micro", "combined"):
        try:
            return MicroVadDetector() if kind == "micro" else CombinedDetector()
        except ImportError:
            if kind != "auto":
                raise
            log.info("pymicro-vad not installed; using the energy voice activity detector")
    return EnergyDetector()


class Endpointer:
    """Collects one utterance from 16 kHz mono int16 blocks and says when it has ended.

    Ends when speech was heard and then ``trailing_silence_ms`` of non-speech followed, when
    the kept audio reaches ``max_utterance_s``, or when no speech began within
    ``start_timeout_s`` (None: wait for speech forever; :meth:`audio` is then empty).

    Args:
        trailing_silence_ms: silence after speech that ends the utterance (ms).
        max_utterance_s: longest utterance (s); longer speech is cut there.
        rate: sample rate of the blocks; the VADs are built for 16000.
        start_timeout_s: longest wait for speech to begin (s), or None.
        vad: the detector (tests pass fakes); default :func:`make_vad`.
    """

    def __init__(self, trailing_silence_ms: int, max_utterance_s: float, rate: int = 16000,
                 *, start_timeout_s: float | None = None, vad: Vad | None = None):
        self.rate = rate
        frame_s = FRAME / rate
        self._trailing = max(1, round(trailing_silence_ms / 1000 / frame_s))
        self._max_frames = max(1, round(max_utterance_s / frame_s))
        self._start_limit = None if start_timeout_s is None else round(start_timeout_s / frame_s)
        self._preroll = round(PREROLL_S / frame_s)
        self._postroll = round(POSTROLL_S / frame_s)
        self._vad = vad if vad is not None else make_vad()
        self._frames: deque[np.ndarray] = deque(maxlen=self._preroll)
        self._pending = np.zeros(0, np.int16)
        self._seen = 0          # frames pushed in all
        self._run = 0           # consecutive speech frames
        self._last_speech = -1  # index in self._frames of the last speech frame
        self.speech = False
        """True once speech began."""
        self.ended = False
        """True once the utterance ended (further pushes are ignored)."""

    def push(self, block: np.ndarray) -> bool:
        """Add a block (int16, any length); True when the utterance has ended."""
        if self.ended:
            return True
        audio = np.concatenate([self._pending, np.asarray(block, dtype=np.int16).ravel()])
        usable = len(audio) - len(audio) % FRAME
        self._pending = audio[usable:]
        for start in range(0, usable, FRAME):
            if self._frame(audio[start:start + FRAME]):
                self.ended = True
                break
        return self.ended

    def _frame(self, frame: np.ndarray) -> bool:
        """Process one 10 ms frame; True when the utterance ends with it."""
        self._seen += 1
        is_speech = self._vad(frame) is True
        self._frames.append(frame)
        self._run = self._run + 1 if is_speech else 0
        if not self.speech and self._run >= ONSET_FRAMES:
            self._start()
        if self.speech and is_speech:
            self._last_speech = len(self._frames) - 1
        if self.speech:
            silent = len(self._frames) - 1 - self._last_speech
            return silent >= self._trailing or len(self._frames) >= self._max_frames
        return self._start_limit is not None and self._seen >= self._start_limit

    def _start(self) -> None:
        """Speech began: keep the pre-roll, stop dropping old frames."""
        self.speech = True
        keep = min(len(self._frames), self._max_frames // 2)  # pre-roll: half the cap at most
        self._frames = deque(list(self._frames)[len(self._frames) - keep:])
        log.debug("speech began after %.2f s", self._seen * FRAME / self.rate)

    def audio(self) -> np.ndarray:
        """The utterance: int16 mono, from the pre-roll to 0.3 s after the last speech;
        empty when no speech was heard."""
        if not self.speech:
            return np.zeros(0, np.int16)
        end = min(len(self._frames), self._last_speech + 1 + self._postroll)
        return np.concatenate(list(self._frames)[:end]).astype(np.int16, copy=False)
