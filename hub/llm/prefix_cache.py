"""The LLM's prompt cache on disk: the KV state after each prompt prefix, one file per key.

Files are ``$XDG_CACHE_HOME/hub/llm/prefix-<key>.state`` (``~/.cache/hub/llm``), ≈ 10 MB
each for SmolLM2-135M. Every change of model, home or prompt makes new keys, so the folder is
kept to the :data:`KEEP_FILES` most recently used (a read refreshes a file's time): on an SD
card the cache never grows without bound.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from hub.llm.model import N_CTX, check_fits, llama_cpp_bindings
from hub.paths import cache_dir

log = logging.getLogger(__name__)

KEEP_FILES = 24
"""Most prefix states kept (3 prompt kinds for several homes or models in use at once)."""


@dataclass(frozen=True)
class Prefix:
    """A saved KV state: the prefix tokens and llama.cpp's state bytes after them."""

    tokens: tuple[int, ...]
    state: bytes


def saved_prefix(llm, tokens: tuple[int, ...]) -> Prefix:
    """The state of ``llm``'s context after ``tokens`` (the part every prompt of one kind
    shares): read from the disk cache (:func:`prefix_cache_path`), else evaluated now and
    written there, so the next process with the same model and prompt loads it instead.

    Raises:
        BadInputError: the tokens do not fit the context (:func:`check_fits`).
    """
    cached = prefix_cache_path(llm, tokens)
    state = read_state(cached)
    if state is not None:
        return Prefix(tokens, state)
    llm = check_fits(llm, len(tokens) + 1, "prefix")
    llm.reset()
    llm.eval(list(tokens))
    prefix = Prefix(tokens, context_state(llm))
    if cached is not None:
        write_state(cached, prefix.state)
    return prefix


def context_state(llm) -> bytes:
    """The state of ``llm``'s context (a ``llama_cpp.Llama``: its evaluated tokens' KV
    cache), as llama.cpp serializes it."""
    low = llama_cpp_bindings()
    size = low.llama_state_get_size(llm.ctx)
    buf = (ctypes.c_uint8 * size)()
    used = low.llama_state_get_data(llm.ctx, buf, size)
    return bytes(buf)[:used]


def set_context_state(llm, state: bytes) -> bool:
    """Load ``state`` (:func:`context_state`) into ``llm``'s context; False when llama.cpp
    took less than all of it (the context is then unusable: reset it)."""
    buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    return llama_cpp_bindings().llama_state_set_data(llm.ctx, buf, len(state)) == len(state)


def prefix_cache_path(llm, tokens: tuple[int, ...]) -> Path | None:
    """Where the KV state after ``tokens`` is cached for this model file, or None.

    The key hashes the model file's path, size and mtime, the context size and the tokens.
    """
    path = getattr(llm, "model_path", None)
    if not path or not os.path.isfile(path):
        return None
    st = os.stat(path)
    key = hashlib.sha256(
        repr((os.path.abspath(path), st.st_size, st.st_mtime_ns, N_CTX, tokens)).encode()
    ).hexdigest()[:32]

    return cache_dir("llm", f"prefix-{key}.state")


def read_state(path: Path | None) -> bytes | None:
    """The cached state at ``path``, or None when there is none (or it cannot be read).

    A read marks the file as recently used, so :func:`prune` keeps it.
    """
    if path is None:
        return None
    try:
        data = path.read_bytes()
        os.utime(path)
    except OSError:
        return None
    return data


def write_state(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file, then :func:`prune` the folder.

    A failure (read-only or full disk) only skips the cache, with one warning.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("LLM prompt cache not written (%s): %s", path, exc)
        return
    prune(path.parent)


def prune(folder: Path, keep: int = KEEP_FILES) -> int:
    """Delete all but the ``keep`` most recently used prefix states in ``folder``.

    Returns how many files were deleted; files that vanish meanwhile (another process pruned
    them) are skipped.
    """
    entries = []
    for file in folder.glob("prefix-*.state"):
        try:
            entries.append((file.stat().st_mtime, file))
        except OSError:
            continue
    entries.sort(reverse=True)
    removed = 0
    for _, file in entries[keep:]:
        try:
            file.unlink()
            removed += 1
        except OSError:
            continue
    if removed:
        log.info("LLM prompt cache: %d old prefix states removed from %s", removed, folder)
    return removed
