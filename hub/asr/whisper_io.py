"""What goes into Whisper and what comes out (:mod:`hub.asr.whisper_engine`): its input audio
(:func:`as_float_audio`, :func:`check_input`), the encoder window and token budget of a short
utterance, what it wrote (:class:`Heard`) and how the rules read it (:func:`normalize`).

Window (issue 18): faster-whisper pads every segment's log-mel features to Whisper's 30 s
encoder window (``pad_or_trim`` to 3000 frames in ``generate_segments``; its
``chunk_length`` only sets where long audio is split, the encoder still reads 3000 frames),
a fixed cost whatever the utterance's length (0.54 s of 0.6 s here for a two-second
"next"). The model is a :class:`WhisperModel` whose ``encode`` reads only the first
:attr:`window_frames` frames (:func:`windowed_model`; CTranslate2's encoder takes fewer than
3000: 0.03 s for 5 s), the window fitted to the audio (:func:`window_s`: its length plus
:data:`WINDOW_MARGIN_S`, at least ``[asr] whisper_window_s``, at most 30 s). Whisper was
trained on 30 s windows: from a shorter one it writes the utterance right and then again
and again (measured: 4-6 of 6 commands at 5-8 s windows, "next track next track next
..."), as it does not see where its window ends. So a short window's decode is bounded
(:func:`token_budget`: tokens for the audio's length; no temperature fallback on
compression), its text cut to the first time it was said (:func:`unloop`), and a reading
that still looks wrong (:func:`looks_wrong`: empty, no speech, a loop, low confidence, an
invented phrase) is read again once at 30 s, inside the same call (the same lock, the same
deadline and ``stopping`` rule).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
import soxr

from hub.audio.format import RATE
from hub.errors import BadInputError

MAX_NEW_TOKENS = 64
"""Most tokens decoded for one utterance (a command is < 20)."""
FULL_WINDOW_S = 30
"""Whisper's own encoder window (s), the one it was trained on: faster-whisper's default."""
WINDOW_MARGIN_S = 1.0
"""Seconds added to the audio's length for its encoder window (:func:`window_s`)."""
TOKENS_PER_S = 6
"""Most tokens a second of speech takes (4 words a second, 1.5 tokens a word), for the short
window's token budget (:func:`token_budget`)."""


def window_s(samples: int, floor_s: int, rate: int = RATE) -> int:
    """The encoder window (whole seconds) for ``samples`` of audio at ``rate``: its length
    plus :data:`WINDOW_MARGIN_S`, rounded up, at least ``floor_s``, at most
    :data:`FULL_WINDOW_S` (``floor_s`` >= 30: always the full window)."""
    fitted = math.ceil(samples / rate + WINDOW_MARGIN_S)
    return int(min(FULL_WINDOW_S, max(floor_s, fitted, 1)))


def token_budget(samples: int, rate: int = RATE) -> int:
    """Most new tokens decoded from a short window for ``samples`` of audio:
    :data:`TOKENS_PER_S` a second plus 8, at most :data:`MAX_NEW_TOKENS` (a loop stops
    there instead of at 64 tokens)."""
    return min(MAX_NEW_TOKENS, math.ceil(TOKENS_PER_S * samples / rate) + 8)


def unloop(text: str) -> str:
    """``text`` cut to its first phrase when the rest only repeats it ("Next track. Next
    track. Next tr" -> "Next track."; compared as :func:`normalize` reads it, at least two
    words repeated or one word three times), else ``text`` unchanged."""
    raw = text.split()
    words, owner = [], []  # normalized words, and the raw word each comes from
    for i, token in enumerate(raw):
        for word in normalize(token).split():
            words.append(word)
            owner.append(i)
    for period in range(1, len(words) // 2 + 1):
        if period == 1 and len(words) < 3:
            continue
        last = len(words) - 1  # the budget may end the loop inside a word
        if all(
            words[i] == words[i % period] or (i == last and words[i % period].startswith(words[i]))
            for i in range(period, len(words))
        ):
            return " ".join(raw[: owner[period - 1] + 1])
    return text


@dataclass(frozen=True)
class Heard:
    """What Whisper wrote for one utterance, with its own confidence figures."""

    text: str
    """The segments' text joined (as written: case and punctuation kept)."""
    no_speech_prob: float
    """Highest no-speech probability of its segments (0-1); 1.0 without any segment."""
    avg_logprob: float
    """Lowest mean token log-probability of its segments (natural log)."""
    compression_ratio: float
    """Highest gzip compression ratio of its segments' text (a loop compresses well)."""
    segments: tuple[str, ...] = ()
    window_s: int = FULL_WINDOW_S
    """The encoder window (s) of the reading kept."""
    reread: str | None = None
    """Why a shorter window's reading was read again at 30 s (:func:`looks_wrong`), or None."""
    unlooped: bool = False
    """The short window's text repeated itself and was cut to the first time (:func:`unloop`)."""


def heard_from(segments) -> Heard:
    """A :class:`Heard` from faster-whisper ``Segment`` objects (already consumed)."""
    texts = tuple(s.text.strip() for s in segments if s.text.strip())
    if not segments:
        return Heard("", 1.0, -10.0, 0.0)
    return Heard(
        " ".join(texts),
        max(s.no_speech_prob for s in segments),
        min(s.avg_logprob for s in segments),
        max(s.compression_ratio for s in segments),
        texts,
    )


def compression_ratio(text: str) -> float:
    """gzip compression ratio of ``text`` (faster-whisper's figure: a loop compresses well)."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


_PUNCT = str.maketrans({c: " " for c in '.,!?;:"()[]{}…'})


def normalize(text: str) -> str:
    """Whisper's text as the rules read it: lower case, no punctuation, ``%`` as "percent",
    hyphens as spaces, single spaces ("Turn off the office lights." -> "turn off the office
    lights")."""
    text = text.replace("%", " percent").replace("-", " ").replace("’", "'")
    return " ".join(text.translate(_PUNCT).lower().split())


def as_float_audio(samples: np.ndarray, rate: int = RATE) -> np.ndarray:
    """``samples`` as the second pass's input: 1-D float32 at 16 kHz in [-1, 1].

    Args:
        samples: int16/int32/uint8 PCM or float audio, 1-D or (frames, channels).
        rate: its sample rate (Hz); resampled with soxr when not 16000.
    Raises:
        BadInputError: empty, more than 2 dimensions, or not a number type.
    """
    array = np.asarray(samples)
    if array.size == 0 or array.ndim > 2 or array.dtype.kind not in "iuf":
        raise BadInputError(
            f"second pass needs audio samples, got {array.dtype} {array.shape}", node="asr2"
        )
    if array.dtype.kind == "u":
        bits = 8 * array.dtype.itemsize
        audio = (array.astype(np.float64) - 2 ** (bits - 1)) / 2 ** (bits - 1)
    elif array.dtype.kind == "i":
        audio = array.astype(np.float64) / 2 ** (8 * array.dtype.itemsize - 1)
    else:
        audio = array.astype(np.float64)
    if audio.ndim == 2:
        audio = audio.mean(axis=1)
    if rate != RATE:
        audio = soxr.resample(audio, rate, RATE)
    return np.clip(audio, -1.0, 1.0).astype(np.float32)


def check_input(audio: np.ndarray) -> None:
    """Raise BadInputError unless ``audio`` is 1-D float32 within [-1, 1] (case BC-45)."""
    if (
        not isinstance(audio, np.ndarray)
        or audio.dtype != np.float32
        or audio.ndim != 1
        or (audio.size and float(np.max(np.abs(audio))) > 1.0)
    ):
        raise BadInputError(
            "second pass input must be 1-D float32 in [-1, 1] at 16 kHz", node="asr2"
        )
