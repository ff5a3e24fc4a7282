"""General-knowledge answers of the local LLM: right, wrong, or withheld as unsure.

Each question of ``hub/bench/data/general_questions.toml`` is answered through the LLM
engine's answer path with ``[llm] answer_min_logprob`` as configured and with it off
(``-100``). An answer is *right* when its text holds the expected words, *withheld* when the
hub said :data:`hub.llm.stream.UNSURE`, else *wrong* (a made-up fact). The ``calibration``
rows chose the default threshold; the ``heldout`` rows only measure it.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from hub.llm import make_llm
from hub.llm.prompts import DEFAULT_INTENTS
from hub.llm.stream import UNSURE

QUESTIONS = Path(__file__).resolve().parent / "data" / "general_questions.toml"
OFF = -100.0
"""``answer_min_logprob`` that never withholds."""


def judge(answer: str, expected: str) -> str:
    """``"right"``, ``"withheld"`` or ``"wrong"`` for ``answer`` against the regex ``expected``."""
    if answer.strip() == UNSURE:
        return "withheld"
    return "right" if re.search(rf"\b(?:{expected})\b", answer.lower()) else "wrong"


def answers(settings, minimum: float, rows: list[dict]) -> list[str]:
    """The judged answer of each row with ``answer_min_logprob = minimum``."""
    llm_settings = dataclasses.replace(settings.llm, answer_min_logprob=minimum)
    engine = make_llm(llm_settings, settings.home, DEFAULT_INTENTS)
    try:
        return [judge(" ".join(engine.answer(row["q"])), row["answer"]) for row in rows]
    finally:
        engine.close()


def answers_report(settings, limit: int = 0) -> list[str]:
    """Report lines: per set, right / wrong / withheld with the threshold on and off."""
    rows = tomllib.loads(QUESTIONS.read_text(encoding="utf-8"))["question"]
    lines = [
        "General-knowledge questions answered by the local LLM (SmolLM2-135M by default); "
        "wrong = a made-up fact was spoken. `calibration` chose "
        "`[llm] answer_min_logprob`, `heldout` was not used for it.",
        "",
        '| set | answer_min_logprob | right | wrong | withheld ("I\'m not sure") |',
        "|---|---|---|---|---|",
    ]
    for name in ("calibration", "heldout"):
        subset = [r for r in rows if r["set"] == name][: limit or None]
        for minimum in (settings.llm.answer_min_logprob, OFF):
            got = answers(settings, minimum, subset)
            counts = {k: got.count(k) for k in ("right", "wrong", "withheld")}
            label = "off" if minimum == OFF else f"{minimum:g}"
            lines.append(
                f"| {name} ({len(subset)}) | {label} | {counts['right']} | "
                f"{counts['wrong']} | {counts['withheld']} |"
            )
    return lines
