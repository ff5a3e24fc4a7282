"""Downloadable models: the manifest, ``hub models list|fetch|verify``, and where models live.

Engines find an installed model with :func:`installed_path` (``"vosk-en-small"`` -> the Vosk
model folder, ``"qwen2.5-0.5b-instruct"`` -> the ``.gguf``, a Piper voice -> its ``.onnx``).
Modules: :mod:`~hub.models.manifest` (what can be installed), :mod:`~hub.models.download`
(streaming, hashing, HTTP Range resume), :mod:`~hub.models.install` (``.part`` -> checked ->
renamed into place), :mod:`~hub.models.verify`, :mod:`~hub.models.cli`.
"""

from hub.models.cli import (EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_NETWORK, EXIT_OK,
                            add_models_parser, run_models)
from hub.models.download import ChecksumError, NetworkError
from hub.models.install import fetch, installed_path, models_dir
from hub.models.manifest import Model, ModelFile, load_manifest
from hub.models.verify import VerifyReport, installed_names, verify_installed

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_NETWORK", "EXIT_OK", "ChecksumError", "Model",
    "ModelFile", "NetworkError", "VerifyReport", "add_models_parser", "fetch", "installed_names",
    "installed_path", "load_manifest", "models_dir", "run_models", "verify_installed",
]
