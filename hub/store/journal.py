"""Turn journal, breaker events and small key/values of the store (a mixin of ``Store``).

A journal row is committed before the turn returns (so a printed turn is in the journal even
after ``kill -9``). While the file cannot be written, rows wait in memory (at most
:data:`MEMORY_ROWS`) and are written with the next write that succeeds.
"""

from __future__ import annotations

import json

MEMORY_ROWS = 2000
"""Journal rows and breaker events kept in memory at most while the file cannot be written."""

JOURNAL_SQL = "INSERT INTO journal (at, trace) VALUES (?, ?)"
BREAKER_SQL = (
    "INSERT INTO breaker_events (at, breaker, from_state, to_state) "
    "VALUES (:at, :breaker, :from_state, :to_state)"
)


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
    """Journal, breaker events, kv; needs ``_run``, ``write_state``, ``write_change``,
    ``flush_held``, ``clock``
    and the ``_mem_*`` fields."""

    def journal(self, trace: dict) -> bool:
        """Append a turn's trace (JSON-able dict) to the journal; False if it is kept in memory."""
        row = (self.clock(), json.dumps(trace, default=str))
        return self._write_held("_mem_journal", "journal", JOURNAL_SQL, [row])

    def _write_held(self, attr: str, what: str, sql: str, new: list) -> bool:
        """Write the rows waiting in memory (list ``attr``) and ``new`` in one transaction;
        on failure they all wait in memory again (oldest first, at most
        :data:`MEMORY_ROWS`). The waiting rows are taken out of memory while they are
        written, so two threads never write the same row twice (BC-18). A lock another
        connection holds is waited for at most :data:`hub.store.db.BUSY_TIMEOUT_MS` (a turn's
        journal row is written before its answer is printed)."""
        with self._lock:
            held = getattr(self, attr)
            rows, held[:] = [*held, *new], []
        if not rows:
            return True
        if self._run(what, lambda db: transaction(db, sql, rows) or True, False):
            return True
        with self._lock:
            held = getattr(self, attr)
            held[:0] = rows
            del held[:-MEMORY_ROWS]
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
        row = {
            "at": self.clock(),
            "breaker": breaker,
            "from_state": from_state,
            "to_state": to_state,
        }

        self._write_held("_mem_breakers", "breaker event", BREAKER_SQL, [row])

    def breaker_events_since(self, since: float | None = None) -> list[dict]:
        """Breaker transitions at or after ``since``, oldest first (``at, breaker, from_state,
        to_state``)."""

        def read(db):
            cur = db.execute(
                "SELECT at, breaker, from_state, to_state FROM breaker_events "
                "WHERE at >= ? ORDER BY id",
                [since or float("-inf")],
            )
            keys = ("at", "breaker", "from_state", "to_state")
            return [dict(zip(keys, r, strict=True)) for r in cur]

        rows = self._run("breaker read", read, [], write=False) or []
        return rows + [r for r in self._mem_breakers if since is None or r["at"] >= since]

    def kv_get(self, key: str):
        """The JSON value stored under ``key``, or None."""
        row = self._run(
            "kv",
            lambda db: db.execute("SELECT value FROM kv WHERE key = ?", [key]).fetchone(),
            write=False,
        )
        return json.loads(row[0]) if row else None

    def kv_set(self, key: str, value, label: str = "") -> bool:
        """Store a JSON-able ``value`` under ``key`` (whole: the hub's own bookkeeping); False
        if the write failed (the newest value is then held and written when the store can:
        :meth:`hub.store.held.HeldMixin.write_state`, ``label`` naming it for the user)."""
        text = json.dumps(value)
        return self.write_state(
            f"kv:{key}",
            "kv",
            lambda db: bool(
                db.execute("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", [key, text])
            ),
            label,
        )

    def kv_change(self, key: str, change, label: str = "") -> tuple | None:
        """Apply ``change(value stored or None) -> new JSON-able value`` to ``key`` inside
        one write transaction (the value read there: what another process wrote meanwhile is
        what it changes); ``(new value,)`` when written now. Else None: it is held and
        applied, in order, to what is stored when the store can take it
        (:meth:`hub.store.held.HeldMixin.write_change`); ``label`` names it for the user."""

        def fn(db):
            row = db.execute("SELECT value FROM kv WHERE key = ?", [key]).fetchone()
            new = change(json.loads(row[0]) if row else None)
            db.execute(
                "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", [key, json.dumps(new)]
            )
            return new

        return self.write_change("kv", fn, label)

    def flush_memory(self) -> None:
        """Write out what waited in memory (journal, breaker events, outbox, the user's data
        held: :meth:`hub.store.held.HeldMixin.flush_held`) if it can now."""
        self.flush_held()
        self._write_held("_mem_journal", "journal", JOURNAL_SQL, [])
        self._write_held("_mem_breakers", "breaker event", BREAKER_SQL, [])
        self.flush_outbox()
