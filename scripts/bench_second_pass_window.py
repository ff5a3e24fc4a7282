#!/usr/bin/env python3
"""Second-pass decode time and accuracy by encoder window (issue 18), on recordings whose file
name is what was said.

    python scripts/bench_second_pass_window.py [--config F] [--floors 30,5,3] [--runs 3] DIR...

For each ``[asr] whisper_window_s`` floor in ``--floors`` (30: Whisper's fixed 30 s window, the
old behaviour), one :class:`~hub.asr.whisper_engine.WhisperEngine` (the pinned decoding
options, the config's home as prompt, kept loaded) hears every ``.wav`` in the folders; the
floors take turns on each file, so a passing load spike hits them alike. Per floor it prints
the decode time (median of ``--runs`` per file; p50, p95, max and mean over the files), the
exact matches and the word error rate of the normalized transcript against the normalized file
name (``oov_*`` files are timed, not scored), and how many short-window readings were read again
at 30 s. Then the 1-minute load average before and after (the machine is shared: say it with the
numbers). ``--json`` adds one JSON line per file and floor.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.asr.whisper_engine import WhisperEngine, as_float_audio, normalize
from hub.asr.whisper_prompt import initial_prompt
from hub.audio.load import load_wav
from hub.settings import load_settings

DEFAULT_DIRS = ("/work/shared/audio/real", "/work/shared/audio/generated")


def word_errors(ref: list[str], hyp: list[str]) -> int:
    """Levenshtein distance between two word lists (substitutions, insertions, deletions)."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", default=list(DEFAULT_DIRS))
    parser.add_argument("--config", default=os.environ.get("HUB_CONFIG") or None)
    parser.add_argument(
        "--floors", default="30,5,3", help="whisper_window_s values, comma-separated"
    )
    parser.add_argument("--runs", type=int, default=3, help="decodes per file and floor")
    parser.add_argument("--json", action="store_true", help="also one JSON line per file and floor")
    args = parser.parse_args()
    settings = load_settings(args.config)
    prompt = initial_prompt(settings.home)
    floors = [int(f) for f in args.floors.split(",")]
    engines = {
        f: WhisperEngine(
            dataclasses.replace(settings.asr, whisper_window_s=f, whisper_keep_loaded_s=-1),
            prompt,
        )
        for f in floors
    }
    for engine in engines.values():
        engine.preload()
    files = sorted(p for d in args.dirs for p in Path(d).glob("*.wav"))
    load_before = os.getloadavg()[0]
    rows: dict[int, list[dict]] = {f: [] for f in floors}
    for path in files:
        audio = as_float_audio(load_wav(path).samples)
        for f in floors:
            times, heard = [], None
            for _ in range(args.runs):
                start = time.perf_counter()
                heard = engines[f].hear(audio)
                times.append(time.perf_counter() - start)
            text = normalize(heard.text)
            ref = None if path.stem.startswith("oov_") else normalize(path.stem)
            row = {
                "file": f"{path.parent.name}/{path.name}",
                "floor_s": f,
                "window_s": heard.window_s,
                "reread": heard.reread,
                "audio_s": round(len(audio) / 16000, 2),
                "decode_ms": round(1000 * statistics.median(times)),
                "text": text,
                "exact": None if ref is None else text == ref,
                "errors": None if ref is None else word_errors(ref.split(), text.split()),
                "words": None if ref is None else len(ref.split()),
            }
            rows[f].append(row)
            if args.json:
                print(json.dumps(row, ensure_ascii=False))
    print(
        "| whisper_window_s | files | decode p50 ms | p95 ms | max ms | mean ms "
        "| exact match | WER | re-read at 30 s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for f in floors:
        ms = [r["decode_ms"] for r in rows[f]]
        scored = [r for r in rows[f] if r["exact"] is not None]
        wer = sum(r["errors"] for r in scored) / max(1, sum(r["words"] for r in scored))
        print(
            f"| {f} | {len(ms)} | {pct(ms, 0.5)} | {pct(ms, 0.95)} | {max(ms)} "
            f"| {round(statistics.mean(ms))} | {sum(r['exact'] for r in scored)}/{len(scored)} "
            f"| {100 * wer:.1f}% | {sum(1 for r in rows[f] if r['reread'])} |"
        )
    differ = [
        (a["file"], a["text"], b["text"])
        for a, b in zip(rows[floors[0]], rows[floors[-1]], strict=True)
        if a["text"] != b["text"]
    ]
    for name, first, last in differ:
        print(f"differs ({floors[0]} s / {floors[-1]} s floor): {name}: {first!r} / {last!r}")
    print(f"load average (1 min): {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
