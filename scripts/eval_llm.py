"""Measure the local LLM: load time, tokens/s, classify latency, answer TTFS, cancel stop time,
and intent accuracy on hub/bench/data/paraphrases.toml (LLM alone, rules alone, rules + LLM).

Run:  .venv/bin/python scripts/eval_llm.py [--config hub.toml] [--limit N] [--json]
      .venv/bin/python scripts/eval_llm.py --changing   # facts that change over time

``--changing``: the model alone on ``hub/bench/data/changing_questions.toml``, its sureness
gate on and off: how many answers it states, and how many the answer check flags
(:func:`hub.bench.changing.model_report`).

Accuracy rule: the expected intent must come out (with the expected entity ``name`` / ``area``
when the case names one); "answer" must come out as the answer pseudo-intent; "none" counts
as right when nothing is acted on. Timings are wall clock on this machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hub.errors import HubError  # noqa: E402
from hub.llm import DEFAULT_INTENTS, interpret  # noqa: E402
from hub.settings import load_settings  # noqa: E402

CASES = ROOT / "hub" / "bench" / "data" / "paraphrases.toml"


def load_rules(settings):
    """``hub.intents.rules.Rules`` for the home, or None when the rules part is not there."""
    try:
        from hub.home import Home
        from hub.intents.rules import Rules
    except ImportError:
        return None
    return Rules(Home.from_settings(settings.home), settings.intents)


def correct(case: dict, intent: str | None, slots: dict, entities=()) -> bool:
    """Whether a result (intent None: nothing acted on) is what the case expects."""
    want = case["intent"]
    if want == "none":
        return intent in (None, "none")
    if intent != want:
        return False
    for key in ("name", "area"):
        if key in case and slots.get(key) != case[key] and case[key] not in entities:
            return False
    return True


def timed_classify(engine, settings, intents, text):
    """``(LlmIntent | None, seconds)``; invalid output counts as None."""
    start = time.perf_counter()
    try:
        result = interpret(
            engine,
            text,
            home=settings.home,
            intents=intents,
            min_confidence=settings.llm.min_confidence,
        )
    except HubError:
        result = None
    return result, time.perf_counter() - start


def first_sentence_s(engine, question: str) -> tuple[float, list[str]]:
    """Seconds to the first sentence of an answer, and all the sentences."""
    start, first, out = time.perf_counter(), None, []
    for sentence in engine.answer(question):
        first = first or time.perf_counter() - start
        out.append(sentence)
    return (first if first is not None else time.perf_counter() - start), out


def cancel_stop_ms(engine, question: str) -> float:
    """Milliseconds from setting cancel (after the first piece) until the generation ended."""
    cancel, started, ended = threading.Event(), threading.Event(), [0.0]
    llm = engine._llm
    original = llm.create_completion

    def spy(*args, **kwargs):
        for chunk in original(*args, **kwargs):
            started.set()
            yield chunk

    llm.create_completion = spy
    try:

        def run():
            for _ in engine.answer(question, cancel):
                pass
            ended[0] = time.perf_counter()

        worker = threading.Thread(target=run)
        worker.start()
        started.wait(30)
        t0 = time.perf_counter()
        cancel.set()
        worker.join(30)
        return (ended[0] - t0) * 1000
    finally:
        del llm.create_completion


def tokens_per_s(engine, n: int = 64) -> float:
    """Generation speed of the loaded llama.cpp model (no grammar), tokens per second."""
    llm = engine._llm
    prompt = (
        "<|im_start|>user\nDescribe a quiet kitchen at night.<|im_end|>\n<|im_start|>assistant\n"
    )
    start, count = time.perf_counter(), 0
    for _ in llm.create_completion(prompt, max_tokens=n, stream=True, temperature=0.0):
        count += 1
    return count / (time.perf_counter() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--changing", action="store_true", help="facts that change over time")
    args = parser.parse_args(argv)
    settings = load_settings(args.config)
    if args.changing:
        from hub.bench.changing import model_report

        print("\n".join(model_report(settings, args.limit)))
        return 0
    cases = tomllib.loads(CASES.read_text())["case"][: args.limit or None]
    report, rules = measure(settings, cases)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            if key != "rows":
                print(f"{key:28s} {value}")
    return 0


def measure(settings, cases):
    """Run every measurement; returns the report dict and the rules (or None)."""
    from hub.llm import make_llm

    rules = load_rules(settings)
    intents = tuple(rules.intent_names()) if rules else DEFAULT_INTENTS
    t0 = time.perf_counter()
    engine = make_llm(settings.llm, settings.home, intents)
    load_s = time.perf_counter() - t0
    rows, lat = [], []
    for case in cases:
        result, seconds = timed_classify(engine, settings, intents, case["text"])
        lat.append(seconds)
        rule = rules.recognize(case["text"]) if rules else None
        rows.append(score_row(case, result, rule))
    questions = [c["text"] for c in cases if c["intent"] == "answer"] or ["why is the sky blue"]
    ttfs = [first_sentence_s(engine, q)[0] for q in questions]
    stops = [cancel_stop_ms(engine, "Tell me a long story about a lighthouse.") for _ in range(5)]
    report = {
        "engine": engine.name,
        "intents": len(intents),
        "load_s (load + prefix warm)": round(load_s, 3),
        "tokens_per_s": round(tokens_per_s(engine), 1),
        "classify_p50_ms": round(statistics.median(lat) * 1000),
        "classify_max_ms": round(max(lat) * 1000),
        "answer_ttfs_p50_ms": round(statistics.median(ttfs) * 1000),
        "cancel_stop_ms_max": round(max(stops), 1),
        "cases": len(rows),
        "accuracy_llm_alone": _share(rows, "llm"),
        "accuracy_rules_alone": _share(rows, "rules") if rules else "n/a (no hub.intents)",
        "accuracy_rules_plus_llm": _share(rows, "both") if rules else "n/a",
        "sensitive_needing_confirmation": _sensitive(rows),
        "rows": rows,
    }
    return report, rules


def score_row(case: dict, result, rule) -> dict:
    """One row: what the LLM and the rules said and whether each was right."""
    llm_ok = correct(case, result.intent if result else None, result.slots if result else {})
    rule_ok = rule is not None and correct(case, rule.intent, rule.slots, rule.entities)
    if rule is None:
        rule_ok = case["intent"] == "none"  # rules cannot answer questions
    return {
        "text": case["text"],
        "want": case["intent"],
        "llm": None if result is None else [result.intent, result.slots, result.confidence],
        "llm_confirm": bool(result and result.needs_confirmation),
        "rules": None if rule is None else [rule.intent, rule.slots],
        "llm_ok": llm_ok,
        "rules_ok": rule_ok,
        "both_ok": rule_ok if rule else llm_ok,
    }


def _share(rows, who: str) -> str:
    """``"12/38 (32%)"`` for column ``who``."""
    ok = sum(r[f"{who}_ok"] for r in rows)
    return f"{ok}/{len(rows)} ({100 * ok // max(1, len(rows))}%)"


def _sensitive(rows) -> str:
    """How many LLM results that name a sensitive entity asked for confirmation."""
    sensitive = ("Front Door", "Garage Door")
    hits = [r for r in rows if r["llm"] and r["llm"][1].get("name") in sensitive]
    return f"{sum(r['llm_confirm'] for r in hits)}/{len(hits)}"


if __name__ == "__main__":
    raise SystemExit(main())
