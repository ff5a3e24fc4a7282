#!/usr/bin/env python3
"""Does the silence kept after the speech change the transcript? Each recording of
``shared/audio/{generated,real}`` (0.5 s of silence before, 1 s after) goes through the live
endpointer (:class:`hub.audio.endpoint.Endpointer`, WebRTC VAD, the 800 ms rule); its frames are
cut at the last speech frame + N ms for each N given and recognized
(``PocketSphinxEngine.transcribe``, the shared home's grammar). One JSON line per file:
``{N: [text, rejected, unsure]}``; then how many files differ from the first N.

    python scripts/bench_endpoint_tail.py [--tails 300 150 100] [--limit K]
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main() -> int:
    import tempfile

    import numpy as np

    from hub.asr import make_asr_engine
    from hub.audio.endpoint import Endpointer
    from hub.settings import load_settings

    from live_audio import read_wav
    from shared_data import home_toml, recordings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tails", type=int, nargs="+", default=[300, 150, 100])
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    settings = load_settings(str(home_toml()))
    cache = Path(tempfile.gettempdir()) / "hub-bench-tail"
    engine = make_asr_engine(settings.asr, settings.home, cache_dir=cache)
    files = recordings("generated") + recordings("real")
    differ = dict.fromkeys(args.tails[1:], 0)
    for path in files[: args.limit or None]:
        audio = np.concatenate(
            [np.zeros(8000, np.int16), read_wav(path), np.zeros(16000, np.int16)]
        )
        ep = Endpointer(800, 15.0, 16000)
        for i in range(0, len(audio), 800):
            if ep.push(audio[i : i + 800]):
                break
        frames, last = list(ep._frames), ep._last_speech
        row: dict = {"file": path.name}
        for tail in args.tails:
            cut = np.concatenate(frames[: min(len(frames), last + 1 + tail // 10)])
            heard = engine.transcribe(cut.astype(np.int16))
            row[tail] = [heard.text, bool(heard.rejected), bool(getattr(heard, "unsure", False))]
        for tail in differ:
            differ[tail] += row[tail] != row[args.tails[0]]
        print(json.dumps(row), flush=True)
    print(json.dumps({"files": len(files[: args.limit or None]), "differ_from_first": differ}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
