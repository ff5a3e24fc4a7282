"""``hub bench --suite llm``: the local LLM measured through the real turn graph.

- accuracy on ``hub/bench/data/paraphrases.toml`` (commands and questions the rules may miss):
  rules alone vs rules + LLM, and whether any turn acted on an entity it did not name;
- answer TTFA (end of input -> first answer audio ready) p50 for the questions;
- with the LLM hung: TTFA p100 against the LLM budget + 100 ms;
- general-knowledge answers: right, made up or withheld (:mod:`hub.bench.answers`).
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from hub.bench.answers import answers_report
from hub.core.hub import Hub
from hub.llm.guard import mentioned
from hub.resilience.percentile import percentile as pct
from hub.store.db import Store

DATA = Path(__file__).resolve().parent / "data"
CASES = DATA / "paraphrases.toml"
SETS = (DATA / "paraphrases.toml", DATA / "paraphrases_commands.toml")
"""The paraphrase sets: the earlier one (commands and questions) and our own commands."""


def _hub(settings, *, llm: bool, fuzzy: bool = True, inject=()):
    settings = dataclasses.replace(
        settings, intents=dataclasses.replace(settings.intents, fuzzy=fuzzy)
    )
    if not llm:
        settings = dataclasses.replace(
            settings, llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=())
        )
    hub = Hub(settings, entry="ask", store=Store(":memory:"), speak=True, inject=inject)
    hub.engines.warm(["rules", "tts", "devices"] + (["llm"] if llm else []))
    return hub


def _right(case: dict, trace: dict) -> bool:
    want, got = case["intent"], trace["intent"]
    if want == "answer":
        return got is None and trace["source"] in ("llm", "faq")
    if want == "none":
        return got is None
    return got == want and all(
        trace["slots"].get(k) == case[k] for k in ("name", "area") if k in case
    )


def _unnamed_action(case: dict, trace: dict) -> bool:
    """True when a turn acted on an entity whose distinctive words were not said."""
    name = trace["slots"].get("name")
    return bool(
        trace["intent"]
        and isinstance(name, str)
        and trace["source"] == "llm"
        and not mentioned(name, case["text"])
    )


PATHS = (
    ("strict rules", False, False),
    ("rules + fuzzy", True, False),
    ("rules + fuzzy + LLM", True, True),
)
"""The understanding paths compared: label, fuzzy matching on, LLM on."""


def llm_suite(settings, limit: int = 0) -> list[str]:
    """Report lines of the LLM suite."""
    sets = [
        (path, tomllib.loads(path.read_text(encoding="utf-8"))["case"][: limit or None])
        for path in SETS
    ]
    lines = [
        "Paraphrases through the graph (`hub ask` path, speech on); right = intent and the "
        "named entity/area; the last column counts turns that acted on an entity whose "
        "words were not said.",
        "",
        "| set | path | right | acted on an unnamed entity |",
        "|---|---|---|---|",
    ]
    questions: list[float] = []
    for label, fuzzy, use_llm in PATHS:
        hub = _hub(settings, llm=use_llm, fuzzy=fuzzy)
        for path, cases in sets:
            traces = [hub.turn_text(c["text"]) for c in cases]
            right = sum(_right(c, t) for c, t in zip(cases, traces, strict=True))
            unnamed = sum(_unnamed_action(c, t) for c, t in zip(cases, traces, strict=True))
            lines.append(
                f"| `{path.name}` | {label} | {right}/{len(cases)} "
                f"({100 * right / max(1, len(cases)):.0f}%) | {unnamed} |"
            )
            if use_llm:
                questions += [
                    t["timings_ms"]["ttfa"]
                    for c, t in zip(cases, traces, strict=True)
                    if c["intent"] == "answer" and t["source"] == "llm"
                ]
    budget = settings.llm.budget_s * 1000
    hung = _hub(settings, llm=True, inject=["llm_intent=hang"])
    hung_ttfa = [
        hung.turn_text("tell me something about the moon")["timings_ms"]["ttfa"] for _ in range(5)
    ]
    lines += [
        "",
        f"- LLM answer TTFA p50: {pct(questions, 50) or 0:.0f} ms over "
        f"{len(questions)} answered questions (target <= 1500 ms)",
        f"- LLM hung (`llm_intent=hang`): TTFA p100 {max(hung_ttfa):.0f} ms over 5 turns; "
        f"limit: LLM budget + 100 = {budget + 100:.0f} ms (the first turn's breaker "
        "counts; later turns skip it once it opens)",
    ]

    return lines + [""] + answers_report(settings, limit)
