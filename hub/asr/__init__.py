"""Speech recognition: Vosk or PocketSphinx, restricted to the home's vocabulary.

Public API: :class:`Transcript`, :class:`AsrStream`, :class:`AsrEngine`, :func:`make_asr_engine`.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from hub.asr.base import AsrEngine, AsrStream, Transcript
from hub.errors import FatalError, HubError

__all__ = [
    "AsrEngine",
    "AsrStream",
    "Transcript",
    "make_asr_engine",
    "installed_vosk_model",
    "make_second_engine",
]

_LOG = logging.getLogger(__name__)


VOSK_MODEL_NAME = "vosk-en-small"
"""The model ``hub models fetch`` installs for Vosk."""


def installed_vosk_model(settings) -> Path | None:
    """``settings.vosk_model`` if set, else the installed ``vosk-en-small``, else None."""
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.models.install import installed_path

    if settings.vosk_model:
        return Path(settings.vosk_model).expanduser()
    return installed_path(VOSK_MODEL_NAME)


def make_asr_engine(settings, home, *, cache_dir: Path | None = None) -> AsrEngine:
    """Build the recognizer the settings ask for.

    ``engine = "auto"``: Vosk when a model is configured or installed, else PocketSphinx; a
    Vosk model that fails to load falls back to PocketSphinx (logged). ``"vosk"`` and
    ``"pocketsphinx"`` force one. With ``settings.restrict`` the home's vocabulary is
    generated (or read from ``cache_dir``, default ``$XDG_CACHE_HOME/hub``).

    Args:
        settings: :class:`hub.settings.AsrSettings`.
        home: :class:`hub.settings.HomeSettings`.
        cache_dir: vocabulary cache root.

    Raises:
        FatalError: unknown engine; a forced Vosk model missing or corrupt (names the path);
            PocketSphinx files missing.
    """
    if settings.engine not in ("auto", "vosk", "pocketsphinx"):
        raise FatalError(f"asr.engine: unknown engine {settings.engine!r}", node="asr")
    vocab = _vocab(settings, home, cache_dir)
    if settings.engine in ("auto", "vosk"):
        path = installed_vosk_model(settings)
        if path is None and settings.engine == "vosk":
            raise FatalError(
                "asr.engine is vosk but no Vosk model is installed (run `hub models"
                f" fetch {VOSK_MODEL_NAME}` or set asr.vosk_model)",
                node="asr",
            )
        if path is not None:
            try:
                return _vosk(settings, path, vocab)
            except HubError as exc:
                if settings.engine == "vosk":
                    raise
                _LOG.warning("Vosk failed to load (%s); falling back to PocketSphinx", exc.message)
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.asr.pocketsphinx_engine import PocketSphinxEngine

    return PocketSphinxEngine(settings, vocab)


def make_second_engine(settings, home):
    """The open-vocabulary second recognizer: Whisper (faster-whisper) biased with the home's
    names (:func:`hub.asr.whisper_prompt.initial_prompt`). Nothing is loaded here: the model
    is loaded on its first use and freed after ``settings.whisper_keep_loaded_s`` idle.

    Raises:
        FatalError: faster-whisper is not installed.
    """
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.asr.whisper_engine import WhisperEngine
    from hub.asr.whisper_prompt import initial_prompt, names_in_prompt

    if importlib.util.find_spec("faster_whisper") is None:
        raise FatalError(
            "faster-whisper is not installed (pip install faster-whisper)", node="asr2"
        )
    _LOG.info("second pass prompt holds %d of the home's names", names_in_prompt(home))
    return WhisperEngine(settings, initial_prompt(home))


def _vocab(settings, home, cache_dir):
    if not settings.restrict:
        return None
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.asr.vocab import build_vocab

    return build_vocab(home, cache_dir)


def _vosk(settings, path: Path, vocab):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.asr.vosk_engine import VoskEngine

    return VoskEngine(settings, path, vocab)
