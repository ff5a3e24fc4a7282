"""Writes of the user's data (a list, the timers, the alarms and reminders) as the change the
user asked for, and held in memory, in order, while the store cannot take them (a mixin of
``Store``).

Each write is a function run inside one immediate transaction: it reads what the file holds
then and applies the change to it (an item added to a list, a timer set or cancelled:
:meth:`hub.store.journal.JournalMixin.kv_change`, :meth:`HeldMixin.write_rows`), so what
another process on the same file wrote meanwhile is kept, and a change held while another
process had the store locked is applied, later, to what that process saved. Held writes go
out in the order they were made, each exactly once (it is marked done when its transaction
commits), with :meth:`HeldMixin.flush_held` (from ``Store.flush_memory``: the next write,
each maintenance round, and :func:`hub.store.retention.finish`, which waits up to
``[store] save_wait_s`` for a locked store and then says on stderr what was not saved). The
hub's own bookkeeping (a ``kv`` value written whole) keeps only its newest held value per key.
A turn that changed something the store could not take says so in its answer
(:data:`hub.graph.answers.NOT_SAVED`, by :attr:`HeldMixin.unsaved_writes`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from hub.store import rows


@dataclass(eq=False)
class _Write:
    """One write: ``fn(db)`` inside a transaction; ``key`` "" for a change (each is written),
    else a whole value that a newer one of the same key replaces while held."""

    what: str
    fn: Callable
    label: str
    key: str
    then: Callable | None = None
    result: object = None
    done: bool = False


class HeldMixin:
    """Held writes; needs ``_run`` (``hub.store.db.Store``). ``_init_held`` sets it up."""

    unsaved_writes: int
    """How many writes of the user's data failed so far (a turn compares it before/after)."""

    def _init_held(self) -> None:
        self._held_lock = threading.RLock()
        self._held: list[_Write] = []
        self._rows_known: dict[str, dict[str, dict]] = {}
        self._rows_alias: dict[str, dict[str, str]] = {}
        self.unsaved_writes = 0

    def write_change(
        self, what: str, fn: Callable, label: str = "", key: str = "", then: Callable | None = None
    ) -> tuple | None:
        """Run ``fn(db)`` inside one immediate transaction (it reads what it changes there),
        after every write held before it; ``(its result,)`` when written now. Else it is
        held, in order, until :meth:`flush_held` can write it, and None is returned.
        ``label`` names the user's data ("the Shopping List"), "" for the hub's own
        bookkeeping; ``key`` "" for a change, else a whole value (a newer write of ``key``
        replaces a held one); ``then(result)`` runs once it is committed. A lock another
        connection holds is waited for at most
        :data:`hub.store.db.BUSY_TIMEOUT_MS`. Never raises for the store."""
        entry = _Write(what, fn, label, key, then)
        with self._held_lock:
            if key:
                self._held = [w for w in self._held if w.key != key]
            self._held.append(entry)
            self.flush_held()
            if entry.done:
                return (entry.result,)
            if label:
                self.unsaved_writes += 1
            return None

    def write_state(self, key: str, what: str, fn: Callable, label: str = "") -> bool:
        """:meth:`write_change` of a whole value under ``key``; True when written now."""
        return self.write_change(what, fn, label, key) is not None

    def flush_held(self) -> None:
        """Write what is held, oldest first, until a write fails. Never raises."""
        with self._held_lock:
            for entry in list(self._held):
                if entry.done:
                    continue  # written by a nested flush (the store's "working again")
                if not self._run(entry.what, lambda db, e=entry: _commit(db, e), False):
                    break
            self._held = [w for w in self._held if not w.done]

    def unsaved(self) -> list[str]:
        """The labels of the user's data held (not in the file yet), oldest first, each once."""
        with self._held_lock:
            return list(dict.fromkeys(w.label for w in self._held if w.label and not w.done))

    def known_rows(self, table: str, records: list[dict]) -> None:
        """``records`` of ``table`` as this process read them (at its start): its later
        :meth:`write_rows` are changes from these. Only the first read counts."""
        with self._held_lock:
            self._rows_known.setdefault(table, {str(r["id"]): r for r in records})

    def knows_rows(self, table: str) -> bool:
        """Whether this process read ``table`` already (:meth:`known_rows`)."""
        with self._held_lock:
            return table in self._rows_known

    def write_rows(self, table: rows.RowTable, records: list[dict], label: str) -> bool:
        """Write what changed from this process's last records of ``table`` to ``records``
        (added, changed, removed: :func:`hub.store.rows.diff`) over the rows in the file
        then (:func:`hub.store.rows.apply`); True when written now, else held."""
        with self._held_lock:
            before = self._rows_known.get(table.name, {})
            change = rows.diff(before, records, table.same)
            self._rows_known[table.name] = {str(r["id"]): r for r in records}
            if not change:
                return not any(w.label == label for w in self._held)
            return self.write_row_change(table, change, label)

    def write_row_change(self, table: rows.RowTable, change: rows.RowChange, label: str) -> bool:
        """Write ``change`` over the rows of ``table`` in the file then
        (:func:`hub.store.rows.apply`); True when written now, else held."""
        aliases = self._rows_alias

        def fn(db) -> dict[str, str]:
            ids = dict(aliases.get(table.name, {}))  # changed in memory once committed
            rows.apply(db.conn, table, change, ids)
            return ids

        def then(ids: dict[str, str]) -> None:
            aliases[table.name] = ids

        return self.write_change(table.name, fn, label, then=then) is not None


def _commit(db, entry: _Write) -> bool:
    """``entry.fn(db)`` in one immediate transaction; marks it done once committed.

    Raises:
        sqlite3.Error: after rolling back (``entry`` stays held).
    """
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = entry.fn(db)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    entry.result, entry.done = result, True
    if entry.then is not None:
        entry.then(result)
    return True
