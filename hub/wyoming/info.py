"""The ``info`` answer to ``describe``: the programs this hub has, honestly attributed.

Built once at start-up from what is installed and loaded (never loading an engine), so a
``describe`` is answered at once; Home Assistant re-sends it every 30 s.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from pathlib import Path

from wyoming.info import (AsrModel, AsrProgram, Attribution, HandleModel, HandleProgram, Info,
                          IntentModel, IntentProgram, TtsProgram, TtsVoice, WakeModel,
                          WakeProgram)

from hub import __version__

ASR_NAME, TTS_NAME, WAKE_NAME, HANDLE_NAME = "hub-asr", "hub-tts", "hub-wake", "hub"
"""Program names in ``info`` (and the names ``select-program`` may choose)."""

_ENGINES = {
    "pocketsphinx": ("CMU PocketSphinx", "https://github.com/cmusphinx/pocketsphinx"),
    "vosk": ("Alpha Cephei Vosk", "https://alphacephei.com/vosk/"),
}
_HUB = Attribution(name="Home Assistant intents (hassil) with the hub's graph",
                   url="https://github.com/OHF-Voice/intents")
_PIPER = Attribution(name="Piper (Open Home Foundation)", url="https://github.com/OHF-Voice/piper1-gpl")
_MWW = Attribution(name="Kevin Ahrendt (microWakeWord)", url="https://github.com/kahrendt/microWakeWord")
_PHRASES = {"okay_nabu": "okay nabu", "hey_jarvis": "hey jarvis", "hey_mycroft": "hey mycroft",
            "alexa": "alexa"}


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


def asr_program(engine_name: str, language: str) -> AsrProgram:
    """The recognizer ``engine_name`` (``pocketsphinx``/``vosk``) as an ASR program."""
    who, url = _ENGINES.get(engine_name, (engine_name, ""))
    attribution = Attribution(name=who, url=url)
    model = make(AsrModel, name=f"{engine_name}-{language}-home", attribution=attribution,
                 installed=True, description=f"{who}, restricted to this home's vocabulary",
                 version=_version(engine_name), languages=[language])
    return make(AsrProgram, name=ASR_NAME, attribution=attribution, installed=True,
                description="hub speech recognition (the home's names and commands)",
                version=__version__, models=[model], supports_transcript_streaming=True)


def voice_info(model_path: Path) -> TtsVoice:
    """A Piper voice (``.onnx`` with its ``.onnx.json``) as a TTS voice."""
    try:
        config = json.loads(Path(f"{model_path}.json").read_text(encoding="utf-8"))
        code = config.get("language", {}).get("code") or "en_US"
    except (OSError, ValueError, AttributeError):
        code = "en_US"
    name = Path(model_path).stem
    return make(TtsVoice, name=name, attribution=_PIPER, installed=True,
                description=f"Piper voice {name}", version=None,
                languages=[code.replace("-", "_"), code.split("_")[0].split("-")[0]])


def tts_program(model_path: Path) -> TtsProgram:
    """Piper with the hub's voice, streaming synthesis supported."""
    return make(TtsProgram, name=TTS_NAME, attribution=_PIPER, installed=True,
                description="Piper speech, sentence by sentence",
                version=_version("piper-tts"), voices=[voice_info(model_path)],
                supports_synthesize_streaming=True)


def wake_program(models: list[str]) -> WakeProgram:
    """The microWakeWord models ``models`` (built-in names or model paths)."""
    items = [make(WakeModel, name=Path(m).stem, attribution=_MWW, installed=True,
                  description=f"microWakeWord {Path(m).stem}", version=_version("pymicro-wakeword"),
                  languages=["en"], phrase=_PHRASES.get(m, Path(m).stem.replace("_", " ")))
             for m in models]
    return make(WakeProgram, name=WAKE_NAME, attribution=_MWW, installed=True,
                description="microWakeWord wake word detection (pymicro-wakeword)",
                version=_version("pymicro-wakeword"), models=items)


def handle_program(language: str) -> HandleProgram:
    """The turn graph (Home Assistant intent rules, then the local LLM) as an agent."""
    model = make(HandleModel, name="hub-rules-llm", attribution=_HUB, installed=True,
                 description="Home Assistant intents (hassil) for this home, then a local LLM",
                 version=__version__, languages=[language])
    return make(HandleProgram, name=HANDLE_NAME, attribution=_HUB, installed=True,
                description="hub conversation agent (acts on the home)", version=__version__,
                models=[model], supports_home_control=True)


def intent_program(language: str) -> IntentProgram:
    """The rules alone, recognizing without acting (``recognize`` -> ``intent``)."""
    model = make(IntentModel, name="hub-rules", attribution=_HUB, installed=True,
                 description="Home Assistant intents (hassil) for this home",
                 version=__version__, languages=[language])
    return make(IntentProgram, name=HANDLE_NAME, attribution=_HUB, installed=True,
                description="hub intent recognition", version=__version__, models=[model])


def build_info(*, asr_engine: str | None, voice: Path | None, wake_models: list[str],
               language: str, handle: bool) -> Info:
    """The ``info`` of a server with these parts; a part that is None/empty/False is left out.

    Args:
        asr_engine: the loaded recognizer's name, or None when it could not be loaded.
        voice: the Piper ``.onnx`` path, or None when TTS is unavailable.
        wake_models: microWakeWord model names or paths that load.
        language: the home's language (``en``).
        handle: whether the rules loaded (the conversation agent works).
    """
    return Info(asr=[asr_program(asr_engine, language)] if asr_engine else [],
                tts=[tts_program(voice)] if voice else [],
                wake=[wake_program(wake_models)] if wake_models else [],
                handle=[handle_program(language)] if handle else [],
                intent=[intent_program(language)] if handle else [])
