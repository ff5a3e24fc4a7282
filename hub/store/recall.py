"""The fingerprint node's work: recognize an utterance heard before (L1 of the ladder).

:func:`recall` returns the state update of the ``fingerprint`` node; :func:`remember` stores
what ASR made of it. Thresholds: ``[store] fingerprint_strict`` (a hit skips ASR) and
``[store] fingerprint_loose`` (kept in state as ``l1`` for when ASR fails).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from hub.store import fingerprint as fpm

log = logging.getLogger("hub.store.recall")


def _context(hub) -> str:
    key = getattr(hub, "_fingerprint_context", None)
    if key is None:
        key = hub._fingerprint_context = fpm.context_key(hub.settings)
    return key


def recall(hub, samples) -> dict:
    """State update for int16 16 kHz ``samples``: ``fingerprint`` (a Fingerprint or None),
    and ``transcript``/``alternatives``/``cache_hit`` on a strict hit, or ``l1`` =
    ``{transcript, alternatives, similarity}`` on a loose one.

    The same samples heard before (sha256) are a strict hit before any features are computed.
    """
    cfg = hub.settings.store
    if hub.store is not None:
        try:
            exact = hub.store.find_exact(_context(hub), fpm.digest(samples))
        except Exception as exc:  # noqa: BLE001 - a cache is never worth failing a turn for
            log.warning("store: fingerprint lookup failed: %s", exc)
            exact = None
        if exact is not None and exact[0]:
            return {"fingerprint": None, "transcript": exact[0],
                    "alternatives": list(exact[1]) or [exact[0]], "cache_hit": True}
    fp = fpm.compute(samples)
    if fp is None or hub.store is None:
        return {"fingerprint": fp}
    try:
        found = hub.store.find_fingerprint(_context(hub), replace(fp, digest=""), min(
            cfg.fingerprint_loose, cfg.fingerprint_strict))
    except Exception as exc:  # noqa: BLE001 - a cache is never worth failing a turn for
        log.warning("store: fingerprint lookup failed: %s", exc)
        return {"fingerprint": fp}
    if found is None:
        return {"fingerprint": fp}
    text, alternatives, sim = found
    if sim >= cfg.fingerprint_strict and text:
        return {"fingerprint": fp, "transcript": text,
                "alternatives": list(alternatives) or [text], "cache_hit": True}
    return {"fingerprint": fp, "l1": {"transcript": text, "alternatives": list(alternatives),
                                      "similarity": round(sim, 3)}}


def remember(hub, fp, transcript: str, alternatives) -> None:
    """Store ASR's ``transcript`` for the fingerprint ``fp`` (None: nothing to store)."""
    if fp is not None and transcript and hub.store is not None:
        hub.store.put_fingerprint(_context(hub), fp, transcript, tuple(alternatives))
