"""The ``info`` answer to ``describe``: the programs this hub has, honestly attributed.

Built once at start-up from what is installed and loaded (never loading an engine), so a
``describe`` is answered at once; Home Assistant re-sends it every 30 s.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from pathlib import Path

from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    HandleModel,
    HandleProgram,
    Info,
    IntentModel,
    IntentProgram,
    TtsProgram,
    TtsVoice,
    WakeModel,
    WakeProgram,
)

from hub import __version__

ASR_NAME, TTS_NAME, WAKE_NAME, HANDLE_NAME = "hub-asr", "hub-tts", "hub-wake", "hub"
"""Program names in ``info`` (and the names ``select-program`` may choose)."""

_ENGINES = {
    "pocketsphinx": ("CMU PocketSphinx", "https://github.com/cmusphinx/pocketsphinx"),
    "vosk": ("Alpha Cephei Vosk", "https://alphacephei.com/vosk/"),
}
_HUB = Attribution(
    name="Home Assistant intents (hassil) with the hub's graph",
    url="https://github.com/OHF-Voice/intents",
)
_PIPER = Attribution(
    name="Piper (Open Home Foundation)", url="https://github.com/OHF-Voice/piper1-gpl"
)
_MWW = Attribution(
    name="Kevin Ahrendt (microWakeWord)", url="https://github.com/kahrendt/microWakeWord"
)
_PHRASES = {
    "okay_nabu": "okay nabu",
    "hey_jarvis": "hey jarvis",
    "hey_mycroft": "hey mycroft",
    "alexa": "alexa",
}


def make(cls, **fields):
    """``cls(**fields)`` without the fields this ``wyoming`` version does not have
    (``supports_home_control`` and ``requires_external_vad`` came in later 1.x releases)."""
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in fields.items() if k in known})


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _artifact(cls, name: str, attribution: Attribution, description: str, version, **fields):
    """An installed wyoming artifact ``cls`` (a program, model or voice) with its name,
    attribution, description and version (a str or None); ``fields`` are its own (``models``,
    ``languages``, ``supports_*``), left out where this ``wyoming`` lacks them (:func:`make`)."""
    return make(
        cls,
        name=name,
        attribution=attribution,
        installed=True,
        description=description,
        version=version,
        **fields,
    )


def asr_program(engine_name: str, language: str) -> AsrProgram:
    """The recognizer ``engine_name`` (``pocketsphinx``/``vosk``) as an ASR program."""
    who, url = _ENGINES.get(engine_name, (engine_name, ""))
    attribution = Attribution(name=who, url=url)
    model = _artifact(
        AsrModel,
        f"{engine_name}-{language}-home",
        attribution,
        f"{who}, restricted to this home's vocabulary",
        _version(engine_name),
        languages=[language],
    )
    return _artifact(
        AsrProgram,
        ASR_NAME,
        attribution,
        "hub speech recognition (the home's names and commands)",
        __version__,
        models=[model],
        supports_transcript_streaming=True,
    )


def voice_info(model_path: Path) -> TtsVoice:
    """A Piper voice (``.onnx`` with its ``.onnx.json``) as a TTS voice."""
    try:
        config = json.loads(Path(f"{model_path}.json").read_text(encoding="utf-8"))
        code = config.get("language", {}).get("code") or "en_US"
    except (OSError, ValueError, AttributeError):
        code = "en_US"
    name = Path(model_path).stem
    languages = [code.replace("-", "_"), code.split("_")[0].split("-")[0]]
    return _artifact(TtsVoice, name, _PIPER, f"Piper voice {name}", None, languages=languages)


def tts_program(model_path: Path) -> TtsProgram:
    """Piper with the hub's voice, streaming synthesis supported."""
    return _artifact(
        TtsProgram,
        TTS_NAME,
        _PIPER,
        "Piper speech, sentence by sentence",
        _version("piper-tts"),
        voices=[voice_info(model_path)],
        supports_synthesize_streaming=True,
    )


def wake_program(models: list[str]) -> WakeProgram:
    """The microWakeWord models ``models`` (built-in names or model paths)."""
    version = _version("pymicro-wakeword")
    items = [
        _artifact(
            WakeModel,
            Path(m).stem,
            _MWW,
            f"microWakeWord {Path(m).stem}",
            version,
            languages=["en"],
            phrase=_PHRASES.get(m, Path(m).stem.replace("_", " ")),
        )
        for m in models
    ]
    description = "microWakeWord wake word detection (pymicro-wakeword)"
    return _artifact(WakeProgram, WAKE_NAME, _MWW, description, version, models=items)


def _rules_program(cls, model_cls, model: tuple[str, str], description: str, language, **fields):
    """The hub's rules as a program ``cls`` with one model ``model_cls`` named and described
    by ``model``; ``fields``: the program's own."""
    name, about = model
    rules = _artifact(model_cls, name, _HUB, about, __version__, languages=[language])
    return _artifact(cls, HANDLE_NAME, _HUB, description, __version__, models=[rules], **fields)


def handle_program(language: str) -> HandleProgram:
    """The turn graph (Home Assistant intent rules, then the local LLM) as an agent."""
    model = ("hub-rules-llm", "Home Assistant intents (hassil) for this home, then a local LLM")
    description = "hub conversation agent (acts on the home)"
    return _rules_program(
        HandleProgram, HandleModel, model, description, language, supports_home_control=True
    )


def intent_program(language: str) -> IntentProgram:
    """The rules alone, recognizing without acting (``recognize`` -> ``intent``)."""
    model = ("hub-rules", "Home Assistant intents (hassil) for this home")
    return _rules_program(IntentProgram, IntentModel, model, "hub intent recognition", language)


def build_info(
    *,
    asr_engine: str | None,
    voice: Path | None,
    wake_models: list[str],
    language: str,
    handle: bool,
) -> Info:
    """The ``info`` of a server with these parts; a part that is None/empty/False is left out.

    Args:
        asr_engine: the loaded recognizer's name, or None when it could not be loaded.
        voice: the Piper ``.onnx`` path, or None when TTS is unavailable.
        wake_models: microWakeWord model names or paths that load.
        language: the home's language (``en``).
        handle: whether the rules loaded (the conversation agent works).
    """
    return Info(
        asr=[asr_program(asr_engine, language)] if asr_engine else [],
        tts=[tts_program(voice)] if voice else [],
        wake=[wake_program(wake_models)] if wake_models else [],
        handle=[handle_program(language)] if handle else [],
        intent=[intent_program(language)] if handle else [],
    )
