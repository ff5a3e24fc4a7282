#!/usr/bin/env python3
"""Gain of the fuzzy matcher (and several-commands splitting) over strict rules on paraphrases.

Usage: ``python scripts/score_paraphrases.py FILE.toml... [--config F] [--show]``

Each file holds ``[[case]]`` tables (``text``, ``intent``, optional ``name``/``area``) about the
home of ``--config`` (default: the shipped ``hub/data/home-en.toml``), as in
``hub/bench/data/paraphrases.toml``. A case is right when the first match has the expected intent
and names the expected entity/area; ``answer``/``none`` cases are right when nothing matches.
A *wrong action* is a match with side effects on an entity neither the case nor the sentence
names (an area case may act on the area's entities). Prints
rules-only and rules+fuzzy accuracy per file, and the wrong actions of each.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hub.home import Home  # noqa: E402
from hub.intents import catalog  # noqa: E402
from hub.intents.rules import Rules  # noqa: E402
from hub.paths import DATA_DIR  # noqa: E402
from hub.settings import IntentSettings, load_settings  # noqa: E402


def right(case: dict, match) -> bool:
    """True when ``match`` (an IntentMatch or None) is what the case expects."""
    if case["intent"] in ("answer", "none"):
        return match is None
    if match is None or match.intent != case["intent"]:
        return False
    for key in ("name", "area"):
        if key in case and case[key] not in (match.slots.get(key), *match.entities):
            return False
    return True


def wrong_action(case: dict, match) -> bool:
    """True when ``match`` would change an entity the case does not name."""
    if match is None or not catalog.has_side_effects(match.intent):
        return False
    said = case["text"].casefold()
    named = {case.get("name"), *(e for e in match.entities if e.casefold() in said)}
    return bool(match.entities) and not set(match.entities) <= named and "area" not in case


def score(rules: Rules, cases: list[dict], show: bool) -> dict:
    """Counts for strict rules and rules + fuzzy over ``cases``."""
    counts = {"n": len(cases), "rules": 0, "fuzzy": 0, "wrong_rules": 0, "wrong_fuzzy": 0}
    for case in cases:
        strict = rules.recognize(case["text"])
        loose = strict or next(iter(rules.recognize_more(case["text"])), None)
        counts["rules"] += right(case, strict)
        counts["fuzzy"] += right(case, loose)
        counts["wrong_rules"] += wrong_action(case, strict)
        counts["wrong_fuzzy"] += wrong_action(case, loose)
        if show and wrong_action(case, loose):
            print(f"  WRONG ACTION: {case['text']!r} -> {loose.intent} {loose.entities}")
        if show and not right(case, loose):
            got = (loose.intent, loose.slots) if loose else None
            print(f"  miss: {case['text']!r} want {case['intent']} got {got}")
    return counts


def main(argv: list[str] | None = None) -> int:
    """Score each file; print one line per file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--config", default=str(DATA_DIR / "home-en.toml"))
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args(argv)
    home = Home.from_settings(load_settings(args.config).home)
    rules = Rules(home, IntentSettings())
    for path in args.files:
        cases = tomllib.loads(path.read_text(encoding="utf-8"))["case"]
        c = score(rules, cases, args.show)
        print(
            f"{path.name}: {c['n']} cases; rules {c['rules'] / c['n']:.1%}; rules+fuzzy "
            f"{c['fuzzy'] / c['n']:.1%} (gain {(c['fuzzy'] - c['rules']) / c['n']:+.1%}); "
            f"wrong actions: rules {c['wrong_rules']}, rules+fuzzy {c['wrong_fuzzy']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
