"""Open checks of the ``-wal`` and ``-shm`` beside the store, before SQLite applies them.

SQLite applies any WAL whose own checksums are right, whatever database it was written for: a
``-wal`` copied from another file (with its ``-shm`` gone) replaces the store's pages with that
file's, and the store's outbox and journal vanish without a word. :func:`check` runs at open,
only while no connection of any process has the file open (a live WAL is never touched: the
locks SQLite holds on the file and its ``-shm`` are read from ``/proc/locks``), and calls a
WAL foreign when:

- its page size differs from the database's (:mod:`hub.store.walfile` reads both headers);
- the database has the store's tables and the database with the WAL applied does not;
- applying it would drop outbox or journal rows that retention would keep (newer than
  ``journal_days``, or a pending outbox row).

A foreign WAL and its ``-shm`` are moved aside next to a copy of the database
(``<db>.corrupt-<stamp>``, ``-wal``, ``-shm``) and the database opens without them, so every
row it held is kept. A ``-shm`` whose salts are not the WAL's is moved aside the same way
(SQLite rebuilds it from the WAL). A WAL whose header fails its checksum is ignored by SQLite:
it is moved aside too (its frames cannot be read; the ERROR line says so).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass

from hub.store import walfile
from hub.store.recover import corrupt_name
from hub.store.walfile import FRAME_HEADER

OUR_TABLES = ("outbox", "journal")
"""Tables whose rows the check counts."""


@dataclass
class WalVerdict:
    """What :func:`check` found: ``foreign`` (move the WAL aside), ``stale_shm`` (move the
    ``-shm`` aside), ``why`` (one line) and ``counts`` (``{table: rows}`` of the database
    without the WAL), ``lost`` (rows the WAL cannot give back: its header is unreadable)."""

    foreign: bool = False
    stale_shm: bool = False
    why: str = ""
    counts: dict | None = None
    lost: bool = False


def in_use(path: str) -> bool | None:
    """Whether a process (this one too) holds a lock on ``path`` or its ``-shm``: another
    connection has the store open. None when ``/proc/locks`` cannot be read."""
    inodes = set()
    for name in (path, path + "-shm"):
        try:
            st = os.stat(name)
        except OSError:
            continue
        inodes.add(f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}")
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split()
        where = next((p for p in parts if p.count(":") == 2), None)
        if where in inodes:
            return True
    return False


def _keys(uri: str, cutoff: float) -> tuple[dict, dict] | None:
    """``({table: set of keys kept by retention}, {table: row count})`` of the database seen
    through ``uri``; None when it has none of :data:`OUR_TABLES` or cannot be read."""
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        return None
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables & set(OUR_TABLES):
            return None
        keep, counts = {}, {}
        if "journal" in tables:
            keep["journal"] = {
                tuple(r)
                for r in conn.execute(  # (id, at): ids alone repeat
                    "SELECT id, at FROM journal WHERE at IS NULL OR at >= ?", [cutoff]
                )
            }
            counts["journal"] = conn.execute("SELECT count(*) FROM journal").fetchone()[0]
        if "outbox" in tables:
            keep["outbox"] = {
                tuple(r)
                for r in conn.execute(
                    "SELECT idempotency_key, at FROM outbox WHERE at IS NULL OR at >= ? OR "
                    "status = 'pending'",
                    [cutoff],
                )
            }
            counts["outbox"] = conn.execute("SELECT count(*) FROM outbox").fetchone()[0]
        return keep, counts
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _semantic(path: str, cutoff: float) -> tuple[str, dict | None]:
    """Why applying the WAL would lose the store's rows ("" when it would not), and the row
    counts of the database alone."""
    alone = _keys(f"file:{path}?mode=ro&immutable=1", cutoff)  # immutable: the WAL is ignored
    if alone is None:
        return "", None
    applied = _keys(f"file:{path}?mode=ro", cutoff)
    if applied is None:
        return "with it applied the file has none of the store's tables", alone[1]
    dropped = {t: len(keys - applied[0].get(t, set())) for t, keys in alone[0].items()}
    if any(dropped.values()):
        text = ", ".join(f"{n} {t} rows" for t, n in dropped.items() if n)
        return f"applying it would drop {text}", alone[1]
    return "", alone[1]


def check(path: str, cutoff: float) -> WalVerdict:
    """Inspect ``path``'s ``-wal``/``-shm`` (see the module doc); ``cutoff`` is the wall-clock
    time before which retention may delete rows. Never raises; changes nothing."""
    wal, shm = path + "-wal", path + "-shm"
    verdict = WalVerdict()
    if not os.path.isfile(path) or in_use(path) is not False:
        return verdict
    try:
        has_wal = os.path.getsize(wal) > 0
    except OSError:
        has_wal = False
    info = walfile.read_wal(wal) if has_wal else None
    shm_salts = walfile.read_shm_salts(shm) if os.path.exists(shm) else None
    # A -shm beside an empty or missing WAL is what a stop after a checkpoint leaves (the WAL
    # truncated, the index kept): SQLite resets such an index at the next open, nothing to move.
    live_wal = info is not None and info.valid and info.frames > 0
    if shm_salts is not None and live_wal and shm_salts[0] != info.salts:
        verdict.stale_shm, verdict.why = True, "its -shm was written for another WAL"
    if info is None or (info.valid and info.frames == 0):
        return verdict
    page_size = walfile.db_page_size(path)
    if not info.valid:
        verdict.foreign, verdict.lost = True, True
        frames = (os.path.getsize(wal) - walfile.WAL_HEADER) // (FRAME_HEADER + (page_size or 4096))
        verdict.why = f"its WAL is unreadable ({info.problem}; {max(frames, 0)} frames)"
    elif page_size is not None and page_size != info.page_size:
        verdict.foreign = True
        verdict.why = f"its WAL has {info.page_size}-byte pages, the file {page_size}"
    if verdict.foreign:
        verdict.counts = (_keys(f"file:{path}?mode=ro&immutable=1", cutoff) or (None, None))[1]
        return verdict
    if verdict.stale_shm:
        return verdict  # the WAL is checked at the next open, with a -shm SQLite rebuilt
    why, verdict.counts = _semantic(path, cutoff)
    if why:
        verdict.foreign, verdict.why = True, f"its WAL is not this file's: {why}"
    return verdict


def set_aside(path: str, target: str, verdict: WalVerdict) -> list[str]:
    """Copy the database to ``target`` and move the WAL (when foreign) and the ``-shm`` next to
    it; returns the names written.

    Raises:
        OSError: a copy or rename failed (nothing is lost: the originals stay where they are).
    """
    shutil.copy2(path, target)
    written = [target]
    moves = ("-wal", "-shm") if verdict.foreign else ("-shm",)
    for suffix in moves:
        if os.path.exists(path + suffix):
            os.replace(path + suffix, target + suffix)
            written.append(target + suffix)
    return written


def guard(path: str, now: float, cutoff: float, log) -> dict | None:
    """Run :func:`check` at open and set aside what does not belong (one log line each: a
    WARNING when every row is kept, an ERROR when the WAL's own rows cannot be read).

    Returns ``{"reason", "moved_to", "rows"}`` of the last set-aside, or None. Never raises:
    a copy that fails leaves the files as they are (logged).
    """
    done = None
    for _ in range(2):  # a stale -shm first, then the WAL seen with a rebuilt one
        verdict = check(path, cutoff)
        if not (verdict.foreign or verdict.stale_shm):
            return done
        target = corrupt_name(path, now)
        try:
            written = set_aside(path, target, verdict)
        except OSError as exc:
            log.error("store: %s: %s, but it cannot be set aside (%s)", path, verdict.why, exc)
            return done
        counts = verdict.counts or {}
        rows = "; ".join(f"{t} {n} kept, 0 lost" for t, n in counts.items())
        if verdict.lost:
            rows += "; the WAL's own frames are unreadable and lost (count unknown)"
        what = "WAL and -shm" if verdict.foreign else "-shm"
        (log.error if verdict.lost else log.warning)(
            "store: %s: %s; %s moved to %s with a copy of the database (%s)",
            path,
            verdict.why,
            what,
            ", ".join(written[1:]) or target,
            rows or "no rows",
        )
        done = {"reason": verdict.why, "moved_to": target, "rows": rows}
        if verdict.foreign:
            return done
    return done
