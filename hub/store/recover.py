"""A damaged store file: detect it at open, move it aside, salvage what can be read (BC-33).

The check is ``PRAGMA quick_check`` bounded in time by a progress handler: a check that runs
out of time counts as passed (the file opened; a damaged page found later only degrades the
store, see :class:`hub.store.db.Store`). The salvage reads every table that holds
user data (:data:`SALVAGED`: outbox, journal, breaker events, timers, alarms and reminders,
and the key-value rows, which hold the lists) row by row, forwards and then backwards, so rows on
both sides of a bad page are kept (the method of TerrariumPI #173: dump the readable rows into
a new file). The moved-aside file is kept, and the one ERROR line names it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

CHECK_BUDGET_S = 2.0
"""Longest the start-up ``quick_check`` may run."""

SALVAGED = {
    "outbox": "idempotency_key",
    "journal": "id",
    "breaker_events": "id",
    "timers": "id",
    "alerts": "id",
    "kv": "key",
}
"""Tables whose rows are copied from a damaged file, with their keys: ``timers`` holds the
running timers and delayed commands (BC-27), ``alerts`` the alarms and reminders (schema v4,
BC-47), ``kv`` the to-do and shopping lists (``list:<name>``), the install id that names the
MQTT client and its discovery topics (BC-29, BC-31) and the published discovery topics."""

REBUILT = frozenset({"fingerprints", "fp_bands", "responses"})
"""Tables of the schema that are caches, made again from use: not salvaged (a fresh store
starts with them empty). Every table of :mod:`hub.store.schema` is in exactly one of
:data:`SALVAGED` and this set (tests/store/test_store_damage.py checks it)."""


def is_damaged(path: str, budget_s: float = CHECK_BUDGET_S) -> str | None:
    """Why the file at ``path`` is not a usable database, or None (also when it is missing,
    empty, or locked: none of those is damage)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=budget_s)
    except sqlite3.Error as exc:
        return None if "locked" in str(exc) or "unable to open" in str(exc) else str(exc)
    end = time.monotonic() + budget_s
    conn.set_progress_handler(lambda: int(time.monotonic() > end), 10000)
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "interrupted" in text or "locked" in text or "unable to open" in text:
            return None
        return text
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        conn.close()
    return None if rows and rows[0][0] == "ok" else brief(r[0] for r in rows)


MAX_PROBLEM_CHARS = 160
"""Longest first problem quoted in the recovery's ERROR line."""


def brief(messages) -> str:
    """One short line for ``quick_check``'s messages: the first problem and how many more
    (``"On tree page 440 cell 29: Offset 14203 out of range 232..4092 (and 97 more)"``).

    SQLite returns them as rows, one of which may hold many problems separated by newlines,
    after a ``*** in database main ***`` header; the header is not a problem.
    """
    problems = [
        line.strip()
        for m in messages
        for line in str(m).splitlines()
        if line.strip() and not line.startswith("***")
    ]
    if not problems:
        return "failed its integrity check"
    first = problems[0]
    if len(first) > MAX_PROBLEM_CHARS:
        first = first[: MAX_PROBLEM_CHARS - 3] + "..."
    return first if len(problems) == 1 else f"{first} (and {len(problems) - 1} more)"


def corrupt_name(path: str, now: float) -> str:
    """A free name ``<path>.corrupt-<YYYYmmdd-HHMMSS>[-n]`` (UTC) for a set-aside copy."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    target = f"{path}.corrupt-{stamp}"
    n = 1
    while os.path.exists(target):
        n += 1
        target = f"{path}.corrupt-{stamp}-{n}"
    return target


def move_aside(path: str, now: float) -> str:
    """Rename ``path`` and its ``-wal``/``-shm`` to ``<path>.corrupt-<YYYYmmdd-HHMMSS>``.

    Returns the new name of the main file. Raises OSError when it cannot be renamed, or
    when ``path`` is not a regular file (a folder is never moved: it holds someone's files).
    """
    if not os.path.isfile(path) or os.path.islink(path):
        raise IsADirectoryError(f"{path} is not a regular file; not moved aside")
    target = corrupt_name(path, now)
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.replace(path + suffix, target + suffix)
    return target


def _rows(conn: sqlite3.Connection, table: str, order: str) -> list[dict]:
    out: list[dict] = []
    try:
        cur = conn.execute(f"SELECT * FROM {table} ORDER BY rowid {order}")
        names = [d[0] for d in cur.description]
        for row in cur:
            out.append(dict(zip(names, row, strict=True)))
    except sqlite3.Error:
        pass
    return out


def salvage(damaged: str) -> dict[str, tuple[list[dict], int | None]]:
    """Readable rows of :data:`SALVAGED` in the damaged file: ``{table: (rows, count)}``,
    ``count`` the table's row count when it can still be read, else None."""
    out: dict[str, tuple[list[dict], int | None]] = {}
    try:
        conn = sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)
        conn.execute("PRAGMA writable_schema=ON")  # read past a schema check that fails
    except sqlite3.Error:
        return {t: ([], None) for t in SALVAGED}
    try:
        for table, key in SALVAGED.items():
            rows = {r.get(key): r for r in _rows(conn, table, "ASC")}
            for r in _rows(conn, table, "DESC"):
                rows.setdefault(r.get(key), r)
            try:
                count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            except sqlite3.Error:
                count = None
            out[table] = (list(rows.values()), count)
    finally:
        conn.close()
    return out


def restore(conn: sqlite3.Connection, saved: dict) -> None:
    """Insert salvaged rows into the fresh (current-schema) store open on ``conn``."""
    for table, (rows, _count) in saved.items():
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        for row in rows:
            row = {k: v for k, v in row.items() if k in have}
            if not row:
                continue
            cols = ", ".join(row)
            marks = ", ".join("?" for _ in row)
            conn.execute(
                f"INSERT OR IGNORE INTO {table} ({cols}) VALUES ({marks})", list(row.values())
            )


def lost_rows(saved: dict, known: dict | None = None) -> dict[str, int | None]:
    """Rows lost per table of ``saved`` (:func:`salvage`): the damaged file's count (or the
    last known one, :func:`known_counts`, whichever is larger) minus the rows saved; None
    when no count is known."""
    out: dict[str, int | None] = {}
    for table, (rows, count) in saved.items():
        last = (known or {}).get(table)
        if isinstance(last, int):
            count = last if count is None else max(count, last)
        out[table] = max(0, count - len(rows)) if isinstance(count, int) else None
    return out


def summary(saved: dict, known: dict | None = None) -> str:
    """``outbox 3 saved, 0 lost; journal 120 saved, ? lost; ...`` for the one ERROR line; a
    count the damaged file no longer gives is taken from ``known`` (:func:`known_counts`),
    else it is ``?``."""
    lost = lost_rows(saved, known)
    return "; ".join(
        f"{table} {len(rows)} saved, {'?' if lost[table] is None else lost[table]} lost"
        for table, (rows, _count) in saved.items()
    )


COUNTS_SUFFIX = ".rows"
"""Beside the store, ``<db>.rows``: its last known row counts of :data:`SALVAGED` (JSON),
written when a connection closes and after maintenance, so a file found empty or too damaged
to count can still be reported with how many rows it held."""


def write_counts(path: str, conn: sqlite3.Connection, now: float) -> None:
    """Record the row counts of :data:`COUNTS_SUFFIX` (atomic rename); never raises."""
    try:
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in SALVAGED}
        tmp = f"{path}{COUNTS_SUFFIX}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({**counts, "at": now}, f)
        os.replace(tmp, path + COUNTS_SUFFIX)
    except (sqlite3.Error, OSError, TypeError):
        pass


def known_counts(path: str) -> dict:
    """The last counts :func:`write_counts` recorded for ``path`` (``{}`` when none)."""
    try:
        with open(path + COUNTS_SUFFIX, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
