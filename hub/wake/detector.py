"""Wake word detection with microWakeWord models (pymicro-wakeword, TFLite Micro).

Built-in models: ``okay_nabu``, ``hey_jarvis``, ``hey_mycroft``, ``alexa``; or a model file:
a microWakeWord ``.json`` config, or a ``.tflite`` with its ``.json`` beside it. Costs about
4 ms per 2 s of audio, so it is the only model that runs while the hub idles.
Source: github.com/kahrendt/microWakeWord (model and features), rhasspy pymicro-wakeword.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from hub.config.files import wake_model_problem
from hub.errors import ConfigError
from hub.settings import WakeSettings

log = logging.getLogger(__name__)

BUILTINS = ("okay_nabu", "hey_jarvis", "hey_mycroft", "alexa")
"""Names of the models inside the pymicro-wakeword wheel."""


def _config_path(model: str) -> Path:
    """The microWakeWord ``.json`` for a model path (``.json`` or ``.tflite``).

    Raises:
        ConfigError: naming ``wake.model`` when the file or its config is missing.
    """
    path = Path(model).expanduser()
    if path.suffix not in (".json", ".tflite") or not path.with_suffix(".json").is_file():
        raise ConfigError(
            f"wake.model: {model!r} is neither a built-in "
            f"({', '.join(BUILTINS)}) nor a microWakeWord .json/.tflite file"
        )
    return path.with_suffix(".json")


def _load(model: str):
    """Load the microWakeWord model named ``model`` (built-in name or path)."""
    # lazy: the wake word models (TFLite) load only when wake detection runs
    from pymicro_wakeword import MicroWakeWord, Model

    if model in BUILTINS:
        return MicroWakeWord.from_builtin(Model(model))
    config = _config_path(model)
    problem = wake_model_problem(config)  # TFLite crashes the process on a bad file
    if problem is not None:
        raise ConfigError(f"wake.model: {problem}")
    try:
        return MicroWakeWord.from_config(config)
    except (OSError, KeyError, ValueError) as exc:
        raise ConfigError(f"wake.model: cannot load {str(config)!r}: {exc}") from None


class WakeWord:
    """A streaming wake word detector for 16 kHz mono int16 audio.

    Args:
        model: a built-in name (see :data:`BUILTINS`) or a ``.json``/``.tflite`` path.

    Raises:
        ConfigError: the model is unknown or cannot be loaded (names ``wake.model``).
    """

    def __init__(self, model: str):
        # lazy: the wake word models (TFLite) load only when wake detection runs
        from pymicro_wakeword import MicroWakeWordFeatures

        self.model = model
        self._detector = _load(model)
        self._features = MicroWakeWordFeatures()
        log.info("wake word model %s loaded (%r)", model, self._detector.wake_word)

    def process(self, block: np.ndarray) -> bool:
        """Feed one block (int16, 16 kHz mono, any length); True when the wake word ended
        in it. Audio after the detection point in the same block is not examined."""
        audio = np.ascontiguousarray(block, dtype="<i2").tobytes()
        for features in self._features.process_streaming(audio):
            if self._detector.process_streaming(features):
                return True
        return False

    def reset(self) -> None:
        """Forget all audio heard so far (call after a detection, before listening again)."""
        self._features.reset()
        self._detector.reset()


def make_wake(settings: WakeSettings) -> WakeWord:
    """Build the wake word detector for ``settings.model`` (the factory tests replace).

    Raises:
        ConfigError: unknown model name or unreadable model file (names ``wake.model``).
    """
    return WakeWord(settings.model)
