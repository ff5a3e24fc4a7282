"""The user's data the store could not write when it changed (a list, the timers, the alarms
and reminders), held in memory until it can (a mixin of ``Store``).

Each such write replaces a whole value (a ``kv`` row, the ``timers`` or ``alerts`` table), so
only the newest per key is held, and writing it later is the same as having written it then.
Held writes go out with :meth:`HeldMixin.flush_held` (from ``Store.flush_memory``: the first
write that succeeds again, each maintenance round, and :func:`hub.store.retention.finish`,
which waits up to ``[store] save_wait_s`` for a locked store and then says on stderr what was
not saved). A turn that changed something the store could not take says so in its answer
(:data:`hub.graph.answers.NOT_SAVED`, by :attr:`HeldMixin.unsaved_writes`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

TURN_BUSY_MS = 250
"""Longest a write of the user's data waits for a lock another connection holds before it is
held in memory: a small part of the ``act`` node's budget (``[resilience] timeouts_s.act``,
2 s), so a locked store never makes an action time out ("Sorry, I couldn't do that right
now." for an item that was in fact added). The store's other writes wait
:data:`hub.store.db.BUSY_TIMEOUT_MS`."""


def briefly(fn: Callable) -> Callable:
    """``fn(db)`` with SQLite's busy timeout at :data:`TURN_BUSY_MS`, put back afterwards."""

    def run(db):
        conn = db.conn
        (before,) = conn.execute("PRAGMA busy_timeout").fetchone()
        conn.execute(f"PRAGMA busy_timeout={TURN_BUSY_MS}")
        try:
            return fn(db)
        finally:
            conn.execute(f"PRAGMA busy_timeout={before}")

    return run


class HeldMixin:
    """Held writes; needs ``_run`` (``hub.store.db.Store``). ``_init_held`` sets it up."""

    unsaved_writes: int
    """How many writes of the user's data failed so far (a turn compares it before/after)."""

    def _init_held(self) -> None:
        self._held_lock = threading.RLock()
        self._held: dict[str, tuple[str, Callable, str]] = {}
        self.unsaved_writes = 0

    def write_state(self, key: str, what: str, fn: Callable, label: str = "") -> bool:
        """Write ``fn(db)`` now (it replaces ``key``'s whole value); True when it was written.
        When it fails it is held, in place of an older write of ``key``, until
        :meth:`flush_held` can write it. ``label`` names it for the user ("the Shopping List");
        "" for the hub's own bookkeeping. A lock held by another connection is waited for at
        most :data:`TURN_BUSY_MS`. Never raises."""
        fn = briefly(fn)
        with self._held_lock:
            if self._run(what, fn, False):
                self._held.pop(key, None)
                return True
            self._held[key] = (what, fn, label)
            if label:
                self.unsaved_writes += 1
            return False

    def flush_held(self) -> None:
        """Write what is held, oldest first, until a write fails. Never raises."""
        with self._held_lock:
            for key, entry in list(self._held.items()):
                if self._held.get(key) is not entry:
                    continue  # written meanwhile (a newer value, or a nested flush)
                if not self._run(entry[0], entry[1], False):
                    return
                if self._held.get(key) is entry:
                    del self._held[key]

    def unsaved(self) -> list[str]:
        """The labels of the user's data held (not in the file yet), oldest first."""
        with self._held_lock:
            return [label for _, _, label in self._held.values() if label]
