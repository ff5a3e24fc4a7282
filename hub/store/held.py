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
        most :data:`hub.store.db.BUSY_TIMEOUT_MS`. Never raises."""
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
