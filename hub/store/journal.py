"""Turn journal, breaker events and small key/values of the store (a mixin of ``Store``).

A journal row is committed before the turn returns (so a printed turn is in the journal even
after ``kill -9``). While the file cannot be written, rows wait in memory (at most
:data:`MEMORY_ROWS`) and are written with the next write that succeeds.
"""

from __future__ import annotations

import json

MEMORY_ROWS = 2000
"""Journal rows and breaker events kept in memory at most while the file cannot be written."""


def transaction(db, sql: str, rows: list) -> None:
    """``executemany(sql, rows)`` in one immediate transaction (all rows or none).

    Raises:
        sqlite3.Error: after rolling back.
    """
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(sql, rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class JournalMixin:
    """Journal, breaker events, kv; needs ``_run``, ``clock`` and the ``_mem_*`` fields."""

    def journal(self, trace: dict) -> bool:
        """Append a turn's trace (JSON-able dict) to the journal; False if it is kept in memory."""
        row = (self.clock(), json.dumps(trace, default=str))

        def write(db):
            transaction(db, "INSERT INTO journal (at, trace) VALUES (?, ?)",
                                    [*self._mem_journal, row])
            self._mem_journal.clear()
            return True

        if self._run("journal", write, False):
            return True
        self._mem_journal.append(row)
        del self._mem_journal[:-MEMORY_ROWS]
        return False

    def turns_since(self, since: float | None = None, limit: int | None = None) -> list[dict]:
        """Traces journaled at or after wall-clock ``since`` (None: all), newest first, with
        the ones still in memory; at most ``limit``."""
        def read(db):
            sql = "SELECT at, trace FROM journal WHERE at >= ? ORDER BY id DESC"
            args: list = [since if since is not None else float("-inf")]
            if limit is not None:
                sql += " LIMIT ?"
                args.append(limit)
            return db.execute(sql, args).fetchall()

        rows = [r for r in reversed(self._mem_journal) if since is None or r[0] >= since]
        rows += self._run("journal read", read, [], write=False) or []
        return [json.loads(r[1]) for r in rows[:limit]]

    def recent_turns(self, limit: int = 100) -> list[dict]:
        """The last ``limit`` traces, newest first."""
        return self.turns_since(None, limit)

    def breaker_event(self, breaker: str, from_state: str, to_state: str) -> None:
        """Record a circuit-breaker transition (kept in memory while the file is unwritable)."""
        row = {"at": self.clock(), "breaker": breaker, "from_state": from_state,
               "to_state": to_state}

        def write(db):
            transaction(
                db,
                    "INSERT INTO breaker_events (at, breaker, from_state, to_state) "
                    "VALUES (:at, :breaker, :from_state, :to_state)", [*self._mem_breakers, row])
            self._mem_breakers.clear()
            return True

        if not self._run("breaker event", write, False):
            self._mem_breakers.append(row)
            del self._mem_breakers[:-MEMORY_ROWS]

    def breaker_events_since(self, since: float | None = None) -> list[dict]:
        """Breaker transitions at or after ``since``, oldest first (``at, breaker, from_state,
        to_state``)."""
        def read(db):
            cur = db.execute("SELECT at, breaker, from_state, to_state FROM breaker_events "
                             "WHERE at >= ? ORDER BY id", [since or float("-inf")])
            return [dict(zip(("at", "breaker", "from_state", "to_state"), r)) for r in cur]

        rows = self._run("breaker read", read, [], write=False) or []
        return rows + [r for r in self._mem_breakers if since is None or r["at"] >= since]

    def kv_get(self, key: str):
        """The JSON value stored under ``key``, or None."""
        row = self._run("kv", lambda db: db.execute("SELECT value FROM kv WHERE key = ?",
                                                    [key]).fetchone(), write=False)
        return json.loads(row[0]) if row else None

    def kv_set(self, key: str, value) -> bool:
        """Store a JSON-able ``value`` under ``key``; False if the write failed."""
        return bool(self._run("kv", lambda db: db.execute(
            "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
            [key, json.dumps(value)]) and True, False))

    def flush_memory(self) -> None:
        """Write out what waited in memory (journal, breaker events, outbox) if it can now."""
        if self._mem_journal:
            def write(db):
                transaction(db, "INSERT INTO journal (at, trace) VALUES (?, ?)",
                                        list(self._mem_journal))
                self._mem_journal.clear()
                return True
            self._run("journal", write, False)
        if self._mem_breakers:
            def write_events(db):
                transaction(
                db,
                        "INSERT INTO breaker_events (at, breaker, from_state, to_state) "
                        "VALUES (:at, :breaker, :from_state, :to_state)", self._mem_breakers)
                self._mem_breakers.clear()
                return True
            self._run("breaker event", write_events, False)
        self.flush_outbox()
