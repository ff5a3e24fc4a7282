"""The action outbox: every command is written here before it is published.

A row is ``pending`` from before the PUBLISH until the broker's PUBACK (then ``done``) or until
its ``expires_at`` passes (then ``expired``: the user is told once that the device could not
be reached). Pending rows are published again, under the same idempotency key, on every new
connection (start-up included).

The rows live in the store's ``outbox`` table (``idempotency_key``, ``action``, ``status``,
``at``) through the store's ``outbox_claim`` / ``outbox_done``; the one query the store has no
method for (the pending rows) is :func:`_pending_rows` here. ``action`` holds a JSON record
``{"action", "topic", "expires_at"}``. Without a store, or when the store fails, rows are kept
in memory (and a restart forgets them); a store error never fails a turn.
"""

from __future__ import annotations

import json
import logging
import threading

log = logging.getLogger("hub.devices.outbox")

REMEMBERED = 4096
"""Finished keys kept in memory when there is no store (so a repeat is still recognized)."""
PENDING, DONE, EXPIRED = "pending", "done", "expired"
"""Row states (``failed`` rows of older versions are treated as pending)."""


def _pending_rows(store) -> list[tuple[str, dict]]:
    """``[(key, record)]`` of the store's pending (or old ``failed``) rows, oldest first."""
    rows = store.outbox_pending()
    out = []
    for key, text in rows:
        try:
            record = json.loads(text)
        except (TypeError, ValueError):
            log.warning("outbox row %s is not JSON; left as it is", key)
            continue
        if isinstance(record, dict) and "topic" in record and "action" in record:
            out.append((key, record))
    return out


class Outbox:
    """Pending commands by idempotency key, in the store when there is one. Thread-safe.

    Args:
        store: a :class:`hub.store.db.Store`, or None (memory only).
    """

    def __init__(self, store=None) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._memory: dict[str, tuple[str, dict]] = {}  # key -> (status, record)

    def add(self, key: str, record: dict) -> str | None:
        """Write ``record`` as ``pending`` under ``key``; None when new, else the key's status.

        ``record``: ``{"action", "topic", "expires_at"}`` (JSON-able).
        """
        with self._lock:
            if key in self._memory:
                return self._memory[key][0]
            status = self._store_add(key, record)
            if status is None:
                self._memory[key] = (PENDING, record)
            return status

    def _store_add(self, key: str, record: dict) -> str | None:
        if self._store is None:
            return None
        try:
            if self._store.outbox_claim(key, record):
                return None
            status = self._store.outbox_status(key)
            return PENDING if status in ("failed", None) else status
        except Exception as exc:
            log.warning("outbox write for %s failed (%s); kept in memory only", key, exc)
            return None

    def mark(self, key: str, status: str) -> None:
        """Set ``key``'s status (``done`` or ``expired``); a store that fails is logged."""
        with self._lock:
            if key in self._memory:
                self._memory[key] = (status, self._memory[key][1])
            if self._store is None:
                self._trim()
                return
            try:
                self._store.outbox_done(key, status)
            except Exception as exc:
                log.warning("outbox row %s not marked %s: %s", key, status, exc)

    def status(self, key: str) -> str | None:
        """The key's status, or None when it was never written."""
        with self._lock:
            if key in self._memory:
                return self._memory[key][0]
        if self._store is None:
            return None
        return self._store.outbox_status(key)

    def pending(self) -> list[tuple[str, dict]]:
        """``[(key, record)]`` of every pending row (store and memory), oldest first."""
        rows: dict[str, dict] = {}
        if self._store is not None:
            try:
                rows.update(_pending_rows(self._store))
            except Exception as exc:
                log.warning("outbox not readable (%s); only this run's rows are replayed", exc)
        with self._lock:
            for key, (status, record) in self._memory.items():
                if status == PENDING:
                    rows.setdefault(key, record)
                else:
                    rows.pop(key, None)
            self._forget_finished()
        return sorted(rows.items(), key=lambda kv: kv[1].get("expires_at", 0))

    def _trim(self) -> None:
        """Without a store: keep at most :data:`REMEMBERED` finished keys (oldest go first)."""
        finished = [k for k, (st, _) in self._memory.items() if st != PENDING]
        for key in finished[: max(0, len(finished) - REMEMBERED)]:
            del self._memory[key]

    def _forget_finished(self) -> None:
        """Keep memory small: finished rows are in the store (when there is one)."""
        if self._store is not None:
            for key in [k for k, (s, _) in self._memory.items() if s != PENDING]:
                del self._memory[key]
