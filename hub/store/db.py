"""The SQLite store: transcript cache, response-audio cache, turn journal, action outbox, breaker events.

One file, WAL journal, a busy timeout, written through sqlite-utils. A write that still finds
the database locked after the busy timeout is skipped with a logged "cache write skipped":
a cache is never worth failing a turn for (case BC-18). The journal and the outbox retry the
same way but report the failure to the caller.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

log = logging.getLogger("hub.store.db")

BUSY_TIMEOUT_MS = 2000
"""How long a write waits for a lock held by another connection before it is skipped."""


def default_store_path() -> Path:
    """``$XDG_STATE_HOME/hub/hub.db``, else ``~/.local/state/hub/hub.db``."""
    from hub.paths import state_dir

    return state_dir("hub.db")


def _remove(path: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except OSError:
            pass


_SCHEMA = {
    "transcripts": ({"fingerprint": str, "transcript": str, "alternatives": str, "at": float},
                    "fingerprint"),
    "responses": ({"key": str, "rate": int, "pcm": bytes, "at": float}, "key"),
    "journal": ({"id": int, "at": float, "trace": str}, "id"),
    "outbox": ({"idempotency_key": str, "action": str, "status": str, "at": float},
               "idempotency_key"),
    "breaker_events": ({"id": int, "at": float, "breaker": str, "from_state": str,
                        "to_state": str}, "id"),
    "kv": ({"key": str, "value": str}, "key"),
    "timers": ({"id": str, "record": str, "at": float}, "id"),
}


class Store:
    """A connection to the hub's SQLite file (thread-safe: one connection per thread).

    Args:
        path: the database file; created with its folder when missing. ``":memory:"`` keeps
            nothing: a temporary file removed at exit (shared by all threads, unlike
            SQLite's own per-connection memory databases).
    Raises:
        hub.errors.FatalError: the file cannot be opened or is not a database.
    """

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._local = threading.local()
        if self.path == ":memory:":
            fd, self.path = tempfile.mkstemp(prefix="hub-", suffix=".db")
            os.close(fd)
            atexit.register(_remove, self.path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._create()

    # -- connection -------------------------------------------------------------------------
    def db(self):
        """The sqlite-utils ``Database`` of this thread (WAL, busy timeout set)."""
        import sqlite_utils

        db = getattr(self._local, "db", None)
        if db is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                   check_same_thread=False, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            db = sqlite_utils.Database(conn)
            self._local.db = db
        return db

    def _create(self) -> None:
        from hub.errors import FatalError

        try:
            db = self.db()
            for name, (columns, pk) in _SCHEMA.items():
                if name not in db.table_names():
                    db[name].create(columns, pk=pk, if_not_exists=True)
        except sqlite3.DatabaseError as exc:
            raise FatalError(f"cannot open store {self.path}: {exc}", node="store") from None

    def pragma(self, name: str):
        """The value of ``PRAGMA name`` (e.g. ``journal_mode``, ``busy_timeout``)."""
        return self.db().execute(f"PRAGMA {name}").fetchone()[0]

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.conn.close()
            self._local.db = None

    # -- writes that may be skipped --------------------------------------------------------
    def _upsert(self, table: str, row: dict, pk: str, *, what: str) -> bool:
        try:
            self.db()[table].upsert(row, pk=pk)
            return True
        except sqlite3.OperationalError as exc:
            log.warning("cache write skipped (%s): %s", what, exc)
            return False

    # -- transcript cache (L1) -------------------------------------------------------------
    def put_transcript(self, fingerprint: str, transcript: str,
                       alternatives: tuple[str, ...] = ()) -> bool:
        """Remember the transcript of an audio fingerprint; False if the write was skipped."""
        row = {"fingerprint": fingerprint, "transcript": transcript,
               "alternatives": json.dumps(list(alternatives)), "at": time.time()}
        return self._upsert("transcripts", row, "fingerprint", what="transcript")

    def get_transcript(self, fingerprint: str) -> tuple[str, tuple[str, ...]] | None:
        """``(transcript, alternatives)`` cached for the fingerprint, or None."""
        try:
            row = self.db()["transcripts"].get(fingerprint)
        except Exception:  # noqa: BLE001 - NotFoundError or a locked read: a miss either way
            return None
        return row["transcript"], tuple(json.loads(row["alternatives"]))

    # -- response audio cache (L1) --------------------------------------------------------
    def put_response_audio(self, key: str, pcm: bytes, rate: int) -> bool:
        """Remember the synthesized audio (int16 mono ``pcm`` at ``rate`` Hz) of a response."""
        row = {"key": key, "rate": rate, "pcm": pcm, "at": time.time()}
        return self._upsert("responses", row, "key", what="response audio")

    def get_response_audio(self, key: str) -> tuple[bytes, int] | None:
        """``(pcm, rate)`` cached for the response key, or None."""
        try:
            row = self.db()["responses"].get(key)
        except Exception:  # noqa: BLE001
            return None
        return row["pcm"], row["rate"]

    # -- journal, outbox, breaker events ---------------------------------------------------
    def journal(self, trace: dict) -> bool:
        """Append a turn's trace to the journal; False if the write was skipped."""
        try:
            self.db()["journal"].insert({"at": time.time(), "trace": json.dumps(trace)})
            return True
        except sqlite3.OperationalError as exc:
            log.warning("journal write skipped: %s", exc)
            return False

    def recent_turns(self, limit: int = 100) -> list[dict]:
        """The last ``limit`` traces, newest first."""
        rows = self.db().execute(
            "SELECT trace FROM journal ORDER BY id DESC LIMIT ?", [limit]).fetchall()
        return [json.loads(r[0]) for r in rows]

    def outbox_claim(self, key: str, action: dict) -> bool:
        """Record a side effect under its idempotency key; False if the key was already used."""
        row = {"idempotency_key": key, "action": json.dumps(action), "status": "pending",
               "at": time.time()}
        try:
            self.db()["outbox"].insert(row, pk="idempotency_key")
            return True
        except sqlite3.IntegrityError:
            return False

    def outbox_done(self, key: str, status: str = "done") -> None:
        """Mark the outbox entry ``key`` done (or failed)."""
        self.db()["outbox"].update(key, {"status": status})

    def breaker_event(self, breaker: str, from_state: str, to_state: str) -> None:
        """Record a circuit-breaker transition."""
        row = {"at": time.time(), "breaker": breaker, "from_state": from_state,
               "to_state": to_state}
        try:
            self.db()["breaker_events"].insert(row)
        except sqlite3.OperationalError as exc:
            log.warning("breaker event skipped: %s", exc)


def stored_timers(store: Store, records: list[dict] | None = None) -> list[dict]:
    """The ``timers`` table, the only SQL for timers: with ``records``, replace its rows by
    them (one transaction); return the rows stored (JSON records of
    :meth:`hub.act.timers.Timers.records`). A failed write is logged and leaves the old rows."""
    conn = store.db().conn
    try:
        if records is not None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM timers")
                conn.executemany("INSERT INTO timers (id, record, at) VALUES (?, ?, ?)",
                                 [(r["id"], json.dumps(r), time.time()) for r in records])
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        rows = conn.execute("SELECT record FROM timers ORDER BY at, id").fetchall()
        return [json.loads(row[0]) for row in rows]
    except sqlite3.Error as exc:
        log.warning("timers store skipped: %s", exc)
        return [] if records is None else records


def open_store(path: str | Path | None) -> Store:
    """Open the store at ``path`` (None or "": :func:`default_store_path`)."""
    return Store(path or default_store_path())
