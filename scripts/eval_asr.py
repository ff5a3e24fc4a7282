"""Measure ASR on shared/audio: transcript-exact rate, per-file time, RTF, intent accuracy.

The file name (without .wav) is what was said. Intent accuracy: the reference is the rules'
match for the file name (``hub.intents.rules.Rules``); a file is right when the first matching
n-best alternative gives the same intent and slots; ``oov_*`` files are right when no intent
comes out. Files whose name the rules do not match count as right only when the recognizer's
output matches nothing either (reported as ``no_reference``).

Usage::

    .venv/bin/python scripts/eval_asr.py [--engine pocketsphinx|vosk] [--unrestricted]
        [--vosk-model DIR] [--cache-dir DIR] [--calibration DIR] [--verbose] [DIR ...]

Default dirs: the calibration set (``--calibration``, default ``/tmp/hub-asr-calibration``,
made by ``scripts/make_asr_calibration.py``; skipped when absent), then the test set
``$HUB_SHARED/audio/generated`` and ``.../real`` (shared beside the repo). The report keys
are ``calibration:<dir>`` and ``test:<dir>``: choose thresholds on calibration only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import time
import wave
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.asr import make_asr_engine
from hub.home import Home
from hub.intents.rules import Rules
from hub.settings import load_settings


def shared_dir() -> Path:
    """``$HUB_SHARED`` or the ``shared`` folder beside the repo."""
    return Path(os.environ.get("HUB_SHARED") or Path(__file__).resolve().parents[2] / "shared")


def read_wav(path: Path) -> np.ndarray:
    """int16 mono samples of a 16 kHz wav."""
    with wave.open(str(path)) as wav:
        assert wav.getframerate() == 16000 and wav.getnchannels() == 1, path
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def intent_key(match) -> tuple | None:
    return None if match is None else (match.intent, json.dumps(match.slots, sort_keys=True))


def evaluate_file(engine, rules, path: Path) -> dict:
    """One file's row: transcript, timing and whether the intent is right."""
    samples = read_wav(path)
    started = time.perf_counter()
    transcript = engine.transcribe(samples)
    elapsed = time.perf_counter() - started
    said = path.stem
    reference = None if said.startswith("oov_") else intent_key(rules.recognize(said))
    _, match = rules.rank(transcript.alternatives)
    return {
        "file": path.name,
        "said": said,
        "text": transcript.text,
        "alternatives": list(transcript.alternatives),
        "rejected": transcript.rejected,
        "exact": norm(transcript.text) == norm(said),
        "ms": round(elapsed * 1000, 1),
        "rtf": elapsed / (len(samples) / 16000),
        "reference": reference,
        "got": intent_key(match),
        "right": intent_key(match) == reference,
        "oov": said.startswith("oov_"),
    }


def summary(rows: list[dict]) -> dict:
    """Totals of a list of rows."""
    count = len(rows) or 1
    return {
        "files": len(rows),
        "exact": sum(r["exact"] for r in rows),
        "intent_right": sum(r["right"] for r in rows),
        "intent_rate": round(sum(r["right"] for r in rows) / count, 3),
        "oov_right": f"{sum(r['right'] for r in rows if r['oov'])}/{sum(r['oov'] for r in rows)}",
        "rejected": sum(r["rejected"] for r in rows),
        "no_reference": sum(r["reference"] is None and not r["oov"] for r in rows),
        "mean_ms": round(sum(r["ms"] for r in rows) / count, 1),
        "max_ms": max((r["ms"] for r in rows), default=0),
        "mean_rtf": round(sum(r["rtf"] for r in rows) / count, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--engine", default="pocketsphinx", choices=["pocketsphinx", "vosk"])
    parser.add_argument("--unrestricted", action="store_true")
    parser.add_argument("--vosk-model", default="")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--reject-llr", type=float, default=None)
    parser.add_argument("--calibration", type=Path, default=Path("/tmp/hub-asr-calibration"))
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    settings = load_settings()
    asr = dataclasses.replace(
        settings.asr, engine=args.engine, restrict=not args.unrestricted, vosk_model=args.vosk_model
    )
    if args.reject_llr is not None:
        asr = dataclasses.replace(asr, reject_llr=args.reject_llr)
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG, format="%(message)s")
    started = time.perf_counter()
    engine = make_asr_engine(asr, settings.home, cache_dir=args.cache_dir)
    load_s = time.perf_counter() - started
    rules = Rules(Home.from_settings(settings.home), settings.intents)
    test = shared_dir() / "audio"
    dirs = args.dirs or [
        *([args.calibration] if args.calibration.is_dir() else []),
        test / "generated",
        test / "real",
    ]
    report = {"engine": engine.name, "restrict": asr.restrict, "load_s": round(load_s, 2)}
    for folder in dirs:
        rows = [evaluate_file(engine, rules, p) for p in sorted(folder.glob("*.wav"))]
        role = "test" if folder.resolve().parent == test.resolve() else "calibration"
        report[f"{role}:{folder.name}"] = summary(rows)
        for row in rows if args.verbose else []:
            if not (row["right"] and row["exact"]):
                print(
                    json.dumps(
                        {
                            k: row[k]
                            for k in (
                                "said",
                                "text",
                                "rejected",
                                "reference",
                                "got",
                                "right",
                                "alternatives",
                            )
                        }
                    )
                )
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
