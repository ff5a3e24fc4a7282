"""Facts that change over time, through the whole turn: a stale claim, an honest refusal, or
a stable fact answered.

Rows of ``hub/bench/data/changing_questions.toml``: ``set`` ``changing`` (the true answer
changes over time: who holds an office now, the latest of anything, prices, scores, records,
winners) or ``stable`` (with ``answer``, a regular expression on the lower-cased answer, whole
words); ``heldout`` rows were written after :mod:`hub.facts.changing` and not used to tune it.
:func:`judge` sorts one answer; :func:`table` counts them (``scripts/eval_facts.py
--changing``, BENCHMARKS.md "Facts").
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from hub.facts.changing import OUT_OF_DATE

QUESTIONS = Path(__file__).resolve().parent / "data" / "changing_questions.toml"

REFUSAL = re.compile(
    r"\b(?:not sure|don't know|do not know|can't know|cannot know|couldn't understand|"
    r"can't do that|don't have|do not have|no information|only know how things are)\b",
    re.I,
)
"""An honest non-answer: "I'm not sure about that.", "Sorry, I don't know that.", the hub's
own "out of date", "not understood" and "here and now" lines."""


def rows(path: Path = QUESTIONS) -> list[dict]:
    """The question rows (see the module doc)."""
    return tomllib.loads(path.read_text(encoding="utf-8"))["question"]


def judge(response: str, row: dict) -> str:
    """The verdict on ``response`` (what the hub said) to ``row``'s question.

    Returns:
        ``"out_of_date"`` (:data:`~hub.facts.changing.OUT_OF_DATE`), ``"refused"`` (another
        honest non-answer, or nothing said); for a ``changing`` row else ``"claim"`` (a
        name, number or anything else stated: stale at best); for a ``stable`` row
        ``"right"`` (its answer is in it) or ``"wrong"``.
    """
    text = (response or "").strip()
    if text == OUT_OF_DATE:
        return "out_of_date"
    if not text or REFUSAL.search(text):
        return "refused"
    if row["set"] == "changing":
        return "claim"
    return "right" if re.search(rf"\b(?:{row['answer']})\b", text.lower()) else "wrong"


TABLE_HEAD = (
    "| code | questions | stated an answer | of them right | honest refusal | "
    'of them "out of date" |\n|---|---|---|---|---|---|'
)
"""The columns of :func:`table` (for a changing question every answer stated is a stale claim:
a name or number from a model that cannot know it now)."""


def table(results: list[tuple[dict, str]], label: str) -> list[str]:
    """Markdown rows under :data:`TABLE_HEAD`: per set (changing, stable) and part (all, held
    out) the counts of :func:`judge`'s verdicts in ``results`` (row, verdict), for the code
    named ``label``."""
    out = []
    for name in ("changing", "stable"):
        for part, keep in (("", lambda r: True), (" held out", lambda r: r.get("heldout"))):
            got = [v for r, v in results if r["set"] == name and keep(r)]
            if not got:
                continue
            stated = got.count("claim") + got.count("right") + got.count("wrong")
            right = "-" if name == "changing" else str(got.count("right"))
            honest = got.count("out_of_date") + got.count("refused")
            out.append(
                f"| {label} | {name}{part} ({len(got)}) | {stated} | {right} | {honest} | "
                f"{got.count('out_of_date')} |"
            )
    return out


def model_report(settings, limit: int = 0) -> list[str]:
    """The LLM engine alone (no graph, no question check) on every row, its sureness gate
    (``[llm] answer_min_logprob``) as configured and off: per set, how many answers it
    states, and how many of those the answer check (:func:`hub.facts.changing.claims_changing`)
    flags as a claim about something that changes over time. Markdown table lines."""
    import dataclasses  # lazy: only this report needs them (hub bench's import stays small)

    from hub.facts.changing import claims_changing
    from hub.llm import make_llm
    from hub.llm.prompts import DEFAULT_INTENTS
    from hub.llm.stream import UNSURE

    lines = [
        "| answer_min_logprob | set | questions | answers stated | of them flagged as changing |",
        "|---|---|---|---|---|",
    ]
    for minimum in (settings.llm.answer_min_logprob, -100.0):
        llm = dataclasses.replace(settings.llm, answer_min_logprob=minimum)
        engine = make_llm(llm, settings.home, DEFAULT_INTENTS)
        try:
            for name in ("changing", "stable"):
                subset = [r for r in rows() if r["set"] == name][: limit or None]
                said = [list(engine.answer(r["q"])) for r in subset]
                stated = [s for s in said if s and s != [UNSURE]]
                flagged = sum(any(claims_changing(x) for x in s) for s in stated)
                label = "off" if minimum == -100.0 else f"{minimum:g}"
                lines.append(f"| {label} | {name} | {len(subset)} | {len(stated)} | {flagged} |")
        finally:
            engine.close()
    return lines
