"""BC-33: the recovery's one ERROR line stays one short line when the damage is wide
(``quick_check`` reports ~100 problems in one newline-separated row): the first problem, a
count of the rest and the moved-aside path (hub.store.recover.brief)."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

from hub.store.db import Store
from hub.store.recover import brief, is_damaged


def widely_damaged(path: Path) -> None:
    """A store-sized file with garbage in the cell area of every 7th page."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
    conn.execute("CREATE INDEX iv ON t(v)")
    conn.executemany("INSERT INTO t(v) VALUES (?)", [(f"x{i:06d}" * 5,) for i in range(20000)])
    conn.commit()
    conn.close()
    size = path.stat().st_size
    with open(path, "r+b") as f:
        for page in range(5, size // 4096, 7):
            f.seek(page * 4096 + 8)
            f.write(bytes(range(60, 120)))


def test_bc33_wide_damage_gives_one_short_error_line(tmp_path, caplog):
    path = tmp_path / "hub.db"
    widely_damaged(path)
    rows = sqlite3.connect(path).execute("PRAGMA quick_check").fetchall()
    assert sum(len(r[0].splitlines()) for r in rows) > 20  # the damage is wide
    with caplog.at_level(logging.ERROR):
        store = Store(path)
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "\n" not in line and len(line) < 600, line
    assert store.recovered["moved_to"] in line and "more)" in line
    assert "***" not in store.recovered["reason"]
    assert Path(store.recovered["moved_to"]).exists()
    store.close()


def test_brief_is_the_first_problem_and_a_count():
    messages = [
        "*** in database main ***\nOn tree page 4 cell 2: bad\nOn tree page 5: worse",
        "Page 9: never used",
    ]
    assert brief(messages) == "On tree page 4 cell 2: bad (and 2 more)"
    assert brief(["row 3 missing from index iv"]) == "row 3 missing from index iv"
    assert len(brief(["x" * 5000])) <= 160


def test_an_undamaged_file_is_not_reported(tmp_path):
    path = tmp_path / "ok.db"
    sqlite3.connect(path).execute("CREATE TABLE t(x)").connection.commit()
    assert is_damaged(str(path)) is None
    assert not os.path.exists(str(path) + ".corrupt")
