"""hub.store.walfile reads a WAL as SQLite does (fileformat2.html#walformat): the valid frames
up to the last commit, stopping at a frame whose checksum or salts are wrong."""

from __future__ import annotations

import sqlite3

from hub.store.walfile import FRAME_HEADER, WAL_HEADER, db_page_size, read_shm_salts, read_wal


def live_wal(path, commits: int):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE t (x)")
    for _i in range(commits):
        conn.execute("INSERT INTO t VALUES (?)", ("x" * 3000,))
    return conn


def test_every_frame_of_a_live_wal_validates_and_matches_its_shm(tmp_path):
    path = tmp_path / "a.db"
    conn = live_wal(path, 20)
    wal = str(path) + "-wal"
    info = read_wal(wal)
    size = (tmp_path / "a.db-wal").stat().st_size
    assert info.valid and info.page_size == 4096 == db_page_size(str(path))
    assert info.frames == (size - WAL_HEADER) // (FRAME_HEADER + 4096)
    assert info.db_pages == conn.execute("PRAGMA page_count").fetchone()[0]
    assert read_shm_salts(str(path) + "-shm") == (info.salts, 4096)
    conn.close()


def test_a_damaged_frame_ends_the_valid_frames_at_the_commit_before_it(tmp_path):
    path = tmp_path / "a.db"
    conn = live_wal(path, 20)
    wal = str(path) + "-wal"
    whole = read_wal(wal)
    frame = FRAME_HEADER + 4096
    with open(wal, "r+b") as f:  # a byte of the 10th frame's page
        f.seek(WAL_HEADER + 9 * frame + FRAME_HEADER + 100)
        f.write(b"\xff")
    cut = read_wal(wal)
    assert cut.valid and 0 < cut.frames < 10 < whole.frames
    with open(wal, "r+b") as f:
        f.seek(8)  # the page size field: the header checksum no longer matches
        f.write(b"\0\0\x20\0")
    bad = read_wal(wal)
    assert not bad.valid and bad.problem == "header checksum mismatch"
    conn.close()
