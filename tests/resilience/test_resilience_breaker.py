"""Circuit breakers: closed -> open -> half-open -> closed/open, on a fake clock
(design.md, "Circuit breakers")."""

import pytest

from hub.errors import TransientError
from hub.resilience import Breakers, CircuitBreaker, CircuitOpenError, ManualClock
from hub.settings import ResilienceSettings


def make(clock=None):
    return CircuitBreaker("llm", failures=3, cooldown_s=60.0, clock=clock or ManualClock())


def test_opens_after_three_consecutive_counted_failures():
    breaker = make()
    for kind in ("timeout", "transient"):
        breaker.record_failure(kind)
        assert breaker.state == "closed" and breaker.allow()
    breaker.record_failure("invalid_output")
    assert breaker.state == "open"
    assert not breaker.allow()


def test_a_success_resets_the_count():
    breaker = make()
    breaker.record_failure("timeout")
    breaker.record_failure("timeout")
    breaker.record_success()
    breaker.record_failure("timeout")
    breaker.record_failure("timeout")
    assert breaker.state == "closed"


@pytest.mark.parametrize("kind", ["fatal", "bad_input"])
def test_fatal_and_bad_input_do_not_count(kind):
    breaker = make()
    for _ in range(10):
        breaker.record_failure(kind)
    assert breaker.state == "closed"
    breaker.record_failure("timeout")
    breaker.record_failure("timeout")
    breaker.record_failure(kind)  # does not reset either
    breaker.record_failure("timeout")
    assert breaker.state == "open"


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown error kind"):
        make().record_failure("oops")


def open_breaker(clock):
    breaker = make(clock)
    for _ in range(3):
        breaker.record_failure("timeout")
    return breaker


def test_half_open_after_cooldown_lets_one_probe_through():
    clock = ManualClock()
    breaker = open_breaker(clock)
    clock.advance(59.9)
    assert breaker.state == "open" and not breaker.allow()
    clock.advance(0.1)
    assert breaker.state == "half_open"
    assert breaker.allow()
    assert not breaker.allow()  # the probe is in flight


def test_probe_success_closes():
    clock = ManualClock()
    breaker = open_breaker(clock)
    clock.advance(60)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed"
    assert breaker.allow() and breaker.allow()


def test_probe_failure_opens_again_for_a_full_cooldown():
    clock = ManualClock()
    breaker = open_breaker(clock)
    clock.advance(60)
    assert breaker.allow()
    clock.advance(1.0)
    breaker.record_failure("transient")
    assert breaker.state == "open"
    clock.advance(59.9)
    assert breaker.state == "open"
    clock.advance(0.1)
    assert breaker.state == "half_open"


def test_lost_probe_is_allowed_again_after_another_cooldown():
    clock = ManualClock()
    breaker = open_breaker(clock)
    clock.advance(60)
    assert breaker.allow()
    clock.advance(59)
    assert not breaker.allow()
    clock.advance(1)
    assert breaker.allow()


def test_uncounted_failure_of_the_probe_frees_it():
    clock = ManualClock()
    breaker = open_breaker(clock)
    clock.advance(60)
    assert breaker.allow()
    breaker.record_failure("bad_input")
    assert breaker.state == "half_open"
    assert breaker.allow()


def test_open_breaker_costs_no_call():
    clock = ManualClock()
    breaker = open_breaker(clock)
    calls = []

    def engine():
        calls.append(1)

    for _ in range(100):
        if breaker.allow():
            engine()
    assert calls == []


def test_transitions_are_recorded_with_times_and_drained():
    clock = ManualClock(start=0.0)
    breaker = open_breaker(clock)
    clock.advance(75)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.take_transitions() == [
        {"breaker": "llm", "from": "closed", "to": "open", "at": 0.0},
        {"breaker": "llm", "from": "open", "to": "half_open", "at": 60.0},
        {"breaker": "llm", "from": "half_open", "to": "closed", "at": 75.0},
    ]
    assert breaker.take_transitions() == []


def test_check_raises_an_error_naming_breaker_and_state():
    clock = ManualClock()
    breaker = open_breaker(clock)
    clock.advance(18)
    with pytest.raises(CircuitOpenError) as info:
        breaker.check(node="llm_intent")
    assert info.value.message == "circuit breaker 'llm' is open after 3 failures; probe in 42 s"
    assert info.value.node == "llm_intent"
    assert isinstance(info.value, TransientError)
    make().check()  # closed: no error


def test_breakers_one_per_engine_from_settings():
    clock = ManualClock(start=0.0)
    breakers = Breakers.from_settings(ResilienceSettings(breaker_failures=1), clock=clock)
    assert breakers.get("llm") is breakers.get("llm")
    breakers.get("tts").record_failure("timeout")
    clock.advance(1)
    breakers.get("llm").record_failure("timeout")
    assert breakers.states() == {"llm": "open", "tts": "open"}
    assert [t["breaker"] for t in breakers.take_transitions()] == ["tts", "llm"]
    assert breakers.take_transitions() == []


def test_breaker_refuses_bad_parameters():
    with pytest.raises(ValueError, match="'x'"):
        CircuitBreaker("x", failures=0)
