"""Vosk (Kaldi) engine: real ``vosk.Model`` / ``KaldiRecognizer``, BC-07 segment combination.

- The recognizer is built at 16000 Hz, the rate of the bytes ``hub.audio`` feeds.
- Restricted: a Vosk grammar (JSON list of phrases) from the home's vocabulary words plus
  ``"[unk]"``; a segment whose best text contains ``[unk]`` counts as rejected (speech outside
  the vocabulary), and ``[unk]`` never reaches the transcript. Only lookahead models
  (``graph/HCLr.fst`` + ``Gr.fst``) can take a grammar; others run unrestricted (logged).
- BC-07: every ``Result()`` returned when ``AcceptWaveform`` is true is a segment, the
  ``FinalResult()`` is the last one; empty segments are dropped (alphacep/vosk-api #590, #1265).
- Spelled numbers become digits (``"seventy five"`` -> ``"75"``), as the rules expect.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import numpy as np

from hub.asr.base import Segment, Transcript, combine, dedupe, transcribe_samples
from hub.asr.lexicon import words_to_digits
from hub.audio.format import RATE
from hub.errors import FatalError

_LOG = logging.getLogger(__name__)

UNK = "[unk]"


def is_vosk_model(path: Path) -> bool:
    """True when ``path`` looks like a Vosk model directory (``am/final.mdl`` or ``conf``)."""
    return (path / "am" / "final.mdl").is_file() or (path / "conf" / "model.conf").is_file()


def load_model(path: Path):
    """``vosk.Model`` from ``path``.

    Raises:
        FatalError: missing or unloadable model; the message names the path.
    """
    # lazy: Vosk (about 0.7 s) loads only with its engine
    import vosk

    vosk.SetLogLevel(-1)
    if not path.is_dir() or not is_vosk_model(path):
        raise FatalError(f"Vosk model not found or incomplete: {path}", node="asr")
    try:
        return vosk.Model(str(path))
    except Exception as exc:  # vosk raises a bare Exception("Failed to create a model")
        raise FatalError(f"Vosk cannot load model {path}: {exc}", node="asr") from None


class VoskEngine:
    """A loaded Vosk model; one recognizer per turn.

    Args:
        settings: :class:`hub.settings.AsrSettings`.
        model_path: the model directory.
        vocab: the home's :class:`hub.asr.vocab.Vocab` (grammar words, spelled numbers) or None.
        model: an already loaded ``vosk.Model`` (tests share one), else loaded from the path.
    """

    name = "vosk"

    def __init__(self, settings, model_path: Path, vocab=None, model=None):
        self.settings = settings
        self.model_path = Path(model_path)
        self.model = model if model is not None else load_model(self.model_path)
        self.vocab = vocab
        self.grammar = self._grammar()
        self.open_vocabulary = self.grammar is None

    def _grammar(self) -> list[str] | None:
        """The grammar list when restricting and the model supports one, else None."""
        if not self.settings.restrict or self.vocab is None:
            return None
        if not (self.model_path / "graph" / "HCLr.fst").is_file():
            _LOG.warning(
                "Vosk model %s has no lookahead graph; running unrestricted", self.model_path
            )
            return None
        return self.vocab.vosk_grammar()

    def recognizer(self):
        """A ``KaldiRecognizer`` at 16000 Hz, with the grammar and n-best set."""
        # lazy: Vosk (about 0.7 s) loads only with its engine
        from vosk import KaldiRecognizer

        if self.grammar is not None:
            rec = KaldiRecognizer(self.model, RATE, json.dumps(self.grammar))
        else:
            rec = KaldiRecognizer(self.model, RATE)
        if self.settings.nbest > 1:
            rec.SetMaxAlternatives(self.settings.nbest)
        return rec

    def stream(self) -> VoskStream:
        return VoskStream(self)

    def transcribe(self, samples: np.ndarray, cancel: threading.Event | None = None) -> Transcript:
        """Recognize a whole int16 16 kHz buffer; see :func:`hub.asr.base.transcribe_samples`."""
        return transcribe_samples(self.stream(), samples, cancel)


class VoskStream:
    """One turn on a fresh ``KaldiRecognizer``."""

    def __init__(self, engine: VoskEngine):
        self.engine = engine
        self.rec = engine.recognizer()
        self.segments: list[Segment] = []

    def accept(self, frame: bytes) -> str | None:
        """Feed PCM; a finished segment's text, else the partial text, else None."""
        if self.rec.AcceptWaveform(frame):
            segment = self.parse(self.rec.Result())
            self.segments.append(segment)
            return segment.text or None
        partial = json.loads(self.rec.PartialResult()).get("partial", "")
        return partial or None

    def finish(self) -> Transcript:
        """``FinalResult()`` is the last segment; all segments are combined (BC-07)."""
        self.segments.append(self.parse(self.rec.FinalResult()))
        return combine(self.segments, self.engine.name, self.engine.settings.nbest)

    def parse(self, result_json: str) -> Segment:
        """One Vosk result (plain or with ``alternatives``) as a :class:`Segment`."""
        return parse_result(result_json, self.engine.vocab, self.engine.settings.nbest)


def parse_result(result_json: str, vocab=None, nbest: int = 5) -> Segment:
    """Parse ``{"text": ...}`` or ``{"alternatives": [{"text", "confidence"}...]}``."""
    result = json.loads(result_json)
    texts = [alt.get("text", "") for alt in result.get("alternatives", [])]
    if not texts:
        texts = [result.get("text", "")]
    texts = [" ".join(t.split()) for t in texts]
    rejected = UNK in texts[0].split()
    spelled = vocab.spelled_numbers if vocab is not None else {}
    clean = [words_to_digits(" ".join(w for w in t.split() if w != UNK), spelled) for t in texts]
    if not clean[0]:
        return Segment("", rejected=rejected and bool(texts[0]))
    return Segment(clean[0], dedupe(clean, nbest), rejected=rejected)
