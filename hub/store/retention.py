"""Retention of the store (case BC-32): journal days, cache cap, WAL checkpoint.

:func:`prune` does one round; :func:`start_background` runs it in a daemon thread every
``[store] maintenance_s``, so no turn ever waits for it (its writes are small batches, each
its own short transaction, and a turn's write of the user's data waits at most
:data:`hub.store.db.BUSY_TIMEOUT_MS`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from hub.store import recover

log = logging.getLogger("hub.store.retention")

BATCH = 200
"""Rows deleted per transaction."""


def _delete_batches(conn, sql: str, args: list) -> int:
    total = 0
    while True:
        n = conn.execute(sql + f" LIMIT {BATCH})", args).rowcount
        total += max(n, 0)
        if n < BATCH:
            return total


def _write_uses(store, conn) -> None:
    touched, store._touched = store._touched, {}
    for (table, key), at in touched.items():
        column = "id" if table == "fingerprints" else "key"
        conn.execute(f"UPDATE {table} SET used_at = max(used_at, ?) WHERE {column} = ?", [at, key])


def _evict(store, conn, cap: int) -> int:
    """Delete least-recently-used cache rows until both caches hold at most ``cap`` bytes."""
    excess = store.cache_bytes() - cap
    evicted = 0
    while excess > 0:
        rows = conn.execute(
            "SELECT 'fingerprints', id, size, used_at FROM fingerprints UNION ALL "
            "SELECT 'responses', key, size, used_at FROM responses WHERE key NOT LIKE 'canned:%' "
            f"ORDER BY used_at LIMIT {BATCH}"
        ).fetchall()
        if not rows:
            return evicted
        conn.execute("BEGIN IMMEDIATE")
        for table, key, size, _at in rows:
            if excess <= 0:
                break
            if table == "fingerprints":
                conn.execute("DELETE FROM fp_bands WHERE fp_id = ?", [key])
                conn.execute("DELETE FROM fingerprints WHERE id = ?", [key])
            else:
                conn.execute("DELETE FROM responses WHERE key = ?", [key])
            excess -= size or 0
            evicted += 1
        conn.execute("COMMIT")
    return evicted


def prune(store) -> dict:
    """One round: record cache uses, drop journal rows, breaker events and finished outbox
    rows older than ``journal_days``, evict caches above ``cache_mb``, give free pages back
    (``incremental_vacuum``) and ``wal_checkpoint(TRUNCATE)``. Returns the counts; never
    raises (a failure is the store's one log line)."""
    cfg = store.settings
    cutoff = store.clock() - cfg.journal_days * 86400

    def work(db):
        conn = db.conn
        _write_uses(store, conn)
        out = {
            "journal": _delete_batches(
                conn,
                "DELETE FROM journal WHERE id IN (SELECT id FROM journal WHERE at < ?",
                [cutoff],
            ),
            "breaker_events": _delete_batches(
                conn,
                "DELETE FROM breaker_events WHERE id IN "
                "(SELECT id FROM breaker_events WHERE at < ?",
                [cutoff],
            ),
            "outbox": _delete_batches(
                conn,
                "DELETE FROM outbox WHERE idempotency_key IN "
                "(SELECT idempotency_key FROM outbox WHERE at < ? AND "
                "status != 'pending'",
                [cutoff],
            ),
            "evicted": _evict(store, conn, int(cfg.cache_mb * 1024 * 1024)),
        }
        conn.execute("PRAGMA incremental_vacuum")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        recover.write_counts(store.path, conn, store.clock())
        return out

    store.flush_memory()
    return store._run("prune", work, {}) or {}


HELD_RETRY_S = 2.0
"""While the user's data waits in memory (the file was locked), the maintenance thread tries
to write it this often (else it waited for the next write or ``maintenance_s``, 300 s, and a
killed process lost it)."""


def start_background(store, clock=time.monotonic) -> threading.Thread:
    """A daemon thread that runs :func:`prune` now and then every ``maintenance_s``,
    :meth:`hub.store.db.Store.wal_step` every ``wal_check_s`` or as soon as a write saw the
    WAL over its limit (``store.wal_due``), and writes the user's data held in memory every
    :data:`HELD_RETRY_S` until it is written."""

    def loop():
        next_prune = clock()
        while True:
            try:
                if clock() >= next_prune:
                    prune(store)
                    next_prune = clock() + store.settings.maintenance_s
                store.wal_step()
                if store.unsaved():  # the user's data held while the file was locked
                    store.flush_memory()
            except Exception as exc:
                log.warning("store: maintenance failed: %s", exc)
            wait = min(store.settings.wal_check_s, max(0.0, next_prune - clock()))
            store.wal_due.wait(min(wait, HELD_RETRY_S) if store.unsaved() else wait)
            store.wal_due.clear()
            if store._stop.is_set():
                store.close()
                return

    store._stop = threading.Event()
    thread = threading.Thread(target=loop, name="store-maintenance", daemon=True)
    thread.start()
    return thread


STOP_JOIN_S = 2.0
"""Longest :func:`finish` waits for the maintenance thread to end its round."""


def finish(store, stop: Callable[[], bool] | None = None) -> list[str]:
    """The end of a process's use of ``store`` (every command that opened it, on any exit
    path: ``hub.cli.main``): stop the maintenance thread, write out what waited in memory
    (waiting up to ``[store] save_wait_s`` for a store another process holds locked, one
    WARNING line saying so: the user's lists, timers and alarms said to be set are kept; the
    wait ends at once when ``stop()`` is true: a SIGTERM or a second Ctrl-C), checkpoint the
    WAL into the file, record the row counts beside it (``<db>.rows``,
    :func:`hub.store.recover.write_counts`) and close this thread's connection, so a file
    later found emptied or damaged is reported with the rows it lost (BC-33). What is still
    not saved is one WARNING on stderr. Returns the labels of the user's data not saved
    (lost: the command's exit code says so, :attr:`hub.errors.ExitCode.NOT_SAVED`); [] the
    second time. Never raises (a failure is the store's one log line)."""
    if store.finished:
        return []
    store.finished = True
    if store._thread is not None:
        store._stop.set()
        store.wal_due.set()
        store._thread.join(STOP_JOIN_S)
    if not store.read_only:
        _save_what_waits(store, stop or (lambda: False))
        store.pragma("wal_checkpoint(TRUNCATE)")  # opens this thread's connection if it had none
        store.close()  # which records the row counts
    return _report_unsaved(store)


SAVE_RETRY_S = 0.25
"""Pause between two tries of :func:`_save_what_waits` (each waits the busy timeout too)."""

STOP_POLL_S = 0.05
"""How often the pause between two tries looks whether it is to stop waiting."""


def _save_what_waits(store, stop: Callable[[], bool]) -> None:
    """Write what waited in memory, trying again for up to ``[store] save_wait_s`` while the
    user's data is not written (another process holds the store's lock) and not ``stop()``."""
    wait_s = store.settings.save_wait_s
    end = time.monotonic() + wait_s
    waited = bool(store.unsaved())
    store.flush_memory()
    if store.unsaved() and wait_s > 0 and not stop():
        log.warning(
            "store: %s; waiting up to %g s to save %s (a signal stops the wait)",
            store.degraded or "cannot be written",
            wait_s,
            ", ".join(store.unsaved()),
        )
    while store.unsaved() and time.monotonic() < end and not stop():
        pause = time.monotonic() + SAVE_RETRY_S
        while time.monotonic() < min(pause, end) and not stop():
            time.sleep(STOP_POLL_S)
        if not stop():
            store.flush_memory()
    if waited and not store.unsaved():
        log.info("store: saved what waited in memory")


def _report_unsaved(store) -> list[str]:
    """One WARNING naming the user's data still not in the file when the process is done
    with the store (it is lost now), and the journal rows still in memory; those labels."""
    labels = store.unsaved()
    if not labels:
        return []
    rows = len(store._mem_journal)
    log.warning(
        "store: %s; not saved, lost as this command ends: %s%s",
        store.degraded or ("read-only" if store.read_only else "cannot be written"),
        ", ".join(labels),
        f" (and {rows} journal rows)" if rows else "",
    )
    return labels
