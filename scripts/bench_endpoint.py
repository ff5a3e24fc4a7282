#!/usr/bin/env python3
"""The live endpoint alone, in one process: each command of ``bench_dialog.COMMANDS`` in the
hub's voice is pushed in real time (20 ms blocks, paced by the clock) through the daemon's
endpointer (:func:`hub.audio.endpoint.live_endpointer`, the recognizer's ``complete`` check),
then the turn's recognizer call (the check's decode reused), for each value of
``[asr] final_check_ms`` given, interleaved round by round (A B A B ...) so both see the same
load. Prints one JSON line per round and per value p50/p95 of: end of speech -> endpoint,
endpoint -> transcript, and the check's decode in CPU seconds of its thread (what a quiet
machine would take: on one free core its wall time is about this).

    python scripts/bench_endpoint.py [--rounds N] [--check-ms 0 150]
"""

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "scripts")]

BLOCK = 320
"""Samples per push (20 ms at 16 kHz), as the FIFO microphone delivers them."""


def percentile(values, q):
    import numpy as np

    return round(float(np.percentile(values, q)), 3) if values else None


class Timed:
    """``complete`` with the CPU time of its thread recorded (s)."""

    def __init__(self, complete):
        self.complete, self.cpu = complete, []

    def __call__(self, audio):
        start = time.thread_time()
        try:
            return self.complete(audio)
        finally:
            self.cpu.append(time.thread_time() - start)


class Engines:
    """The two calls ``live_endpointer`` makes of the hub's engines, around ``complete``."""

    def __init__(self, complete):
        self._asr = type("Asr", (), {"complete": staticmethod(complete)})()

    def loaded(self, name: str) -> bool:
        return name == "asr"

    def asr(self):
        return self._asr


def one(engine, asr, audio, speech_end_s: float) -> dict:
    """Push ``audio`` in real time; when the endpoint and the transcript came (s after the
    end of speech), why, and the check's CPU seconds."""
    import numpy as np

    from hub.audio.endpoint import live_endpointer

    timed = Timed(engine.complete)
    ep = live_endpointer(asr, Engines(timed), None)
    start = time.monotonic()
    for i in range(0, len(audio), BLOCK):
        time.sleep(max(0.0, start + i / 16000 - time.monotonic()))
        if ep.push(np.asarray(audio[i : i + BLOCK])):
            break
    ended = time.monotonic()
    text = engine.transcribe(ep.audio()).text
    done = time.monotonic()
    speech_end = start + speech_end_s
    return {
        "endpoint_s": round(ended - speech_end, 3),
        "transcript_s": round(done - ended, 3),
        "reason": ep.reason,
        "text": text,
        "check_cpu_s": round(sum(timed.cpu), 3),
    }


def main() -> int:
    import numpy as np
    from bench_dialog import COMMANDS

    from hub.asr import make_asr_engine
    from hub.settings import load_settings

    from live_audio import silence, speech_extent, synth

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--check-ms", type=int, nargs="+", default=[0, 150])
    args = parser.parse_args()
    settings = load_settings(None)
    cache = Path(tempfile.gettempdir()) / "hub-bench-endpoint"
    engine = make_asr_engine(settings.asr, settings.home, cache_dir=cache)
    results: dict[int, list[dict]] = {ms: [] for ms in args.check_ms}
    for i in range(args.rounds):
        text = COMMANDS[i % len(COMMANDS)]
        audio = np.concatenate([silence(0.5), synth(text), silence(1.5)])
        speech_end_s = speech_extent(audio)[1] / 16000
        for ms in args.check_ms:
            asr = dataclasses.replace(settings.asr, final_check_ms=ms)
            row = {"round": i, "final_check_ms": ms, **one(engine, asr, audio, speech_end_s)}
            results[ms].append(row)
            print(json.dumps(row), flush=True)
    for ms, rows in results.items():
        summary = {"final_check_ms": ms, "n": len(rows)}
        for key in ("endpoint_s", "transcript_s", "check_cpu_s"):
            summary[f"{key}_p50"] = percentile([r[key] for r in rows], 50)
            summary[f"{key}_p95"] = percentile([r[key] for r in rows], 95)
        summary["final"] = sum(r["reason"] == "final" for r in rows)
        print(json.dumps({"summary": summary}), flush=True)
    print(json.dumps({"load_avg": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
