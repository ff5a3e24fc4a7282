"""To-do and shopping list handlers, table style. ``Chores`` holds "dishes" and "laundry";
the ``Shopping List`` starts empty."""

from __future__ import annotations

import pytest

from intent_table import check_row

ADD = [
    ("add eggs to the chores list", "HassListAddItem", "eggs", "Chores"),
    ("put milk on my shopping list", "HassListAddItem", "milk", "Shopping List"),
    ("add bread to my shopping list", "HassListAddItem", "bread", "Shopping List"),
    ("add call mom to chores", "HassListAddItem", "call mom", "Chores"),
    ("add milk and eggs to the shopping list", "HassListAddItem", "milk and eggs", "Shopping List"),
    ("add apples to my list", "HassShoppingListAddItem", "apples", "Shopping List"),
    ("put bread on my list", "HassShoppingListAddItem", "bread", "Shopping List"),
    ("add coffee to the list", "HassShoppingListAddItem", "coffee", "Shopping List"),
    ("add cheese to my list", "HassShoppingListAddItem", "cheese", "Shopping List"),
    ("add paper towels to my list", "HassShoppingListAddItem", "paper towels", "Shopping List"),
]


@pytest.mark.parametrize("text, intent, item, name", ADD)
def test_add_item(text, intent, item, name):
    home = check_row(text, intent, {"item": item}, f"Added {item}", (name, "add_item"))
    assert home.attributes(name)["items"][-1] == item


COMPLETE = [
    ("check off dishes from the chores list", "dishes"),
    ("check dishes off the chores list", "dishes"),
    ("check laundry off chores", "laundry"),
    ("complete dishes on my chores list", "dishes"),
    ("check off laundry on chores", "laundry"),
]


@pytest.mark.parametrize("text, item", COMPLETE)
def test_list_complete_item(text, item):
    home = check_row(
        text,
        "HassListCompleteItem",
        {"item": item, "name": "Chores"},
        f"Checked off {item}",
        ("Chores", "update_item"),
    )
    attrs = home.attributes("Chores")
    assert item not in attrs["items"] and attrs["completed"] == [item]
    assert home.state("Chores") == "1"


REMOVE = [
    ("remove laundry from my chores list", "laundry"),
    ("delete dishes from the chores list", "dishes"),
    ("remove dishes from chores", "dishes"),
    ("delete laundry from my chores list", "laundry"),
    ("delete laundry from chores", "laundry"),
]


@pytest.mark.parametrize("text, item", REMOVE)
def test_list_remove_item(text, item):
    home = check_row(
        text,
        "HassListRemoveItem",
        {"item": item, "name": "Chores"},
        f"Removed {item}",
        ("Chores", "remove_item"),
    )
    assert item not in home.attributes("Chores")["items"]


@pytest.mark.parametrize(
    "text",
    [
        "check apples off my list",
        "check off apples from my list",
        "complete apples on my list",
        "check apples off from my list",
        "check off apples on the list",
    ],
)
def test_shopping_list_complete_item(text):
    states = {"Shopping List": ("2", {"items": ["apples", "pears"]})}
    home = check_row(
        text,
        "HassShoppingListCompleteItem",
        {"item": "apples"},
        "Checked off apples",
        ("Shopping List", "update_item"),
        states=states,
    )
    attrs = home.attributes("Shopping List")
    assert (attrs["items"], attrs["completed"]) == (["pears"], ["apples"])


def test_shopping_list_item_not_there():
    check_row(
        "check apples off my list",
        "HassShoppingListCompleteItem",
        {"item": "apples"},
        "Sorry, apples is not on the list",
        None,
    )


def test_an_item_not_on_the_list_changes_nothing():
    home = check_row(
        "remove cheese from the chores list",
        "HassListRemoveItem",
        {"item": "cheese"},
        "Sorry, cheese is not on the list",
        None,
    )
    assert home.attributes("Chores")["items"] == ["dishes", "laundry"]
