"""Giving freed C heap memory back to the system (idle RSS of a long-running daemon)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (musl, macOS: nothing to trim)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def release_free_memory(collect: bool = True) -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim(0)``, a few ms;
    no-op elsewhere); ``collect`` runs Python's garbage collector first.

    Large native structures freed by a library (a PocketSphinx search: about 70 MB for the
    sample home's grammar; onnxruntime buffers after warm-up) stay resident in glibc's heap
    until trimmed, since they are made of many small allocations below the mmap threshold.
    """
    if collect:
        gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
