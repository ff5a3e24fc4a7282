"""Lists read back (issue 22 item 4): "what is on my shopping list" reads the items (Home
Assistant's HassShoppingListLastItems wording), remove and clear change them, and the store
keeps them across a restart; without a store they live in memory, with one WARNING line."""

from __future__ import annotations

import logging

from dialog_helpers import dialog_hub, said

from hub.act.liststore import ListStore
from hub.store.db import Store

WHAT = "what is on my shopping list"


def test_the_items_are_read_back_newest_first():
    hub = dialog_hub()
    assert hub.turn_text(WHAT)["response"] == "There are no items on your shopping list."
    hub.turn_text("add milk to my shopping list")
    assert hub.turn_text("what's on the shopping list")["response"] == (
        "The only item on your shopping list is milk."
    )
    for item in ("eggs", "bread"):
        hub.turn_text(f"add {item} to my shopping list")
    read = hub.turn_text(WHAT)
    assert read["intent"] == "HassShoppingListLastItems"
    assert read["response"] == "These are the top 3 items on your shopping list: bread, eggs, milk."
    assert said(hub, "read me my shopping list")["response"] == read["response"]


def test_only_the_last_five_are_read():
    hub = dialog_hub()
    for n in range(7):
        hub.turn_text(f"add item {n} to my shopping list")
    assert hub.turn_text(WHAT)["response"] == (
        "These are the top 5 items on your shopping list: item 6, item 5, item 4, item 3, item 2."
    )


def test_remove_and_clear():
    hub = dialog_hub()
    for item in ("milk", "eggs"):
        hub.turn_text(f"add {item} to my shopping list")
    assert hub.turn_text("remove milk from my shopping list")["response"] == "Removed milk."
    assert hub.turn_text(WHAT)["response"] == "The only item on your shopping list is eggs."
    cleared = hub.turn_text("clear the shopping list")
    assert (cleared["intent"], cleared["response"]) == (
        "HubListClear",
        "Cleared the shopping list.",
    )
    assert hub.home.attributes("Shopping List")["items"] == []
    assert hub.home.state("Shopping List") == "0"
    again = hub.turn_text("clear the shopping list")
    assert again["response"] == "There are no items on your shopping list."


def test_the_list_survives_a_restart(tmp_path):
    path = tmp_path / "hub.db"
    first = Store(path)
    hub = dialog_hub(store=first)
    hub.turn_text("add milk to my shopping list")
    hub.turn_text("add eggs to my shopping list")
    hub.turn_text("remove milk from my shopping list")
    first.close()
    again = dialog_hub(store=Store(path))
    assert again.turn_text(WHAT)["response"] == "The only item on your shopping list is eggs."


def test_without_a_store_the_list_is_kept_in_memory_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="hub.act"):
        hub = dialog_hub(store=None)
        hub.turn_text("add milk to my shopping list")
        hub.turn_text("add eggs to my shopping list")
    lines = [r for r in caplog.records if r.name == "hub.act" and "lists:" in r.message]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert "memory" in lines[0].message
    assert hub.turn_text(WHAT)["response"].endswith("eggs, milk.")


class _BrokenStore:
    """A store whose writes fail (a full or read-only disk)."""

    def __init__(self):
        self.writes = 0

    def kv_get(self, key):
        return None

    def kv_change(self, key, change, label=""):
        self.writes += 1
        return None


def test_a_store_that_cannot_be_written_keeps_the_list_in_memory(caplog):
    store = _BrokenStore()
    lists = ListStore(store)
    with caplog.at_level(logging.WARNING, logger="hub.act"):
        assert lists.save("Shopping List", ["milk"], []) is False
        assert lists.save("Shopping List", ["milk", "eggs"], []) is False
    assert store.writes == 2 and len([r for r in caplog.records if "lists:" in r.message]) == 1
    assert lists.load("Shopping List") == {"items": ["milk", "eggs"], "completed": []}
