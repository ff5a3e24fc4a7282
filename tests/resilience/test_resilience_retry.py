"""Retry by error class: one row per case (design.md, "Retry by error class"; BC-16)."""

import pytest

from hub.resilience import MAX_ATTEMPTS, Deadline, ManualClock, retry_decision, should_retry

# kind, attempt, side_effect, has_idempotency_key, seconds left, retry?, stricter?
TABLE = [
    ("timeout", 1, False, False, 5.0, True, False),
    ("transient", 1, False, False, 5.0, True, False),
    ("invalid_output", 1, False, False, 5.0, True, True),
    ("fatal", 1, False, False, 5.0, False, False),
    ("bad_input", 1, False, False, 5.0, False, False),
    ("timeout", 2, False, False, 5.0, False, False),  # the one retry is used
    ("transient", 2, False, False, 5.0, False, False),
    ("invalid_output", 2, False, False, 5.0, False, False),
    ("timeout", 1, True, False, 5.0, False, False),  # side effect, no idempotency key
    ("transient", 1, True, False, 5.0, False, False),
    ("timeout", 1, True, True, 5.0, True, False),  # side effect with its key
    ("timeout", 1, False, False, 0.049, False, False),  # less than 50 ms left
    ("transient", 1, False, False, 0.0, False, False),
    ("timeout", 1, False, False, 0.051, True, False),
]


@pytest.mark.parametrize(
    ("kind", "attempt", "side_effect", "key", "left", "retry", "stricter"), TABLE
)
def test_retry_table(kind, attempt, side_effect, key, left, retry, stricter):
    clock = ManualClock()
    deadline = Deadline(8.0, clock=clock)
    clock.advance(8.0 - left)
    decision = retry_decision(
        kind, attempt, "llm_intent", deadline, side_effect=side_effect, has_idempotency_key=key
    )
    assert (decision.retry, decision.stricter) == (retry, stricter)
    assert decision.reason.startswith("llm_intent: ")
    assert (
        should_retry(
            kind, attempt, "llm_intent", deadline, side_effect=side_effect, has_idempotency_key=key
        )
        is retry
    )


def test_attempts_are_bounded_whatever_the_errors():
    deadline = Deadline(8.0, clock=ManualClock())
    attempts = 1
    while should_retry(
        "invalid_output",
        attempts,
        "llm_intent",
        deadline,
        side_effect=False,
        has_idempotency_key=False,
    ):
        attempts += 1
    assert attempts == MAX_ATTEMPTS == 2


def test_reasons_name_the_rule():
    deadline = Deadline(8.0, clock=ManualClock())
    kw = {"side_effect": False, "has_idempotency_key": False}
    assert retry_decision("fatal", 1, "asr", deadline, **kw).reason == "asr: fatal is never retried"
    assert (
        retry_decision("invalid_output", 1, "llm_intent", deadline, **kw).reason
        == "llm_intent: retry with a stricter request after invalid_output"
    )
    assert (
        retry_decision(
            "timeout", 1, "act", deadline, side_effect=True, has_idempotency_key=False
        ).reason
        == "act: side effect without an idempotency key"
    )


@pytest.mark.parametrize("node", ["asr", "rules", "act", "tts"])
def test_a_timeout_is_retried_only_on_the_llm_path(node):
    deadline = Deadline(8.0, clock=ManualClock())
    kw = {"side_effect": False, "has_idempotency_key": True}
    assert not should_retry("timeout", 1, node, deadline, **kw)
    assert should_retry("transient", 1, node, deadline, **kw)
    assert should_retry("timeout", 1, "llm_answer", deadline, **kw)


@pytest.mark.parametrize(("kind", "attempt"), [("oops", 1), ("timeout", 0)])
def test_bad_arguments_are_refused(kind, attempt):
    with pytest.raises(ValueError):
        should_retry(
            kind,
            attempt,
            "asr",
            Deadline(1.0, clock=ManualClock()),
            side_effect=False,
            has_idempotency_key=False,
        )
