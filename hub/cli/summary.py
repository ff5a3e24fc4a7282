"""The honest end-of-run summary of ``hub replay``, and its accuracy with ``--score``/``--expect``.

Each trace counts in exactly one class, the first that applies: ``bad input`` (unreadable),
``no speech``, ``degraded`` (a part failed; the fallback answered), ``rejected`` (speech the
recognizer held to be outside the home's commands), ``understood`` (an intent, or an answer
from the LLM or the question file), ``not understood`` (a transcript the hub could not use).
"""

from __future__ import annotations

from pathlib import Path

from hub.intents.score import correct, expected_for

CLASSES = ("understood", "not understood", "rejected", "no speech", "degraded", "bad input")
"""The summary's classes, in the order they are printed."""


def classify(trace: dict) -> str:
    """The summary class of one trace (see the module docstring)."""
    status = trace["status"]
    if status == "bad_input":
        return "bad input"
    if status == "no_speech":
        return "no speech"
    if status == "degraded":
        return "degraded"
    if trace["intent"] or trace.get("source") in ("llm", "faq"):
        return "understood"
    return "rejected" if not trace["transcript"] else "not understood"


def summary_line(traces: list[dict]) -> str:
    """``15 files: 11 understood, 2 not understood, 2 rejected, 0 no speech, ...``."""
    counts = dict.fromkeys(CLASSES, 0)
    for trace in traces:
        counts[classify(trace)] += 1
    noun = "file" if len(traces) == 1 else "files"
    return f"{len(traces)} {noun}: " + ", ".join(f"{counts[c]} {c}" for c in CLASSES)


def score_lines(rules, traces: list[dict], sentences: dict[str, str | None]) -> list[str]:
    """Accuracy lines: ``accuracy: 12/15 (80%) ...; 2 asked back before acting`` (a yes/no
    asked first: a sensitive device, or the recognizers unsure; right when its intent and
    slots are) then one ``miss:`` line per wrong file.

    ``sentences`` maps each trace's file to what was said (None: not scored, e.g. a file
    missing from ``--expect``); the expected intent is what the rules give for the sentence.
    """
    scored = [
        (t, s)
        for t, s in ((t, sentences.get(t["file"])) for t in traces)
        if s is not None and t["status"] != "bad_input"
    ]
    misses = []
    for trace, sentence in scored:
        want = expected_for(rules, sentence)
        if not correct(trace, want):
            misses.append(
                f"miss: {Path(trace['file']).name}: said {sentence!r} -> "
                f"{want[0] or 'nothing done'}; heard {trace['transcript']!r} -> "
                f"{trace['intent']}{' (done)' if want[0] is None else ''}"
            )
    ok = len(scored) - len(misses)
    pct = 100 * ok / len(scored) if scored else 0.0
    asked = sum(1 for t, _ in scored if t.get("asked_back"))
    head = (
        f"accuracy: {ok}/{len(scored)} ({pct:.0f}%) right intent and slots "
        f"(the rules' reading of what was said; oov_* files: right when nothing is done); "
        f"{asked} asked back before acting"
    )
    unscored = len(traces) - len(scored)
    return [head + (f"; {unscored} not scored" if unscored else "")] + misses
