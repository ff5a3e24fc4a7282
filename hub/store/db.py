"""The SQLite store: fingerprint and answer-audio caches, turn journal, outbox, breaker events.

One file, WAL journal (``synchronous=NORMAL``: a committed write survives a killed process),
a busy timeout, schema versioned by ``PRAGMA user_version`` (:mod:`hub.store.schema`).

The store can never take the hub down: every ``sqlite3.Error`` of every call is caught
(:meth:`Store._run`), the turn goes on, and each condition (disk full, read-only, damaged,
locked, ...) is logged once when it starts and once when it ends. While the file cannot be
written the journal and the outbox live in memory and are written out when it can again
(cases BC-18, BC-32, BC-33). A file found damaged at open is moved aside and its readable rows
are salvaged into a fresh one (:mod:`hub.store.recover`).
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

from hub.store import recover, schema
from hub.store.cache import CacheMixin
from hub.store.journal import JournalMixin
from hub.store.outbox import OutboxMixin

log = logging.getLogger("hub.store.db")

BUSY_TIMEOUT_MS = 2000
"""How long a write waits for a lock held by another connection before it is skipped."""

OPEN_TRIES_S = 15.0
"""How long opening retries while other processes hold the new file's lock."""


def default_store_path(config: str | Path | None = None) -> Path:
    """The store of this user, in ``$XDG_STATE_HOME/hub`` (``~/.local/state/hub``): with a
    config file one store per file, keyed by its absolute path (``<file stem>-<8 hex>.db``,
    e.g. ``hub-1a2b3c4d.db``); with the built-in config one per installation, keyed by where
    the ``hub`` package lives (``builtin-<8 hex>.db``). So two checkouts or homes never share
    caches, timers or a journal."""
    import hashlib

    from hub.paths import state_dir

    if config is None:
        stem, path = "builtin", Path(__file__).resolve().parents[1]
    else:
        path = Path(config).expanduser().resolve()
        stem = path.stem
    key = hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return state_dir(f"{stem}-{key}.db")


def _remove(path: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except OSError:
            pass


def condition_of(exc: BaseException) -> str:
    """A short name for what is wrong with the store, from a ``sqlite3.Error``."""
    text = str(exc).lower()
    for words, name in ((("full",), "disk full"), (("readonly", "read-only"), "read-only"),
                        (("malformed", "not a database", "corrupt"), "damaged"),
                        (("locked", "busy"), "locked"), (("disk i/o",), "disk I/O error"),
                        (("unable to open",), "cannot open the file"),
                        (("no such table", "no column"), "schema mismatch")):
        if any(w in text for w in words):
            return name
    return type(exc).__name__


class Store(CacheMixin, JournalMixin, OutboxMixin):
    """A connection to the hub's SQLite file (thread-safe: one connection per thread).

    Args:
        path: the database file; created with its folder when missing. ``":memory:"`` keeps
            nothing: a temporary file removed at exit (shared by all threads).
        settings: a :class:`hub.settings.StoreSettings` (retention, cache cap, thresholds);
            None: the defaults.
        clock: wall-clock seconds (tests inject a fake one for retention).
        background: run :mod:`hub.store.retention` in a daemon thread every
            ``settings.maintenance_s``.
    Never raises for the file: a file that cannot be opened gives a store that keeps its
    journal and outbox in memory (``degraded`` says why).
    """

    def __init__(self, path: str | Path, settings=None, *, clock=time.time,
                 background: bool = False):
        from hub.settings import StoreSettings

        self.settings = settings or StoreSettings()
        self.clock = clock
        self.path = str(path)
        self._local = threading.local()
        self._lock = threading.RLock()
        self.read_only = False
        self.degraded: str | None = None
        self.recovered: dict | None = None
        self._logged: set[str] = set()
        self._init_memory()
        if self.path == ":memory:":
            fd, self.path = tempfile.mkstemp(prefix="hub-", suffix=".db")
            os.close(fd)
            atexit.register(_remove, self.path)
        self._open()
        self._thread = None
        if background:
            from hub.store.retention import start_background

            self._thread = start_background(self)

    def _init_memory(self) -> None:
        """What is kept in memory while the file cannot be written (bounded)."""
        self._mem_journal: list[tuple[float, str]] = []
        self._mem_breakers: list[dict] = []
        self._mem_outbox: dict[str, dict] = {}
        self._touched: dict[tuple[str, object], float] = {}
        from hub.store.fpindex import FingerprintIndex

        self._fp_index = FingerprintIndex()

    # -- connection -------------------------------------------------------------------------
    def db(self):
        """The sqlite-utils ``Database`` of this thread (WAL, busy timeout set).

        Raises:
            sqlite3.Error: the file cannot be opened.
        """
        import sqlite_utils

        db = getattr(self._local, "db", None)
        if db is None:
            if self.read_only:  # immutable: a WAL file cannot make its -shm on a read-only disk
                folder = os.path.dirname(os.path.abspath(self.path))
                extra = "" if os.access(folder, os.W_OK) else "&immutable=1"
                conn = sqlite3.connect(f"file:{self.path}?mode=ro{extra}", uri=True,
                                       timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                       isolation_level=None)
            else:
                conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                       check_same_thread=False, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            db = sqlite_utils.Database(conn)
            self._local.db = db
        return db

    def _open(self) -> None:
        try:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._fail(exc, "cannot create the folder")
            return
        exists = os.path.exists(self.path)
        if (exists and not os.access(self.path, os.W_OK)) or \
                (not os.access(os.path.dirname(os.path.abspath(self.path)), os.W_OK)):
            if not exists:
                self._fail(None, "read-only folder")
                return
            self.read_only = True
            log.warning("store: %s is read-only; caches read, journal and outbox kept "
                        "in memory", self.path)
        why = recover.is_damaged(self.path)
        if why is not None:
            if self.read_only:
                self._fail(None, "damaged")
                return
            self._recover(why)
        self._create()

    def _create(self) -> None:
        end = time.monotonic() + OPEN_TRIES_S
        while True:
            try:
                conn = self.db().conn
                if not self.read_only:
                    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # only new files take it
                    schema.migrate(conn)
                elif conn.execute("PRAGMA user_version").fetchone()[0] != schema.VERSION:
                    self._fail(None, "read-only file of an older schema")
                return
            except sqlite3.OperationalError as exc:
                self.close()
                if "locked" in str(exc) and time.monotonic() < end:
                    time.sleep(0.05)
                    continue
                self._fail(exc)
                return
            except (sqlite3.Error, RuntimeError) as exc:
                self.close()
                self._fail(exc)
                return

    def _recover(self, why: str) -> None:
        """Move the damaged file aside, salvage its rows into a fresh one; one ERROR line."""
        try:
            moved = recover.move_aside(self.path, self.clock())
        except OSError as exc:
            self._fail(exc, "damaged")
            return
        saved = recover.salvage(moved)
        try:
            conn = self.db().conn
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            schema.migrate(conn)
            recover.restore(conn, saved)
        except sqlite3.Error as exc:
            self._fail(exc)
            return
        why = " ".join(why.split())
        self.recovered = {"at": self.clock(), "reason": why, "moved_to": moved,
                          "rows": recover.summary(saved)}
        self.kv_set("recovered", self.recovered)
        log.error("store: %s was damaged (%s); moved to %s, fresh store made (%s)",
                  self.path, why, moved, self.recovered["rows"])

    def pragma(self, name: str):
        """The value of ``PRAGMA name`` (e.g. ``journal_mode``), or None when unreadable."""
        return self._run("pragma", lambda db: db.execute(f"PRAGMA {name}").fetchone()[0],
                         write=False)

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            try:
                db.conn.close()
            except sqlite3.Error:
                pass
            self._local.db = None

    # -- never failing ---------------------------------------------------------------------
    def _run(self, what: str, fn, default=None, *, write: bool = True):
        """``fn(db)``, or ``default`` after any ``sqlite3.Error`` (logged once per condition)."""
        if write and self.read_only:
            return default
        if self.degraded in ("damaged", "cannot open the file", "cannot create the folder",
                             "read-only folder"):
            return default
        try:
            result = fn(self.db())
        except sqlite3.Error as exc:
            self._fail(exc, what=what)
            return default
        if write and self.degraded is not None:
            self._healed()
        return result

    def _fail(self, exc, condition: str | None = None, *, what: str = "open") -> None:
        condition = condition or condition_of(exc)
        with self._lock:
            self.degraded = condition
            if condition in self._logged:
                return
            self._logged.add(condition)
        detail = f" ({what}: {exc})" if exc is not None else ""
        log.warning("store: %s; answering without the store%s", condition, detail)

    def _healed(self) -> None:
        with self._lock:
            was, self.degraded = self.degraded, None
            self._logged.clear()
        if was is not None:
            log.warning("store: working again (was: %s)", was)
            self.flush_memory()

    def status(self) -> str:
        """One line for ``hub doctor``: path, mode, schema, degraded condition, recovery."""
        mode = self.pragma("journal_mode")
        parts = [f"{self.path} (journal_mode {mode}, schema {self.pragma('user_version')}"
                 + (", read-only" if self.read_only else "") + ")"]
        if self.degraded:
            parts.append(f"degraded: {self.degraded}")
        recovered = self.recovered or self.kv_get("recovered")
        if recovered:
            parts.append(f"recovered from damage: moved to {recovered['moved_to']} "
                         f"({recovered['rows']})")
        return "; ".join(parts)


def stored_timers(store: Store, records: list[dict] | None = None) -> list[dict]:
    """The ``timers`` table, the only SQL for timers: with ``records``, replace its rows by
    them (one transaction); return the rows stored (JSON records of
    :meth:`hub.act.timers.Timers.records`). Never raises: a failed write is logged once (the
    store's condition) and the timers stay in memory (``records`` is returned)."""
    def replace(db):
        conn = db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DELETE FROM timers")
            conn.executemany("INSERT INTO timers (id, record, at) VALUES (?, ?, ?)",
                             [(r["id"], json.dumps(r), time.time()) for r in records])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return True

    if records is not None and not store._run("timers", replace, False):
        return records
    rows = store._run("timers read", lambda db: db.conn.execute(
        "SELECT record FROM timers ORDER BY at, id").fetchall(), None, write=False)
    if rows is None:
        return [] if records is None else records
    return [json.loads(row[0]) for row in rows]


def open_store(path: str | Path | None, settings=None, *, background: bool = False) -> Store:
    """Open the store at ``path`` (None or "": :func:`default_store_path`); never raises."""
    return Store(path or default_store_path(), settings, background=background)
