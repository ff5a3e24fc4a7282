"""The store's WAL under a write burst while an outside reader holds a snapshot (issue 23).

Writes ``--rows`` rows (half journal traces of ``--trace-bytes``, half outbox claims) through
the store's own API with its background maintenance thread running, while another process
holds a read transaction; prints the WAL size every ``--every`` rows, then closes the reader
and prints how long the WAL took to get back under ``[store] wal_limit_mb``.

    nice .venv/bin/python scripts/bench_wal.py            # 50,000 rows, 16 MB limit
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

READER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
print(conn.execute("SELECT count(*) FROM journal").fetchone()[0], flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
"""


def main(argv=None) -> int:
    """Run the burst; prints one line per sample. Returns 0, or 1 when the WAL did not get
    back under the limit within 60 s of the reader closing."""
    from hub.settings import StoreSettings
    from hub.store.db import Store
    from hub.store.walsize import wal_bytes

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--every", type=int, default=5_000)
    ap.add_argument("--trace-bytes", type=int, default=3000)
    ap.add_argument("--limit-mb", type=float, default=StoreSettings().wal_limit_mb)
    args = ap.parse_args(argv)
    path = os.path.join(tempfile.mkdtemp(prefix="hub-walbench-"), "hub.db")
    store = Store(path, StoreSettings(wal_limit_mb=args.limit_mb), background=True)
    store.journal({"start": True})
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    reader.stdout.readline()
    peak, t0 = 0, time.monotonic()
    for i in range(args.rows):
        if i % 2:
            store.outbox_claim(f"k{i}", {"entity": "light.kitchen", "service": "turn_on"})
        else:
            store.journal({"turn": i, "pad": "x" * args.trace_bytes})
        if (i + 1) % args.every == 0:
            peak = max(peak, wal_bytes(path))
            print(
                f"rows {i + 1:6d}  wal {wal_bytes(path) / 1e6:7.1f} MB  "
                f"({time.monotonic() - t0:.1f} s)",
                flush=True,
            )
    reader.communicate("\n", timeout=30)
    closed = time.monotonic()
    while wal_bytes(path) > store.limit_bytes and time.monotonic() - closed < 60:
        time.sleep(0.2)
    took = time.monotonic() - closed
    size = wal_bytes(path)
    print(
        f"reader closed: wal {size / 1e6:.1f} MB after {took:.1f} s (limit "
        f"{store.limit_bytes / 1e6:.1f} MB, peak {peak / 1e6:.1f} MB, "
        f"rows {len(store.recent_turns(10**6))} journal)"
    )
    return 0 if size <= store.limit_bytes else 1


if __name__ == "__main__":
    raise SystemExit(main())
