"""The answer prompt's cached prefix does not hold the clock (else a new cache file, and a
model load at start, every minute)."""

from __future__ import annotations

from datetime import datetime

from hub.llm import prompts
from hub.settings import load_settings

HOME = load_settings(None).home


def common(a: str, b: str) -> str:
    return a[: next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)]


def test_answer_prefix_ends_before_the_time_stamp_whatever_the_time():
    def prefix(now_a, now_b):
        a = prompts.answer_messages("a", HOME, now_a)
        b = prompts.answer_messages("b", HOME, now_b)
        return common(repr(a), repr(b))

    same_minute = prefix(datetime(2026, 12, 2, 3, 30), datetime(2026, 12, 2, 3, 30))
    assert "2026" in same_minute  # two prompts built at once share the stamp: the old prefix
    fixed = prefix(*prompts.PREFIX_TIMES)
    assert "2026" not in fixed and "It is" in fixed
    later = [prompts.answer_messages("q", HOME, datetime(2027, 5, d, 14, 7)) for d in (3, 4)]
    assert all(repr(m).startswith(fixed) for m in later)  # every real prompt extends it
