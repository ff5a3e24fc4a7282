#!/usr/bin/env python3
"""Score spoken questions outside the home: heard (key words in the transcript) and answered
(never "didn't catch").

Usage: ``python -m hub replay DIR --store :memory: --no-audio [...] |
python scripts/score_spoken_questions.py [QUESTIONS]``

``QUESTIONS`` (default ``hub/bench/data/spoken_questions.txt``): one question a line, its key
words in ``[brackets]``; each wav of the replay is named after its question without the
brackets (``python -m hub say "how far away is the moon" --out "DIR/how far away is the
moon.wav"``). A wav not in the file counts with no key words (heard = any transcript).
Reads ``hub replay``'s JSON trace lines on stdin; prints one line per file and the totals:
heard, "didn't catch", where the answer came from (``source``). Exit 0.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_CAUGHT = "didn't catch"


def key_words(path: Path) -> dict[str, list[str]]:
    """``{question without brackets: [key words]}``."""
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            table[line.replace("[", "").replace("]", "").strip()] = re.findall(r"\[(\w+)\]", line)
    return table


def main(argv: list[str]) -> int:
    """Score the traces on stdin."""
    table = key_words(Path(argv[0]) if argv else ROOT / "hub/bench/data/spoken_questions.txt")
    n = heard = caught_not = 0
    sources: Counter = Counter()
    for line in sys.stdin:
        try:
            trace = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "file" not in trace or not trace["file"]:
            continue
        n += 1
        name = Path(trace["file"]).stem
        said = set(re.findall(r"\w+", trace["transcript"].lower()))
        ok = bool(said) and all(w in said for w in table.get(name, []))
        miss = NOT_CAUGHT in trace["response"]
        heard += ok
        caught_not += miss
        sources[trace.get("source") or "-"] += 1
        outcome = (trace.get("second_pass") or {}).get("outcome")
        print(
            f"{'heard' if ok else 'NOT HEARD':9} {name[:42]:42} | {trace['transcript'][:40]:40} | "
            f"{outcome} | {trace.get('source')} | {trace['response'][:50]}"
        )
    if n:
        print(
            f'questions: {n}  heard {heard}/{n} ({heard / n:.0%})  "didn\'t catch" '
            f"{caught_not}/{n}  answer source {dict(sources)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
