"""Where the to-do and shopping lists' items are kept: the store, so they survive a restart.

Each ``todo`` entity's items are one JSON value in the store's ``kv`` table under
``list:<entity name>``: ``{"items": [...], "completed": [...]}`` (open items in the order
added, checked-off ones). The home's entity shows them (attributes ``items``/``completed``,
state = the number of open items, as Home Assistant's todo entities do); :meth:`ListStore.
restore` puts the stored ones there at start, over the items configured in ``[home]``.

Each change is written as what the user asked (an item added, checked off, removed:
:func:`changed`), applied to the list the store holds when it is written, so two processes on
one store (``hub run`` and a ``hub ask``) both keep their changes. Without a store the lists
are kept in memory only; while the store cannot be written the changes are held and written,
in order, when it can (:mod:`hub.store.held`). One WARNING line says so, and the hub goes on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("hub.act")

KEY_PREFIX = "list:"
"""The ``kv`` key of a list is this followed by the entity's name."""


def _take(items: list, item) -> object | None:
    """Remove and return the entry equal to ``item`` (case-insensitive), or None."""
    for entry in items:
        if str(entry).casefold() == str(item).casefold():
            items.remove(entry)
            return entry
    return None


def changed(value: dict | None, change: tuple) -> dict:
    """List ``value`` (``{"items", "completed"}``, None: empty) after ``change``:
    ``("add", item)`` at the end of the open items; ``("complete", item)`` moved from the open
    items to the checked-off ones; ``("remove", item)`` from the open items, else the
    checked-off ones; ``("remove_all", entries)`` each entry once (a list cleared: what was on
    it when asked, not what another process added since); ``("set", items, completed)`` the
    whole list (Home Assistant's copy). An item not there changes nothing (another process
    removed it first). Raises ValueError for an unknown change."""
    value = value if isinstance(value, dict) else {}
    items, done = list(value.get("items") or []), list(value.get("completed") or [])
    kind, *args = change
    if kind == "add":
        items.append(args[0])
    elif kind == "complete":
        entry = _take(items, args[0])
        if entry is not None:
            done.append(entry)
    elif kind == "remove":
        if _take(items, args[0]) is None:
            _take(done, args[0])
    elif kind == "remove_all":
        for entry in args[0]:
            if _take(items, entry) is None:
                _take(done, entry)
    elif kind == "set":
        items, done = list(args[0]), list(args[1])
    else:
        raise ValueError(f"unknown list change {kind!r}")
    return {"items": items, "completed": done}


class ListStore:
    """The lists' items in the store's ``kv`` table (thread-safe).

    Args:
        store: a :class:`hub.store.db.Store` (``kv_get``/``kv_change``), or None: memory only.
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

    def save(self, name: str, items: list, completed: list, change: tuple | None = None) -> bool:
        """Keep list ``name``'s items as this process has them now (``items``,
        ``completed``: in memory) and write ``change`` (what the user asked:
        :func:`changed`; None: the whole list, ``("set", items, completed)``) to the store,
        applied to what the file holds when it is written, so what another process saved
        meanwhile is kept. True when written now; the list then is what the file holds
        (:meth:`load`). False when only memory has it now (held: written when it can)."""
        value = {"items": list(items), "completed": list(completed)}
        with self._lock:
            self._memory[name] = value
        if self._store is None:
            return False
        said = name if name.casefold().endswith("list") else f"{name} list"
        change = change or ("set", value["items"], value["completed"])
        written = self._store.kv_change(
            KEY_PREFIX + name, lambda old: changed(old, change), f"the {said}"
        )
        if written is None:
            self._warn("the store cannot be written now")
            return False
        with self._lock:
            self._memory[name] = written[0]
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
