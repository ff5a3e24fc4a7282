#!/usr/bin/env python3
"""Benchmark of issue 18 on the live dialog rig: N rounds of each dialog, and the latency from
the end of a spoken rules-path command to the first answer audio at the speaker.

    python scripts/bench_dialog.py [--rounds N] [--commands N] [--only NAME ...]
    python scripts/bench_dialog.py --only latency          # the latency alone
    python scripts/bench_dialog.py --only latency --no-final   # without the 300 ms rule
    python scripts/bench_dialog.py --only latency --cold   # answers not rendered ahead of time
    python scripts/bench_dialog.py --only area_answer it_off --rounds 5
    python scripts/bench_dialog.py --wyoming N     # the Wyoming endpoint instead

``--wyoming N``: N utterances streamed in real time by the ``wyoming`` package's client
(``tests/wyoming_client.py asr_live``; needs ``scripts/wyoming-clients.sh``) to an in-process
``hub wyoming`` server, never sending ``audio-stop`` first: how long after the end of speech the
final ``transcript`` came (p50/p95/max).

Starts its own PulseAudio server (``scripts/start-test-audio.sh`` in a temporary folder) and
one ``hub run`` from this checkout (``tests/dialog_rig.py``), speaks the hub's own Piper voice
into the FIFO microphone at real speed and records the null sink. Prints one JSON line per
round and a summary (passes per dialog; latency p50/p95 of end of speech -> endpoint, endpoint ->
first answer audio at the speaker, and the total; how many rounds the second pass heard) and the
load average. The latency rounds start once the daemon logged ``prerender: done`` (its answers
rendered ahead of time, as on a hub that has been running a while), unless ``--cold``. Exit
code 0 when every round passed, 1 otherwise.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

COMMANDS = [
    "turn on the kitchen light",
    "turn off the kitchen light",
    "turn on the TV",
    "turn off the TV",
    "set Kitchen brightness to 50 percent",
    "turn on the office light",
    "turn off the office light",
    "what time is it",
    "turn on the bed light",
    "turn off the bed light",
]
"""Rules-path commands timed (cycled)."""
PRERENDER_WAIT_S = 300.0
"""Longest wait for the hub's answers to be rendered ahead of time before timing."""


def percentile(values, q):
    import numpy as np

    return round(float(np.percentile(values, q)), 3) if values else None


def run(rig, name, fn, rounds):
    passed = 0
    for i in range(rounds):
        mark = len(rig.daemon.stderr)
        try:
            measured = fn(rig)
            ok = True
        except AssertionError as exc:
            measured, ok = {"error": str(exc)[:300], "log": rig.log_since(mark)[-25:]}, False
        passed += ok
        print(json.dumps({"dialog": name, "round": i, "ok": ok, **measured}), flush=True)
        time.sleep(1.0)
    return passed


def wyoming(rounds: int) -> int:
    """The Wyoming endpoint benchmark (see the module doc)."""
    from wyoming_support import CLIENT_VERSIONS, Server, free_port, make_server_hub, run_client, say

    folder = Path(tempfile.mkdtemp(prefix="bench-wyoming-"))
    texts = ["turn on the TV", "turn off the kitchen light", "what time is it"]
    wavs = [say(t, folder / f"{i}.wav") for i, t in enumerate(texts)]
    server = Server(make_server_hub(), free_port())
    delays, ok = [], 0
    try:
        for i in range(rounds):
            result = run_client(CLIENT_VERSIONS[-1], server.port, "asr_live", str(wavs[i % 3]))
            good = result.get("before_audio_stop") and result.get("text") == texts[i % 3].lower()
            ok += bool(good)
            delays.append(result["after_speech_s"])
            print(json.dumps({"round": i, **result}), flush=True)
    finally:
        server.stop()
    print(
        json.dumps(
            {
                "summary": {
                    "n": rounds,
                    "final_before_audio_stop": ok,
                    "p50_s": percentile(delays, 50),
                    "p95_s": percentile(delays, 95),
                    "max_s": max(delays),
                    "load_avg": os.getloadavg(),
                }
            }
        )
    )
    return 0 if ok == rounds else 1


def latency(rig, args) -> dict:
    """``args.commands`` rules-path commands timed; p50/p95 of end of speech -> endpoint,
    endpoint -> first audio at the speaker, and the total (see the module doc)."""
    from dialog_rig import command_latency

    if not args.cold:  # a hub that has run a while has rendered its answers ahead of time
        waited = rig.log_time("prerender: done", 0, timeout_s=PRERENDER_WAIT_S)
        print(json.dumps({"prerender_done": waited is not None}), flush=True)
    rows = []
    for i in range(args.commands):
        try:
            m = command_latency(rig, COMMANDS[i % len(COMMANDS)])
            rows.append(m)
            print(json.dumps({"dialog": "latency", "round": i, **m}), flush=True)
        except AssertionError as exc:
            print(json.dumps({"dialog": "latency", "round": i, "error": str(exc)[:300]}))
        time.sleep(1.0)
    out = {"n": len(rows), "final_rule": not args.no_final, "cold": args.cold}
    parts = {
        "total": [m["latency_s"] for m in rows],
        "endpoint": [m["endpoint_s"] for m in rows if m.get("endpoint_s") is not None],
        "after_endpoint": [
            round(m["latency_s"] - m["endpoint_s"], 3)
            for m in rows
            if m.get("endpoint_s") is not None
        ],
    }
    for name, values in parts.items():
        out[f"{name}_p50_s"] = percentile(values, 50)
        out[f"{name}_p95_s"] = percentile(values, 95)
    out["total_max_s"] = max(parts["total"] or [0])
    out["second_pass_rounds"] = sum(1 for m in rows if m.get("second_pass"))
    print(
        "end of speech -> endpoint p50 {endpoint_p50_s} s p95 {endpoint_p95_s} s | "
        "endpoint -> first audio p50 {after_endpoint_p50_s} s p95 {after_endpoint_p95_s} s | "
        "total p50 {total_p50_s} s p95 {total_p95_s} s (n {n})".format(**out),
        flush=True,
    )
    return out


def main() -> int:
    from dialog_rig import DIALOGS, Rig

    from daemon_live import start_server, stop_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--commands", type=int, default=10)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--wyoming", type=int, default=0)
    parser.add_argument(
        "--no-final", action="store_true", help="[asr] final_silence_ms = 0: the 500 ms rule alone"
    )
    parser.add_argument(
        "--cold", action="store_true", help="[tts] prerender = false: answers not rendered ahead"
    )
    args = parser.parse_args()
    if args.wyoming:
        return wyoming(args.wyoming)
    folder = Path(tempfile.mkdtemp(prefix="bench-dialog-"))
    env = start_server(folder / "pulse")
    extra = "[asr]\nfinal_silence_ms = 0\n" if args.no_final else ""
    extra += "[tts]\nprerender = false\n" if args.cold else ""
    rig = Rig.start(env, folder, extra)
    summary = {}
    try:
        timed = args.only is None or "latency" in args.only
        if timed:
            summary["latency"] = latency(rig, args)
        for name, fn in DIALOGS.items():
            if args.only is None or name in args.only:
                summary[name] = f"{run(rig, name, fn, args.rounds)}/{args.rounds}"
    finally:
        rig.close()
        stop_server(env)
    summary["load_avg"] = os.getloadavg()
    print(json.dumps({"summary": summary}))
    return (
        0
        if all(
            v == f"{args.rounds}/{args.rounds}"
            for k, v in summary.items()
            if k not in ("latency", "load_avg")
        )
        else 1
    )


if __name__ == "__main__":
    sys.exit(main())
