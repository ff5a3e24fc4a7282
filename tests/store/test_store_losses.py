"""Case BC-33 after a salvage: (a) a damaged store at an explicit path (``--store``, ``[store]
path``) is moved aside and salvaged exactly like the default one, never a refusal to start
(exit 2: a crash loop under systemd); (b) when the repair knows it lost timers, alarms or list
rows, the answers about them say the list may be incomplete instead of stating "No timers."
as a fact, until the user sets something new of that kind."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub.cli.args import make_hub as cli_hub
from hub.cli.main import build_parser
from hub.errors import BadInputError
from hub.store.db import Store, default_store_path
from hub.store.losses import KEY, Losses

from fakes import make_hub

WT = Path(__file__).resolve().parents[2]


def populated(path: Path, turns: int = 200) -> None:
    """A closed store with turns, outbox rows, 3 timers and a shopping list."""
    store = Store(path)
    for i in range(turns):
        store.journal({"turn": i, "pad": "x" * 400})
        store.outbox_claim(f"k{i}", {"entity": "light.kitchen"})
    store.stored_timers([{"id": f"t{i}", "seconds": 60, "name": f"t{i}"} for i in range(3)])
    store.kv_set("list:Shopping List", {"items": ["milk"], "completed": []})
    store.close()


def torn_header(path: Path) -> None:
    """The first page overwritten (a torn write at a power cut): no SQLite header left."""
    with open(path, "r+b") as f:
        f.write(os.urandom(4096))


def cli_store(args: list[str]):
    """The store a command opens for ``args`` (``hub ask ...``), as the CLI builds it."""
    hub = cli_hub(build_parser().parse_args(["ask", "--no-llm", *args, "x"]), "ask", speak=False)
    return hub.store


@pytest.mark.parametrize("given", ["flag", "config", "default"])
def test_bc_33_a_damaged_store_is_salvaged_at_any_path(tmp_path, monkeypatch, caplog, given):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    config = tmp_path / "hub.toml"
    path = tmp_path / "my.db"
    if given == "config":
        config.write_text(f'[store]\npath = "{path}"\n')
    else:
        config.write_text("")
    if given == "default":
        path = default_store_path(config)
        path.parent.mkdir(parents=True)
    populated(path)
    torn_header(path)
    args = ["--config", str(config)] + (["--store", str(path)] if given == "flag" else [])
    with caplog.at_level(logging.ERROR):
        store = cli_store(args)
    assert store.path == str(path) and store.recovered is not None and store.degraded is None
    assert Path(store.recovered["moved_to"]).is_file()  # the damaged file is kept aside
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]  # once
    assert "was damaged" in line and store.recovered["moved_to"] in line
    store.journal({"turn": "after"})
    assert store.recent_turns(1)[0]["turn"] == "after"


def test_bc_33_a_damaged_explicit_store_starts_the_hub_with_exit_0(tmp_path):
    path = tmp_path / "hub.db"
    populated(path)
    torn_header(path)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "hub",
            "ask",
            "--json",
            "--no-llm",
            "--store",
            str(path),
            "turn on the kitchen light",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(WT), "HUB_CONFIG": ""},
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.splitlines()[-1])["intent"] == "HassTurnOn"
    assert run.stderr.count("was damaged") == 1 and "Traceback" not in run.stderr
    assert list(tmp_path.glob("hub.db.corrupt-*"))


def test_bc_33_a_text_file_named_as_the_store_is_still_refused(tmp_path):
    """A config or notes file given as the store by mistake is not moved aside."""
    notes = tmp_path / "hub.toml"
    notes.write_text("[home]\nlanguage = 'en'\n")
    with pytest.raises(BadInputError, match="not a hub store"):
        cli_store(["--store", str(notes)])
    assert notes.read_text().startswith("[home]")


def salvaged_with_losses(tmp_path) -> Store:
    """A populated store whose first page was torn, then opened: no table could be read, and
    the counts written at its last close say what was there."""
    path = tmp_path / "hub.db"
    populated(path)
    torn_header(path)
    store = Store(path)
    assert store.recovered is not None
    return store


def test_bc_33_b_the_repair_records_which_kinds_were_lost(tmp_path):
    store = salvaged_with_losses(tmp_path)
    record = store.kv_get(KEY)
    assert record["timers"]["rows"] == 3 and record["lists"]["rows"] >= 1
    assert "alerts" not in record  # it held none: nothing of it was lost
    assert store.recovered["lost"] == {k: v["rows"] for k, v in record.items()}
    store.close()
    again = Store(store.path)  # a restart keeps saying so until it is settled
    assert Losses(again).lost("timers") is not None
    hub = make_hub(store=again, entry="ask")
    said = hub.turn_text("what timers do I have")["response"]
    assert said.startswith("I have no timers on record, but"), said


def lost_store(tmp_path, kinds=("timers", "alerts", "lists"), rows=None) -> Store:
    """A store whose repair recorded lost rows of ``kinds`` (``rows`` None: count unknown)."""
    store = Store(tmp_path / "hub.db")
    store.kv_set(KEY, {k: {"rows": rows, "at": 0} for k in kinds})
    return store


def test_bc_33_b_no_timers_is_not_stated_as_a_fact_after_a_loss(tmp_path):
    hub = make_hub(store=lost_store(tmp_path, rows=2), entry="ask")
    said = hub.turn_text("what timers do I have")["response"]
    assert said == (
        "I have no timers on record, but some saved timers were lost when the store was repaired."
    )
    assert "No timers" not in said


def test_bc_33_b_an_unknown_loss_says_may_have_been_lost(tmp_path):
    hub = make_hub(store=lost_store(tmp_path, rows=None), entry="ask")
    said = hub.turn_text("what timers do I have")["response"]
    assert said.startswith("I have no timers on record, but") and "may have been lost" in said


def test_bc_33_b_a_new_timer_settles_it(tmp_path):
    hub = make_hub(store=lost_store(tmp_path, rows=1), entry="ask")
    assert hub.turn_text("set a timer for 5 minutes")["intent"] == "HassStartTimer"
    said = hub.turn_text("what timers do I have")["response"]
    assert "lost" not in said and "record" not in said
    assert Losses(hub.store).lost("timers") is None
    assert Losses(hub.store).lost("lists") is not None  # the other kinds are not settled


def test_bc_33_b_alarms_and_lists_say_it_too(tmp_path):
    hub = make_hub(store=lost_store(tmp_path, rows=3), entry="ask")
    alarms = hub.turn_text("what alarms do I have")["response"]
    assert alarms.startswith("I have no alarms on record, but") and "were lost" in alarms
    items = hub.turn_text("what is on my shopping list")["response"]
    assert items.startswith("I have no items on record for your shopping list, but"), items
    hub.turn_text("add milk to my shopping list")
    items = hub.turn_text("what is on my shopping list")["response"]
    assert "milk" in items and "lost" not in items


def test_bc_33_b_without_a_loss_the_answers_are_unchanged(tmp_path):
    hub = make_hub(store=Store(tmp_path / "hub.db"), entry="ask")
    assert "record" not in hub.turn_text("what timers do I have")["response"]
