"""``hub stats``: what the journal says about recent turns, as a table or JSON."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

from hub import names
from hub.cli.args import open_cli_store
from hub.resilience.percentile import percentile as pct
from hub.settings import load_settings

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``stats``."""
    p = sub.add_parser(
        "stats",
        help="summarize recent turns from the journal",
        description="Turns, per-node latency p50/p95, TTFA and total time "
        "(over the same turns), fallback levels, error kinds, breaker events "
        "and the fingerprint cache hit rate, over --since (default 24h).",
    )
    common(p)
    store(p)
    p.add_argument(
        "--since",
        type=parse_since,
        default=86400.0,
        metavar="AGE",
        help="how far back: 90s, 30m, 24h, 7d, 2w (24h)",
    )
    p.add_argument(
        "--last", type=_positive, default=None, metavar="N", help="at most the N newest turns"
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run_stats)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def parse_since(text: str) -> float:
    """``"24h"`` -> 86400.0: a number and a unit (s, m, h, d, w). Raises ArgumentTypeError."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text or "")
    if not m or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"expected an age: a positive number and a unit (s, m, h, d or w), e.g. 24h or 7d; "
            f"got {text!r}"
        )
    return float(m.group(1)) * _UNITS[m.group(2)]


def _count(out: dict, key: str) -> None:
    out[key] = out.get(key, 0) + 1


def _p(vals: list[float]) -> dict:
    return {"n": len(vals), "p50": pct(vals, 50), "p95": pct(vals, 95)}


def fallback_level(trace: dict):
    """The fallback level a journal trace counts at: its own, except that a curated answer
    (``source`` faq) counts at :func:`hub.intents.faq.curated_level` (0 unless a rules or LLM
    node failed), also in traces journaled before the graph said so (they have 3)."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.intents.faq import curated_level

    level = trace.get("fallback_level")
    if trace.get("source") == "faq" and level == 3:
        return curated_level(trace.get("errors"))
    return level


def summarize(traces: list[dict], breaker_events: list[dict] = ()) -> dict:
    """Figures of ``traces`` (journal traces): counts by status, source, fallback level
    (:func:`fallback_level`: a curated answer counts as an answer) and error kind; p50/p95 ms
    per node; TTFA and total over the same turns (those that spoke,
    so total >= TTFA for each); breaker transitions; fingerprint cache hit rate of audio turns
    (those that ran ASR or hit the cache).
    """
    out: dict = {
        "turns": len(traces),
        "status": {},
        "source": {},
        "fallback_level": {},
        "errors": {},
        "nodes_ms": {},
    }
    nodes: dict[str, list[float]] = {}
    ttfa, total = [], []
    audio = hits = 0
    for t in traces:
        for key in ("status", "source"):
            _count(out[key], str(t.get(key) or "none"))
        _count(out["fallback_level"], str(fallback_level(t)))
        for e in t.get("errors") or []:
            _count(out["errors"], f"{e.get('node')}:{e.get('kind')}")
        timings = t.get("timings_ms") or {}
        for node, ms in timings.items():
            if node not in ("ttfa", "total") and isinstance(ms, (int, float)):
                nodes.setdefault(node, []).append(ms)
        if timings.get("ttfa") is not None and timings.get("total") is not None:
            ttfa.append(timings["ttfa"])
            total.append(max(timings["total"], timings["ttfa"]))
        if t.get("file") or names.ASR in timings or t.get("source") == "cache":
            audio += 1
            hits += t.get("source") == "cache"
    out["nodes_ms"] = {n: _p(v) for n, v in sorted(nodes.items())}
    out["ttfa_ms"], out["total_ms"] = _p(ttfa), _p(total)
    out["breakers"] = {}
    for ev in breaker_events:
        _count(out["breakers"], f"{ev['breaker']}:{ev['from_state']}->{ev['to_state']}")
    out["cache_hit_rate"] = round(hits / audio, 3) if audio else None
    return out


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v)


def table(summary: dict, since_s: float) -> str:
    """The summary as aligned text lines."""
    lines = [f"turns in the last {since_s / 3600:g} h: {summary['turns']}"]
    for key in ("status", "source", "fallback_level", "errors", "breakers"):
        items = ", ".join(f"{k} {v}" for k, v in sorted(summary[key].items())) or "none"
        lines.append(f"{key.replace('_', ' ')}: {items}")
    rate = summary["cache_hit_rate"]
    lines.append("fingerprint cache hits: " + ("-" if rate is None else f"{rate:.0%}"))
    lines.append(f"{'latency (ms)':<14}{'n':>6}{'p50':>10}{'p95':>10}")
    rows = [
        *summary["nodes_ms"].items(),
        ("ttfa", summary["ttfa_ms"]),
        ("total", summary["total_ms"]),
    ]
    for name, p in rows:
        lines.append(f"{name:<14}{p['n']:>6}{_fmt(p['p50']):>10}{_fmt(p['p95']):>10}")
    return "\n".join(lines)


def run_stats(args) -> int:
    """Print the summary of the turns journaled within ``--since``; 0."""
    settings = load_settings(args.config)
    store = open_cli_store(args, settings)
    since = time.time() - args.since
    summary = summarize(store.turns_since(since, args.last), store.breaker_events_since(since))
    if args.json:
        print(json.dumps(summary, indent=2), file=sys.stdout)
    else:
        print(table(summary, args.since), file=sys.stdout)
    return 0
