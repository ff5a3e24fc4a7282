"""Checks that what the config names exists (the wake word, the voice, files and folders) and
that values agree with each other (faults to inject, the two fingerprint thresholds).

Run when a config file is loaded (not when settings are built in code, so tests and callers
can still build settings for files made later). One line each with the key's path.
"""

from __future__ import annotations

import json
from pathlib import Path

from hub.errors import ConfigError
from hub.resilience.faults import parse_faults

WAKE_BUILTINS = ("okay_nabu", "hey_jarvis", "hey_mycroft", "alexa")
"""pymicro-wakeword's built-in models (its ``Model`` enum)."""


def _wake_builtins() -> tuple[str, ...]:
    try:
        # lazy: the wake word models (TFLite) load only when wake detection runs
        from pymicro_wakeword import Model
    except ImportError:  # the package is checked by `hub doctor`; the names are still known
        return WAKE_BUILTINS
    return tuple(m.value for m in Model)


def wake_model_problem(config: Path) -> str | None:
    """Why the microWakeWord model of ``config`` (its ``.json``) cannot be loaded, or None.

    Checked before TensorFlow Lite sees the file: given one that is not a TFLite flatbuffer
    (empty, truncated, another format) it crashes the process (SIGSEGV), so ``hub run`` and
    ``hub doctor`` died instead of naming the problem (the breaker's finding). A TFLite file
    carries the identifier ``TFL3`` at bytes 4-8 (the FlatBuffers file identifier)."""
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"cannot read {str(config)!r}: {exc}"
    if not isinstance(data, dict) or not isinstance(data.get("model"), str):
        return f'{str(config)!r} names no "model" file (a microWakeWord .json)'
    if not isinstance(data.get("micro"), dict) or not isinstance(data.get("wake_word"), str):
        return f'{str(config)!r} lacks "wake_word" or "micro" (a microWakeWord .json)'
    tflite = config.parent / data["model"]
    try:
        with open(tflite, "rb") as f:
            head = f.read(8)
    except OSError as exc:
        return f"cannot read the model {str(tflite)!r}: {exc.strerror or exc}"
    if len(head) < 8 or head[4:8] != b"TFL3":
        return f"{str(tflite)!r} is not a TensorFlow Lite model"
    return None


def _check_wake(model: str, key: str = "wake.model") -> None:
    builtins = _wake_builtins()
    if model in builtins:
        return
    path = Path(model).expanduser()
    if path.suffix not in (".tflite", ".json") or not path.with_suffix(".json").is_file():
        raise ConfigError(
            f"{key}: no wake word {model!r}: neither a built-in "
            f"({', '.join(builtins)}) nor a microWakeWord .tflite with its .json"
        )
    problem = wake_model_problem(path.with_suffix(".json"))
    if problem is not None:
        raise ConfigError(f"{key}: {problem}")


def _check_voice(voice: str) -> None:
    path = Path(voice).expanduser()
    if not path.is_file():
        raise ConfigError(f"tts.voice: no Piper voice file {voice!r}")
    if not Path(f"{path}.json").is_file():
        raise ConfigError(f"tts.voice: {voice!r} has no {path.name}.json beside it")


def _check_paths(settings) -> None:
    files = {"llm.model": settings.llm.model, "resilience.faq": settings.resilience.faq}
    for key, value in files.items():
        if value and not Path(value).expanduser().is_file():
            raise ConfigError(f"{key}: no such file {value!r}")
    if settings.asr.vosk_model and not Path(settings.asr.vosk_model).expanduser().is_dir():
        raise ConfigError(f"asr.vosk_model: no such folder {settings.asr.vosk_model!r}")
    whisper = settings.asr.whisper_model
    if whisper and not (Path(whisper).expanduser() / "model.bin").is_file():
        raise ConfigError(f"asr.whisper_model: no faster-whisper model (model.bin) in {whisper!r}")
    for i, value in enumerate(settings.intents.custom_sentences):
        path = Path(value).expanduser()
        if not path.exists():
            raise ConfigError(f"intents.custom_sentences[{i}]: no such file or folder {value!r}")
        if not (path.is_file() or path.is_dir()):
            raise ConfigError(f"intents.custom_sentences[{i}]: not a regular file {value!r}")


def check_files(settings, nodes=()) -> None:
    """Check the wake word, voice and paths a :class:`hub.settings.Settings` names, and the
    values that must agree (``nodes``: the graph nodes a fault may be injected into).

    Raises:
        ConfigError: one line naming the key, e.g. ``wake.model: no wake word 'hey_bob': ...``.
    """
    if settings.wake.enabled:
        _check_wake(settings.wake.model)
        if settings.wake.stop_model:
            _check_wake(settings.wake.stop_model, "wake.stop_model")
    if settings.tts.voice:
        _check_voice(settings.tts.voice)
    _check_paths(settings)
    _check_values(settings, nodes)


def _check_values(settings, nodes) -> None:
    """``[resilience] inject`` parses; ``fingerprint_strict`` is at least ``fingerprint_loose``."""
    for i, spec in enumerate(settings.resilience.inject):
        try:
            parse_faults([spec], nodes)
        except ConfigError as exc:
            raise ConfigError(
                f"resilience.inject[{i}]: {exc.message.removeprefix(f'--inject {spec!r}: ')}"
            ) from None
    store = settings.store
    if store.fingerprint_strict < store.fingerprint_loose:
        raise ConfigError(
            f"store.fingerprint_strict: must be at least fingerprint_loose "
            f"({store.fingerprint_loose}), got {store.fingerprint_strict}"
        )
