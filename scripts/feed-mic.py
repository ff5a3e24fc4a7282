#!/usr/bin/env python3
"""Speak WAV files into the test sound server's FIFO microphone at real speed.

    scripts/feed-mic.py [--gap S] FILE.wav ...

Writes silence into ``$HUB_TEST_MIC_FIFO`` (made by ``scripts/start-test-audio.sh``), then each
file in turn with ``--gap`` seconds of silence between them, paced by the clock as a
microphone would deliver it, then silence until Ctrl-C or SIGTERM (the FIFO blocks its reader
when nobody writes), or for ``--then`` seconds. Files: 16-bit mono WAV at 16 kHz (``hub say``
writes 22.05 kHz: they are resampled). Standard library and numpy/soxr only. Exit codes: 0
done, 2 bad input.
"""

import argparse
import os
import signal
import sys
import time
import wave

import numpy as np

RATE, BLOCK = 16000, 320


def read(path: str) -> np.ndarray:
    with wave.open(path) as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise ValueError(f"{path}: not 16-bit mono")
        audio = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        if w.getframerate() != RATE:
            import soxr

            audio = soxr.resample(audio, w.getframerate(), RATE).astype(np.int16)
    return audio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument(
        "--gap",
        type=float,
        default=0.4,
        help="silence between files, seconds (default %(default)s)",
    )
    parser.add_argument(
        "--then",
        type=float,
        default=None,
        help="seconds of silence after the last file, then exit (default: until Ctrl-C or "
        "SIGTERM; a feed started in the background of a script ignores Ctrl-C)",
    )
    args = parser.parse_args()
    fifo = os.environ.get("HUB_TEST_MIC_FIFO")
    try:
        if not fifo:
            raise ValueError("HUB_TEST_MIC_FIFO is not set: eval scripts/start-test-audio.sh")
        gap = np.zeros(round(args.gap * RATE), np.int16)
        speech = np.concatenate(
            [np.zeros(RATE, np.int16)] + [x for f in args.files for x in (read(f), gap)]
        )
    except (OSError, ValueError, wave.Error) as exc:
        print(f"feed-mic: {exc}", file=sys.stderr)
        return 2
    end = None if args.then is None else len(speech) + round(args.then * RATE)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    with open(fifo, "wb", buffering=0) as out:
        start, written = time.monotonic(), 0
        try:
            while end is None or written < end:
                block = speech[written : written + BLOCK]  # empty past the end: silence
                block = np.pad(block, (0, BLOCK - len(block)))
                out.write(block.astype("<i2").tobytes())
                written += BLOCK
                time.sleep(max(0.0, start + written / RATE - time.monotonic()))
        except KeyboardInterrupt:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
