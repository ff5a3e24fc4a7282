"""Speech recognition: Vosk or PocketSphinx, restricted to the home's vocabulary.

Public API: :class:`Transcript`, :class:`AsrStream`, :class:`AsrEngine`, :func:`make_asr_engine`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from hub.asr.base import AsrEngine, AsrStream, Transcript
from hub.errors import FatalError, HubError

__all__ = ["AsrEngine", "AsrStream", "Transcript", "make_asr_engine", "installed_vosk_model"]

_LOG = logging.getLogger(__name__)


VOSK_MODEL_NAME = "vosk-en-small"
"""The model ``hub models fetch`` installs for Vosk."""


def installed_vosk_model(settings) -> Path | None:
    """``settings.vosk_model`` if set, else the installed ``vosk-en-small``, else None."""
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
            raise FatalError("asr.engine is vosk but no Vosk model is installed (run `hub models"
                             f" fetch {VOSK_MODEL_NAME}` or set asr.vosk_model)", node="asr")
        if path is not None:
            try:
                return _vosk(settings, path, vocab)
            except HubError as exc:
                if settings.engine == "vosk":
                    raise
                _LOG.warning("Vosk failed to load (%s); falling back to PocketSphinx", exc.message)
    from hub.asr.pocketsphinx_engine import PocketSphinxEngine

    return PocketSphinxEngine(settings, vocab)


def _vocab(settings, home, cache_dir):
    if not settings.restrict:
        return None
    from hub.asr.vocab import build_vocab

    return build_vocab(home, cache_dir)


def _vosk(settings, path: Path, vocab):
    from hub.asr.vosk_engine import VoskEngine

    return VoskEngine(settings, path, vocab)
