"""Issue 23: a WAL that cannot grow without bound (journal_size_limit, a checkpoint when it is
over the limit, one WARNING while an outside reader blocks it) and the read-transaction guard.
Time is a fake clock or a direct call of the maintenance step, never a sleep."""

from __future__ import annotations

import logging
import sqlite3

from hub.settings import StoreSettings
from hub.store.db import Store
from hub.store.walsize import TxnGuard, wal_bytes

LIMIT_MB = 0.25


def burst(store: Store, n: int) -> None:
    for i in range(n):
        store.journal({"turn": i, "pad": "x" * 600})
        store.outbox_claim(f"k{i}", {"entity": "light.kitchen", "pad": "y" * 200})


def test_every_connection_sets_journal_size_limit(tmp_path):
    store = Store(tmp_path / "hub.db", StoreSettings(wal_limit_mb=LIMIT_MB))
    assert store.pragma("journal_size_limit") == int(LIMIT_MB * 1024 * 1024)
    assert StoreSettings().wal_check_s <= 60  # the background step runs at least once a minute


def test_an_outside_reader_gives_one_warning_and_the_wal_shrinks_when_it_closes(tmp_path, caplog):
    path = tmp_path / "hub.db"
    store = Store(path, StoreSettings(wal_limit_mb=LIMIT_MB))
    limit = store.limit_bytes
    burst(store, 50)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM journal").fetchone()  # holds its snapshot
    with caplog.at_level(logging.INFO, logger="hub.store.wal"):
        burst(store, 1500)
        steps = [store.wal_step() for _ in range(3)]
        assert wal_bytes(str(path)) > 4 * limit and all(s["blocked"] for s in steps)
        blocked = [r.getMessage() for r in caplog.records]
        assert len(blocked) == 1 and "cannot be checkpointed" in blocked[0], blocked
        assert "outside reader" in blocked[0]
        reader.execute("COMMIT")
        reader.close()
        step = store.wal_step()  # what the maintenance thread does within wal_check_s
    assert not step["blocked"] and step["after"] <= limit and wal_bytes(str(path)) <= limit
    assert len(caplog.records) == 2 and "checkpointed again" in caplog.records[1].getMessage()
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"]  # the all-clear: INFO
    assert len(store.recent_turns(5000)) == 1550


def test_writes_over_the_limit_checkpoint_without_the_maintenance_pass(tmp_path):
    path = tmp_path / "hub.db"
    store = Store(path, StoreSettings(wal_limit_mb=LIMIT_MB))
    peak = 0
    for _i in range(40):
        burst(store, 50)
        peak = max(peak, wal_bytes(str(path)))
    # SQLite alone lets the WAL reach 1000 pages (4 MB) before its own checkpoint
    assert peak < 1_000_000, peak


def test_the_guard_logs_a_transaction_left_open_once(tmp_path, caplog):
    now = [100.0]
    guard = TxnGuard(2.0, clock=lambda: now[0])
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("SELECT 1").fetchone()
    with caplog.at_level(logging.WARNING, logger="hub.store.wal"):
        guard.after(conn, "journal read", now[0])
        now[0] += 1.5
        assert guard.check() == 0
        now[0] += 1.0
        assert guard.check() == 1 and guard.check() == 1
        conn.execute("COMMIT")
        guard.after(conn, "journal read", now[0])
        assert guard.check() == 0
    [line] = [r.getMessage() for r in caplog.records]
    assert "journal read" in line and "still open after 2.5 s" in line


def test_a_slow_call_that_ended_is_info_not_a_warning(tmp_path, caplog):
    """``hub replay`` on a loaded machine (or beside another process writing the same store):
    a call that took long but ended leaves nothing open, so it is no WARNING for the user."""
    now = [0.0]
    store = Store(tmp_path / "hub.db")
    store.txn_guard.clock = lambda: now[0]

    def slow(db):
        db.execute("SELECT count(*) FROM journal").fetchone()
        now[0] += 3.0
        return 1

    with caplog.at_level(logging.INFO, logger="hub.store.wal"):
        assert store._run("stats read", slow, write=False) == 1
        assert store._run("fast read", lambda db: 2, write=False) == 2
    [record] = caplog.records
    assert record.levelname == "INFO" and "stats read took 3.0 s" in record.getMessage()


def test_a_thread_s_first_open_is_not_counted_as_its_call(tmp_path, caplog, monkeypatch):
    """Opening this thread's connection (the checks, a wait for the lock) is not the call."""
    now = [0.0]
    store = Store(tmp_path / "hub.db")
    store.txn_guard.clock = lambda: now[0]
    opened = store.db

    def slow_open():
        now[0] += 5.0
        return opened()

    monkeypatch.setattr(store, "db", slow_open)
    with caplog.at_level(logging.INFO, logger="hub.store.wal"):
        assert store._run("journal read", lambda db: 3, write=False) == 3
    assert caplog.records == []
