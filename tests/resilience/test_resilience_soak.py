"""process_counts: the numbers the soak test watches.

The check runs in a fresh interpreter, so threads of other tests in this session cannot
start or end between the readings.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from hub.resilience import process_counts

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, os, sys, threading
from hub.resilience.soak import process_counts
before = process_counts()
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY)
during = process_counts()
os.close(fd)
stop.set()
thread.join()
after = process_counts()
print(json.dumps([before, during, after]))
"""


def test_counts_see_a_new_thread_and_a_new_file_descriptor(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "f")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    before, during, after = json.loads(out.stdout)
    assert during["threads"] == before["threads"] + 1
    assert during["fds"] == before["fds"] + 1
    assert (after["threads"], after["fds"]) == (before["threads"], before["fds"])


def test_counts_of_this_process_have_the_three_keys():
    counts = process_counts()
    assert set(counts) == {"threads", "fds", "rss_bytes"}
    assert counts["threads"] >= 1 and counts["fds"] >= 3 and counts["rss_bytes"] > 0
