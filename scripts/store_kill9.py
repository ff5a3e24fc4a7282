"""kill -9 a process that writes the store heavily, N times; check the file each time (BC-33 e).

Usage: python scripts/store_kill9.py [--times 100] [--db FILE]

The writer journals numbered turns and claims/finishes outbox keys as fast as it can, with the
background maintenance running, and prints each turn's number only after its journal write
returned (as the hub prints a turn after journaling it). After each kill: ``PRAGMA
integrity_check`` must be ``ok``, every printed number must be in the journal once, and no
outbox key twice. Exit 0 when every round passed, 1 otherwise (one line per failure).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WRITER = """
import sys, itertools
from hub.settings import StoreSettings
from hub.store.db import Store
s = Store(sys.argv[1], StoreSettings(maintenance_s=1, cache_mb=0.2), background=True)
start = int(sys.argv[2])
for n in itertools.count(start):
    key = f"turn-{n}"
    s.outbox_claim(key, {"entity": "light.kitchen", "n": n})
    s.put_response_audio(f"answer {n}", bytes(4000), 16000)
    if s.journal({"n": n, "pad": "x" * 300}):
        s.outbox_done(key)
        print(n, flush=True)
"""


def one_round(db: str, start: int, rng: random.Random) -> tuple[list[int], list[str], int]:
    """Start the writer, kill -9 it at a random moment; ``(printed numbers, problems, the
    next free turn number)``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, db, str(start)], env=env, stdout=subprocess.PIPE, text=True
    )
    first = proc.stdout.readline()  # writing has begun
    time.sleep(rng.uniform(0.0, 0.3))
    os.kill(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate()
    printed = [int(x) for x in (first + out).split()]
    problems = []
    conn = sqlite3.connect(db)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        if check != "ok":
            problems.append(f"integrity_check: {check}")
        ns = [json.loads(t)["n"] for (t,) in conn.execute("SELECT trace FROM journal")]
        missing = set(printed) - set(ns)
        if missing:
            problems.append(f"printed turns missing from the journal: {sorted(missing)[:5]}")
        if len(ns) != len(set(ns)):
            problems.append("a turn journaled twice")
    finally:
        conn.close()
    return printed, problems, max(ns, default=start - 1) + 1


def main(argv=None) -> int:
    """Run the rounds; print one summary line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--times", type=int, default=100)
    ap.add_argument("--db", default="")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or os.path.join(tmp, "hub.db")
        start, failures, turns = 0, 0, 0
        for i in range(args.times):
            printed, problems, start = one_round(db, start, rng)
            turns += len(printed)
            for p in problems:
                failures += 1
                print(f"round {i + 1}: {p}", file=sys.stderr)
        size = os.path.getsize(db)
    print(
        f"{args.times} kills, {turns} printed turns, {failures} problems, file {size / 1024:.0f} KB"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
