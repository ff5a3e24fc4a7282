"""Answers about timers, alarms and lists after the store lost some of them (BC-33).

When a damaged store was repaired and rows of a kind were lost (or could not be counted), the
hub no longer knows the whole list: "No timers." would state a fact it does not have. While
the store's loss record (:class:`hub.store.losses.Losses`, the handlers' ``Context.losses``)
holds the kind, an empty answer becomes "I have no timers on record, but ..." and a non-empty
one gets a note; the record is dropped when the user sets something new of that kind
(:data:`SETS`), through :func:`settle`.
"""

from __future__ import annotations

from dataclasses import replace

from hub.act.common import Context, Outcome

NOTHING = {
    "timers": "I have no timers on record",
    "alerts": "I have no alarms on record",
    "lists": "I have no items on record for your {list}",
}
"""The start of the answer to an empty list of a kind that may be incomplete."""

WHAT = {"timers": "saved timers", "alerts": "saved alarms or reminders", "lists": "list items"}
"""The lost data, as said."""

SETS = {
    "HassStartTimer": "timers",
    "HubAlarmSet": "alerts",
    "HubReminderSet": "alerts",
    "HassListAddItem": "lists",
    "HassShoppingListAddItem": "lists",
    "HubListClear": "lists",
}
"""Intents that set something new of a kind: once one succeeds, that kind is settled."""


def loss_note(kind: str, rows: int | None) -> str:
    """ "some saved timers were lost when the store was repaired" (``rows`` None: "may have
    been lost": the count could not be read)."""
    verb = "may have been lost" if rows is None else "were lost"
    return f"some {WHAT[kind]} {verb} when the store was repaired"


def noted(ctx: Context, kind: str, outcome: Outcome, *, empty: bool, **names) -> Outcome:
    """``outcome`` as it may be said about ``kind`` (``timers``, ``alerts``, ``lists``):
    unchanged unless the store lost some of that kind; then an ``empty`` answer says that
    nothing is on record (``names``: ``list`` for a list's name) and any other gets the note.
    """
    lost = ctx.losses.lost(kind) if ctx.losses is not None else None
    if lost is None:
        return outcome
    note = loss_note(kind, lost.get("rows"))
    if empty:
        return replace(outcome, response=f"{NOTHING[kind].format(**names)}, but {note}.")
    said = outcome.response.rstrip()
    said = said if said.endswith((".", "!", "?")) else said + "."
    return replace(outcome, response=f"{said} Note that {note}.")


def settle(ctx: Context, intent: str, outcome: Outcome) -> None:
    """After ``intent`` succeeded: if it set something new of a kind, that kind is settled."""
    kind = SETS.get(intent)
    if kind is not None and outcome.ok and ctx.losses is not None:
        ctx.losses.settle(kind)
