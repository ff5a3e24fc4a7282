"""CMU PocketSphinx engine: closed grammar of the home, phone-loop rejection, VAD segments.

- Restricted (``settings.restrict``): the home's FSG grammar and dictionary from
  :mod:`hub.asr.vocab`; language weight 1 and no lattice rescoring (``bestpath`` off), which
  measured best on shared/audio. Unrestricted: the wheel's en-us trigram LM and CMUdict.
- Segments: PocketSphinx's ``Endpointer`` (WebRTC-style VAD) splits the stream at pauses of
  about :data:`VAD_WINDOW_S`; silence never reaches the decoder (BC-07 d).
- Rejection (restricted only): the en-us phone loop ("allphone") runs on the same audio;
  each grammar word's acoustic score is compared with the phone loop's over the same frames,
  and the frame-weighted mean log-likelihood ratio is the segment's confidence
  (filler-model normalisation: Rose & Paul 1990; Jiang, "Confidence measures for speech
  recognition: a survey", Speech Communication 2005). Below ``settings.reject_llr`` the
  segment is rejected: forced into the grammar, out-of-vocabulary speech fits worse than
  free phones. Side-effect aware: a hypothesis that is a sentence without side effects (a
  question; the vocabulary's ``questions.fsg``) passes down to ``settings.reject_llr_question``,
  since a wrong answer to a question changes nothing in the home while a wrong command does;
  its alternatives are then only the question sentences (the rules cannot pick a command
  from the n-best of a segment accepted as a question).
- Decoding: :mod:`hub.asr.sphinx_decoder` (one decoder for all searches, one acoustic model in
  memory; batch CMN per segment, decoded in pieces so other threads keep running).
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
from functools import lru_cache

import numpy as np

from hub.asr import confusion
from hub.asr.base import Segment, Transcript, as_pcm, combine, dedupe, transcribe_samples
from hub.asr.coverage import fsg_accepts
from hub.asr.lexicon import spell_number
from hub.asr.sphinx_decoder import PHONE_LOOP, SphinxDecoder, model_dir
from hub.audio.format import BYTES_PER_SECOND, RATE, WIDTH

_LOG = logging.getLogger(__name__)

VAD_WINDOW_S = 0.5
"""Endpointer decision window (s): a pause this long splits segments."""
VAD_RATIO = 0.6
"""Fraction of the window that must be speech (or non-speech) to switch state."""

PREROLL_S = 0.3
"""Audio before the detected speech start kept with a segment (s): onsets and CMN need it."""

MIN_SPEECH_S = 0.4
"""Shortest endpointer speech span (s) decoded as a segment; shorter ones are transients
(clicks, bumps; a spoken command measured >= 0.54 s). Like a VAD's minimum speech duration
(e.g. Silero VAD's ``min_speech_duration_ms``)."""

MIN_WORD_S = 0.2
"""Shortest span (s) still decoded when it is the turn's only speech: a one-word reply
("sure", "no": Piper's "sure" spans 0.33 s) is not dropped as a transient; the grammar and
the phone-loop rejection then judge it (a lone click is rejected, never silence-as-speech)."""

__all__ = [
    "PocketSphinxEngine",
    "PocketSphinxStream",
    "decode_segment",
    "model_dir",
    "phone_loop_llr",
]


class PocketSphinxEngine:
    """A loaded PocketSphinx recognizer (one decoder reused turn after turn; one turn at a time).

    Args:
        settings: :class:`hub.settings.AsrSettings`.
        vocab: the home's :class:`hub.asr.vocab.Vocab`, or None for the unrestricted LM.

    Raises:
        FatalError: the model or grammar files are missing or unreadable (names the path).
    """

    name = "pocketsphinx"
    open_vocabulary = False  # grammar-bound: only the grammar's sentences are heard

    def __init__(self, settings, vocab=None):
        self.settings = settings
        self.vocab = vocab
        self.lock = threading.Lock()
        self.passes = SphinxDecoder(_grammar_config(vocab), phone_loop=vocab is not None)
        self.decoder = self.passes.decoder
        self.questions = _read_questions(vocab)
        """Text of the vocabulary's questions FSG, or None (see the module doc)."""
        self._last: tuple[bytes, Transcript] | None = None
        self._checking = threading.Lock()  # held by complete() for its whole decode

    def is_question(self, text: str) -> bool:
        """True when ``text`` is a sentence of the grammar without side effects."""
        return self.questions is not None and fsg_accepts(self.questions, text.split())

    def decode_wide(self, audio: bytes, mean: str):
        """Decode ``audio`` with the grammar's beams widened
        (:meth:`hub.asr.sphinx_decoder.SphinxDecoder.run_wide`); returns its ``Decoded``."""
        return self.passes.run_wide(audio, mean)

    def scores(self, samples: np.ndarray, texts: list[str]) -> list[float | None]:
        """Acoustic scores (ln x 1000) of ``texts`` force-aligned to int16 16 kHz ``samples``;
        None for a text that cannot be aligned (a word outside the dictionary). Grammar-free:
        used to weigh another recognizer's reading (:mod:`hub.asr.second_pass`)."""
        if self.vocab is None:
            return [None] * len(texts)
        audio = as_pcm(samples)
        with self.lock:
            mean = self.passes.mean(audio)
            return [self.passes.align(audio, mean, t) if t else None for t in texts]

    def doubts(self, samples: np.ndarray, text: str) -> bool:
        """True when an action-changing rival of ``text`` fits ``samples`` about as well
        (:func:`hub.asr.confusion.unsure`, ``settings.confusion_margin``), or when ``text``
        has a word outside the home's dictionary (it cannot be checked against the audio:
        another recognizer's free guess, e.g. Whisper's "play the beatles" over other
        speech, is asked back, never done). Digits are read as words."""
        threshold = self.settings.confusion_margin
        if threshold is None or self.vocab is None or not text:
            return False
        text = " ".join(spell_number(w) if w.isdigit() else w for w in text.split())
        known = _dictionary_words(self.vocab.dict_path)
        if any(w not in known for w in text.split()):
            return True  # a word the home's grammar never uses: not checked, so not sure

        grammar = confusion.grammar_text(self.vocab.fsg_path)
        audio = as_pcm(samples)
        with self.lock:
            mean = self.passes.mean(audio)
            return confusion.unsure(
                lambda t: self.passes.align(audio, mean, t),
                text,
                (),
                lambda words: fsg_accepts(grammar, words),
                threshold,
            )

    def stream(self) -> PocketSphinxStream:
        """A new turn (blocks while another turn uses the decoder)."""
        return PocketSphinxStream(self)

    def transcribe(self, samples: np.ndarray, cancel: threading.Event | None = None) -> Transcript:
        """Recognize a whole int16 16 kHz buffer; see :func:`hub.asr.base.transcribe_samples`.

        The buffer :meth:`complete` last decoded is not decoded again: its transcript is
        handed out once, to the turn of that utterance; a check still decoding (the live
        endpointer's runs on a thread of its own) is waited for, not done twice."""
        with self._checking:
            last, self._last = self._last, None
        if last is not None and last[0] == _digest(samples):
            return last[1]
        return transcribe_samples(self.stream(), samples, cancel)

    def complete(self, samples: np.ndarray) -> bool:
        """True when the grammar's best reading of ``samples`` (int16 16 kHz) is a whole
        sentence: heard, not rejected, each segment a path from the grammar's start to its
        final state (the live endpointer's ``final`` rule, :mod:`hub.audio.endpoint`).
        Unrestricted (no grammar): False."""
        if self.vocab is None:
            return False
        grammar = confusion.grammar_text(self.vocab.fsg_path)
        with self._checking:
            heard = transcribe_samples(self.stream(), samples)
            self._last = (_digest(samples), heard)
        return (
            bool(heard.text)
            and not heard.rejected
            and all(fsg_accepts(grammar, seg.split()) for seg in heard.segments or (heard.text,))
        )


def _digest(samples: np.ndarray) -> bytes:
    """A 16-byte hash of a sample buffer."""
    return hashlib.blake2b(np.ascontiguousarray(samples).tobytes(), digest_size=16).digest()


@lru_cache(maxsize=2)
def _dictionary_words(path) -> frozenset[str]:
    """The words of the pronunciation dictionary at ``path`` (variants ``word(2)`` folded)."""
    with open(path, encoding="utf-8") as f:
        return frozenset(line.split()[0].split("(")[0] for line in f if line.split())


def _grammar_config(vocab) -> dict:
    """Decoder options: the home's grammar when restricted, else the wheel's LM."""
    if vocab is None:
        return {}
    return {"fsg": str(vocab.fsg_path), "dict": str(vocab.dict_path), "lw": 1.0, "bestpath": False}


def _read_questions(vocab) -> str | None:
    """The questions FSG text of ``vocab``, None without one (unrestricted, or an old cache)."""
    path = getattr(vocab, "questions_path", None)
    try:
        return path.read_text(encoding="utf-8") if path is not None else None
    except OSError:
        return None


class PocketSphinxStream:
    """One turn: VAD-segmented; each segment is decoded when it ends.

    A segment is decoded as one utterance (cepstral mean normalisation over the whole segment,
    which measured more accurate and better calibrated for rejection than live CMN; see
    :mod:`hub.asr.sphinx_decoder`), so there are no word-by-word partials: :meth:`accept`
    returns a segment's text when the segment closes. Segments longer than
    ``settings.max_utterance_s`` are closed there.
    """

    def __init__(self, engine: PocketSphinxEngine):
        # lazy: pocketsphinx loads only with its engine
        from pocketsphinx import Endpointer

        self.engine = engine
        self.endpointer = Endpointer(window=VAD_WINDOW_S, ratio=VAD_RATIO, sample_rate=RATE)
        self.max_bytes = int(engine.settings.max_utterance_s * RATE) * WIDTH
        self.pending = b""
        self.history = b""
        self.history_bytes = int((VAD_WINDOW_S + PREROLL_S + 0.5) * RATE) * WIDTH
        self.fed = 0
        self.speech = bytearray()
        self.start_s = 0.0
        self.segments: list[Segment] = []
        self.short: bytes = b""
        """The longest span dropped as a transient (>= MIN_WORD_S), decoded at the end when
        nothing else was said."""

    def accept(self, frame: bytes) -> str | None:
        """Feed PCM bytes; returns the text of a segment that just closed, else None."""
        self.pending += frame
        size = self.endpointer.frame_bytes
        closed = len(self.segments)
        while len(self.pending) >= size:
            chunk, self.pending = self.pending[:size], self.pending[size:]
            self._chunk(chunk)
        texts = [seg.text for seg in self.segments[closed:] if seg.text and not seg.rejected]
        return " ".join(texts) or None

    def _chunk(self, chunk: bytes) -> None:
        """Run the endpointer on one frame; the segment's audio is cut from our own history
        (pre-roll before the speech start up to the frame where the endpointer closes it)."""
        self.history = (self.history + chunk)[-self.history_bytes :]
        self.fed += len(chunk)
        was_in_speech = self.endpointer.in_speech
        self.endpointer.process(chunk)
        if self.speech:
            self.speech += chunk
        elif self.endpointer.in_speech and not was_in_speech:
            self.speech += self._since_speech_start()
            self.start_s = self.endpointer.speech_start
        if self.speech and not self.endpointer.in_speech:
            self._end_segment(self.endpointer.speech_end - self.start_s)
        elif len(self.speech) >= self.max_bytes:
            self._end_segment(self.fed / BYTES_PER_SECOND - self.start_s)

    def _since_speech_start(self) -> bytes:
        """Audio from PREROLL_S before the endpointer's speech start up to now."""
        start = int(max(0.0, self.endpointer.speech_start - PREROLL_S) * RATE) * WIDTH
        return self.history[max(0, start - (self.fed - len(self.history))) :]

    def _end_segment(self, span_s: float) -> None:
        """Decode the collected segment unless its speech span is a transient."""
        audio, self.speech = bytes(self.speech), bytearray()
        if span_s >= MIN_SPEECH_S:
            self.segments.append(decode_segment(self.engine, audio))
        else:
            _LOG.debug("dropped a %.2f s transient", span_s)
            if span_s >= MIN_WORD_S and len(audio) > len(self.short):
                self.short = audio

    def _rescue(self) -> None:
        """When no segment was heard in the grammar, decode the ones that found no sentence
        at all again with wide beams (:meth:`PocketSphinxEngine.decode_wide`). Only then: a
        noise after a command ("cancel timer", then a breath) would cost a slow second decode
        (measured 4-16 s on a busy core) for nothing."""
        if any(seg.text and not seg.rejected for seg in self.segments):
            return
        for i, seg in enumerate(self.segments):
            if seg.audio is not None:
                self.segments[i] = decode_wide_segment(self.engine, seg.audio)

    def finish(self) -> Transcript:
        """Flush the endpointer, decode the last segment, combine all segments (BC-07)."""
        if self.speech:
            self.speech += self.pending
        self.pending = b""
        if self.speech:
            self._end_segment(self.fed / BYTES_PER_SECOND - self.start_s)
        if not self.segments and self.short:  # the turn's only speech was one short word
            self.segments.append(decode_segment(self.engine, self.short))
        self._rescue()
        return combine(self.segments, self.engine.name, self.engine.settings.nbest)


def decode_segment(engine: PocketSphinxEngine, audio: bytes) -> Segment:
    """Decode one segment with the grammar (and the phone loop for rejection); a segment in
    which the grammar found no sentence keeps its ``audio`` for a wide-beam retry."""
    with engine.lock:
        mean = engine.passes.mean(audio)
        grammar = engine.passes.run(engine.passes.main, audio, mean, nbest=True)
        if engine.vocab is not None and not grammar.text:  # rescued at the turn's end
            return Segment("", rejected=True, audio=audio)
        return segment_result(engine, grammar, audio, mean)


def decode_wide_segment(engine: PocketSphinxEngine, audio: bytes) -> Segment:
    """Decode one segment with the grammar's beams widened (and the phone loop)."""
    with engine.lock:
        mean = engine.passes.mean(audio)
        return segment_result(engine, engine.decode_wide(audio, mean), audio, mean)


def segment_result(engine: PocketSphinxEngine, grammar, audio: bytes, mean: str) -> Segment:
    """Text, n-best and confidence of the grammar pass ``grammar`` (a ``Decoded``) of
    ``audio``; runs the phone loop (CMN ``mean``) when restricted and a sentence was heard."""
    text = grammar.text
    if not text:  # speech the grammar cannot fit at all: out of grammar, not silence
        return Segment("", rejected=engine.vocab is not None)
    alternatives = dedupe([text, *grammar.nbest], engine.settings.nbest)
    if engine.vocab is None:
        return Segment(text, alternatives)
    phones = engine.passes.run(PHONE_LOOP, audio, mean).words
    confidence = phone_loop_llr(grammar.words, phones)
    rejected = confidence is not None and confidence < engine.settings.reject_llr
    if rejected and confidence >= engine.settings.reject_llr_question and engine.is_question(text):
        rejected = False
        alternatives = tuple(a for a in alternatives if engine.is_question(a))
    _LOG.debug("segment %r llr=%s rejected=%s", text, confidence, rejected)
    segment = Segment(text, alternatives, rejected=rejected, confidence=confidence)
    return confusion.checked(engine, segment, lambda t: engine.passes.align(audio, mean, t))


def _is_word(word: str) -> bool:
    return not (word.startswith("<") or word.startswith("[") or word.startswith("+"))


def phone_loop_llr(words, phones) -> float | None:
    """Frame-weighted mean log-likelihood ratio of the grammar words against the phone loop.

    Args:
        words: grammar-pass segments (``word``, ``start_frame``, ``end_frame``, ``ascore``
            as a probability, as pocketsphinx's Python API returns it).
        phones: phone-loop segments of the same audio.
    Returns:
        Mean LLR per frame x 1000 (natural log units), None when no word was recognized.
    """
    loop = [(p.start_frame, p.end_frame, _ln(p.ascore)) for p in (phones or [])]
    total, frames = 0.0, 0
    for word in words or []:
        if not _is_word(word.word):
            continue
        start, end = word.start_frame, word.end_frame
        reference = sum(score * _overlap(start, end, s, e) / (e - s + 1) for s, e, score in loop)
        total += _ln(word.ascore) - reference
        frames += end - start + 1
    return 1000 * total / frames if frames else None


def _overlap(start: int, end: int, s: int, e: int) -> int:
    return max(0, min(end, e) - max(start, s) + 1)


def _ln(probability: float) -> float:
    return math.log(max(probability, 1e-300))
