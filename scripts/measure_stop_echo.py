"""How much of the hub's own voice reaches the stop listener's decoder (issue 18, item 3).

``hub run`` on a test sound server of its own (``scripts/start-test-audio.sh``), its FIFO
microphone fed with the speaker's monitor (the echo path of cases.md: gain 0.5, 60 ms), and
"okay nabu, set a timer for 2 seconds" said once: the answer and the ring play through the
echo path for ``--seconds``. Counts, from the daemon's log, the stretches the stop listener
judged the hub's own voice and those it decoded anyway (each one pauses playback and, had it
printed a line, would be a line of the hub's own voice), with what the stop grammar read.

    nice .venv/bin/python scripts/measure_stop_echo.py --seconds 60
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from daemon_live import (
    Daemon,
    Feeder,
    Recorder,
    start_server,
    stop_server,
    write_config,
)
from live_audio import silence, synth

NO_LLM = "[llm]\nintents_on = []\nanswers_on = []\n"


def main() -> int:
    """Run once; print the counts and the readings of the decoded stretches."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to listen")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="stop-echo-"))
    env = start_server(folder)
    daemon = Daemon(write_config(folder / "hub.toml", NO_LLM), env, folder / "hub.db")
    recorder = feeder = None
    try:
        if not daemon.wait_log("state: listening", 240):
            print("\n".join(daemon.stderr[-20:]), file=sys.stderr)
            return 1
        recorder = Recorder(env)
        feeder = Feeder(env["HUB_TEST_MIC_FIFO"], echo=recorder)
        time.sleep(1.0)
        said = [synth("okay nabu"), silence(0.5), synth("set a timer for 2 seconds")]
        feeder.say(np.concatenate([*said, silence(1.5)]))
        time.sleep(args.seconds)
    finally:
        daemon.stop(signal.SIGTERM)
        for part in (feeder, recorder):
            if part is not None:
                part.close()
        stop_server(env)
    log = list(daemon.stderr)
    echo = sum("of the hub's own voice ignored" in line for line in log)
    decoded = [line for line in log if "decoded in" in line]
    readings = [m.group(1) for line in log if (m := re.search(r"heard (.+ \(llr [-.\d]+)", line))]
    print(f"{args.seconds:g} s: {echo} stretches judged echo, {len(decoded)} decoded")
    for reading in readings:
        print(f"  read {reading})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
