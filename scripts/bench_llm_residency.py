#!/usr/bin/env python3
"""What freeing the LLM between uses costs (``[llm] keep_loaded_s``), with the real model.

    PYTHONPATH=$PWD python scripts/bench_llm_residency.py [--rounds 5]

For each round: one LLM turn of a question the rules miss (classify, then answer) with the
model resident, then the model released (:meth:`LlamaEngine.release`) and the same turn again,
which first loads the model and restores its prompt state from the disk cache. Prints one
JSON line: median seconds of each, the load and the two restores of the turn after release
(prefix states read from disk and set; a resident turn sets them too, from memory), RSS loaded
and released,
and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUESTION = "what is the capital of France"


def main() -> None:
    import psutil

    from hub.llm import DEFAULT_INTENTS, make_llm
    from hub.settings import LlmSettings, load_settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    home, proc = load_settings(None).home, psutil.Process()
    engine = make_llm(LlmSettings(), home, DEFAULT_INTENTS, release=True)
    steps = {"load": [], "restore": []}
    wrap(engine._res, "_load", steps["load"])
    wrap(engine, "_restore", steps["restore"])  # reads the state file if needed, sets it

    def turn(into: list) -> float:
        start = time.monotonic()
        engine.classify(QUESTION)
        into.append(time.monotonic() - start)  # the llm_intent node's part
        list(engine.answer(QUESTION))
        return time.monotonic() - start

    resident, cold, rss_loaded, rss_released = [], [], [], []
    classify_resident, classify_cold = [], []
    turn([])  # first use after start-up: the model and page cache warm
    for _ in range(args.rounds):
        resident.append(turn(classify_resident))
        rss_loaded.append(proc.memory_info().rss)
        engine.release()
        rss_released.append(proc.memory_info().rss)
        steps["load"].clear()
        steps["restore"].clear()
        cold.append(turn(classify_cold))
        load_s, restore_s = sum(steps["load"]), sum(steps["restore"])
        steps.setdefault("load_per_round", []).append(load_s)
        steps.setdefault("restore_per_round", []).append(restore_s)
    engine.close()
    med = statistics.median
    print(
        json.dumps(
            {
                "bench": "llm-residency",
                "rounds": args.rounds,
                "turn_resident_s": round(med(resident), 2),
                "turn_after_release_s": round(med(cold), 2),
                "classify_resident_s": round(med(classify_resident), 2),
                "classify_after_release_s": round(med(classify_cold), 2),
                "load_s": round(med(steps["load_per_round"]), 3),
                "restore_s": round(med(steps["restore_per_round"]), 3),
                "rss_loaded_mb": round(med(rss_loaded) / 2**20),
                "rss_released_mb": round(med(rss_released) / 2**20),
                "loadavg": [round(x, 2) for x in os.getloadavg()],
            }
        )
    )


def wrap(obj, name: str, into: list) -> None:
    """Record the seconds of each call of ``obj.name`` in ``into``."""
    original = getattr(obj, name)

    def timed(*a, **kw):
        start = time.monotonic()
        try:
            return original(*a, **kw)
        finally:
            into.append(time.monotonic() - start)

    setattr(obj, name, timed)


if __name__ == "__main__":
    main()
