"""The store's schema, its version (``PRAGMA user_version``) and forward migrations.

Version 0 is every file written before versioning (``user_version`` 0): the tables of that
time, some without later columns (an outbox without ``at``). :data:`MIGRATIONS` ``[n]`` takes a
file from version ``n`` to ``n + 1``; :func:`migrate` runs the missing ones in one
``BEGIN IMMEDIATE`` transaction, so of several processes opening a new file at once exactly one
creates it and the others wait for it (busy timeout) and then find it current.
"""

from __future__ import annotations

import sqlite3

VERSION = 4
"""The schema version this code writes."""

_V1 = """
CREATE TABLE IF NOT EXISTS journal (id INTEGER PRIMARY KEY, at REAL, trace TEXT);
CREATE INDEX IF NOT EXISTS journal_at ON journal(at);
CREATE TABLE IF NOT EXISTS outbox (idempotency_key TEXT PRIMARY KEY, action TEXT, status TEXT,
                                   at REAL);
CREATE TABLE IF NOT EXISTS breaker_events (id INTEGER PRIMARY KEY, at REAL, breaker TEXT,
                                           from_state TEXT, to_state TEXT);
CREATE INDEX IF NOT EXISTS breaker_events_at ON breaker_events(at);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS fingerprints (id INTEGER PRIMARY KEY, context TEXT, frames BLOB,
    vector BLOB, transcript TEXT, alternatives TEXT, at REAL, used_at REAL, size INTEGER);
CREATE INDEX IF NOT EXISTS fingerprints_used ON fingerprints(used_at);
CREATE TABLE IF NOT EXISTS fp_bands (context TEXT, band_hash INTEGER, fp_id INTEGER,
    PRIMARY KEY (context, band_hash, fp_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fp_bands_id ON fp_bands(fp_id);
CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, rate INTEGER, pcm BLOB, at REAL,
                                      used_at REAL, size INTEGER);
CREATE INDEX IF NOT EXISTS responses_used ON responses(used_at);
"""

_KEPT_COLUMNS = {
    "journal": {"at": "REAL"},
    "outbox": {"at": "REAL", "status": "TEXT"},
    "breaker_events": {"at": "REAL"},
}


def _to_v1(conn: sqlite3.Connection) -> None:
    """0 -> 1: caches rebuilt (sha256 keys become fingerprints; LRU columns); journal, outbox
    and breaker events kept, with the columns an older file lacks added."""
    conn.execute("DROP TABLE IF EXISTS transcripts")
    conn.execute("DROP TABLE IF EXISTS responses")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table, columns in _KEPT_COLUMNS.items():
        if table not in tables:
            continue
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        for column, kind in columns.items():
            if column not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    for statement in _V1.split(";"):
        if statement.strip():
            conn.execute(statement)


def _to_v2(conn: sqlite3.Connection) -> None:
    """1 -> 2: the ``timers`` table (running timers survive a restart, BC-27)."""
    conn.execute("CREATE TABLE IF NOT EXISTS timers (id TEXT PRIMARY KEY, record TEXT, at REAL)")


def _to_v3(conn: sqlite3.Connection) -> None:
    """2 -> 3: fingerprints of 8 MFCCs (were 12) and the sha256 of their samples (an exact
    replay is found without features). Old rows cannot be compared with new ones: the
    transcript cache starts empty."""
    conn.execute("DELETE FROM fp_bands")
    conn.execute("DELETE FROM fingerprints")
    conn.execute("ALTER TABLE fingerprints ADD COLUMN digest TEXT")


def _to_v4(conn: sqlite3.Connection) -> None:
    """3 -> 4: the ``alerts`` table (alarms and reminders: wall time, IANA zone, next fire as
    an aware UTC ISO instant, state; :mod:`hub.store.alerts`)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS alerts (id TEXT PRIMARY KEY, kind TEXT, label TEXT,"
        " recurrence TEXT, wall TEXT, zone TEXT, next_fire TEXT, state TEXT,"
        " target TEXT, record TEXT)"
    )


MIGRATIONS = [_to_v1, _to_v2, _to_v3, _to_v4]
"""``MIGRATIONS[n]`` migrates version ``n`` to ``n + 1``; ``len(MIGRATIONS) == VERSION``."""


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the open file to :data:`VERSION`; returns the version it had.

    Runs in one immediate transaction (the caller's busy timeout makes other openers wait).
    Raises:
        sqlite3.Error: locked past the busy timeout, read-only, damaged; nothing is changed.
        RuntimeError: the file is newer than this code (``user_version > VERSION``).
    """
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    if found == VERSION:
        return found
    if found > VERSION:
        raise RuntimeError(f"store schema {found} is newer than this hub's {VERSION}")
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = conn.execute("PRAGMA user_version").fetchone()[0]
        for step in MIGRATIONS[found:]:
            step(conn)
        conn.execute(f"PRAGMA user_version={VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return found
