"""A microphone for ``wyoming-satellite --mic-command``: raw int16 mono PCM on stdout at real speed.

Silence, until the trigger file's modification time changes; then one 64 ms "wake" tone
chunk, 0.4 s of silence, the utterance (raw int16 mono at RATE), and silence again. Each block
is written when its last sample has been "spoken" (as a real capture delivers it). With MARKS
and SPEECH_END (a byte offset in the utterance), the time (monotonic, by the schedule, as a
sound card captures it) at which that byte was spoken is appended to MARKS per utterance.
    python paced_mic.py UTTERANCE.raw RATE TRIGGER [MARKS SPEECH_END]
"""

import math
import os
import struct
import sys
import time

CHUNK = 1024


def main() -> None:
    path, rate, trigger = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    marks, speech_end = (sys.argv[4], int(sys.argv[5])) if len(sys.argv) > 5 else (None, 0)
    tone = b"".join(
        struct.pack("<h", int(20000 * math.sin(2 * math.pi * 1000 * i / rate)))
        for i in range(CHUNK)
    )
    silence = bytes(2 * CHUNK)
    pending, seen, end_at = b"", _mtime(trigger), -1
    out, start, n = sys.stdout.buffer, time.monotonic(), 0
    while True:
        if not pending and _mtime(trigger) != seen:
            seen = _mtime(trigger)
            with open(path, "rb") as f:  # read at each trigger: the caller may vary it
                utterance = f.read()
            pending = tone + bytes(2 * int(0.4 * rate)) + utterance
            end_at = len(tone) + 2 * int(0.4 * rate) + speech_end if marks else -1
        block, pending = (pending[: 2 * CHUNK], pending[2 * CHUNK :]) if pending else (silence, b"")
        n += 1
        time.sleep(max(0.0, start + n * CHUNK / rate - time.monotonic()))
        out.write(block.ljust(2 * CHUNK, b"\0"))
        out.flush()
        if 0 <= end_at < 2 * CHUNK:  # the end of speech is in this block
            spoken = start + n * CHUNK / rate - (2 * CHUNK - end_at) / 2 / rate  # as scheduled
            with open(marks, "a") as f:
                f.write(f"{spoken:.6f}\n")
        end_at -= 2 * CHUNK if end_at >= 0 else 0


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return 0


if __name__ == "__main__":
    main()
