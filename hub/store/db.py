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
import contextlib
import hashlib
import logging
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from hub.paths import state_dir
from hub.settings import StoreSettings
from hub.store import losses, recover, schema, walcheck
from hub.store.cache import CacheMixin
from hub.store.fpindex import FingerprintIndex
from hub.store.held import HeldMixin
from hub.store.journal import JournalMixin
from hub.store.outbox import OutboxMixin
from hub.store.retention import start_background
from hub.store.timers import TimersMixin
from hub.store.walsize import TxnGuard, WalWatch

log = logging.getLogger("hub.store.db")

BUSY_TIMEOUT_MS = 250
"""How long a write waits for another connection's lock before it is held in memory (the
user's data, journal, outbox) or skipped (caches): a small part of the ``act`` node's 2 s
budget. At 2 s, "add milk" and an MQTT command's outbox claim waited it out, the action timed
out ("Sorry, I couldn't do that right now." for what was done), every answer 2 s late."""

CACHE_WRITES = ("transcript cache", "response audio")
"""Writes that are dropped, not kept in memory, when they fail: each is counted in
``Store.skipped`` and logged (DEBUG "cache write skipped"; the "working again" line gives the
count). Journal, outbox and breaker rows wait in memory instead."""

OPEN_TRIES_S = 15.0
"""How long opening retries while other processes hold the new file's lock."""


def default_store_path(config: str | Path | None = None) -> Path:
    """The store of this user, in ``$XDG_STATE_HOME/hub`` (``~/.local/state/hub``): with a
    config file one store per file, keyed by its absolute path (``<file stem>-<8 hex>.db``,
    e.g. ``hub-1a2b3c4d.db``); with the built-in config one per installation, keyed by where
    the ``hub`` package lives (``builtin-<8 hex>.db``). So two checkouts or homes never share
    caches, timers or a journal."""
    if config is None:
        stem, path = "builtin", Path(__file__).resolve().parents[1]
    else:
        path = Path(config).expanduser().resolve()
        stem = path.stem
    key = hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return state_dir(f"{stem}-{key}.db")


def _remove(path: str) -> None:
    for suffix in ("", "-wal", "-shm", recover.COUNTS_SUFFIX):
        with contextlib.suppress(OSError):
            os.remove(path + suffix)


def condition_of(exc: BaseException) -> str:
    """A short name for what is wrong with the store, from a ``sqlite3.Error``."""
    text = str(exc).lower()
    for words, name in (
        (("full",), "disk full"),
        (("readonly", "read-only"), "read-only"),
        (("malformed", "not a database", "corrupt"), "damaged"),
        (("locked", "busy"), "locked"),
        (("disk i/o",), "disk I/O error"),
        (("unable to open",), "cannot open the file"),
        (("no such table", "no column"), "schema mismatch"),
    ):
        if any(w in text for w in words):
            return name
    return type(exc).__name__


class Store(CacheMixin, JournalMixin, OutboxMixin, TimersMixin, HeldMixin):
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

    def __init__(
        self, path: str | Path, settings=None, *, clock=time.time, background: bool = False
    ):
        self.settings = settings or StoreSettings()
        self.clock = clock
        self.path = str(path)
        self._local = threading.local()
        self._lock = threading.RLock()
        self.read_only = False
        self.degraded: str | None = None
        self.recovered: dict | None = None
        self.wal_set_aside: dict | None = None
        self.skipped = 0
        self._logged: set[str] = set()
        self._init_memory()

        self.limit_bytes = int(self.settings.wal_limit_mb * 1024 * 1024)
        self.wal = WalWatch(self.path, self.limit_bytes)
        self.txn_guard = TxnGuard(self.settings.txn_guard_s)
        self.wal_due = threading.Event()
        if self.path == ":memory:":
            fd, self.path = tempfile.mkstemp(prefix="hub-", suffix=".db")
            os.close(fd)
            atexit.register(_remove, self.path)
            self.wal.path = self.path
        self._open()
        self._thread = None
        self.finished = False  # hub.store.retention.finish ran: the process is done with it
        if background:
            self._thread = start_background(self)

    def _init_memory(self) -> None:
        """What is kept in memory while the file cannot be written (bounded)."""
        self._mem_journal: list[tuple[float, str]] = []
        self._mem_breakers: list[dict] = []
        self._mem_outbox: dict[str, dict] = {}
        self._touched: dict[tuple[str, object], float] = {}
        self._init_held()
        self._fp_index = FingerprintIndex()

    # -- connection -------------------------------------------------------------------------
    def db(self):
        """The sqlite-utils ``Database`` of this thread (WAL, busy timeout set).

        Raises:
            sqlite3.Error: the file cannot be opened.
        """
        # lazy: sqlite-utils (about 0.2 s) only when a store is opened; hub --help imports this
        import sqlite_utils

        db = getattr(self._local, "db", None)
        if db is None:
            if self.read_only:  # immutable: a WAL file cannot make its -shm on a read-only disk
                folder = os.path.dirname(os.path.abspath(self.path))
                extra = "" if os.access(folder, os.W_OK) else "&immutable=1"
                conn = sqlite3.connect(
                    f"file:{self.path}?mode=ro{extra}",
                    uri=True,
                    timeout=BUSY_TIMEOUT_MS / 1000,
                    check_same_thread=False,
                    isolation_level=None,
                )
            else:
                conn = sqlite3.connect(
                    self.path,
                    timeout=BUSY_TIMEOUT_MS / 1000,
                    check_same_thread=False,
                    isolation_level=None,
                )
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(f"PRAGMA journal_size_limit={self.limit_bytes}")
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
        if (exists and not os.access(self.path, os.W_OK)) or (
            not os.access(os.path.dirname(os.path.abspath(self.path)), os.W_OK)
        ):
            if not exists:
                self._fail(None, "read-only folder")
                return
            self.read_only = True
            log.warning(
                "store: %s is read-only; caches read, journal and outbox kept in memory", self.path
            )
        if not exists and not self.read_only:  # counts of a file that is gone mean nothing
            Path(self.path + recover.COUNTS_SUFFIX).unlink(missing_ok=True)
        elif not self.read_only:
            self._check_beside()
        why = recover.is_damaged(self.path)
        if why is None and self._emptied():
            why = "the file is empty (0 bytes) but held rows"
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

    def _check_beside(self) -> None:
        """A ``-wal``/``-shm`` that is not this file's is set aside before SQLite applies it
        (:mod:`hub.store.walcheck`)."""
        cutoff = self.clock() - self.settings.journal_days * 86400
        self.wal_set_aside = walcheck.guard(self.path, self.clock(), cutoff, log)

    def _emptied(self) -> bool:
        """The file is 0 bytes, has no WAL, and its last known counts say it held rows."""
        if not os.path.isfile(self.path) or os.path.getsize(self.path):
            return False
        if os.path.exists(self.path + "-wal") and os.path.getsize(self.path + "-wal"):
            return False
        if walcheck.in_use(self.path) is not False:
            return False
        known = recover.known_counts(self.path)
        return any(isinstance(n, int) and n > 0 for k, n in known.items() if k != "at")

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
        why, known = " ".join(why.split()), recover.known_counts(self.path)
        self.recovered = {
            "at": self.clock(),
            "reason": why,
            "moved_to": moved,
            "rows": recover.summary(saved, known),
            "lost": losses.record(self, recover.lost_rows(saved, known), self.clock()),
        }
        self.kv_set("recovered", self.recovered)
        log.error(
            "store: %s was damaged (%s); moved to %s, fresh store made (%s)",
            self.path,
            why,
            moved,
            self.recovered["rows"],
        )

    def pragma(self, name: str):
        """The value of ``PRAGMA name`` (e.g. ``journal_mode``), or None when unreadable."""
        return self._run(
            "pragma", lambda db: db.execute(f"PRAGMA {name}").fetchone()[0], write=False
        )

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            if not self.read_only and self.degraded is None:
                recover.write_counts(self.path, db.conn, self.clock())
            with contextlib.suppress(sqlite3.Error):
                db.conn.close()
            self._local.db = None

    # -- never failing ---------------------------------------------------------------------
    def _run(self, what: str, fn, default=None, *, write: bool = True):
        """``fn(db)``, or ``default`` after any ``sqlite3.Error`` (logged once per condition)."""
        if write and self.read_only:
            return default
        if self.degraded in (
            "damaged",
            "cannot open the file",
            "cannot create the folder",
            "read-only folder",
        ):
            return default
        try:
            db = self.db()
            started = self.txn_guard.clock()  # the call alone: not this thread's first open
            result = fn(db)
        except sqlite3.Error as exc:
            self._fail(exc, what=what)
            if write and what in CACHE_WRITES:
                self.skipped += 1
                log.debug("store: cache write skipped (%s: %s)", what, exc)
            return default
        self.txn_guard.after(db.conn, what, started)
        if write and self.degraded is not None:
            self._healed()
        if write and self.wal.wrote():
            self._wal_over()
        return result

    def _wal_over(self) -> None:
        """The WAL passed its limit: wake the maintenance thread, or (none) checkpoint now
        without waiting on readers. While a reader blocks it, the periodic check is enough."""
        if self.wal.blocked:
            return
        if self._thread is not None:
            self.wal_due.set()
        else:
            self.wal_step()

    def wal_step(self) -> dict:
        """One :meth:`hub.store.walsize.WalWatch.step` on this thread's connection; ``{}``
        when the store cannot be used. Never raises."""
        self.txn_guard.check()
        if self.read_only:
            return {}
        return self._run("checkpoint", lambda db: self.wal.step(db.conn), {}, write=False) or {}

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
            log.info(
                "store: working again (was: %s; %d cache writes skipped so far)", was, self.skipped
            )
            self.flush_memory()

    def status(self) -> str:
        """One line for ``hub doctor``: path, mode, schema, degraded condition, recovery."""
        mode = self.pragma("journal_mode")
        parts = [
            f"{self.path} (journal_mode {mode}, schema {self.pragma('user_version')}"
            + (", read-only" if self.read_only else "")
            + ")"
        ]
        if self.degraded:
            parts.append(f"degraded: {self.degraded}")
        recovered = self.recovered or self.kv_get("recovered")
        if recovered:
            parts.append(
                f"recovered from damage: moved to {recovered['moved_to']} ({recovered['rows']})"
            )
        if self.wal_set_aside:
            parts.append(
                f"WAL set aside at open: {self.wal_set_aside['reason']} (copy at "
                f"{self.wal_set_aside['moved_to']})"
            )
        return "; ".join(parts)


def open_store(path: str | Path | None, settings=None, *, background: bool = False) -> Store:
    """Open the store at ``path`` (None or "": :func:`default_store_path`); never raises."""
    return Store(path or default_store_path(), settings, background=background)
