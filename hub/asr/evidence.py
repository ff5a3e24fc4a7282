"""Speech evidence for the second pass: is there speech in this audio at all? (case BC-37)

Whisper writes fluent text over silence, a fan or music ("Thank you.", "Play the Beatles."),
so nothing it writes is used without evidence from the hub's own detectors:

- voice activity: microVAD (``pymicro-vad``) over 10 ms frames; the milliseconds of speech
  (:func:`measure`);
- energy: the RMS level of the audio (dBFS);
- Whisper's own figures: ``no_speech_prob`` above :data:`NO_SPEECH_PROB` drops the text
  whatever its log-probability (faster-whisper cancels its no-speech skip whenever
  ``avg_logprob`` is high, so a confident "Thank you." over silence survives it),
  ``compression_ratio`` above :data:`MAX_COMPRESSION` (a loop), one token or a short phrase
  repeated :data:`MAX_REPEAT` times in a row ("you you you", screenpipe PR #4070), and a very low
  ``avg_logprob``;
- a short list of invented phrases (:data:`INVENTED`: "thank you", "thanks for watching",
  subtitle credits) is only a backstop, used when the evidence is weak.

Thresholds follow OpenAI Whisper's own (no-speech 0.6, compression 2.4, log-prob -1.0) and
faster-whisper PR #646 / hermes-agent PR #73934 (VAD gate, no conditioning, confidence gate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from pymicro_vad import MicroVad

from hub.asr.whisper_io import normalize

NO_SPEECH_PROB = 0.6
"""Above this no-speech probability a second-pass text is dropped (reason ``no_speech``)."""
MAX_COMPRESSION = 2.4
"""Above this gzip compression ratio the text is a loop (reason ``compression``)."""
MAX_REPEAT = 3
"""A word repeated this many times in a row is a loop (reason ``repetition``)."""
MAX_LOOP_WORDS = 8
"""Longest phrase (words) checked for repeating :data:`MAX_REPEAT` times (a decoding loop)."""
MIN_LOGPROB = -1.0
"""Below this mean token log-probability the text is a guess (reason ``low_confidence``)."""
WEAK_SPEECH_MS = 700
"""Less speech than this (ms) is weak evidence: the :data:`INVENTED` backstop applies."""
WEAK_LOGPROB = -0.5
"""A text less sure than this is weak evidence too."""
SPEECH_PROB = 0.5
"""microVAD probability above which a 10 ms frame is speech."""
WARMUP_S = 0.75
"""Silence fed to microVAD before the audio (it needs this much before its first decision)."""
MIN_DBFS = -55.0
"""Audio quieter than this RMS level (dBFS) holds no speech whatever the VAD says."""

INVENTED = (
    "thank you",
    "thanks",
    "thank you very much",
    "thanks for watching",
    "thank you for watching",
    "thanks for listening",
    "you",
    "bye",
    "bye bye",
    "okay",
    "please subscribe",
    "subscribe to my channel",
    "subtitles by the amara org community",
    "transcribed by",
    "music",
    "applause",
    "silence",
    "i'm sorry",
)
"""Texts Whisper writes over non-speech (speaches-ai/speaches #133, BC-37)."""


@dataclass(frozen=True)
class Evidence:
    """What the hub's own detectors found in the audio."""

    speech_ms: int
    """Milliseconds of 10 ms frames the VAD judged speech."""
    dbfs: float
    """RMS level of the whole audio, dB relative to full scale (-inf for digital silence)."""


def measure(samples: np.ndarray) -> Evidence:
    """Speech milliseconds (microVAD, probability > 0.5 per 10 ms frame) and RMS level of
    int16 mono 16 kHz ``samples``. microVAD decides nothing in its first 0.75 s, so
    :data:`WARMUP_S` of digital silence is fed first (a short command would otherwise be
    half lost); its energy-gated combination with :class:`hub.audio.endpoint.EnergyDetector`
    measured far too little speech on short clips (130 ms for a spoken "next")."""
    pcm = np.asarray(samples, dtype=np.int16)
    rms = float(np.sqrt(np.mean(np.square(pcm, dtype=np.float64)))) if pcm.size else 0.0
    dbfs = 20 * np.log10(rms / 32768) if rms > 0 else float("-inf")
    vad, frame = MicroVad(), 160
    padded = np.concatenate([np.zeros(int(WARMUP_S * 16000), np.int16), pcm]).astype("<i2")
    speech = sum(
        1
        for i in range(0, len(padded) - frame + 1, frame)
        if vad.process_10ms(padded[i : i + frame].tobytes()) > SPEECH_PROB
    )
    return Evidence(speech_ms=speech * 10, dbfs=round(float(dbfs), 1))


def _repeats(words: list[str]) -> bool:
    """A word, or a phrase of up to :data:`MAX_LOOP_WORDS` words, :data:`MAX_REPEAT` times
    in a row ("you you you", "turn on the turn on the turn on the")."""
    run = 1
    for a, b in pairwise(words):
        run = run + 1 if a == b else 1
        if run >= MAX_REPEAT:
            return True
    for n in range(2, MAX_LOOP_WORDS + 1):
        for start in range(len(words) - n * MAX_REPEAT + 1):
            phrase = words[start : start + n]
            if all(
                words[start + k * n : start + (k + 1) * n] == phrase for k in range(1, MAX_REPEAT)
            ):
                return True
    return False


def _sentences_repeat(text: str) -> bool:
    """The same sentence three times or more ("Thank you. Thank you. Thank you.")."""
    parts = [p.strip().lower() for p in re.split(r"[.!?]+", text) if p.strip()]
    return len(parts) >= MAX_REPEAT and len(set(parts)) == 1


def rejection(heard, evidence: Evidence | None, min_speech_ms: int) -> str | None:
    """Why the second-pass text ``heard`` (:class:`hub.asr.whisper_io.Heard`) must not be
    used, or None when it may.

    Returns one of ``no_speech``, ``compression``, ``repetition``, ``low_confidence``,
    ``invented``, ``empty``.
    """
    text = normalize(heard.text)
    if evidence is not None and (evidence.speech_ms < min_speech_ms or evidence.dbfs < MIN_DBFS):
        return "no_speech"
    if heard.no_speech_prob > NO_SPEECH_PROB:
        return "no_speech"
    if not text:
        return "empty"
    if heard.compression_ratio > MAX_COMPRESSION:
        return "compression"
    if _repeats(text.split()) or _sentences_repeat(heard.text):
        return "repetition"
    if heard.avg_logprob < MIN_LOGPROB:
        return "low_confidence"
    weak = (
        evidence is None or evidence.speech_ms < WEAK_SPEECH_MS or heard.avg_logprob < WEAK_LOGPROB
    )
    if weak and text.strip(" .!") in INVENTED:
        return "invented"
    return None
