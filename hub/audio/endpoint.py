"""Endpointing: decide when a live utterance has ended (trailing silence after speech).

Voice activity per 10 ms frame comes from the WebRTC VAD (PocketSphinx's ``Vad``, mode 3)
gated by an energy detector with an adaptive noise floor: both must say speech. Measured
(``scripts/bench_vad.py``, BENCHMARKS.md "VAD"), it finds every command of the shared
recordings and the hub's one-word replies with no warm-up, and the energy gate ends speech
soon (end lag median 160 ms). Silero VAD (``make_vad("silero")``) measured better on music,
but its wheel's ggml cannot share a process with llama.cpp's (:func:`hub.audio.vad.make_vad`).
microVAD (``pymicro-vad``) needs 0.75 s of audio before its first decision, lags speech by
0.25-0.7 s and misses "no" and "sure"; it stays available as ``make_vad("micro")``.

The utterance ends (:attr:`Endpointer.reason`) on ``final`` (``final_silence_ms`` after the
last speech frame, 300 ms by default, when the recognizer's best reading of the audio so far
is a whole grammar sentence: Kaldi's endpoint rule 3, "a final state and a short silence",
``kaldi/src/online2/online-endpoint.h``), ``silence`` (``trailing_silence_ms`` after the last
speech frame; 500 ms by default, so a 0.4 s pause inside a command whose first part is no
sentence, "turn off the ... kitchen light", does not cut it), ``cap`` (``max_utterance_s``
of audio) or ``timeout`` (no speech began in ``start_timeout_s``). Speech shorter than
:data:`MIN_SPEECH_S` in all is a
click or a bump: it is logged and forgotten, and the endpointer waits on.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

import numpy as np

from hub.audio.format import RATE
from hub.audio.vad import (  # the detectors live in hub.audio.vad; imported here as before
    FRAME,
    EnergyDetector,
    MicroVadDetector,
    SileroDetector,
    Vad,
    WebRtcDetector,
    make_vad,
)

__all__ = [
    "FRAME",
    "EnergyDetector",
    "MicroVadDetector",
    "SileroDetector",
    "Vad",
    "WebRtcDetector",
    "make_vad",
    "ONSET_FRAMES",
    "MIN_SPEECH_S",
    "PREROLL_S",
    "POSTROLL_S",
    "BackgroundCheck",
    "Endpointer",
    "final_state_check",
    "live_endpointer",
]

log = logging.getLogger(__name__)

ONSET_FRAMES = 3
"""Consecutive speech frames that start an utterance (30 ms: a click is not speech)."""
MIN_SPEECH_S = 0.12
"""Least speech (s, frames judged speech) an utterance must hold; Piper's "no" holds 0.33 s."""
PREROLL_S = 1.5
"""Audio kept before the detected onset (the recognizer's own segmenter and CMN use it)."""
POSTROLL_S = 0.3
"""Audio kept after the last speech frame; the rest of the trailing silence is dropped."""


class BackgroundCheck:
    """``complete(audio)`` run once on a daemon thread; :meth:`result` does not wait.

    An exception is logged and counts as False (as for the synchronous check).
    """

    def __init__(self, complete: Callable[[np.ndarray], bool], audio: np.ndarray):
        self._answer: bool | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(complete, audio), name="hub-final-check", daemon=True
        )
        self._thread.start()

    def _run(self, complete: Callable[[np.ndarray], bool], audio: np.ndarray) -> None:
        try:
            self._answer = bool(complete(audio))
        except Exception as exc:
            log.warning("final-state check failed: %s: %s", type(exc).__name__, exc)
            self._answer = False
        finally:
            self._done.set()

    def result(self) -> bool | None:
        """The check's answer, or None while it runs."""
        return self._answer if self._done.is_set() else None

    def wait(self, timeout_s: float | None = None) -> bool | None:
        """Wait up to ``timeout_s`` for the answer (tests); None when it is not there yet."""
        self._done.wait(timeout_s)
        return self.result()


class Endpointer:
    """Collects one utterance from 16 kHz mono int16 blocks and says when it has ended.

    Ends when speech was heard and then ``trailing_silence_ms`` of non-speech followed (or
    ``final_silence_ms`` and the audio reads as a whole sentence: ``complete``), when
    the kept audio reaches ``max_utterance_s``, or when no speech began within
    ``start_timeout_s`` (None: wait for speech forever; :meth:`audio` is then empty); why is
    :attr:`reason` (see the module doc). :attr:`speech_end_s` is where the last speech frame
    ended, in seconds of audio pushed.

    Args:
        trailing_silence_ms: silence after speech that ends the utterance (ms).
        max_utterance_s: longest utterance (s); longer speech is cut there.
        rate: sample rate of the blocks; the VADs are built for 16000.
        start_timeout_s: longest wait for speech to begin (s), or None.
        vad: the detector (tests pass fakes); default :func:`make_vad`.
        preroll_s: audio kept before the onset (default :data:`PREROLL_S`).
        final_silence_ms: the shorter silence of the ``final`` rule (ms; 0: off).
        complete: ``complete(audio) -> bool``: the audio so far (int16, what :meth:`audio`
            gives) reads as a whole sentence; asked once per pause, when the pause reaches
            ``final_silence_ms`` (the recognizer decodes it: with ``final_silence_ms`` equal
            to :data:`POSTROLL_S` the audio asked about is the utterance's own, so the turn
            may reuse the decode). None: the ``final`` rule is off. An exception is logged
            and counts as False.
        check_silence_ms: when > 0 (and below ``final_silence_ms``), ``complete`` is asked
            on a thread of its own (:class:`BackgroundCheck`) once a pause reaches this
            long, and the ``final`` rule ends the utterance from ``final_silence_ms`` on as
            soon as it answered True; the utterance's audio is then what was asked about
            (this much silence after the last speech), so the turn reuses that decode. Speech
            again drops the pause's check. Kaldi decodes while the audio comes, so its rule
            has its answer at once; this is the nearest a whole-utterance decode gets.
    """

    def __init__(
        self,
        trailing_silence_ms: int,
        max_utterance_s: float,
        rate: int = RATE,
        *,
        start_timeout_s: float | None = None,
        vad: Vad | None = None,
        preroll_s: float = PREROLL_S,
        final_silence_ms: int = 0,
        complete: Callable[[np.ndarray], bool] | None = None,
        check_silence_ms: int = 0,
    ):
        self.rate = rate
        frame_s = FRAME / rate
        self._trailing = max(1, round(trailing_silence_ms / 1000 / frame_s))
        final = round(final_silence_ms / 1000 / frame_s)
        self._final = final if complete is not None and 0 < final < self._trailing else 0
        self._complete = complete
        early = round(check_silence_ms / 1000 / frame_s)
        self._early = early if self._final and 0 < early < self._final else 0
        self._check: BackgroundCheck | None = None
        self._cut: int | None = None  # frames kept when the background check started
        self._max_frames = max(1, round(max_utterance_s / frame_s))
        self._start_limit = None if start_timeout_s is None else round(start_timeout_s / frame_s)
        self._preroll = max(1, round(preroll_s / frame_s))
        self._postroll = round(POSTROLL_S / frame_s)
        self._vad = vad if vad is not None else make_vad()
        self._frames: deque[np.ndarray] = deque(maxlen=self._preroll)
        self._pending = np.zeros(0, np.int16)
        self._seen = 0  # frames pushed in all
        self._run = 0  # consecutive speech frames
        self._last_speech = -1  # index in self._frames of the last speech frame
        self._speech_frames = 0
        self.speech_end_s = 0.0
        """Seconds of pushed audio up to the end of the last speech frame."""
        self.reason: str | None = None
        """Why the utterance ended: ``silence``, ``cap`` or ``timeout``; None while open."""
        self.speech = False
        """True once speech began."""
        self.ended = False
        """True once the utterance ended (further pushes are ignored)."""
        self.ignored: list[float] = []
        """Seconds of each sound forgotten as too short to be speech (a click, a bump)."""

    @property
    def speech_s(self) -> float:
        """Seconds of frames judged speech in the utterance so far."""
        return self._speech_frames * FRAME / self.rate

    @property
    def seen_s(self) -> float:
        """Seconds of audio pushed so far (in whole frames)."""
        return self._seen * FRAME / self.rate

    @property
    def check(self) -> BackgroundCheck | None:
        """The background ``final`` check of the current pause, or None."""
        return self._check

    def push(self, block: np.ndarray) -> bool:
        """Add a block (int16, any length); True when the utterance has ended."""
        if self.ended:
            return True
        audio = np.concatenate([self._pending, np.asarray(block, dtype=np.int16).ravel()])
        usable = len(audio) - len(audio) % FRAME
        self._pending = audio[usable:]
        for start in range(0, usable, FRAME):
            if self._frame(audio[start : start + FRAME]):
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
            self._check, self._cut = None, None  # speech again: that pause's check is moot
            self._last_speech = len(self._frames) - 1
            self._speech_frames += 1
            self.speech_end_s = self._seen * FRAME / self.rate
        if self.speech:
            silent = len(self._frames) - 1 - self._last_speech
            if silent >= self._trailing and not self._enough_speech():
                return False
            if self._final and self._final_rule(silent):
                self.reason = "final"
                return True
            if silent >= self._trailing or len(self._frames) >= self._max_frames:
                self.reason = "silence" if silent >= self._trailing else "cap"
                return True
            return False
        if self._start_limit is not None and self._seen >= self._start_limit:
            self.reason = "timeout"
            return True
        return False

    def _final_rule(self, silent: int) -> bool:
        """The ``final`` rule after ``silent`` frames of a pause: asked at ``final_silence_ms``
        on the calling thread, or (``check_silence_ms``) started then on a thread of its own
        and its answer taken from ``final_silence_ms`` on, as soon as it is there."""
        if not self._early:
            return silent == self._final and self._is_complete()
        if silent == self._early and self._enough():
            self._cut = len(self._frames)
            self._check = BackgroundCheck(self._complete, self.audio())
        return silent >= self._final and self._check is not None and self._check.result() is True

    def _enough(self) -> bool:
        """True when the speech so far is long enough for the ``final`` rule."""
        return self._speech_frames * FRAME / self.rate >= MIN_SPEECH_S

    def _is_complete(self) -> bool:
        """The ``final`` rule's question (see ``complete``), for enough speech only."""
        if not self._enough():
            return False
        try:
            return bool(self._complete(self.audio()))
        except Exception as exc:
            log.warning("final-state check failed: %s: %s", type(exc).__name__, exc)
            return False

    def _enough_speech(self) -> bool:
        """True when the speech so far is long enough to be an utterance; else forget it (a
        click, a bump), logged, and wait for speech again."""
        if self._speech_frames * FRAME / self.rate >= MIN_SPEECH_S:
            return True
        self.ignored.append(round(self.speech_s, 2))
        log.info("ignored %.2f s of sound: too short to be speech", self.speech_s)
        self.speech, self._speech_frames, self._last_speech = False, 0, -1
        self._check, self._cut = None, None
        self._frames = deque(list(self._frames), maxlen=self._preroll)
        return False

    def _start(self) -> None:
        """Speech began: keep the pre-roll, stop dropping old frames."""
        self.speech = True
        self._speech_frames = self._run
        keep = min(len(self._frames), self._max_frames // 2)  # pre-roll: half the cap at most
        self._frames = deque(list(self._frames)[len(self._frames) - keep :])
        log.debug("speech began after %.2f s", self._seen * FRAME / self.rate)

    def audio(self) -> np.ndarray:
        """The utterance: int16 mono, from the pre-roll to 0.3 s after the last speech;
        empty when no speech was heard."""
        if not self.speech:
            return np.zeros(0, np.int16)
        end = min(len(self._frames), self._last_speech + 1 + self._postroll)
        if self._cut is not None:  # the audio the background check decodes: the turn's own
            end = self._cut
        return np.concatenate(list(self._frames)[:end]).astype(np.int16, copy=False)

    def audio_so_far(self) -> np.ndarray:
        """Every frame kept so far (int16: the pre-roll and all pushed since speech began,
        silence after it included), to hand an utterance in progress to another Endpointer;
        empty before a frame was pushed."""
        if not self._frames:
            return np.zeros(0, np.int16)
        return np.concatenate(list(self._frames)).astype(np.int16, copy=False)


def final_state_check(engines) -> Callable[[np.ndarray], bool] | None:
    """The recognizer's ``complete(audio) -> bool`` (the ``final`` rule's question), or None
    when the recognizer is not loaded or has no grammar to be complete in (Vosk).

    Args:
        engines: anything with ``loaded(name) -> bool`` and ``asr()`` (the hub's engines).
    """
    if engines is None or not engines.loaded("asr"):
        return None
    return getattr(engines.asr(), "complete", None)


def live_endpointer(asr, engines, start_timeout_s: float | None) -> Endpointer:
    """The Endpointer of one live utterance, the same for the local microphone and every
    satellite and the Wyoming server: ``[asr]`` ``trailing_silence_ms``, ``max_utterance_s``
    and ``final_silence_ms`` (Kaldi's final-state rule, asked of ``engines``' recognizer:
    :func:`final_state_check`), its check started early at ``final_check_ms``.

    Args:
        asr: the ``[asr]`` settings.
        engines: the hub's engines (or None: the ``final`` rule is off).
        start_timeout_s: see :class:`Endpointer`.
    """
    complete = final_state_check(engines) if asr.final_silence_ms else None
    return Endpointer(
        asr.trailing_silence_ms,
        asr.max_utterance_s,
        RATE,
        start_timeout_s=start_timeout_s,
        final_silence_ms=asr.final_silence_ms,
        complete=complete,
        check_silence_ms=asr.final_check_ms,
    )
