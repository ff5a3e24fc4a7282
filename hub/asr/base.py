"""ASR messages and protocols shared by the engines.

Audio in: int16 little-endian mono 16 kHz PCM (``hub.audio`` always delivers 16000 Hz), fed in
frames. Out: a :class:`Transcript` with the best hypothesis, n-best alternatives for the rules
to rank, a rejection flag (out-of-grammar speech) and the text of every utterance segment
(BC-07: whatever was recognised before a pause is kept, empty segments dropped).
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hub.errors import BadInputError, TimeoutError_

FRAME_SAMPLES = 1600
"""Samples per frame fed by :func:`transcribe_samples` (100 ms; cancel is checked per frame)."""


@dataclass(frozen=True)
class Transcript:
    """What the recognizer heard in one turn."""

    text: str
    """Best hypothesis, lowercase words; "" when nothing was heard (or it was rejected)."""
    alternatives: tuple[str, ...]
    """N-best hypotheses, ``text`` first, deduplicated, at most ``settings.nbest``."""
    rejected: bool = False
    """True when the recognizer judged the speech out of grammar/vocabulary."""
    engine: str = ""
    """``"pocketsphinx"`` or ``"vosk"``."""
    segments: tuple[str, ...] = ()
    """Text of each non-empty utterance segment, in order (BC-07), a segment that joins
    several commands with "and" split into one entry per command."""
    unsure: bool = False
    """True when a command was heard but a reading that changes the action (on/off,
    open/close, a number) fits the audio almost as well (:mod:`hub.asr.confusion`): the
    turn asks back before acting."""
    rejected_text: str = ""
    """When ``rejected``: what the grammar read in the rejected speech ("" if nothing). Only
    a harmless reply the turn expects may use it (a stop word while a timer rings)."""

    def taken_as_said(self) -> Transcript:
        """This transcript with its rejected reading accepted (see :attr:`rejected_text`)."""
        return dataclasses.replace(
            self,
            text=self.rejected_text,
            rejected=False,
            alternatives=(self.rejected_text,),
            rejected_text="",
        )


@dataclass(frozen=True)
class Segment:
    """The result of one utterance segment (between pauses)."""

    text: str
    alternatives: tuple[str, ...] = ()
    rejected: bool = False
    confidence: float | None = None
    """Engine-specific confidence (PocketSphinx: mean log-likelihood ratio per frame)."""
    audio: bytes | None = None
    """The segment's PCM when the engine may decode it again at the turn's end (PocketSphinx's
    wide-beam retry), else None."""
    unsure: bool = False
    """Accepted, but an action-changing reading is close (see :attr:`Transcript.unsure`)."""


class AsrStream(Protocol):
    """One turn's recognition: feed frames, then finish."""

    def accept(self, frame: bytes) -> str | None:
        """Feed int16 LE mono 16 kHz bytes; return partial text when there is some."""

    def finish(self) -> Transcript:
        """End of input: the turn's transcript."""


class AsrEngine(Protocol):
    """A loaded recognizer; :meth:`stream` per turn, :meth:`transcribe` for whole buffers."""

    name: str
    open_vocabulary: bool
    """True when the recognizer can hear any sentence (not only the grammar's)."""

    def stream(self) -> AsrStream: ...

    def transcribe(
        self, samples: np.ndarray, cancel: threading.Event | None = None
    ) -> Transcript: ...


def dedupe(texts, limit: int) -> tuple[str, ...]:
    """Non-empty texts, first occurrence kept, at most ``limit``."""
    return tuple(dict.fromkeys(t for t in texts if t))[: max(1, limit)]


def combine(segments: list[Segment], engine: str, nbest: int) -> Transcript:
    """The turn's transcript from its segments (BC-07).

    Empty segments are dropped. Rejected segments are kept out of ``text`` and ``segments``;
    the transcript is ``rejected`` (with text "") when a segment was and none was accepted.
    One accepted segment gives its n-best as ``alternatives``; several give only their
    joined text (each one is in ``segments``).
    """
    heard = [s for s in segments if s.text]
    accepted = [s for s in heard if not s.rejected]
    text = " ".join(_spoken(s.text) for s in accepted)
    if len(accepted) == 1:
        complete = [a for a in accepted[0].alternatives if not a.endswith(CONJUNCTION)]
        alternatives = dedupe([text, *map(_spoken, complete)], nbest)
    else:
        alternatives = dedupe([text], nbest) if text else ()
    rejected = any(s.rejected for s in segments) and not accepted
    parts = tuple(p.strip() for s in accepted for p in s.text.split(f" {CONJUNCTION} "))
    rejected_text = " ".join(_spoken(s.text) for s in heard if s.rejected) if rejected else ""
    return Transcript(
        text=text,
        alternatives=alternatives,
        rejected=rejected,
        engine=engine,
        segments=parts,
        unsure=any(s.unsure for s in accepted),
        rejected_text=rejected_text,
    )


CONJUNCTION = "&"
"""The grammar's word for "and" between two commands (:data:`hub.asr.vocab.CONJUNCTION`)."""


def _spoken(text: str) -> str:
    """The text as said: the grammar's conjunction word read as "and"."""
    return text.replace(f" {CONJUNCTION} ", " and ")


def as_pcm(samples: np.ndarray) -> bytes:
    """int16 mono samples as little-endian bytes.

    Raises:
        BadInputError: not a 1-D integer array.
    """
    array = np.asarray(samples)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise BadInputError(
            f"ASR needs 1-D int16 samples, got {array.dtype} {array.shape}", node="asr"
        )
    return array.astype("<i2", copy=False).tobytes()


def transcribe_samples(
    stream: AsrStream, samples: np.ndarray, cancel: threading.Event | None = None
) -> Transcript:
    """Feed ``samples`` to ``stream`` in 100 ms frames and finish it.

    Raises:
        TimeoutError_: ``cancel`` was set; feeding stops at the next frame (<= one frame's
            decoding time, well under 200 ms).
        BadInputError: ``samples`` is not 1-D integer audio.
    """
    pcm = as_pcm(samples)
    step = FRAME_SAMPLES * 2
    for start in range(0, len(pcm), step):
        if cancel is not None and cancel.is_set():
            raise TimeoutError_("ASR cancelled: stopped feeding audio", node="asr")
        stream.accept(pcm[start : start + step])
    if cancel is not None and cancel.is_set():
        raise TimeoutError_("ASR cancelled: stopped feeding audio", node="asr")
    return stream.finish()
