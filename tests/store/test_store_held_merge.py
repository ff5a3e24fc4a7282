"""The breaker's finding: two processes on one store, one locked out, lost data silently. A
write of the user's data that found the store locked was held as the *whole* list (or the
whole timers/alerts table) and written later over what the other process had saved meanwhile
("eggs", added by ``hub ask`` while ``hub run`` held "milk", was gone). Now each write is the
change the user asked for, applied inside the write transaction to what the file holds then:
every change of both processes is in the file, once. Two Store objects on one file, a third
connection holding ``BEGIN EXCLUSIVE``."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest

from hub.act.liststore import ListStore, changed
from hub.act.timers import Timers
from hub.store.alerts import stored_alerts
from hub.store.db import Store

from fakes import Clock

LIST = "Shopping List"


@pytest.fixture()
def two(tmp_path):
    """Two stores on one file (``hub run`` and ``hub ask``) and a lock taker."""
    db = tmp_path / "hub.db"
    first, second = Store(db), Store(db)
    lock = sqlite3.connect(db, isolation_level=None)
    yield db, first, second, lock
    if lock.in_transaction:
        lock.execute("ROLLBACK")
    lock.close()
    first.close()
    second.close()


def _items(db) -> dict:
    store = Store(db)
    try:
        return store.kv_get(f"list:{LIST}")
    finally:
        store.close()


def test_two_processes_held_list_change_merges_with_the_other_process_save(two):
    db, first, second, lock = two
    run, ask = ListStore(first), ListStore(second)
    lock.execute("BEGIN EXCLUSIVE")  # a third process holds the store
    assert run.save(LIST, ["milk"], [], ("add", "milk")) is False  # held
    assert first.unsaved() == ["the Shopping List"]
    lock.execute("COMMIT")
    assert ask.save(LIST, ["eggs"], [], ("add", "eggs")) is True  # the other process saves
    first.flush_held()  # the held change goes out: applied to what the file holds
    first.flush_held()  # once: nothing is written twice
    assert _items(db) == {"items": ["eggs", "milk"], "completed": []}
    assert first.unsaved() == []


def test_two_processes_held_list_changes_go_out_in_order_over_the_other_process_save(two):
    db, first, second, lock = two
    run, ask = ListStore(first), ListStore(second)
    assert ask.save(LIST, ["bread", "jam"], [], ("set", ["bread", "jam"], []))
    lock.execute("BEGIN EXCLUSIVE")
    run.save(LIST, ["bread", "jam", "milk"], [], ("add", "milk"))
    run.save(LIST, ["jam", "milk"], ["bread"], ("complete", "bread"))
    run.save(LIST, ["milk"], ["bread"], ("remove", "jam"))
    lock.execute("COMMIT")
    assert ask.save(LIST, ["bread", "jam", "eggs"], [], ("add", "eggs"))
    assert run.save(LIST, ["milk", "tea"], ["bread"], ("add", "tea"))  # the held ones first
    assert _items(db) == {"items": ["eggs", "milk", "tea"], "completed": ["bread"]}
    assert run.load(LIST) == _items(db)  # what the file holds, the other's eggs included


@pytest.mark.parametrize(
    ("value", "change", "after"),
    [
        (None, ("add", "milk"), {"items": ["milk"], "completed": []}),
        ({"items": ["Milk"]}, ("complete", "milk"), {"items": [], "completed": ["Milk"]}),
        ({"items": [], "completed": ["milk"]}, ("remove", "MILK"), {"items": [], "completed": []}),
        ({"items": ["eggs"]}, ("remove", "milk"), {"items": ["eggs"], "completed": []}),
        (
            {"items": ["milk", "eggs"], "completed": ["tea"]},
            ("remove_all", ["milk", "tea"]),
            {"items": ["eggs"], "completed": []},
        ),
    ],
)
def test_a_list_change_applies_to_what_the_file_holds(value, change, after):
    assert changed(value, change) == after


def test_two_processes_held_timer_change_merges_with_the_other_process_save(two):
    db, first, second, lock = two
    clock = Clock(now=1000.0, wall=1.7e9)
    run = Timers(clock=clock, wall=clock.wall, persist=first.stored_timers)
    ask = Timers(clock=clock, wall=clock.wall, persist=second.stored_timers)
    run.restore(first.stored_timers())
    ask.restore(second.stored_timers())  # both started on an empty table
    lock.execute("BEGIN EXCLUSIVE")
    mine = run.start(600, name="pasta")  # timer-1, held
    assert first.unsaved() == ["the timers"]
    lock.execute("COMMIT")
    theirs = ask.start(300, name="tea")  # timer-1 too, written
    assert mine.id == theirs.id == "timer-1"
    first.flush_held()
    kept = Store(db).stored_timers()
    assert sorted((t["id"], t["name"]) for t in kept) == [("timer-1", "tea"), ("timer-2", "pasta")]
    run.cancel(mine.id)  # its row in the file (timer-2), not the other's timer-1
    assert [t["name"] for t in Store(db).stored_timers()] == ["tea"]


def _alarm(hour: int) -> dict:
    return {
        "id": "alarm-1",
        "kind": "alarm",
        "label": "",
        "recurrence": "",
        "wall": f"{hour:02d}:00",
        "zone": "UTC",
        "state": "pending",
        "target": "",
        "next_fire": datetime(2030, 1, 1, hour, 0, tzinfo=UTC),
    }


def test_two_processes_held_alarm_change_merges_with_the_other_process_save(two):
    db, first, second, lock = two
    assert stored_alerts(first) == [] and stored_alerts(second) == []
    lock.execute("BEGIN EXCLUSIVE")
    stored_alerts(first, [_alarm(6)])  # held
    assert first.unsaved() == ["the alarms and reminders"]
    lock.execute("COMMIT")
    stored_alerts(second, [_alarm(7)])
    first.flush_held()
    assert sorted(a["wall"] for a in stored_alerts(Store(db))) == ["06:00", "07:00"]
    stored_alerts(second, [])  # the other cancels its own alarm only
    assert [a["wall"] for a in stored_alerts(Store(db))] == ["06:00"]
