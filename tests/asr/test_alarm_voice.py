"""Issue 22: alarms, reminders and the shopping list by voice, the hub's own voice through
``hub replay`` (PocketSphinx grammar, no LLM), as a user runs it.

Clips are made with ``hub say``; the config is the sample home with the clock check off (the
test machine's clock may not be synchronized, which the hub would rightly refuse). A reminder
read by the grammar is set at once when the second pass reads the same, else asked back (its
message may be one the grammar only fitted) and set on a yes: which one depends on the second
pass's time on this machine, so both are accepted, and never a reminder set twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub.asr.coverage import fsg_accepts
from hub.paths import DATA_DIR

REPO = Path(__file__).resolve().parents[2]

SET = "I'll remind you to take out the trash in 20 minutes."
REMINDER = ("05", "06")
"""The reminder and the "yes" after it."""


CLIPS = [
    ("01", "set an alarm for 7 am", "HubAlarmSet", "Alarm set for 7 AM on"),
    ("02", "what alarms do I have", "HubAlarmList", "You have 1 alarm: 7 AM on"),
    ("03", "cancel my 7 am alarm", "HubAlarmCancel", "Alarm for 7 AM on"),
    ("04", "snooze for 5 minutes", "HubAlarmSnooze", "No alarm is ringing."),
    (
        "05",
        "remind me to take out the trash in 20 minutes",
        "HubReminderSet",
        "Do you want me to remind you to take out the trash in 20 minutes?",
    ),
    ("06", "yes", "HubReminderSet", SET),
    ("07", "what is on my shopping list", "HassShoppingListLastItems", ""),
]


def _hub(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        text=True,
        capture_output=True,
        env={**os.environ, "HUB_CONFIG": ""},
        cwd=REPO,
        timeout=900,
        check=False,
    )


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "hub.toml"
    home = (DATA_DIR / "home-en.toml").read_text(encoding="utf-8")
    path.write_text(home + '\n[alarms]\nclock_check = "off"\n', encoding="utf-8")
    return path


@pytest.mark.models
def test_alarms_reminders_and_the_list_by_voice_through_replay(tmp_path, config):
    clips = tmp_path / "clips"
    clips.mkdir()
    for name, text, _intent, _answer in CLIPS:
        made = _hub("say", "--config", str(config), text, "--out", str(clips / f"{name}.wav"))
        assert made.returncode == 0, made.stderr
    result = _hub(
        "replay", str(clips), "--config", str(config), "--no-llm", "--store", ":memory:",
        "--no-audio",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    traces = [json.loads(x) for x in result.stdout.splitlines() if x.startswith('{"file"')]
    assert len(traces) == len(CLIPS), result.stdout
    for trace, (name, _text, intent, answer) in zip(traces, CLIPS, strict=True):
        if name == "03" and trace["transcript"] == "cancel my 7 pm alarm":
            # Piper's synthesis varies run to run and AM/PM are close: a misheard period
            # cancels nothing and says which alarm is set
            answer = "You have no alarm at 7 PM, only 7 AM on"
        if name not in REMINDER:
            assert trace["intent"] == intent and trace["response"].startswith(answer), trace
    # the reminder: set at once when the second pass agrees, else asked back and set on "yes"
    asked, yes = (traces[int(n) - 1] for n in REMINDER)
    assert asked["intent"] == "HubReminderSet", asked
    if asked["response"] == SET:
        assert asked["second_pass"]["outcome"] == "agree", asked
        assert yes["intent"] != "HubReminderSet", yes  # nothing waited for a yes
    else:
        assert asked["response"] == CLIPS[4][3], asked
        assert yes["intent"] == "HubReminderSet" and yes["response"] == SET, yes
    assert "shopping list" in traces[-1]["response"]


def test_alarm_sentences_are_in_the_grammar_and_others_stay_out():
    from hub.asr.vocab import build_vocab
    from hub.settings import load_settings

    settings = load_settings(str(DATA_DIR / "home-en.toml"))
    fsg = build_vocab(settings.home).fsg_path.read_text(encoding="utf-8")
    for text in (
        "set an alarm for 6 30 pm tomorrow",
        "set an alarm for 7 oh 5 am",
        "wake me up every weekday at 7",
        "every weekend at 9 am",
        "do i have any alarms set",
        "delete the alarm for 8 pm",
        "snooze",
        "remind me to take out the trash at 7 pm",
        "remind me tomorrow at 9 to call mum",
        "remind me in 45 minutes to check the oven",
        "what is on my shopping list",
        "clear the shopping list",
    ):
        assert fsg_accepts(fsg, text.split()), text
    for text in ("set an alarm for 13 pm", "remind me to at 7 pm", "wake me up"):
        assert not fsg_accepts(fsg, text.split()), text
