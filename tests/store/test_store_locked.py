"""The breaker's finding 3: with the store locked by another process, ``hub ask -`` answered
"Added milk." and "Timer set for 10 minutes." and, once the lock was released, the item and
the timer were gone. Now what the store cannot take is held in memory and written when it can
(at the latest when the command ends, waiting up to ``[store] save_wait_s``); the answer never
claims it is kept ("I couldn't save that yet, ..."), and what is still not saved when the
command ends is said on stderr. Through the real CLI process, the lock held by this test."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hub.errors import ExitCode
from hub.graph.answers import NOT_SAVED
from hub.paths import DATA_DIR
from hub.store.db import Store

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
SAID = "add milk to my shopping list\nset a timer for 10 minutes\n"
GUARD_S = 300.0
"""Longest a command may take (a guard against a hang, not a measurement)."""
SIGNAL_GUARD_S = 60.0
"""Longest a command may take to end after a SIGTERM during its 600 s wait for the store
(a guard that catches a SIGTERM ignored, not a measurement)."""


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HUB_CONFIG": ""}


def _run_ask(db: Path, config: Path, held: sqlite3.Connection, release: bool, code: int = 0):
    """``hub ask - --store db`` while ``held`` keeps the store locked: both lines answered,
    then the lock released (``release``) before stdin ends; it exits with ``code``;
    (answers, stderr lines)."""
    env = _env()
    argv = [sys.executable, "-m", "hub", "ask", "--no-llm", "--config", str(config)]
    proc = subprocess.Popen(
        [*argv, "--store", str(db), "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        proc.stdin.write(SAID)
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in SAID.splitlines()]
        if release:
            held.execute("COMMIT")
        rest, err = proc.communicate(timeout=GUARD_S)  # stdin ends: the command ends
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code and not rest.strip(), err
    return answers, err.splitlines()


@pytest.fixture()
def locked(tmp_path):
    """A store that exists (with no list items or timers) and a config of the sample home
    with ``save_wait_s = 0``; the lock is taken by the test: ``BEGIN EXCLUSIVE``."""
    db = tmp_path / "hub.db"
    Store(db).close()
    config = tmp_path / "hub.toml"
    home = (DATA_DIR / "home-en.toml").read_text(encoding="utf-8")
    config.write_text(home + "\n[store]\nsave_wait_s = 0\n", encoding="utf-8")
    held = sqlite3.connect(db, isolation_level=None)
    held.execute("BEGIN EXCLUSIVE")
    yield db, config, held
    if held.in_transaction:
        held.execute("ROLLBACK")
    held.close()


def _kept(db: Path) -> tuple[list, list]:
    store = Store(db)
    try:
        items = (store.kv_get("list:Shopping List") or {}).get("items", [])
        return items, store.stored_timers()
    finally:
        store.close()


def test_finding3_changes_the_locked_store_could_not_take_are_written_once_it_can(locked):
    db, config, held = locked
    answers, err = _run_ask(db, config, held, release=True)
    assert [a["response"] for a in answers] == [
        f"Added milk. {NOT_SAVED}",
        f"Timer set for 10 minutes. {NOT_SAVED}",
    ]
    assert all(a["acted"] and a["status"] == "degraded" for a in answers)
    items, timers = _kept(db)
    assert items == ["milk"] and [t["start"] for t in timers] == [[0, 10, 0]]
    assert not [line for line in err if "not saved" in line], err


def test_finding3_what_is_still_not_saved_at_the_end_is_said_on_stderr(locked):
    db, config, held = locked
    answers, err = _run_ask(db, config, held, release=False, code=ExitCode.NOT_SAVED)
    assert all(a["response"].endswith(NOT_SAVED) for a in answers)
    unsaved = [line for line in err if "not saved" in line]
    assert unsaved == [
        "hub: WARNING hub.store.retention: store: locked; not saved, lost as this command "
        "ends: the Shopping List, the timers (and 2 journal rows)"
    ], err
    held.execute("ROLLBACK")
    assert _kept(db) == ([], [])  # as said: lost, and nothing claimed it was kept


def _waiting_ask(db: Path, config: Path, text: str) -> subprocess.Popen:
    """``hub ask --no-llm TEXT`` on the locked ``db`` with ``save_wait_s = 600`` (a wait the
    test's signal must end); stdin a pipe for ``-``; stdout and stderr pipes, as text."""
    config.write_text(config.read_text().replace("save_wait_s = 0", "save_wait_s = 600"))
    argv = [sys.executable, "-m", "hub", "ask", "--no-llm", "--config", str(config)]
    return subprocess.Popen(
        [*argv, "--store", str(db), text],
        stdin=subprocess.PIPE if text == "-" else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_breaker_sigterm_during_the_wait_for_a_locked_store_ends_it_and_says_what_is_lost(
    locked, signum
):
    """The breaker's finding: at exit the hub waited ``[store] save_wait_s`` for a locked
    store with SIGTERM ignored (a systemd stop waited it out), and exited 0 though the
    Shopping List was lost. Now a SIGTERM during the wait ends it at once, one stderr line
    names what is lost, and the exit code is :attr:`ExitCode.NOT_SAVED`. A Ctrl-C then (the
    second one of ``hub run``) does the same."""
    db, config, _held = locked
    proc = _waiting_ask(db, config, "add milk to my shopping list")
    try:
        seen = []
        for line in proc.stderr:  # the wait starts: it says so
            seen.append(line.rstrip())
            if "waiting up to 600 s to save the Shopping List" in line:
                break
        proc.send_signal(signum)
        out, rest = proc.communicate(timeout=SIGNAL_GUARD_S)  # ignored: it waits 600 s
    finally:
        if proc.poll() is None:
            proc.kill()
    err = [*seen, *rest.splitlines()]
    assert proc.returncode == ExitCode.NOT_SAVED, err
    assert out.strip() == f"Added milk. {NOT_SAVED}"
    assert [line for line in err if "not saved" in line] == [
        "hub: WARNING hub.store.retention: store: locked; not saved, lost as this command "
        "ends: the Shopping List (and 1 journal rows)"
    ], err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_breaker_a_stop_signal_while_idle_does_not_start_the_wait(locked, signum):
    """The breaker's finding: ``hub ask -`` idle on stdin with a list change held, one SIGTERM
    (or Ctrl-C) printed "terminated" and then waited ``[store] save_wait_s`` for the locked
    store: the signal that should end the command started a wait (``docker stop`` kills at
    10 s, before the "not saved" line). A stop signal now gives what is held one try, no
    wait: the exit code and the one line say what is lost."""
    db, config, _held = locked
    proc = _waiting_ask(db, config, "-")
    try:
        proc.stdin.write("add milk to my shopping list\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())  # the turn is done; stdin stays open
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=SIGNAL_GUARD_S)  # waited: 600 s
    finally:
        if proc.poll() is None:
            proc.kill()
    assert answer["response"] == f"Added milk. {NOT_SAVED}"
    assert proc.returncode == ExitCode.NOT_SAVED, err
    assert "waiting up to" not in err
    assert [line for line in err.splitlines() if "not saved" in line] == [
        "hub: WARNING hub.store.retention: store: locked; not saved, lost as this command "
        "ends: the Shopping List (and 1 journal rows)"
    ], err


def test_breaker_a_daemon_writes_a_held_change_soon_after_the_lock_is_gone(locked):
    """The breaker's finding: a change held while another process had the store locked
    stayed in memory after the lock was gone, until the next write or the maintenance round
    (300 s): another process read the list without it, and a killed hub lost it. A daemon's
    store (its maintenance thread) now tries every ``HELD_RETRY_S`` while anything waits."""
    from hub.act.liststore import changed
    from hub.store.retention import HELD_RETRY_S

    db, _config, held = locked
    store = Store(db, background=True)
    try:
        key = "list:Shopping List"
        assert store.kv_change(key, lambda old: changed(old, ("add", "milk")), "the list") is None
        assert store.unsaved() == ["the list"]
        held.execute("ROLLBACK")
        for _ in range(int(20 * HELD_RETRY_S / 0.1)):  # a guard against "never", not a timing
            if not store.unsaved():
                break
            time.sleep(0.1)
        assert store.unsaved() == []
        assert _kept(db)[0] == ["milk"]  # in the file, for every other process
    finally:
        store.close()


def test_breaker_a_store_write_waits_far_less_than_the_act_budget_then_is_held(locked):
    """The breaker's finding: with the store locked, every ``hub ask -`` answer came about 2 s
    late (each turn's journal row waited SQLite's 2 s busy timeout), and an MQTT command's
    outbox claim waited the same 2 s: the act node timed out ("Sorry, I couldn't do that right
    now.") for a command that was sent. Every write of the store waits
    :data:`BUSY_TIMEOUT_MS`, a small part of the act node's budget, then is held."""
    from hub.settings import ResilienceSettings
    from hub.store.db import BUSY_TIMEOUT_MS

    db, _config, _held = locked
    act_s = ResilienceSettings().timeouts_s["act"]
    assert act_s / 4 >= BUSY_TIMEOUT_MS / 1000
    store = Store(db)
    try:
        (waits,) = store.db().conn.execute("PRAGMA busy_timeout").fetchone()
        assert waits == BUSY_TIMEOUT_MS
        assert not store.journal({"transcript": "what time is it"})  # locked: held
        assert store.outbox_claim("k1", {"entity": "Kitchen Light"})  # claimed in memory
        assert [t["transcript"] for t in store.recent_turns()] == ["what time is it"]
    finally:
        store.close()
