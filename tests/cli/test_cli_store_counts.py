"""BC-33 through the real CLI process: every command that opens the store records its row
counts beside it (``<db>.rows``) when it ends, however it ends (a normal end, Ctrl-C, SIGTERM,
a missing microphone), so a store later found emptied to 0 bytes is reported with the rows it
lost and "what timers do I have" says saved timers were lost instead of "No timers.".

Found by the breaker: ``hub ask`` recorded no counts (only ``hub run`` finished its store), so
a store emptied after a ``hub ask`` session was taken for a new one and "No timers." was said.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient

from wyoming_support import free_port

pytestmark = [pytest.mark.live, pytest.mark.models]

ROOT = Path(__file__).resolve().parents[2]
START_S = 180.0
"""Longest wait for a command to load its engines on a busy 2-core machine (a guard only)."""
LOST = "I have no timers on record, but some saved timers were lost when the store was repaired."


def hub_env(**extra: str) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HUB_CONFIG": "", **extra}


def hub(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        capture_output=True,
        text=True,
        env=hub_env(),
        timeout=START_S,
        **kwargs,
    )


def start(*args: str, env: dict | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "hub", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or hub_env(),
        **kwargs,
    )


def counts(db: Path) -> dict:
    """The row counts recorded beside ``db``."""
    path = Path(str(db) + ".rows")
    assert path.is_file(), f"no {path.name}: the command recorded no row counts"
    return json.loads(path.read_text())


def emptied_then_asked(db: Path) -> subprocess.CompletedProcess:
    """Empty the store to 0 bytes (its WAL files gone), then ask for the timers."""
    db.write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    return hub("ask", "--no-llm", "--store", str(db), "what timers do I have")


def test_bc33_hub_ask_records_the_counts_so_an_emptied_store_says_its_timers_were_lost(tmp_path):
    db = tmp_path / "hub.db"
    set_timer = hub("ask", "--no-llm", "--store", str(db), "set a timer for 10 minutes")
    assert set_timer.returncode == 0, set_timer.stderr[-2000:]
    assert counts(db)["timers"] == 1
    asked = emptied_then_asked(db)
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert asked.stdout.strip() == LOST
    [line] = [x for x in asked.stderr.splitlines() if "was damaged" in x]
    assert "timers 0 saved, 1 lost" in line and "Traceback" not in asked.stderr


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_bc33_hub_ask_stopped_by_a_signal_still_records_the_counts(tmp_path, signum, code):
    db = tmp_path / "hub.db"
    proc = start("ask", "--no-llm", "--store", str(db), "-", stdin=subprocess.PIPE)
    proc.stdin.write("set a timer for 10 minutes\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], START_S)
    assert ready, "no answer to the first line"
    assert json.loads(proc.stdout.readline())["intent"] == "HassStartTimer"
    proc.send_signal(signum)  # while it waits for the next stdin line
    _, err = proc.communicate(timeout=START_S)
    assert proc.returncode == code, err[-2000:]
    assert "Traceback" not in err
    assert counts(db)["timers"] == 1
    assert emptied_then_asked(db).stdout.strip() == LOST


def test_bc33_hub_replay_records_the_counts(tmp_path):
    db = tmp_path / "hub.db"
    wav = ROOT / "samples" / "turn on the TV.wav"
    run = hub("replay", "--no-llm", "--no-audio", "--store", str(db), str(wav), cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert counts(db)["journal"] == 1


def test_bc33_hub_run_that_finds_no_microphone_records_the_counts(tmp_path):
    db, config = tmp_path / "hub.db", tmp_path / "hub.toml"
    config.write_text('[audio]\ninput_device = "no-such-microphone"\ndevice_wait_s = 0\n')
    run = hub("run", "--config", str(config), "--no-wake", "--store", str(db))
    assert run.returncode == 4, run.stderr[-2000:]
    assert counts(db)["journal"] == 0


async def _said(port: int, text: str) -> str:
    """Send a transcript to ``hub wyoming`` (held until its hub is built) and read the answer."""
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcript(text=text).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), START_S)
            assert event is not None, "connection closed"
            if event.type == "handled":
                return event.data["text"]


def _connect(port: int, proc: subprocess.Popen) -> None:
    """Wait for ``hub wyoming`` to listen (it does before its hub is built)."""
    for _ in range(int(START_S * 10)):
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            select.select([], [], [], 0.1)
    raise AssertionError("hub wyoming never listened")


def test_bc33_hub_wyoming_stopped_by_sigterm_records_the_counts(tmp_path):
    db, port = tmp_path / "hub.db", free_port()
    uri = f"tcp://127.0.0.1:{port}"
    proc = start("wyoming", "--no-llm", "--no-zeroconf", "--uri", uri, "--store", str(db))
    answer = None
    try:
        _connect(port, proc)
        answer = asyncio.run(_said(port, "set a timer for 10 minutes"))
    except AssertionError as exc:  # its log says why (seen once under load: "closed")
        answer = f"{exc}"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=START_S)
    assert "10 minutes" in answer, f"{answer}\n{err[-3000:]}"
    assert proc.returncode == 0, err[-2000:]
    assert counts(db)["timers"] == 1


def test_bc33_hub_serve_stopped_by_sigterm_records_the_counts(tmp_path):
    db, config = tmp_path / "hub.db", tmp_path / "hub.toml"
    closed = free_port()  # nothing listens: the satellite is unreachable, the server serves on
    config.write_text(
        f'[[satellites]]\nuri = "tcp://127.0.0.1:{closed}"\nname = "kitchen"\narea = "Kitchen"\n'
    )
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    env = hub_env(NOTIFY_SOCKET=str(tmp_path / "notify"))
    proc = start("serve", "--config", str(config), "--store", str(db), env=env)
    try:
        notify.settimeout(START_S)
        while b"READY=1" not in notify.recv(4096):  # its hub is built and serving
            pass
    finally:
        notify.close()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=START_S)
    assert proc.returncode == 0, err[-2000:]
    assert counts(db)["journal"] == 0
