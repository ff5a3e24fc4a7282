"""What a repair of the store knows it lost (BC-33), so no answer states a list as complete.

After a damaged file was salvaged (:meth:`hub.store.db.Store._recover`), each kind of user
data whose table lost rows, or whose row count could no longer be read, is recorded in the
``kv`` row :data:`KEY`: ``timers`` (running timers and delayed commands), ``alerts`` (alarms
and reminders) and ``lists`` (the to-do and shopping lists live in ``kv`` rows; a lost ``kv``
row may have been one). While a kind is recorded, the answers about it say that the list may
be incomplete (:mod:`hub.act.lost`). The record of a kind is dropped when the user sets
something new of that kind (a timer, an alarm or reminder, a list item, a cleared list): from
then on the hub answers from what the user has told it since.
"""

from __future__ import annotations

KEY = "lost"
"""The ``kv`` key of the record: ``{kind: {"rows": lost rows or None (unknown), "at": s}}``."""

KINDS = {"timers": "timers", "alerts": "alerts", "kv": "lists"}
"""Salvaged table -> the kind of user data the answers name."""


def record(store, lost: dict[str, int | None], now: float) -> dict[str, int | None]:
    """Record the kinds of ``lost`` (table -> rows lost, None: unknown) that lost or may have
    lost rows; returns them (kind -> rows). Never raises (a failed write is the store's)."""
    kinds = {KINDS[t]: n for t, n in lost.items() if t in KINDS and (n is None or n > 0)}
    if kinds:
        old = store.kv_get(KEY) or {}
        store.kv_set(KEY, {**old, **{k: {"rows": n, "at": now} for k, n in kinds.items()}})
    return kinds


class Losses:
    """The loss record of one store, for the answers (``hub.act``'s ``Context.losses``).

    Args:
        store: a :class:`hub.store.db.Store`, or None (nothing was ever lost).
    """

    def __init__(self, store) -> None:
        self.store = store

    def lost(self, kind: str) -> dict | None:
        """``{"rows": n or None, "at": s}`` while ``kind`` (:data:`KINDS` values) may be
        incomplete, else None."""
        if self.store is None:
            return None
        found = (self.store.kv_get(KEY) or {}).get(kind)
        return found if isinstance(found, dict) else None

    def settle(self, kind: str) -> None:
        """The user set something new of ``kind``: stop saying it may be incomplete."""
        if self.lost(kind) is None:
            return
        left = {k: v for k, v in (self.store.kv_get(KEY) or {}).items() if k != kind}
        self.store.kv_set(KEY, left)
