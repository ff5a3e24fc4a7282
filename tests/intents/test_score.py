"""Scoring an ``oov_*`` file (out-of-home speech: the right answer is a rejection and no
action) in ``hub replay --score`` and ``hub bench``: right when nothing was done (no intent,
or an intent asked back, refused or answered without acting: the trace's ``acted``), wrong
when a command was carried out.

Found by the breaker: the two ``oov_*`` samples were counted as misses; ``oov_1`` ("play the
beatles", heard by the second pass) is asked back ("Do you want me to play the beatles?") and
nothing is done.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub.cli.summary import score_lines
from hub.intents.score import correct, expected_for

from fakes import make_hub

ROOT = Path(__file__).resolve().parents[2]
NOTHING = (None, {})
"""What an ``oov_*`` file (or an empty sentence) expects."""


def trace(intent=None, slots=None, acted=False, name="oov_1.wav") -> dict:
    return {
        "file": f"samples/{name}",
        "transcript": "play the beatles" if intent else "",
        "intent": intent,
        "slots": slots or {},
        "status": "ok",
        "acted": acted,
    }


@pytest.fixture(scope="module")
def hub():
    hub = make_hub(entry="ask")
    hub.engines.warm(["rules"])
    return hub


def test_oov_names_expect_nothing_done(hub):
    assert expected_for(hub.engines.rules(), "oov_1") == NOTHING
    assert expected_for(hub.engines.rules(), "") == NOTHING


@pytest.mark.parametrize(
    ("said", "right"),
    [
        (trace(), True),  # rejected: "Sorry, I didn't catch that."
        (trace("HassMediaSearchAndPlay", {"search_query": "the beatles"}), True),  # asked back
        (trace("HassTurnOn", {"name": "Kitchen Light"}, acted=True), False),  # carried out
    ],
    ids=["rejected", "asked back", "acted on"],
)
def test_oov_file_is_right_when_nothing_is_done(said, right):
    assert correct(said, NOTHING) is right


def test_a_reading_without_acted_counts_its_intent_as_acted_on():
    """``hub bench``'s sequential baseline is a bare reading of the rules: an intent there
    would be carried out."""
    assert not correct({"intent": "HassTurnOn", "slots": {}}, NOTHING)
    assert correct({"intent": None, "slots": {}}, NOTHING)


def test_score_lines_count_oov_files_asked_back_as_right_and_name_an_acted_one(hub):
    traces = [
        trace("HassMediaSearchAndPlay", {"search_query": "the beatles"}),
        trace(name="oov_3.wav"),
        trace("HassTurnOn", {"name": "Kitchen Light"}, acted=True, name="oov_9.wav"),
    ]
    sentences = {t["file"]: Path(t["file"]).stem for t in traces}
    head, miss = score_lines(hub.engines.rules(), traces, sentences)
    assert head.startswith("accuracy: 2/3 (67%)") and "oov_* files: right when nothing" in head
    assert miss == (
        "miss: oov_9.wav: said 'oov_9' -> nothing done; heard 'play the beatles' -> "
        "HassTurnOn (done)"
    )


@pytest.mark.parametrize(
    ("text", "acted"),
    [
        ("turn on the kitchen light", True),
        ("set a timer for 10 minutes", True),
        ("unlock the front door", False),  # sensitive: asked back
        ("what time is it", False),  # an answer
        ("fly me to the moon", False),  # not understood
    ],
)
def test_the_trace_says_whether_a_command_was_carried_out(hub, text, acted):
    assert hub.turn_text(text)["acted"] is acted


@pytest.mark.models
@pytest.mark.live
def test_replay_score_counts_the_oov_samples_as_right():
    samples = [str(ROOT / "samples" / name) for name in ("oov_1.wav", "oov_3.wav")]
    run = subprocess.run(
        [sys.executable, "-m", "hub", "replay", "--score", "--no-audio", "--store", ":memory:"]
        + samples,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HUB_CONFIG": ""},
        cwd=ROOT,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "hub: accuracy: 2/2 (100%)" in run.stderr, run.stderr[-2000:]
    assert "miss:" not in run.stderr


@pytest.mark.parametrize("command", ["replay", "bench"])
def test_help_says_how_oov_files_are_scored(command, capsys):
    from hub.cli.main import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "oov_* is speech that is no command for this home: right when nothing is done" in said


def test_newuser_score_says_how_many_right_files_were_asked_back_before_acting(hub):
    """The new user's finding: "turn off all of the lights in the Office" was asked back (the
    recognizers heard "on" and "off") yet scored only as right; the accuracy line now counts
    the files asked back apart, and the trace names the grammar's first reading."""
    said = "turn off all of the lights in the Office"
    asked = {
        **trace("HassTurnOff", {"area": "Office", "domain": "light"}, name=f"{said}.wav"),
        "asked_back": True,
    }
    done = trace("HassTurnOn", {"name": "TV"}, acted=True, name="turn on the TV.wav")
    sentences = {t["file"]: Path(t["file"]).stem for t in (asked, done)}
    (head,) = score_lines(hub.engines.rules(), [asked, done], sentences)
    assert head.startswith("accuracy: 2/2 (100%)") and head.endswith("; 1 asked back before acting")
