#!/usr/bin/env python3
"""Second-pass (Whisper tiny.en, faster-whisper int8) latency and memory on this machine.

    python scripts/bench_second_pass.py FILE.wav [--runs 10]

Prints one JSON line: load time, p50/p90/max of ``WhisperEngine.hear`` on the file (the
pinned decoding options, the sample home's prompt), the worst case on 10 s of pink noise,
RSS before loading, with the model loaded and after release, the threads used, and the
1-minute load average (the machine is shared: say it with the numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import wave
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.asr.whisper_engine import WhisperEngine, as_float_audio, cpu_threads
from hub.asr.whisper_prompt import initial_prompt
from hub.settings import load_settings


def read(path: str) -> np.ndarray:
    with wave.open(path) as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return as_float_audio(pcm, w.getframerate())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    settings = load_settings(os.environ.get("HUB_CONFIG") or None)
    engine = WhisperEngine(settings.asr, initial_prompt(settings.home))
    audio, proc = read(args.file), psutil.Process()
    rss0 = proc.memory_info().rss / 1e6
    start = time.monotonic()
    first = engine.hear(audio)
    times = []
    for _ in range(args.runs):
        t = time.monotonic()
        engine.hear(audio)
        times.append(time.monotonic() - t)
    spectrum = np.fft.rfft(np.random.default_rng(1).standard_normal(160000))
    noise = np.fft.irfft(spectrum / np.sqrt(np.maximum(np.arange(len(spectrum)), 1)))
    noise = (noise / np.abs(noise).max() * 0.3).astype(np.float32)
    t = time.monotonic()
    engine.hear(noise)
    noise_s = time.monotonic() - t
    rss_loaded = proc.memory_info().rss / 1e6
    engine.release()
    print(
        json.dumps(
            {
                "file": Path(args.file).name,
                "seconds": round(len(audio) / 16000, 2),
                "text": first.text,
                "load_s": round(engine.load_s, 2),
                "first_call_s": round(time.monotonic() - start - sum(times) - noise_s, 2),
                "p50_ms": round(1000 * statistics.median(times)),
                "p90_ms": round(1000 * sorted(times)[int(0.9 * (len(times) - 1))]),
                "max_ms": round(1000 * max(times)),
                "noise_10s_ms": round(1000 * noise_s),
                "rss_before_mb": round(rss0),
                "rss_loaded_mb": round(rss_loaded),
                "rss_released_mb": round(proc.memory_info().rss / 1e6),
                "threads": cpu_threads(settings.asr.whisper_threads),
                "loadavg_1m": os.getloadavg()[0],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
