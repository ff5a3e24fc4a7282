"""Downloadable models: the manifest, downloads, verification, and where models live.

Engines find an installed model with :func:`installed_path` (``"vosk-en-small"`` -> the Vosk
model folder, ``"qwen2.5-0.5b-instruct"`` -> the ``.gguf``, a Piper voice -> its ``.onnx``).
Modules: :mod:`~hub.models.manifest` (what can be installed), :mod:`~hub.models.download`
(streaming, hashing, HTTP Range resume), :mod:`~hub.models.install` (``.part`` -> checked ->
renamed into place), :mod:`~hub.models.verify`; the command line is :mod:`hub.cli.models`.
"""

from hub.models.download import ChecksumError, NetworkError
from hub.models.install import fetch, installed_path, models_dir
from hub.models.manifest import Model, ModelFile, load_manifest
from hub.models.verify import VerifyReport, installed_names, verify_installed

__all__ = [
    "ChecksumError", "Model", "ModelFile", "NetworkError", "VerifyReport", "fetch",
    "installed_names", "installed_path", "load_manifest", "models_dir", "verify_installed",
]
