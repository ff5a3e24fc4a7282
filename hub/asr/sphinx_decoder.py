"""One PocketSphinx ``Decoder`` holding every search of a recognizer, decoded in pieces.

- One copy of the acoustic model: the grammar (or the wheel's LM), the phone loop (rejection)
  and a one-word search used to measure the cepstral mean are searches of the same
  ``Decoder``, activated per pass (``activate_search``); a second ``Decoder`` would load the
  model and the default CMUdict again (about 28 MB). The retry with wide beams
  (:data:`WIDE_BEAMS`) is a search built for one segment and removed after it: kept, it would
  hold a second copy of the grammar's search tree (about 64 MB for the sample home).
- Batch CMN, without holding the GIL for a whole segment: the binding (Cython, pocketsphinx
  5.1) never releases the GIL, so ``process_raw(audio, full_utt=True)`` blocked every other
  Python thread for the whole decode (up to about 2 s on a loaded core). Each segment is now
  (1) run through the one-word search in one call (features only cost: about 0.1 s on a
  loaded core for 3 s of audio), which computes the segment's cepstral mean exactly as a
  full-utterance decode does (``cmn = batch``: the mean over the utterance); (2) decoded by
  the real search in :data:`PIECE_S` pieces, the mean set again (``set_cmn``) before each
  piece so live CMN subtracts that same mean throughout (live CMN would otherwise move its
  mean after 300 frames). Between pieces other threads run. Measured on shared/audio: the
  same words, word boundaries and acoustic scores as the full-utterance decode; only the
  trailing silence's last frames differ (the live front end flushes the last partial frame).
- The feature pipeline is re-initialized before each pass (``reinit_feat``, about 0.2 ms): it
  keeps state (noise estimate, CMN mode) from the utterance before, so without this a
  segment's result depended on what the decoder had heard earlier.
"""

from __future__ import annotations

import logging
import math
from itertools import islice
from pathlib import Path
from typing import NamedTuple

from hub.audio.format import RATE, WIDTH
from hub.errors import FatalError
from hub.resilience.memory import release_free_memory

_LOG = logging.getLogger(__name__)

PHONE_LOOP = "phone_loop"
"""Name of the phone-loop search (rejection)."""
WIDE = "wide"
"""Name of the grammar search with :data:`WIDE_BEAMS` (only during a retry)."""
MEAN = "cmn"
"""Name of the one-word search whose pass measures a segment's cepstral mean."""

PIECE_S = 0.1
"""Audio (s) decoded per ``process_raw`` call; other Python threads run between calls."""

WIDE_BEAMS = {"beam": 1e-60, "wbeam": 1e-40, "pbeam": 1e-60}
"""Beams of the retry pass when the default beams (1e-48, 7e-29, 1e-48) found no complete
sentence of the grammar (the best path was pruned, e.g. after a noisy onset)."""

NBEST_EXTRA = 20
"""N-best entries read from the lattice before deduplication (many differ only in fillers)."""


def model_dir() -> Path:
    """The en-us acoustic model inside the pocketsphinx wheel."""
    # lazy: pocketsphinx loads only with its engine
    from pocketsphinx import get_model_path

    return Path(get_model_path("en-us")) / "en-us"


class Scored(NamedTuple):
    """One word (or phone) of a decoder's best path: frames and acoustic score."""

    word: str
    start_frame: int
    end_frame: int
    ascore: float
    """Acoustic score as a probability (pocketsphinx's Python API)."""


class Decoded(NamedTuple):
    """The results of one pass, copied out of the decoder (they outlive its next pass)."""

    text: str
    nbest: list[str]
    """Lattice n-best texts (up to :data:`NBEST_EXTRA`; empty unless asked for and a
    hypothesis was found: building the lattice is one long call, 0.2-1.6 s on a busy core)."""
    words: list[Scored]


class SphinxDecoder:
    """The recognizer's one ``Decoder`` (not thread-safe: the engine's lock serializes).

    Args:
        options: Decoder options of the main search (``fsg``/``dict``... or none for the LM).
        phone_loop: also build the phone-loop search (restricted recognition).

    Raises:
        FatalError: the model, grammar, dictionary or phone LM is missing or unreadable.
    """

    def __init__(self, options: dict, phone_loop: bool):
        self.options = options
        self.decoder = _make_decoder(options)
        self.main = self.decoder.current_search()
        if phone_loop:
            _add_phone_loop(self.decoder)
        word = _first_word(Path(self.decoder.config["dict"]))
        self.decoder.add_fsg(MEAN, self.decoder.create_fsg(MEAN, 0, 1, [(0, 1, 1.0, word)]))

    def mean(self, audio: bytes) -> str:
        """The cepstral mean of ``audio`` as one utterance (``get_cmn``'s text form)."""
        decoder = self.decoder
        decoder.activate_search(MEAN)
        decoder.reinit_feat()
        decoder.start_utt()
        decoder.process_raw(audio, no_search=True, full_utt=True)
        mean = decoder.get_cmn()
        decoder.end_utt()
        return mean

    def _utterance(self, audio: bytes, mean: str) -> None:
        """Decode ``audio`` as one utterance with the active search: a fresh feature pipeline,
        the audio in :data:`PIECE_S` pieces (other threads run between them), CMN ``mean``."""
        decoder = self.decoder
        decoder.reinit_feat()
        decoder.start_utt()
        step = int(PIECE_S * RATE) * WIDTH
        for start in range(0, len(audio), step):
            decoder.set_cmn(mean)
            decoder.process_raw(audio[start : start + step])
        decoder.end_utt()

    def run(self, search: str, audio: bytes, mean: str, nbest: bool = False) -> Decoded:
        """Decode ``audio`` with ``search`` in pieces, CMN fixed at ``mean``."""
        decoder = self.decoder
        decoder.activate_search(search)
        self._utterance(audio, mean)
        hyp = decoder.hyp()
        text = hyp.hypstr.strip() if hyp is not None else ""
        return Decoded(
            text,
            _nbest(decoder) if nbest and text else [],
            [Scored(s.word, s.start_frame, s.end_frame, s.ascore) for s in decoder.seg() or []],
        )

    def align(self, audio: bytes, mean: str, text: str) -> float | None:
        """Total acoustic score (ln × 1000) of ``text`` force-aligned to ``audio`` (PocketSphinx's
        alignment search, fed in pieces with CMN ``mean`` like :meth:`run`); the main search is
        active again afterwards. None when the alignment fails (a word missing from the
        dictionary, or no path through the audio)."""
        decoder = self.decoder
        try:
            decoder.set_align_text(text)
            self._utterance(audio, mean)
            hyp = decoder.hyp()
            return 1000 * math.log(max(hyp.score, 1e-300)) if hyp is not None else None
        except RuntimeError as exc:
            _LOG.debug("alignment of %r failed: %s", text, exc)
            return None
        finally:
            decoder.activate_search(self.main)

    def run_wide(self, audio: bytes, mean: str) -> Decoded:
        """Decode ``audio`` with the grammar and :data:`WIDE_BEAMS`: a search built for this
        pass (a search takes its beams from the config when it is built) and removed after; its
        memory is given back to the system (:func:`hub.resilience.memory.release_free_memory`).

        Raises:
            FatalError: the grammar file cannot be read again.
        """
        decoder = self.decoder
        saved = {key: decoder.config[key] for key in WIDE_BEAMS}
        try:
            for key, value in WIDE_BEAMS.items():
                decoder.config[key] = value
            decoder.add_fsg(WIDE, decoder.read_fsg(self.options["fsg"]))
        except (RuntimeError, ValueError, OSError) as exc:
            raise FatalError(
                f"PocketSphinx cannot read {self.options['fsg']}: {exc}", node="asr"
            ) from None
        finally:
            for key, value in saved.items():
                decoder.config[key] = value
        try:
            return self.run(WIDE, audio, mean, nbest=True)
        finally:
            decoder.activate_search(self.main)
            decoder.remove_search(WIDE)
            release_free_memory(collect=False)  # else the 70 MB search stays resident


def _nbest(decoder) -> list[str]:
    """Lattice n-best texts (may be empty when the search kept no lattice)."""
    try:
        return [
            h.hypstr.strip()
            for h in islice(decoder.nbest(), NBEST_EXTRA)
            if h is not None and h.hypstr
        ]
    except (RuntimeError, TypeError, ValueError):
        return []


def _first_word(path: Path) -> str:
    """The first word of a pronunciation dictionary (the one-word search's word)."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.split():
                    return line.split()[0]
    except OSError as exc:
        raise FatalError(f"PocketSphinx cannot read {path}: {exc}", node="asr") from None
    raise FatalError(f"PocketSphinx dictionary is empty: {path}", node="asr")


def _add_phone_loop(decoder) -> None:
    """Add the en-us phone loop to ``decoder`` as the search :data:`PHONE_LOOP`.

    Raises:
        FatalError: the phone LM is missing or unreadable (names the path).
    """
    phones = model_dir().parent / "en-us-phone.lm.bin"
    if not phones.exists():
        raise FatalError(f"PocketSphinx file missing: {phones}", node="asr")
    try:
        decoder.add_allphone_file(PHONE_LOOP, str(phones))
    except (RuntimeError, ValueError) as exc:
        raise FatalError(f"PocketSphinx cannot load {phones}: {exc}", node="asr") from None


def _make_decoder(options: dict):
    """A pocketsphinx Decoder on the en-us model with ``options``; FatalError naming the path."""
    # lazy: pocketsphinx loads only with its engine
    from pocketsphinx import Decoder

    hmm = model_dir()
    for path in [hmm / "mdef", *(Path(v) for k, v in options.items() if k in ("fsg", "dict"))]:
        if not path.exists():
            raise FatalError(f"PocketSphinx file missing: {path}", node="asr")
    try:
        return Decoder(hmm=str(hmm), logfn="/dev/null", **options)
    except (RuntimeError, ValueError) as exc:
        raise FatalError(
            f"PocketSphinx cannot load {hmm} with {options}: {exc}", node="asr"
        ) from None
