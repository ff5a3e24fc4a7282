"""Where the to-do and shopping lists' items are kept: the store, so they survive a restart.

Each ``todo`` entity's items are one JSON value in the store's ``kv`` table under
``list:<entity name>``: ``{"items": [...], "completed": [...]}`` (open items in the order
added, checked-off ones). The home's entity shows them (attributes ``items``/``completed``,
state = the number of open items, as Home Assistant's todo entities do); :meth:`ListStore.
restore` puts the stored ones there at start, over the items configured in ``[home]``.

Without a store the lists are kept in memory only; while the store cannot be written they are
held and written when it can (:mod:`hub.store.held`). One WARNING line says so, and the hub
goes on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("hub.act")

KEY_PREFIX = "list:"
"""The ``kv`` key of a list is this followed by the entity's name."""


class ListStore:
    """The lists' items in the store's ``kv`` table (thread-safe).

    Args:
        store: a :class:`hub.store.db.Store` (``kv_get``/``kv_set``), or None: memory only.
        remote: ``name -> open items | None``: a list also kept elsewhere (Home Assistant's
            to-do list, :meth:`hub.devices.ha.backend.HaBackend.todo_items`) is read from
            there (:meth:`open_items`); None there: the hub's own copy is read.
    """

    def __init__(self, store=None, remote: Callable[[str], list | None] | None = None) -> None:
        self._store = store
        self._remote = remote
        self._memory: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._warned = False
        if store is None:
            self._warn("no store")

    def _warn(self, why: str) -> None:
        """One WARNING line for the first time the lists cannot be kept on disk."""
        if not self._warned:
            self._warned = True
            log.warning(
                "lists: %s; shopping and to-do lists are kept in memory, written to the store "
                "when it can be (lost if the hub stops first)",
                why,
            )

    def load(self, name: str) -> dict | None:
        """``{"items", "completed"}`` stored for list ``name``, or None when none is."""
        with self._lock:
            if name in self._memory:
                return self._memory[name]
        if self._store is None:
            return None
        found = self._store.kv_get(KEY_PREFIX + name)
        if not isinstance(found, dict):
            return None
        return {
            "items": list(found.get("items") or []),
            "completed": list(found.get("completed") or []),
        }

    def save(self, name: str, items: list, completed: list) -> bool:
        """Keep list ``name``'s items; False when only memory has them now."""
        value = {"items": list(items), "completed": list(completed)}
        with self._lock:
            self._memory[name] = value
        if self._store is None:
            return False
        said = name if name.casefold().endswith("list") else f"{name} list"
        if not self._store.kv_set(KEY_PREFIX + name, value, f"the {said}"):
            self._warn("the store cannot be written now")
            return False
        return True

    def open_items(self, name: str) -> list | None:
        """List ``name``'s open items where it is kept besides the hub (``remote``), or None
        (no such place, or it cannot say now)."""
        if self._remote is None:
            return None
        try:
            return self._remote(name)
        except Exception as exc:  # a broken link never loses the hub's own copy
            log.warning("lists: %s not read from its backend: %s", name, exc)
            return None

    def restore(self, home) -> int:
        """Put the stored items of every ``todo`` entity of ``home`` on it; returns how many
        lists were found in the store."""
        found = 0
        for entity in home.entities:
            if entity.domain != "todo":
                continue
            stored = self.load(entity.name)
            if stored is not None:
                found += 1
                home.set_state(entity.name, str(len(stored["items"])), **stored)
        return found
