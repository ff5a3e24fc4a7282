"""A WAL that cannot grow without bound, and a guard against long read transactions.

SQLite's WAL grows while any connection holds a read transaction on an old snapshot: no
checkpoint can reset it, whatever ``wal_autocheckpoint`` says (https://www.sqlite.org/wal.html,
"Avoiding Excessively Large WAL Files"). So:

- every connection sets ``PRAGMA journal_size_limit`` to ``[store] wal_limit_mb``: once a
  checkpoint has backfilled the WAL, the next reset truncates the file to that size;
- :meth:`WalWatch.step` (the maintenance thread every ``[store] wal_check_s``, sooner when a
  write sees the WAL past the limit) runs ``wal_checkpoint(TRUNCATE)`` without waiting on
  readers (busy timeout 0) when the file is over the limit; when a reader blocks it, one
  WARNING says so and what it does (the WAL grows until that reader ends), and one INFO line
  says when the WAL is back under the limit;
- :class:`TxnGuard` logs a transaction left open longer than ``[store] txn_guard_s`` (a
  WARNING: the hub must never hold one across a graph node, and the WAL grows meanwhile),
  and a single call that took longer (INFO: it ended; on a loaded machine, or waiting for
  another process's write lock, a call takes that long with nothing wrong for the user).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time

log = logging.getLogger("hub.store.wal")

CHECK_EVERY_WRITES = 64
"""A write looks at the WAL's size once per this many writes (one ``stat``)."""


def wal_bytes(path: str) -> int:
    """Size of ``path``'s ``-wal`` in bytes (0 when there is none)."""
    try:
        return os.path.getsize(path + "-wal")
    except OSError:
        return 0


class WalWatch:
    """Keeps the store's WAL at most ``limit_bytes`` (see the module doc).

    Args:
        path: the database file.
        limit_bytes: the configured limit (``[store] wal_limit_mb``).
    """

    def __init__(self, path: str, limit_bytes: int):
        self.path = path
        self.limit = limit_bytes
        self.blocked = False
        self._writes = 0

    def wrote(self) -> bool:
        """Count one write; True when the WAL has just been seen over the limit."""
        self._writes += 1
        if self._writes % CHECK_EVERY_WRITES:
            return False
        return wal_bytes(self.path) > self.limit

    def step(self, conn: sqlite3.Connection) -> dict:
        """One check: checkpoint (TRUNCATE, never waiting on a reader) when the WAL is over
        the limit. Returns ``{"before", "after"}`` bytes and ``blocked``.

        Raises:
            sqlite3.Error: the checkpoint itself failed (the store logs its condition).
        """
        before = wal_bytes(self.path)
        if before <= self.limit:
            self._unblocked(before)
            return {"before": before, "after": before, "blocked": False}
        busy_ms = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        conn.execute("PRAGMA busy_timeout=0")
        try:
            busy, frames, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.execute(f"PRAGMA busy_timeout={busy_ms}")
        if busy:  # a writer or a reader: only frames a reader still needs mean it blocks
            busy, frames, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        after = wal_bytes(self.path)
        if frames >= 0 and done < frames:
            if not self.blocked:
                log.warning(
                    "store: the WAL is %.1f MB (limit %.1f MB) and cannot be "
                    "checkpointed: another connection holds a read transaction (an "
                    "outside reader or backup?); it grows with every write until that "
                    "reader ends",
                    after / 2**20,
                    self.limit / 2**20,
                )
            self.blocked = True
            return {"before": before, "after": after, "blocked": True}
        if after > self.limit:  # backfilled, not yet reset: the next step truncates it
            return {"before": before, "after": after, "blocked": self.blocked}
        self._unblocked(after, before)
        return {"before": before, "after": after, "blocked": False}

    def _unblocked(self, after: int, before: int | None = None) -> None:
        if self.blocked:
            log.info(
                "store: the WAL is checkpointed again (%.1f MB -> %.1f MB)",
                (before or after) / 2**20,
                after / 2**20,
            )
        self.blocked = False


class TxnGuard:
    """Logs a call longer than ``limit_s`` (INFO) and, once each, a transaction left open
    longer (WARNING); see the module doc.

    Args:
        limit_s: seconds; 0 turns the guard off.
        clock: monotonic seconds (tests pass a fake one).
    """

    def __init__(self, limit_s: float, clock=time.monotonic):
        self.limit_s = limit_s
        self.clock = clock
        self._open_since: dict[int, tuple[float, str]] = {}
        self._logged: set[int] = set()

    def after(self, conn: sqlite3.Connection, what: str, started: float) -> None:
        """Call after each store call made on ``conn`` that began at ``started``."""
        if not self.limit_s:
            return
        now = self.clock()
        if now - started > self.limit_s:  # it ended: no WAL growth left behind
            log.info(
                "store: %s took %.1f s (guard %.1f s): a loaded machine or another "
                "connection's lock; the WAL was not checkpointed meanwhile",
                what,
                now - started,
                self.limit_s,
            )
        key = id(conn)
        if conn.in_transaction:
            self._open_since.setdefault(key, (now, what))
        else:
            self._open_since.pop(key, None)
            self._logged.discard(key)
        self.check(now)

    def check(self, now: float | None = None) -> int:
        """Log each transaction open longer than the limit (once); returns how many are."""
        now = self.clock() if now is None else now
        late = 0
        for key, (since, what) in list(self._open_since.items()):
            if now - since > self.limit_s:
                late += 1
                if key not in self._logged:
                    self._logged.add(key)
                    log.warning(
                        "store: a transaction opened by %s is still open after "
                        "%.1f s: the WAL cannot be checkpointed meanwhile",
                        what,
                        now - since,
                    )
        return late
