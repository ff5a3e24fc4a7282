"""The fingerprint node's work: recognize an utterance heard before (L1 of the ladder).

:func:`recall` returns the state update of the ``fingerprint`` node; :func:`remember` stores
what ASR made of it. Thresholds: ``[store] fingerprint_strict`` (a hit skips ASR) and
``[store] fingerprint_loose`` (kept in state as ``l1`` for when ASR fails). ``key`` is the
context key of what changes a transcript (:func:`hub.store.fingerprint.context_key`, computed
once by the orchestrator).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from hub.store import fingerprint as fpm

log = logging.getLogger("hub.store.recall")


def recall(
    store, key: str, cfg, samples, strict_ok: Callable[[str], bool] = lambda text: True
) -> dict:
    """State update for int16 16 kHz ``samples``: ``fingerprint`` (a Fingerprint or None),
    and ``transcript``/``alternatives``/``cache_hit`` on a strict hit, or ``l1`` =
    ``{transcript, alternatives, similarity}`` on a loose one.

    Args:
        store: a :class:`hub.store.db.Store`, or None (nothing is looked up).
        key: the fingerprint context key.
        cfg: :class:`hub.settings.StoreSettings` (the thresholds).
        samples: the utterance.
        strict_ok: ``strict_ok(transcript)`` -> False for a transcript that a similar
            utterance must never stand for (one with a number: a "90" said like an earlier
            "19" matched it strictly); such a match is only ``l1``.

    The same samples heard before (sha256) are a strict hit before any features are computed,
    whatever the transcript (the same audio).
    """
    if store is not None:
        try:
            exact = store.find_exact(key, fpm.digest(samples))
        except Exception as exc:
            log.warning("store: fingerprint lookup failed: %s", exc)
            exact = None
        if exact is not None and exact[0]:
            return {
                "fingerprint": None,
                "transcript": exact[0],
                "alternatives": list(exact[1]) or [exact[0]],
                "cache_hit": True,
            }
    fp = fpm.compute(samples)
    if fp is None or store is None:
        return {"fingerprint": fp}
    try:
        found = store.find_fingerprint(
            key, replace(fp, digest=""), min(cfg.fingerprint_loose, cfg.fingerprint_strict)
        )
    except Exception as exc:
        log.warning("store: fingerprint lookup failed: %s", exc)
        return {"fingerprint": fp}
    if found is None:
        return {"fingerprint": fp}
    text, alternatives, sim = found
    if sim >= cfg.fingerprint_strict and text and strict_ok(text):
        return {
            "fingerprint": fp,
            "transcript": text,
            "alternatives": list(alternatives) or [text],
            "cache_hit": True,
        }
    return {
        "fingerprint": fp,
        "l1": {"transcript": text, "alternatives": list(alternatives), "similarity": round(sim, 3)},
    }


def remember(store, key: str, fp, transcript: str, alternatives) -> None:
    """Store ASR's ``transcript`` for the fingerprint ``fp`` under the context ``key`` in
    ``store`` (None for either: nothing to store)."""
    if fp is not None and transcript and store is not None:
        store.put_fingerprint(key, fp, transcript, tuple(alternatives))
