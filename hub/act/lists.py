"""To-do and shopping list handlers: add, check off, remove an item.

A ``todo`` entity keeps its open items in the attribute ``items`` and the checked-off ones in
``completed``; its state is the number of open items (as Home Assistant's todo entities do).
Items are matched case-insensitively; an item that is not on the list is an error, not a guess.
"""

from __future__ import annotations

from hub.act.common import Context, Outcome, action, failed, refuse, reply, targets_of
from hub.intents.rules import IntentMatch


def _list_of(ctx: Context, match: IntentMatch):
    """(list entity name, item text) or a failure Outcome."""
    item = str(match.slots.get("item", "") or "").strip()
    if not item:
        return refuse("nothing_to_do")
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    shopping = [n for n in targets.entities if "shopping" in n.casefold()]
    return (shopping or list(targets.entities))[0], item


def _store(ctx: Context, name: str, items: list, completed: list) -> None:
    """Write the list's items back (state = open items)."""
    ctx.home.set_state(name, str(len(items)), items=items, completed=completed)


def add_item(ctx: Context, match: IntentMatch) -> Outcome:
    """HassListAddItem / HassShoppingListAddItem: "Added milk"."""
    found = _list_of(ctx, match)
    if isinstance(found, Outcome):
        return found
    name, item = found
    attrs = ctx.home.attributes(name)
    _store(ctx, name, [*attrs.get("items", []), item], list(attrs.get("completed", [])))
    return Outcome(reply(ctx, match, "item_added", name),
                   (action(name, "todo", "add_item", item=item),))


def _take(items: list, item: str) -> str | None:
    """Remove and return the entry equal to ``item`` (case-insensitive), or None."""
    for entry in items:
        if str(entry).casefold() == item.casefold():
            items.remove(entry)
            return entry
    return None


def _change(ctx: Context, match: IntentMatch, complete: bool) -> Outcome:
    """Check off (``complete``) or remove an item; an unknown item changes nothing."""
    found = _list_of(ctx, match)
    if isinstance(found, Outcome):
        return found
    name, item = found
    attrs = ctx.home.attributes(name)
    items, completed = list(attrs.get("items", [])), list(attrs.get("completed", []))
    entry = _take(items, item)
    if entry is None and not complete:
        entry = _take(completed, item)
    if entry is None:
        return Outcome(reply(ctx, match, "item_not_found", name), ok=False)
    if complete:
        completed.append(entry)
    _store(ctx, name, items, completed)
    key, service = ("item_completed", "update_item") if complete else ("item_deleted",
                                                                        "remove_item")
    data = {"item": entry, "status": "completed"} if complete else {"item": entry}
    return Outcome(reply(ctx, match, key, name), (action(name, "todo", service, **data),))


def complete_item(ctx: Context, match: IntentMatch) -> Outcome:
    """HassListCompleteItem / HassShoppingListCompleteItem: "Checked off milk"."""
    return _change(ctx, match, True)


def remove_item(ctx: Context, match: IntentMatch) -> Outcome:
    """HassListRemoveItem: "Removed milk"."""
    return _change(ctx, match, False)
