"""Case BC-33 (b), a store file cut to half its size (a full disk, a copy cut short): the hub
keeps working, the file is moved aside and kept, and every row that can still be read is
salvaged, including the running timers and delayed commands (BC-27) and the install id that
names the MQTT client (BC-29): before, both were dropped with the cache."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from hub.devices.identity import install_id
from hub.store.db import Store

TIMERS = [
    {"id": f"t{i}", "seconds": 60 * (i + 1), "command": {"text": "turn off the lights"}}
    for i in range(3)
]


def populated(path: Path) -> str:
    """A store with 200 turns, 200 outbox rows and 3 timers; its install id."""
    store = Store(path)
    ident = install_id(store)
    for i in range(200):
        store.journal({"turn": i, "pad": "x" * 400})
        store.outbox_claim(f"k{i}", {"entity": "light.kitchen"})
        store.outbox_done(f"k{i}")
    store.stored_timers(TIMERS)
    store.close()
    return ident


def test_bc33_half_truncated_store_keeps_timers_and_install_id(tmp_path, caplog):
    path = tmp_path / "hub.db"
    ident = populated(path)
    os.truncate(path, path.stat().st_size // 2)
    with caplog.at_level(logging.ERROR):
        store = Store(path)
    assert store.recovered is not None and store.degraded is None
    assert Path(store.recovered["moved_to"]).exists()  # the damaged copy is kept
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert store.recovered["moved_to"] in line and "timers 3 saved, 0 lost" in line
    assert store.stored_timers() == TIMERS
    assert install_id(store) == ident
    assert len(store.recent_turns(500)) > 0  # the readable turns are kept too
    store.journal({"turn": "after"})  # and it keeps working
    assert store.recent_turns(1)[0]["turn"] == "after"
