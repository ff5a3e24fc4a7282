"""Whole-table replacement: the one transaction both the timers and the alerts tables use."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def replace_all(db, table: str, insert_sql: str, params: Iterable[Sequence]) -> bool:
    """Replace every row of ``table`` by ``params`` (one ``INSERT`` each) in one immediate
    transaction on ``db.conn``; True when committed.

    Raises:
        sqlite3.Error: the write failed (rolled back; the store's ``_run`` logs and degrades).
    """
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"DELETE FROM {table}")
        conn.executemany(insert_sql, params)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True
