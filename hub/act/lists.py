"""To-do and shopping list handlers: add, check off, remove an item; read a list; clear it.

A ``todo`` entity keeps its open items in the attribute ``items`` and the checked-off ones in
``completed``; its state is the number of open items (as Home Assistant's todo entities do).
Every change is also kept in the store (:mod:`hub.act.liststore`), so lists survive a restart.
A list linked to Home Assistant (``[homeassistant] entities``) is HA's to-do list: changes go
to it as ``todo.add_item`` / ``remove_item`` / ``update_item`` calls, and it is read back from
HA (``todo.get_items``) when HA answers, else from the hub's copy.
Items are matched case-insensitively; an item that is not on the list is an error, not a guess.

Reading a list is Home Assistant's ``HassShoppingListLastItems`` (its shopping_list
integration): the :data:`TOP` most recently added open items, newest first ("These are the
top 3 items on your shopping list: soda, wine, beer"); the hub also reads a named to-do list
the same way. Clearing (``HubListClear``, the hub's own: Home Assistant has no such intent)
removes every item, open and checked off.
"""

from __future__ import annotations

from hub.act.common import Context, Outcome, action, failed, refuse, reply, targets_of
from hub.act.lost import noted
from hub.act.responses import render
from hub.intents.match import IntentMatch

TOP = 5
"""Items read back at most (Home Assistant's shopping list reads its last 5)."""


def _target_list(ctx: Context, match: IntentMatch):
    """The list entity the match names (the shopping list when none is named), or a
    failure Outcome."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    shopping = [n for n in targets.entities if "shopping" in n.casefold()]
    return (shopping or list(targets.entities))[0]


def _list_of(ctx: Context, match: IntentMatch):
    """(list entity name, item text) or a failure Outcome."""
    item = str(match.slots.get("item", "") or "").strip()
    if not item:
        return refuse("nothing_to_do")
    name = _target_list(ctx, match)
    return name if isinstance(name, Outcome) else (name, item)


def _store(
    ctx: Context, name: str, items: list, completed: list, change: tuple | None = None
) -> None:
    """Write the list's items back (state = open items), and ``change`` (what was asked:
    :func:`hub.act.liststore.changed`) to the store when there is one; once written, the
    list is what the store holds (another process's changes included)."""
    if ctx.lists is not None and ctx.lists.save(name, items, completed, change):
        kept = ctx.lists.load(name) or {}
        items, completed = list(kept.get("items", items)), list(kept.get("completed", completed))
    ctx.home.set_state(name, str(len(items)), items=items, completed=completed)


def _spoken(name: str) -> str:
    """How a list is named in an answer: "shopping list", "Chores list"."""
    return name.lower() if name.casefold().endswith("list") else f"{name} list"


def get_items(ctx: Context, match: IntentMatch) -> Outcome:
    """HassShoppingListLastItems: "These are the top 2 items on your shopping list: eggs,
    milk" / "There are no items on your shopping list"."""
    name = _target_list(ctx, match)
    if isinstance(name, Outcome):
        return name
    attrs = ctx.home.attributes(name)
    remote = ctx.lists.open_items(name) if ctx.lists is not None else None
    if remote is not None:  # Home Assistant's to-do list: what it holds now
        _store(ctx, name, remote, list(attrs.get("completed", [])))
    items = [str(i) for i in (remote if remote is not None else attrs.get("items", []))]
    top = list(reversed(items))[:TOP]
    key = "items" if top else "no_items"
    said = Outcome(
        render(
            match.intent, key, match.slots, count=len(top), items=", ".join(top), list=_spoken(name)
        )
    )
    if remote is not None:  # Home Assistant's list: what it holds, nothing lost here
        return said
    return noted(ctx, "lists", said, empty=not top, list=_spoken(name))


def clear_items(ctx: Context, match: IntentMatch) -> Outcome:
    """HubListClear: every item removed, open and checked off ("Cleared the shopping list")."""
    name = _target_list(ctx, match)
    if isinstance(name, Outcome):
        return name
    attrs = ctx.home.attributes(name)
    gone = [*attrs.get("items", []), *attrs.get("completed", [])]
    if not gone:
        return Outcome(render("HassShoppingListLastItems", "no_items", list=_spoken(name)))
    _store(ctx, name, [], [], ("remove_all", gone))
    return Outcome(
        render(match.intent, "cleared", match.slots, list=_spoken(name)),
        (action(name, "todo", "remove_item", item=gone),),
    )


def add_item(ctx: Context, match: IntentMatch) -> Outcome:
    """HassListAddItem / HassShoppingListAddItem: "Added milk"."""
    found = _list_of(ctx, match)
    if isinstance(found, Outcome):
        return found
    name, item = found
    attrs = ctx.home.attributes(name)
    items, completed = [*attrs.get("items", []), item], list(attrs.get("completed", []))
    _store(ctx, name, items, completed, ("add", item))
    return Outcome(
        reply(ctx, match, "item_added", name), (action(name, "todo", "add_item", item=item),)
    )


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
    _store(ctx, name, items, completed, ("complete" if complete else "remove", entry))
    key, service = (
        ("item_completed", "update_item") if complete else ("item_deleted", "remove_item")
    )
    data = {"item": entry, "status": "completed"} if complete else {"item": entry}
    return Outcome(reply(ctx, match, key, name), (action(name, "todo", service, **data),))


def complete_item(ctx: Context, match: IntentMatch) -> Outcome:
    """HassListCompleteItem / HassShoppingListCompleteItem: "Checked off milk"."""
    return _change(ctx, match, True)


def remove_item(ctx: Context, match: IntentMatch) -> Outcome:
    """HassListRemoveItem: "Removed milk"."""
    return _change(ctx, match, False)
