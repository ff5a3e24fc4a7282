"""BC-33 and issue 23: every kind of damage in the store's table loses no row of user data
(outbox, journal, breaker events, timers, alarms, lists and the other kv rows: every table
of :data:`hub.store.recover.SALVAGED`) without one ERROR line with the counts and a
``.corrupt`` copy; a WAL from another file
(its ``-shm`` gone), a WAL without its ``-shm`` and a ``-shm`` from elsewhere keep every row."""

from __future__ import annotations

import glob
import logging
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hub.act.alarms import Alert, to_dict
from hub.store.alerts import stored_alerts
from hub.store.db import Store
from hub.store.recover import REBUILT, SALVAGED
from hub.store.walfile import read_wal

from fakes import make_hub

WT = Path(__file__).resolve().parents[2]
TURNS = 50

CRASH = """
import os, sys
from hub.store.db import Store
s = Store(sys.argv[1])
for i in range(int(sys.argv[2])):
    s.journal({"turn": i, "pad": "x" * 400})
    s.outbox_claim(f"k{i}", {"entity": "light.kitchen"})
    s.outbox_done(f"k{i}")
os._exit(0)  # like kill -9: the WAL and its -shm stay, nothing checkpointed
"""


STOPPED = """
import os, sqlite3, sys
from hub.store.db import Store
s = Store(sys.argv[1])
for i in range(int(sys.argv[2])):
    s.journal({"turn": i, "pad": "x" * 400})
    s.outbox_claim(f"k{i}", {"entity": "light.kitchen"})
sqlite3.connect(sys.argv[1]).execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
os._exit(0)  # a stop after a checkpoint: an empty WAL and its -shm stay
"""


def crashed(path: Path, turns: int = TURNS) -> None:
    """A store written by a process that died: its rows are in ``hub.db-wal``."""
    env = {**os.environ, "PYTHONPATH": str(WT)}
    subprocess.run([sys.executable, "-c", CRASH, str(path), str(turns)], env=env, check=True)
    assert read_wal(str(path) + "-wal").frames > 0
    keep_before(path)


def closed(path: Path, turns: int = TURNS) -> None:
    """A store closed cleanly: its rows are in ``hub.db``, some of each kind of user data."""
    store = Store(path)
    for i in range(turns):
        store.journal({"turn": i, "pad": "x" * 400})
        store.outbox_claim(f"k{i}", {"entity": "light.kitchen"})
        store.outbox_done(f"k{i}")
    user_rows(store)
    store.close()
    keep_before(path)


def user_rows(store: Store) -> None:
    """Rows of the user data besides journal and outbox: breaker events, timers, alarms and
    reminders, a shopping list and the install id (kv)."""
    store.breaker_event("llm", "closed", "open")
    store.stored_timers([{"id": f"timer-{i}", "name": "pasta", "ends": 1e9 + i} for i in (1, 2)])
    fire = datetime(2026, 3, 29, 6, 0, tzinfo=UTC)
    alerts = [Alert("alarm-1", "alarm", fire, wall="07:00", zone="Europe/London")]
    alerts.append(Alert("reminder-2", "reminder", fire, label="call mum", zone="UTC"))
    stored_alerts(store, [to_dict(a) for a in alerts])
    store.kv_set("list:Shopping List", {"items": ["milk", "eggs"], "completed": []})
    store.kv_set("install_id", "abc123")


def other_db(folder: Path) -> Path:
    """Another database in WAL mode with a WAL and -shm left open (a live connection)."""
    other = folder / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
    conn.commit()
    for suffix in ("-wal", "-shm"):
        shutil.copy(str(other) + suffix, str(folder / "copy") + suffix)
    conn.close()
    return folder / "copy"


def ff_pages(p: Path) -> None:
    """The tester's damage (BC-33 + BC-47): bytes 8192-20479 overwritten with 0xFF."""
    closed(p)
    with open(p, "r+b") as f:
        f.seek(8192)
        f.write(b"\xff" * (20480 - 8192))


def random_page(p: Path) -> None:
    closed(p)
    with open(p, "r+b") as f:
        f.seek(4096 * 2)
        f.write(os.urandom(4096))


def truncated(p: Path) -> None:
    closed(p)
    os.truncate(p, p.stat().st_size // 2)


def zero_bytes(p: Path) -> None:
    closed(p)
    p.write_bytes(b"")


def foreign_wal(p: Path) -> None:
    closed(p)
    shutil.copy(str(other_db(p.parent)) + "-wal", str(p) + "-wal")
    Path(str(p) + "-shm").unlink(missing_ok=True)


def wal_of_another_store(p: Path) -> None:
    closed(p)
    other = p.with_name("other-hub.db")
    crashed(other, turns=80)
    shutil.copy(str(other) + "-wal", str(p) + "-wal")
    Path(str(p) + "-shm").unlink(missing_ok=True)


def wal_without_shm(p: Path) -> None:
    crashed(p)
    os.remove(str(p) + "-shm")


def shm_from_elsewhere(p: Path) -> None:
    crashed(p)
    shutil.copy(str(other_db(p.parent)) + "-shm", str(p) + "-shm")


KEEP_ALL = {foreign_wal, wal_of_another_store, wal_without_shm, shm_from_elsewhere}


def rows(path: Path) -> tuple[set, set]:
    """``(outbox (key, at), journal (id, at))`` of the store at ``path``."""
    found = every_row(path)
    return found["outbox"], found["journal"]


def every_row(path: Path) -> dict[str, set]:
    """``{table: {row tuple}}`` of every table of :data:`SALVAGED` (outbox and journal as
    ``(key, at)``, the others whole)."""
    picked = {"outbox": "idempotency_key, at", "journal": "id, at"}
    conn = sqlite3.connect(path)
    try:
        return {
            t: {tuple(r) for r in conn.execute(f"SELECT {picked.get(t, '*')} FROM {t}")}
            for t in SALVAGED
        }
    finally:
        conn.close()


def keep_before(path: Path) -> None:
    """Copy the undamaged store (and its WAL) to ``<path>.before``: the rows
    written before the damage."""
    clean = str(path) + ".before"
    shutil.copy(path, clean)
    if os.path.exists(str(path) + "-wal"):
        shutil.copy(str(path) + "-wal", clean + "-wal")


@pytest.mark.parametrize(
    "damage",
    [
        ff_pages,
        random_page,
        truncated,
        zero_bytes,
        foreign_wal,
        wal_of_another_store,
        wal_without_shm,
        shm_from_elsewhere,
    ],
    ids=lambda f: f.__name__,
)
def test_bc33_damage_loses_no_row_without_an_error_line_with_counts(tmp_path, damage, caplog):
    path = tmp_path / "hub.db"
    damage(path)
    before = every_row(Path(str(path) + ".before"))  # see keep_before
    with caplog.at_level(logging.WARNING):
        store = Store(path)
    after = every_row(path)
    lost = {t: len(before[t] - after[t]) for t in SALVAGED}
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    if damage in KEEP_ALL:
        assert not any(lost.values()) and not errors, (lost, errors)
    if any(lost.values()):
        [line] = errors
        for table, n in lost.items():
            assert re.search(rf"{table} \d+ saved, {n} lost", line), line
        assert glob.glob(str(path) + ".corrupt-*")
    hub = make_hub(store=store, entry="ask")
    hub.engines.warm(["rules"])
    trace = hub.turn_text("turn on the kitchen light")
    assert trace["intent"] == "HassTurnOn" and trace["status"] == "ok"
    assert store.degraded is None
    assert store.recent_turns(1)[0]["intent"] == "HassTurnOn"
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_bc33_every_table_of_the_schema_is_salvaged_or_a_cache(tmp_path):
    """A new table must be put in SALVAGED (user data) or REBUILT (a cache) by its author."""
    store = Store(tmp_path / "hub.db")
    conn = store.db().conn
    tables = {
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        if not r[0].startswith("sqlite_")
    }
    assert tables == set(SALVAGED) | REBUILT and not set(SALVAGED) & REBUILT
    assert {"alerts", "timers", "kv", "outbox", "journal"} <= set(SALVAGED)


def test_a_foreign_wal_is_set_aside_with_a_copy_and_one_warning(tmp_path, caplog):
    path = tmp_path / "hub.db"
    foreign_wal(path)
    with caplog.at_level(logging.WARNING):
        store = Store(path)
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "none of the store's tables" in line, line
    assert "outbox 50 kept, 0 lost" in line and "journal 50 kept, 0 lost" in line
    moved = store.wal_set_aside["moved_to"]
    assert os.path.exists(moved) and os.path.exists(moved + "-wal")
    assert "t" in {
        r[0]
        for r in sqlite3.connect(f"file:{moved}?mode=ro", uri=True).execute(
            "SELECT name FROM sqlite_master"
        )
    }  # the other file's WAL, kept as it was


def test_a_wal_of_another_store_is_named_by_the_rows_it_would_drop(tmp_path, caplog):
    path = tmp_path / "hub.db"
    wal_of_another_store(path)
    with caplog.at_level(logging.WARNING):
        Store(path)
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert re.search(r"would drop \d+ (journal|outbox) rows", line), line


def test_a_live_wal_of_another_connection_is_never_touched(tmp_path, caplog):
    path = tmp_path / "hub.db"
    first = Store(path)
    first.journal({"turn": 1})  # holds the file open: its WAL is live
    with caplog.at_level(logging.WARNING):
        second = Store(path)
    assert second.wal_set_aside is None and not glob.glob(str(path) + ".corrupt-*")
    assert len(second.recent_turns(10)) == 1
    first.close()


def test_a_wal_whose_header_fails_its_checksum_is_an_error_with_a_copy(tmp_path, caplog):
    path = tmp_path / "hub.db"
    closed(path)
    kept = rows(path)
    crashed(path, turns=10)  # 10 more journal rows, only in the WAL
    with open(str(path) + "-wal", "r+b") as f:  # SQLite would ignore the whole WAL
        f.seek(24)
        f.write(b"\0\0\0\0")
    with caplog.at_level(logging.WARNING):
        store = Store(path)
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "header checksum mismatch" in line and "frames" in line and "lost" in line
    moved = store.wal_set_aside["moved_to"]
    assert os.path.exists(moved) and os.path.exists(moved + "-wal")
    assert rows(path) == kept  # every row of the file itself
    assert "WAL set aside at open" in store.status()


def test_a_stop_after_a_checkpoint_sets_nothing_aside(tmp_path, caplog):
    """An empty WAL with its -shm (what a SIGTERM stop after a checkpoint leaves) is healthy:
    the next open keeps every row, logs no WARNING and leaves no ``.corrupt`` copy."""
    path = tmp_path / "hub.db"
    env = {**os.environ, "PYTHONPATH": str(WT)}
    subprocess.run([sys.executable, "-c", STOPPED, str(path), "20"], env=env, check=True)
    assert os.path.getsize(str(path) + "-wal") == 0 and os.path.exists(str(path) + "-shm")
    with caplog.at_level(logging.WARNING):
        store = Store(path)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not glob.glob(str(path) + ".corrupt-*")
    assert len(rows(path)[0]) == 20 and len(rows(path)[1]) == 20
    store.close()
