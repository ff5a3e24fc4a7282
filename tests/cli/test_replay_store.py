"""Issue 22 item 4: a replay's timers, alarms and reminders never ring elsewhere.

``hub replay`` shares the per-user store with ``hub run``; what a replayed "set a timer" sets
lives only while that replay runs (``Hub(keep_timers=False)``): nothing is written to the
store, and the daemon's stored timers are neither restored nor rung by the replay.
"""

from __future__ import annotations

from hub.cli.args import make_hub
from hub.cli.main import build_parser


def _hub(store, command: str):
    extra = ["--no-llm", "x.wav"] if command == "replay" else []
    args = build_parser().parse_args([command, "--store", str(store), *extra])
    return make_hub(args, command, speak=False)


def test_a_replays_timers_and_reminders_are_not_stored_and_never_ring_in_run(tmp_path):
    store = tmp_path / "hub.db"
    replay = _hub(store, "replay")
    assert replay.turn_text("set a timer for 5 minutes")["intent"] == "HassStartTimer"
    said = replay.turn_text("remind me in 20 minutes to take out the trash")
    assert said["intent"] == "HubReminderSet"
    # the replay itself has them (its own timers still ring while it runs) ...
    assert replay.timers.next_due_in() is not None and replay.alarms.active()
    replay.store.close()
    # ... the daemon started on the same store afterwards has none
    run = _hub(store, "run")
    assert run.timers.records() == [] and run.alarms.records() == []
    run.store.close()


def test_a_replay_leaves_the_daemons_stored_timers_alone(tmp_path):
    store = tmp_path / "hub.db"
    run = _hub(store, "run")
    run.turn_text("set a timer for 10 minutes")
    run.turn_text("remind me in 30 minutes to call mum")
    run.store.close()
    replay = _hub(store, "replay")
    # not restored into the replay (it would ring there) ...
    assert replay.timers.records() == [] and replay.alarms.records() == []
    replay.turn_text("cancel all timers")
    replay.store.close()
    # ... and still the daemon's afterwards
    again = _hub(store, "run")
    assert len(again.timers.records()) == 1
    assert [a.label for a in again.alarms.records()] == ["call mum"]
    again.store.close()


def test_replay_help_says_its_timers_are_not_stored(capsys):
    import pytest

    with pytest.raises(SystemExit):
        build_parser().parse_args(["replay", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "they are not stored" in text and "never ring in `hub run`" in text
