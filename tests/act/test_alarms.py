"""Alarms and reminders through the hub's text turns, on a hand-moved clock (issue 22):
set / list / cancel / snooze / stop, a weekday alarm across the spring change, restarts
(late within the grace rings, older is reported missed once), reminders, an unsynced clock."""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime

import pytest

from hub.resilience.load import FixedProbe
from hub.store.alerts import NaiveDatetimeError, stored_alerts
from hub.store.db import Store

from fakes import ROOMY_TIMEOUTS, Clock, FakeAsr, FakeTts, settings

LONDON = "Europe/London"


def epoch(*args) -> float:
    return datetime(*args, tzinfo=UTC).timestamp()


def alarm_hub(wall: float, store=None, zone: str = LONDON, **alarms):
    """A fake-engine hub in ``zone`` on a hand-moved clock; ``hub.rang`` collects its alerts."""
    from hub.core.hub import Hub

    base = settings(timeouts_s=ROOMY_TIMEOUTS)
    cfg = dataclasses.replace(
        base,
        home=dataclasses.replace(base.home, time_zone=zone),
        alarms=dataclasses.replace(base.alarms, clock_check="off", **alarms),
    )
    clock = Clock(now=1000.0, wall=wall)
    hub = Hub(
        cfg,
        factories={"asr": lambda h: FakeAsr("x"), "tts": lambda h: FakeTts()},
        store=store,
        probe=FixedProbe(),
        clock=clock,
        wall=clock.wall,
    )
    hub.clock_, hub.rang, hub.ended = clock, [], []
    hub.events.on_timer_finished(hub.rang.append)
    hub.events.on_timer_stopped(hub.ended.append)
    return hub


def say(hub, text: str) -> str:
    return hub.turn_text(text)["response"]


def move_to(hub, when: float) -> list:
    hub.clock_.advance(when - hub.clock_.wall_now)
    return hub.events.tick()


def test_set_list_snooze_stop_an_alarm(tmp_path):
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0), store=Store(tmp_path / "hub.db"))
    assert say(hub, "set an alarm for 7 am") == "Alarm set for 7 AM on Sunday."
    [row] = stored_alerts(Store(tmp_path / "hub.db"))
    assert row["next_fire"] == datetime(2026, 3, 29, 6, 0, tzinfo=UTC)
    assert row["zone"] == LONDON and row["state"] == "pending" and row["kind"] == "alarm"
    assert say(hub, "what alarms do I have") == "You have 1 alarm: 7 AM on Sunday."
    assert move_to(hub, epoch(2026, 3, 29, 5, 59)) == []
    [ring] = move_to(hub, epoch(2026, 3, 29, 6, 0))
    assert ring.event == "alarm_ringing" and ring.text == "Your 7 AM alarm." and ring.pcm
    assert hub.events.stop_armed
    assert say(hub, "snooze") == "Snoozed for 10 minutes."
    assert not hub.events.stop_armed and move_to(hub, epoch(2026, 3, 29, 6, 9)) == []
    [again] = move_to(hub, epoch(2026, 3, 29, 6, 10))
    assert again.event == "alarm_ringing"
    assert say(hub, "stop") == "Alarm stopped."
    assert [i.id for i in hub.ended] == [again.timer.id] and not hub.events.stop_armed
    assert say(hub, "what alarms do I have") == "You have no alarms."
    assert stored_alerts(Store(tmp_path / "hub.db"))[0]["state"] == "done"


def test_an_alarm_rings_every_few_seconds_until_capped_then_is_missed():
    hub = alarm_hub(epoch(2026, 6, 1, 5, 0), ring_s=60.0, ring_every_s=8.0)
    say(hub, "set an alarm for 7 am")
    move_to(hub, epoch(2026, 6, 1, 6, 0))
    repeats = [a.repeat for t in range(1, 8) for a in move_to(hub, epoch(2026, 6, 1, 6, 0) + 8 * t)]
    assert repeats == [1, 2, 3, 4, 5, 6, 7][: len(repeats)] and len(repeats) >= 6
    move_to(hub, epoch(2026, 6, 1, 6, 1))
    assert not hub.events.stop_armed and len(hub.ended) == 1
    assert hub.alarms.records()[0].state == "missed"


def test_cancel_an_alarm_by_its_time_and_ask_which_when_several_fit():
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0))
    say(hub, "set an alarm for 7 am")
    say(hub, "wake me up at 6:30 tomorrow")
    assert say(hub, "cancel my alarm").startswith("Which alarm do you mean?")
    assert say(hub, "cancel my 7 am alarm") == "Alarm for 7 AM on Sunday cancelled."
    assert say(hub, "what alarms do I have") == "You have 1 alarm: 6:30 AM on Sunday."
    assert say(hub, "cancel my 9 am alarm") == "You have no alarm at 9 AM, only 6:30 AM on Sunday."
    assert say(hub, "what alarms do I have") == "You have 1 alarm: 6:30 AM on Sunday."


def test_cancel_at_a_time_with_no_alarm_says_which_are_set_and_cancels_none():
    """7 AM heard as 7 PM (the grammar's AM/PM are close): nothing is cancelled, the hub says
    which alarms are set; with none set, the plain miss."""
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0))
    assert say(hub, "cancel my 7 pm alarm") == "You have no alarm at that time."
    say(hub, "set an alarm for 7 am")
    assert say(hub, "cancel my 7 pm alarm") == "You have no alarm at 7 PM, only 7 AM on Sunday."
    assert [a.wall for a in hub.alarms.active("alarm")] == ["07:00"]


def test_bc47_every_weekday_at_7_across_the_spring_change_rings_on_monday_at_0600z():
    hub = alarm_hub(epoch(2026, 3, 27, 8, 0))  # Friday, after its 7 o'clock
    assert say(hub, "every weekday at 7") == "Alarm set for 7 AM every weekday, first on Monday."
    for day in (28, 29):  # the weekend, and the change on Sunday: nothing rings
        assert move_to(hub, epoch(2026, 3, day, 7, 0)) == []
    assert move_to(hub, epoch(2026, 3, 30, 5, 59)) == []
    [ring] = move_to(hub, epoch(2026, 3, 30, 6, 0))  # 07:00 BST
    assert ring.event == "alarm_ringing"
    say(hub, "stop")
    [alarm] = hub.alarms.active("alarm")
    assert alarm.state == "pending"
    assert alarm.next_fire == datetime(2026, 3, 31, 6, 0, tzinfo=UTC)


def test_an_alarm_due_while_the_hub_was_off_rings_late_within_the_grace(tmp_path):
    db = tmp_path / "hub.db"
    say(alarm_hub(epoch(2026, 3, 28, 22, 0), store=Store(db)), "set an alarm for 7 am")
    later = alarm_hub(epoch(2026, 3, 29, 6, 2), store=Store(db), grace_s=300.0)
    [ring] = later.events.tick()
    assert ring.event == "alarm_ringing"
    assert ring.text == "Your 7 AM alarm was due at 7 AM on Sunday."


def test_an_alarm_due_long_before_a_restart_is_reported_missed_once(tmp_path):
    db = tmp_path / "hub.db"
    say(alarm_hub(epoch(2026, 3, 28, 22, 0), store=Store(db)), "set an alarm for 7 am")
    later = alarm_hub(epoch(2026, 3, 29, 9, 0), store=Store(db), grace_s=300.0)
    assert later.events.tick() == []  # it does not ring two hours late
    first = say(later, "what alarms do I have")
    assert first == ("You missed your 7 AM on Sunday alarm while I was off. You have no alarms.")
    assert say(later, "what alarms do I have") == "You have no alarms."  # once
    assert stored_alerts(Store(db))[0]["state"] == "missed"


def test_a_reminder_speaks_its_message_when_due(tmp_path):
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0), store=Store(tmp_path / "hub.db"))
    assert (
        say(hub, "remind me to take out the trash in 20 minutes")
        == "I'll remind you to take out the trash in 20 minutes."
    )
    assert move_to(hub, epoch(2026, 3, 28, 22, 19)) == []
    [said] = move_to(hub, epoch(2026, 3, 28, 22, 20))
    assert said.event == "reminder" and said.text == "Reminder: take out the trash."
    assert not hub.events.stop_armed  # said once, it does not ring on
    assert (
        say(hub, "remind me to call mum at 7 pm")
        == "I'll remind you to call mum at 7 PM on Sunday."
    )


def test_bc47_reminder_in_8_hours_rings_after_8_real_hours_across_the_change():
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0))
    say(hub, "remind me to check the oven in 8 hours")
    assert move_to(hub, epoch(2026, 3, 29, 5, 59)) == []
    [said] = move_to(hub, epoch(2026, 3, 29, 6, 0))  # 07:00 BST
    assert said.text == "Reminder: check the oven."


def test_unsynchronized_clock_refuses_clock_time_alarms_and_stores_nothing(tmp_path):
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0), store=Store(tmp_path / "hub.db"))
    hub.alarms.synced = lambda: False  # the fake sync reader
    answer = say(hub, "set an alarm for 7 am")
    assert "don't know the time yet" in answer and "not synchronized" in answer
    assert "Alarm set" not in answer
    assert say(hub, "remind me to water the plants tomorrow at 9").startswith("I don't know")
    assert stored_alerts(Store(tmp_path / "hub.db")) == [] and hub.alarms.records() == []
    assert say(hub, "remind me to call mum in 20 minutes").startswith("I'll remind you")
    assert len(stored_alerts(Store(tmp_path / "hub.db"))) == 1


def test_bc47_the_store_rejects_naive_datetimes_and_migrates_naive_rows(tmp_path, caplog):
    store = Store(tmp_path / "hub.db")
    row = {
        "id": "alarm-1",
        "kind": "alarm",
        "label": "",
        "recurrence": "daily",
        "wall": "07:00",
        "zone": LONDON,
        "state": "pending",
        "target": "",
        "next_fire": datetime(2026, 3, 29, 7, 0),
    }
    with pytest.raises(NaiveDatetimeError, match="no time zone"):
        stored_alerts(store, [row])
    assert stored_alerts(store) == []
    import json

    store._run(
        "t",
        lambda db: db.conn.execute(
            "INSERT INTO alerts (id, next_fire, record) VALUES (?, ?, ?)",
            (
                "alarm-1",
                "2026-03-29T07:00:00",
                json.dumps({**row, "next_fire": "2026-03-29T07:00:00"}),
            ),
        ),
    )
    with caplog.at_level(logging.WARNING, logger="hub.store.alerts"):
        [read] = stored_alerts(store)
    assert read["next_fire"] == datetime(2026, 3, 29, 6, 0, tzinfo=UTC)  # 07:00 BST
    assert "naive" in caplog.text
    stored = store._run(
        "r", lambda db: db.conn.execute("SELECT next_fire FROM alerts").fetchone()[0], write=False
    )
    assert stored == "2026-03-29T06:00:00+00:00"


def test_bc47_changing_the_zone_recomputes_next_fires_from_wall_time():
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0))
    say(hub, "set an alarm for 7 am")
    hub.alarms.rezone("America/New_York")
    [alarm] = hub.alarms.active()
    assert alarm.next_fire == datetime(2026, 3, 29, 11, 0, tzinfo=UTC)  # 07:00 EDT


def test_bc47_a_hub_started_in_another_zone_keeps_each_alarms_wall_time(tmp_path, caplog):
    """Two hubs on one store: set in London, started again with ``[home] time_zone`` in New
    York while the London 7 AM (06:00Z) has passed: 7 AM New York (11:00Z), one INFO line."""
    db = tmp_path / "hub.db"
    london = alarm_hub(epoch(2026, 3, 28, 22, 0), store=Store(db))
    assert say(london, "set an alarm for 7 am") == "Alarm set for 7 AM on Sunday."
    say(london, "every weekday at 7")
    with caplog.at_level(logging.INFO, logger="hub.act.alarms"):
        ny = alarm_hub(epoch(2026, 3, 29, 6, 30), store=Store(db), zone="America/New_York")
    [line] = [r.getMessage() for r in caplog.records if "time zone is now" in r.getMessage()]
    assert "America/New_York (was Europe/London)" in line and "2 kept" in line, line
    assert ny.events.tick() == []  # not late, not missed: it is 02:30 in New York
    assert say(ny, "what alarms do I have") == (
        "You have 2 alarms: 7 AM on Sunday and 7 AM every weekday."
    )
    fires = {r["recurrence"]: r["next_fire"] for r in stored_alerts(Store(db))}
    assert fires == {
        "": datetime(2026, 3, 29, 11, 0, tzinfo=UTC),  # 07:00 EDT
        "weekdays": datetime(2026, 3, 30, 11, 0, tzinfo=UTC),
    }
    assert {r["zone"] for r in stored_alerts(Store(db))} == {"America/New_York"}
    assert move_to(ny, epoch(2026, 3, 29, 10, 59)) == []
    [ring] = move_to(ny, epoch(2026, 3, 29, 11, 0))
    assert ring.event == "alarm_ringing" and ring.text == "Your 7 AM alarm."


def test_bc47_every_day_at_1_30_am_set_before_the_spring_gap_says_its_wall_time():
    hub = alarm_hub(epoch(2026, 3, 28, 12, 0))  # Saturday; 01:30 on Sunday does not exist
    assert say(hub, "every day at 1:30 am") == (
        "Alarm set for 1:30 AM every day. On Sunday it rings at 2 AM,"
        " as 1:30 AM does not exist that day."
    )
    assert say(hub, "what alarms do I have") == "You have 1 alarm: 1:30 AM every day."
    [ring] = move_to(hub, epoch(2026, 3, 29, 1, 0))  # 02:00 BST, the first valid minute
    assert ring.event == "alarm_ringing"
    say(hub, "stop")
    [alarm] = hub.alarms.active("alarm")
    assert alarm.next_fire == datetime(2026, 3, 30, 0, 30, tzinfo=UTC)  # 01:30 BST
    assert say(hub, "every day at 7 am") == "Alarm set for 7 AM every day, first on Sunday."


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("set an alarm for 25:00", "25:00 is not a time of day."),
        ("wake me up at 7:75", "7:75 is not a time of day."),
        ("remind me at 31:15 to call mum", "31:15 is not a time of day."),
    ],
)
def test_bc47_an_impossible_clock_time_gets_a_short_true_answer(tmp_path, said, answer):
    hub = alarm_hub(epoch(2026, 3, 28, 12, 0), store=Store(tmp_path / "hub.db"))
    assert say(hub, said) == answer
    assert hub.alarms.records() == [] and stored_alerts(Store(tmp_path / "hub.db")) == []


def test_a_clock_shaped_ratio_is_not_taken_for_a_time():
    from hub.act.said_time import impossible_time

    assert impossible_time("mix it 30:70") is None
    assert impossible_time("set an alarm for 23:59") is None
    assert impossible_time("set an alarm for 12:30 pm") is None


def test_doctor_shows_whether_the_clock_is_synchronized():
    from hub.cli.doctor import clock_line

    base = settings()
    cfg = dataclasses.replace(base, home=dataclasses.replace(base.home, time_zone=LONDON))
    assert clock_line(cfg, False).startswith("NOT synchronized: alarms and reminders")
    assert clock_line(cfg, True) == "synchronized (adjtimex); zone Europe/London"


def test_the_clock_sync_readers_answer_a_bool_and_off_trusts_the_clock():
    from hub.act.clocksync import adjtimex_synced, sync_reader

    assert isinstance(adjtimex_synced(), bool)
    assert sync_reader("off")() is True and sync_reader("adjtimex") is adjtimex_synced


def test_tester_snoozed_alarm_keeps_its_set_time_and_says_it_was_snoozed():
    """Tester's notes (``hub run``): a snoozed 11:47 PM alarm rang as "Your 11:57 PM alarm."
    and was listed as "11:57 PM on Saturday". As an alarm clock labels it ("<label>
    (snoozed)", "Snoozing until ..."), it keeps the time it was set for and says the snooze."""
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0))  # Saturday, GMT
    assert say(hub, "set an alarm for 11:47 pm") == "Alarm set for 11:47 PM on Saturday."
    [ring] = move_to(hub, epoch(2026, 3, 28, 23, 47))
    assert ring.text == "Your 11:47 PM alarm."
    line = ring.to_json(None)
    assert "duration_s" not in line  # an alarm has no duration (it said 0)
    assert (line["kind"], line["time"], line["snoozed"], line["snoozed_until"]) == (
        "alarm",
        "11:47 PM",
        False,
        None,
    )
    assert say(hub, "snooze") == "Snoozed for 10 minutes."
    listed = "You have 1 alarm: 11:47 PM on Saturday, snoozed until 11:57 PM."
    assert say(hub, "what alarms do I have") == listed
    [again] = move_to(hub, epoch(2026, 3, 28, 23, 57))
    assert again.text == "Your 11:47 PM alarm (snoozed)."
    line = again.to_json(None)
    assert (line["time"], line["snoozed"], line["snoozed_until"]) == ("11:47 PM", True, "11:57 PM")
    assert say(hub, "stop") == "Alarm stopped."
    assert say(hub, "what alarms do I have") == "You have no alarms."


def test_a_snooze_past_midnight_keeps_the_day_it_was_set_for_and_survives_a_restart(tmp_path):
    db = tmp_path / "hub.db"
    hub = alarm_hub(epoch(2026, 3, 28, 22, 0), store=Store(db))
    say(hub, "set an alarm for 11:55 pm")
    move_to(hub, epoch(2026, 3, 28, 23, 55))
    say(hub, "snooze")
    later = alarm_hub(epoch(2026, 3, 29, 0, 1), store=Store(db))  # restarted while snoozed
    listed = "You have 1 alarm: 11:55 PM on Saturday, snoozed until 12:05 AM."
    assert say(later, "what alarms do I have") == listed
    [ring] = move_to(later, epoch(2026, 3, 29, 0, 5))
    assert ring.text == "Your 11:55 PM alarm (snoozed)."


def test_a_recurring_alarm_stopped_after_a_snooze_rings_unsnoozed_next_time():
    hub = alarm_hub(epoch(2026, 6, 1, 5, 0))  # a Monday, BST
    say(hub, "every day at 7")
    move_to(hub, epoch(2026, 6, 1, 6, 0))
    say(hub, "snooze")
    move_to(hub, epoch(2026, 6, 1, 6, 10))
    say(hub, "stop")
    assert say(hub, "what alarms do I have") == "You have 1 alarm: 7 AM every day."
    [ring] = move_to(hub, epoch(2026, 6, 2, 6, 0))
    assert ring.text == "Your 7 AM alarm." and ring.to_json(None)["snoozed"] is False


def test_stop_while_a_timer_and_an_alarm_ring_stops_both_and_says_both():
    hub = alarm_hub(epoch(2026, 6, 1, 5, 0))
    say(hub, "set an alarm for 7 am")
    say(hub, "set a timer for 30 seconds")
    hub.clock_.advance(30.0)
    move_to(hub, epoch(2026, 6, 1, 6, 0))
    assert hub.events.timers.ringing() and hub.alarms.ringing()
    assert say(hub, "stop") == "Timer cancelled. Alarm stopped."
    assert not hub.events.stop_armed
